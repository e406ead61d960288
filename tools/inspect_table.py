#!/usr/bin/env python3
"""Print the layout of a LevelDB-format table file (.ldb/.sst), for writing fixture READMEs.

    python3 tools/inspect_table.py FILE [FILE...]        # human summary
    python3 tools/inspect_table.py --json FILE [FILE...] # one JSON object per file

Reports: magic (and, for RocksDB, format_version and checksum type), metaindex and index
handles and their compression ids, every data block (offset, size, compression id, entries),
metaindex keys, and the filter block geometry (base_lg, number of filters, k of each non-empty
filter). For zstd frames it also checks the 28 b5 2f fd magic.

Decompression: snappy (pure Python, below), zlib stream and raw deflate (stdlib zlib), zstd
(needs the third-party `zstandard` module; without it zstd blocks are listed but not parsed).
Standalone; not used by the Rust build or tests.
"""
import json
import struct
import sys
import zlib

LEVELDB_MAGIC = 0xDB4775248B80FB57
ROCKSDB_MAGIC = 0x88E241B785F4CFF7
OTHER_MAGICS = {
    0x8242229663BF9564: "RocksDB PlainTable",
    0x4F3418EB7A8F13B8: "RocksDB PlainTable (legacy)",
    0x926789D0C5F17873: "RocksDB CuckooTable",
}


def varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def snappy_decompress(src):
    n, pos = varint(src, 0)
    out = bytearray()
    while pos < len(src):
        tag = src[pos]
        pos += 1
        kind = tag & 3
        if kind == 0:
            ln = tag >> 2
            if ln >= 60:
                nb = ln - 59
                ln = int.from_bytes(src[pos:pos + nb], "little")
                pos += nb
            ln += 1
            out += src[pos:pos + ln]
            pos += ln
            continue
        if kind == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | src[pos]
            pos += 1
        elif kind == 2:
            ln = (tag >> 2) + 1
            off = int.from_bytes(src[pos:pos + 2], "little")
            pos += 2
        else:
            ln = (tag >> 2) + 1
            off = int.from_bytes(src[pos:pos + 4], "little")
            pos += 4
        if off == 0 or off > len(out):
            raise ValueError("bad snappy offset")
        for _ in range(ln):
            out.append(out[-off])
    if len(out) != n:
        raise ValueError("snappy length mismatch")
    return bytes(out)


def decompress(ctype, payload, rocksdb):
    if ctype == 0:
        return payload
    if ctype == 1:
        return snappy_decompress(payload)
    if ctype == 2 and payload[:4] == b"\x28\xb5\x2f\xfd":  # google/leveldb main: zstd
        import zstandard  # third-party; pip install zstandard
        return zstandard.ZstdDecompressor().decompress(payload)
    if ctype == 2:  # Mojang: zlib stream. RocksDB "zlib": raw deflate by default (window_bits
        # -14), prefixed by a varint32 uncompressed size from format_version 2 on.
        if rocksdb:
            _, p = varint(payload, 0)
            payload = payload[p:]
        try:
            return zlib.decompress(payload)
        except zlib.error:
            return zlib.decompress(payload, -15)
    if ctype == 4:  # Mojang: raw deflate
        return zlib.decompress(payload, -15)
    raise ValueError("unsupported compression id %d" % ctype)


def block_entries(block):
    """Yields (key, value) from a decoded block."""
    nrest = struct.unpack_from("<I", block, len(block) - 4)[0]
    limit = len(block) - 4 - 4 * nrest
    pos = 0
    key = b""
    while pos < limit:
        shared, pos = varint(block, pos)
        nonshared, pos = varint(block, pos)
        vlen, pos = varint(block, pos)
        key = key[:shared] + block[pos:pos + nonshared]
        pos += nonshared
        yield key, block[pos:pos + vlen]
        pos += vlen


