//! Arbitrary bytes as a table: open (several option sets, several sources), full forward and
//! backward scans (bounded by a step count), seeks, gets and lookups of keys derived from the
//! input and from the scan, and verify(). Nothing may panic, hang or allocate without bound,
//! and no block read may ask for bytes past the end of the file.
#![no_main]

use std::io;
use std::sync::Arc;

use bytes::Bytes;
use leveldb_table::Cursor;
use leveldb_table::{
    table::CompressionProfile, table::KeyFormat, BlockCache, RandomAccess, ReadOptions,
    OpenOptions, TableReader,
};
use libfuzzer_sys::fuzz_target;

/// Steps per scan. Termination of scans is a property of the code (every step moves to a
/// later entry of a later index entry); the cap keeps one input cheap when a small input
/// legitimately expands (snappy, deflate, zstd) into very many entries.
const MAX_STEPS: usize = 20_000;

/// A source that checks every read the reader makes: a block read must never reach past the
/// end of the file (handles are checked before reading), and its length must fit the file.
struct StrictSource(Bytes);

impl RandomAccess for StrictSource {
    fn size(&self) -> io::Result<u64> {
        Ok(self.0.len() as u64)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let end = offset
            .checked_add(len as u64)
            .expect("read range overflows u64");
        assert!(
            end <= self.0.len() as u64,
            "read of {len} bytes at {offset} reaches past the end of a {}-byte file",
            self.0.len()
        );
        self.0.read_at(offset, len)
    }
    /// Its reads are slices of the buffer, as a memory map's are: blocks are used in place
    /// and, in the block cache, get search directories.
    fn is_zero_copy(&self) -> bool {
        true
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.0)
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Keys taken from windows of the input (so the fuzzer can steer them) plus edge keys.
fn probe_keys(data: &[u8]) -> Vec<Vec<u8>> {
    let mut keys = vec![Vec::new(), vec![0xff; 9], b"key-0100".to_vec()];
    let n = data.len();
    let mut h = n as u64;
    for (i, chunk) in data.chunks(997).take(5).enumerate() {
        h = splitmix(h ^ u64::from(chunk[0]) ^ (i as u64) << 8);
        let start = (h % (n as u64 + 1)) as usize;
        let len = ((h >> 40) % 48) as usize;
        keys.push(data[start..(start + len).min(n)].to_vec());
    }
    keys
}

/// Uses everything once. `full`: all probes and every lookup flavour; otherwise a few.
fn exercise<R: RandomAccess>(
    t: &TableReader<R>,
    probes: &[Vec<u8>],
    ropts: ReadOptions,
    full: bool,
) {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut it = t.iter(&ropts);
    it.seek_to_first();
    let mut steps = 0;
    while it.valid() && steps < MAX_STEPS {
        if steps < 2 || steps % 211 == 0 {
            seen.push(it.key().to_vec());
        }
        let _ = (
            it.value().len(),
            it.value_bytes().len(),
            it.parsed_key(),
            it.block_handle(),
        );
        it.next();
        steps += 1;
    }
    let _ = it.status();
    it.seek_to_last();
    steps = 0;
    while it.valid() && steps < MAX_STEPS {
        if steps < 1 {
            seen.push(it.key().to_vec());
        }
        it.prev();
        steps += 1;
    }
    let _ = it.status();
    drop(it);

    let mut buf = Vec::with_capacity(64);
    let n = if full { probes.len() } else { 3 };
    for (i, k) in probes
        .iter()
        .take(n)
        .chain(seen.iter().take(if full { 6 } else { 2 }))
        .enumerate()
    {
        // As a table key, and as the user key of an internal key.
        let user = &k[..k.len().saturating_sub(8)];
        let _ = t.get_into(user, &ropts, &mut buf).map(|l| l.is_found());
        let _ = t.get(k, &ropts.snapshot(Some(u64::MAX >> 8)));
        if full && i % 2 == 0 {
            let _ = t.get(user, &ropts.snapshot(Some(1)));
            let _ = t.filter_excludes(k);
            let _ = t.approximate_offset_of(k);
        }
        let mut it = t.iter(&ropts);
        it.seek(k);
        it.next();
        it.prev();
        it.prev();
    }
    if full {
        if let Ok(h) = t.data_block_handles() {
            if let Some((_, first)) = h.first() {
                let _ = t.read_data_block(*first, &ropts);
            }
        }
    }
    let report = t.verify();
    assert!(report.problems.len() as u64 <= report.problem_count);
}

fuzz_target!(|data: &[u8]| {
    let probes = probe_keys(data);
    let bytes = Bytes::copy_from_slice(data);

    // 1. Defaults (checksums verified), zero-copy source.
    let cache = Arc::new(BlockCache::new(1 << 20));
    let opts = OpenOptions::default().block_cache(Some(cache));
    if let Ok(t) = TableReader::open(StrictSource(bytes.clone()), opts) {
        exercise(&t, &probes, ReadOptions::default(), true);
    }

    // 2. Internal keys, checksums off (so damaged bytes reach the block and entry parsers),
    //    from a Vec.
    let opts = OpenOptions::default()
        .keys(KeyFormat::Internal)
        .verify_checksums(false);
    let ropts = ReadOptions::default().fill_cache(true);
    if let Ok(t) = TableReader::open(data.to_vec(), opts) {
        exercise(&t, &probes, ropts, false);
    }

    // 3. Plain keys, checksums off, compression profile chosen by the input.
    let profile = match data.first().map_or(0, |b| b % 3) {
        0 => CompressionProfile::Auto,
        1 => CompressionProfile::LevelDb,
        _ => CompressionProfile::Mojang,
    };
    let opts = OpenOptions::default()
        .keys(KeyFormat::Plain)
        .verify_checksums(false)
        .compression_profile(profile);
    let ropts = ReadOptions::default().fill_cache(false);
    if let Ok(t) = TableReader::open(StrictSource(bytes), opts) {
        exercise(&t, &probes, ropts, false);
    }
});
