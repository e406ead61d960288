//! Shared by `tests/db_locations.rs` and `chrome/tests/db_locations.rs` (included by path):
//! the bytes at a record's reported location, decoded by the test's own code and checked to
//! encode the record.

use std::path::Path;

use bytes::Bytes;
use leveldb_table::db::reader::{DbRecord, Location};
use leveldb_table::raw::format::{ReadBlockOptions, StoredBlock};
use leveldb_table::raw::internal_key::ValueType;
use leveldb_table::{error::BlockKind, raw::format::BlockHandle, table::CompressionProfile};

fn varint(b: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = b[*pos];
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
    }
    v
}

/// The (key, value) of the entry at `at` of a decompressed block, its key rebuilt by
/// decoding every entry from the block's start (keys share prefixes with the one before).
fn entry_at(block: &[u8], at: usize) -> (Vec<u8>, Vec<u8>) {
    let n = block.len();
    let restarts = u32::from_le_bytes(block[n - 4..].try_into().unwrap()) as usize;
    let end = n - 4 - 4 * restarts;
    let (mut pos, mut key) = (0usize, Vec::new());
    while pos < end {
        let start = pos;
        let shared = varint(block, &mut pos) as usize;
        let unshared = varint(block, &mut pos) as usize;
        let vlen = varint(block, &mut pos) as usize;
        key.truncate(shared);
        key.extend_from_slice(&block[pos..pos + unshared]);
        pos += unshared;
        let value = &block[pos..pos + vlen];
        pos += vlen;
        if start == at {
            return (key, value.to_vec());
        }
        assert!(start < at, "no entry starts at {at}");
    }
    panic!("offset {at} is past the block's entries");
}

/// The payload of the logical record whose first physical record is at `at`.
fn log_record_at(file: &[u8], at: usize) -> Vec<u8> {
    let (mut pos, mut out) = (at, Vec::new());
    loop {
        if 32768 - pos % 32768 < 7 {
            pos += 32768 - pos % 32768;
        }
        let len = usize::from(u16::from_le_bytes([file[pos + 4], file[pos + 5]]));
        let kind = file[pos + 6];
        out.extend_from_slice(&file[pos + 7..pos + 7 + len]);
        pos += 7 + len;
        match (pos - 7 - len == at, kind) {
            (true, 1) => return out,
            (true, 2) | (false, 3) => {}
            (false, 4) => return out,
            other => panic!("record at {at}: unexpected fragment {other:?}"),
        }
    }
}

/// Checks that the bytes at `r`'s location encode `r`.
pub fn check(dir: &Path, r: &DbRecord) {
    let file = std::fs::read(dir.join(&r.file)).unwrap();
    match r.location {
        Location::Table {
            block_offset,
            block_size,
            offset_in_block,
        } => {
            assert_eq!(r.offset, block_offset);
            let (o, s) = (block_offset as usize, block_size as usize);
            let raw = Bytes::copy_from_slice(&file[o..o + s + 5]);
            let handle = BlockHandle {
                offset: block_offset,
                size: block_size,
            };
            let rb = ReadBlockOptions {
                verify_checksum: true,
                profile: CompressionProfile::Auto,
            };
            let stored = StoredBlock::from_raw(raw, handle, BlockKind::Data, rb).unwrap();
            let block = stored.decompress().unwrap().data;
            let (key, value) = entry_at(&block, offset_in_block as usize);
            let (user, tag) = key.split_at(key.len() - 8);
            let tag = u64::from_le_bytes(tag.try_into().unwrap());
            assert_eq!(user, &r.key[..], "{r:?}");
            assert_eq!(tag >> 8, r.sequence, "{r:?}");
            assert_eq!(tag & 0xff, r.kind as u64, "{r:?}");
            assert_eq!(value, r.value, "{r:?}");
        }
        Location::Log {
            batch_offset,
            offset_in_batch,
        } => {
            assert_eq!(r.offset, batch_offset);
            let batch = log_record_at(&file, batch_offset as usize);
            let first_seq = u64::from_le_bytes(batch[..8].try_into().unwrap());
            // The record's index in the batch gives its sequence.
            let mut pos = 12usize;
            let mut index = 0u64;
            while pos < offset_in_batch as usize {
                let tag = batch[pos];
                pos += 1;
                let klen = varint(&batch, &mut pos) as usize;
                pos += klen;
                if tag == 1 {
                    let vlen = varint(&batch, &mut pos) as usize;
                    pos += vlen;
                }
                index += 1;
            }
            assert_eq!(pos, offset_in_batch as usize, "a record starts there");
            let tag = batch[pos];
            pos += 1;
            let klen = varint(&batch, &mut pos) as usize;
            assert_eq!(&batch[pos..pos + klen], &r.key[..], "{r:?}");
            pos += klen;
            match tag {
                1 => {
                    assert_eq!(r.kind, ValueType::Value);
                    let vlen = varint(&batch, &mut pos) as usize;
                    assert_eq!(&batch[pos..pos + vlen], &r.value[..], "{r:?}");
                }
                0 => assert_eq!(r.kind, ValueType::Deletion),
                t => panic!("tag {t}"),
            }
            assert_eq!(first_seq + index, r.sequence, "{r:?}");
        }
    }
}