def inspect(path):
    data = open(path, "rb").read()
    info = {"file": path, "size": len(data)}
    magic = struct.unpack_from("<Q", data, len(data) - 8)[0]
    info["magic"] = "0x%016x" % magic
    rocksdb = False  # True: RocksDB format_version >= 2 compressed-block framing
    fv = 0
    if magic == LEVELDB_MAGIC:
        info["kind"] = "LevelDB (or RocksDB format_version=0)"
        footer = data[len(data) - 48:]
    elif magic == ROCKSDB_MAGIC:
        rocksdb = True
        fv = struct.unpack_from("<I", data, len(data) - 12)[0]
        info["kind"] = "RocksDB block-based"
        info["format_version"] = fv
        footer = data[len(data) - 53:]
        info["checksum_type"] = footer[0]
        footer = footer[1:]
        if fv >= 6:
            info["note"] = "format_version >= 6 footer not decoded"
            return info
        # format_version >= 2 prefixes compressed payloads (other than snappy) with the size
        rocksdb = fv >= 2
    else:
        info["kind"] = OTHER_MAGICS.get(magic, "unknown")
        return info
    meta_off, p = varint(footer, 0)
    meta_size, p = varint(footer, p)
    idx_off, p = varint(footer, p)
    idx_size, p = varint(footer, p)

    def read_block(off, size):
        ctype = data[off + size]
        payload = data[off:off + size]
        return ctype, payload

    mtype, mpayload = read_block(meta_off, meta_size)
    itype, ipayload = read_block(idx_off, idx_size)
    info["metaindex"] = [meta_off, meta_size, mtype]
    info["index"] = [idx_off, idx_size, itype]
    meta = decompress(mtype, mpayload, rocksdb)
    info["metaindex_keys"] = [k.decode("latin-1") for k, _ in block_entries(meta)]
    blocks = []
    ctypes = set()
    zstd_frames_ok = True
    if fv >= 4:
        info["note"] = "RocksDB format_version >= 4 index (delta-encoded handles) not decoded"
        return info
    for sep, handle in block_entries(decompress(itype, ipayload, rocksdb)):
        off, p = varint(handle, 0)
        size, p = varint(handle, p)
        ctype, payload = read_block(off, size)
        ctypes.add(ctype)
        if ctype == 2 and not rocksdb and payload[:4] != b"\x28\xb5\x2f\xfd":
            zstd_frames_ok = False
        try:
            n = sum(1 for _ in block_entries(decompress(ctype, payload, rocksdb))) if size else 0
        except Exception as e:  # noqa: BLE001
            n = "undecoded (%s)" % e
        blocks.append([off, size, ctype, n, sep.hex()])
    info["data_blocks"] = blocks
    info["data_block_compression_ids"] = sorted(ctypes)
    info["all_block_ids"] = sorted(ctypes | {mtype, itype})
    if 2 in ctypes and not rocksdb:
        info["zstd_frame_magic_ok"] = zstd_frames_ok
    for k, v in block_entries(meta):
        if k.startswith(b"filter."):
            off, p = varint(v, 0)
            size, p = varint(v, p)
            ftype = data[off + size]
            fb = decompress(ftype, data[off:off + size], rocksdb)
            base_lg = fb[-1]
            array_start = struct.unpack_from("<I", fb, len(fb) - 5)[0]
            nfilt = (len(fb) - 5 - array_start) // 4
            offs = [struct.unpack_from("<I", fb, array_start + 4 * i)[0] for i in range(nfilt + 1)]
            ks = sorted({fb[offs[i + 1] - 1] for i in range(nfilt) if offs[i + 1] > offs[i]})
            empty = sum(1 for i in range(nfilt) if offs[i + 1] == offs[i])
            info["filter"] = {"name": k[7:].decode(), "handle": [off, size, ftype],
                              "base_lg": base_lg, "num_filters": nfilt,
                              "empty_filters": empty, "k": ks}
    return info


def main(argv):
    as_json = "--json" in argv
    for path in [a for a in argv if a != "--json"]:
        info = inspect(path)
        if as_json:
            print(json.dumps(info))
            continue
        print("%s: %d bytes, magic %s (%s)" % (path, info["size"], info["magic"], info["kind"]))
        for key in ("format_version", "checksum_type", "metaindex", "index",
                    "metaindex_keys", "data_block_compression_ids", "all_block_ids",
                    "zstd_frame_magic_ok", "filter"):
            if key in info:
                print("  %s: %s" % (key, info[key]))
        if "data_blocks" in info:
            print("  data blocks: %d  [offset, size, compression, entries, index separator]"
                  % len(info["data_blocks"]))
            for b in info["data_blocks"]:
                sep = b[4] if len(b[4]) <= 48 else b[4][:48] + "..."
                print("    %s" % (b[:4] + [sep]))


if __name__ == "__main__":
    main(sys.argv[1:])
