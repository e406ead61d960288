//! Salvage: what can still be read from a damaged table, and never damaged bytes as data.
//!
//! `salvage_table` skips damaged data blocks of a table that opens; `salvage_bytes` finds
//! the blocks of a table whose footer or index is lost by their checksums. Both are checked
//! on tables we build (snappy and uncompressed, with a filter) and on real tables written by
//! LevelDB (testdata/cases).

mod common;

use leveldb_table::Cursor;
use leveldb_table::{
    raw::format::BlockHandle, table::CompressionProfile, table::KeyFormat, Compression, Error,
    OpenOptions, Options, ReadOptions, TableBuilder, TableReader,
};
use leveldb_table::{
    table::salvage::salvage_bytes, table::salvage::salvage_table, table::salvage::Salvaged,
};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn build(compression: Compression, n: usize) -> Vec<u8> {
    let opts = Options::default().compression(compression).bloom(10);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for i in 0..n {
        b.add(
            format!("key{i:06}").as_bytes(),
            &common::half_compressible(i, 100),
        )
        .unwrap();
    }
    b.finish().unwrap().0
}

fn all_entries(bytes: &[u8]) -> Entries {
    let t = TableReader::open(bytes.to_vec(), OpenOptions::default()).unwrap();
    t.iter(&ReadOptions::default())
        .into_iter()
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

fn handles(bytes: &[u8]) -> Vec<BlockHandle> {
    let t = TableReader::open(bytes.to_vec(), OpenOptions::default()).unwrap();
    t.data_block_handles()
        .unwrap()
        .into_iter()
        .map(|(_, h)| h)
        .collect()
}

/// The entries of a salvage, and the damaged (offset, len) stretches.
fn split(items: Vec<Salvaged>) -> (Entries, Vec<(u64, Option<u64>, Error)>) {
    let mut entries = Vec::new();
    let mut damaged = Vec::new();
    for s in items {
        match s {
            Salvaged::Entries { entries: e, .. } => entries.extend(e),
            Salvaged::Damaged { offset, len, error } => damaged.push((offset, len, error)),
        }
    }
    (entries, damaged)
}

/// `all` without the entries of the data blocks numbered `lost` (by index order).
fn without_blocks(bytes: &[u8], all: &Entries, lost: &[usize]) -> Entries {
    let t = TableReader::open(bytes.to_vec(), OpenOptions::default()).unwrap();
    let mut out = Vec::new();
    for (i, h) in handles(bytes).into_iter().enumerate() {
        let b = t.read_data_block(h, &ReadOptions::default()).unwrap();
        let mut it = b.iter(t.comparator());
        it.seek_to_first();
        while it.valid() {
            if !lost.contains(&i) {
                out.push((it.key().to_vec(), it.value().to_vec()));
            }
            it.next();
        }
    }
    assert!(out.iter().all(|e| all.contains(e)));
    out
}

/// Equal entry lists, or a short message naming the first difference.
fn assert_same(got: &Entries, want: &Entries, what: &str) {
    if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
        let show = |e: Option<&(Vec<u8>, Vec<u8>)>| {
            e.map(|(k, v)| format!("{} ({} value bytes)", String::from_utf8_lossy(k), v.len()))
        };
        panic!(
            "{what}: {} entries, want {}; first difference at {i}: {:?} vs {:?}",
            got.len(),
            want.len(),
            show(got.get(i)),
            show(want.get(i))
        );
    }
}

#[test]
fn damaged_blocks_are_skipped_and_reported_the_rest_is_read() {
    for compression in [Compression::Snappy, Compression::None] {
        let bytes = build(compression, 3000);
        let all = all_entries(&bytes);
        let hs = handles(&bytes);
        assert!(hs.len() > 20);
        let lost = [0usize, 7, hs.len() - 1];
        let mut bad = bytes.clone();
        for &i in &lost {
            bad[(hs[i].offset + hs[i].size / 2) as usize] ^= 0x10;
        }
        let t = TableReader::open(bad.clone(), OpenOptions::default()).unwrap();
        // A table's own cursor stops at the first damaged block.
        assert!(t
            .iter(&ReadOptions::default())
            .into_iter()
            .any(|r| r.is_err()));
        let (entries, damaged) = split(salvage_table(&t, ReadOptions::default()));
        assert_same(&entries, &without_blocks(&bytes, &all, &lost), "damaged");
        let where_: Vec<(u64, Option<u64>)> = damaged.iter().map(|d| (d.0, d.1)).collect();
        let want: Vec<(u64, Option<u64>)> = lost
            .iter()
            .map(|&i| (hs[i].offset, Some(hs[i].size + 5)))
            .collect();
        assert_eq!(where_, want, "{compression:?}");
        for (off, _, e) in &damaged {
            assert!(
                matches!(e, Error::ChecksumMismatch { handle, .. } if handle.offset == *off),
                "{e}"
            );
        }
    }
}

#[test]
fn a_lost_footer_or_index_gives_back_every_data_block() {
    for compression in [Compression::Snappy, Compression::None] {
        let bytes = build(compression, 3000);
        let all = all_entries(&bytes);
        let n = bytes.len();
        // The footer overwritten.
        let mut no_footer = bytes.clone();
        no_footer[n - 48..].fill(0);
        assert!(TableReader::open(no_footer.clone(), OpenOptions::default()).is_err());
        let (entries, damaged) = split(salvage_bytes(&no_footer, CompressionProfile::default()));
        assert_eq!(
            entries, all,
            "{compression:?}: filter, metaindex, index left out"
        );
        // Only the footer is unaccounted for.
        assert_eq!(damaged.len(), 1, "{damaged:?}");
        assert_eq!(damaged[0].0, n as u64 - 48);

        // Cut inside the last data block: every earlier block comes back, the cut one is
        // reported.
        let hs = handles(&bytes);
        let last = *hs.last().unwrap();
        let cut = &bytes[..(last.offset + last.size / 2) as usize];
        let (entries, damaged) = split(salvage_bytes(cut, CompressionProfile::default()));
        assert_same(
            &entries,
            &without_blocks(&bytes, &all, &[hs.len() - 1]),
            "cut",
        );
        assert_eq!(damaged.len(), 1);
        assert_eq!(damaged[0].0, last.offset);
    }
}

#[test]
fn after_a_damaged_block_the_next_blocks_are_found_again() {
    for compression in [Compression::Snappy, Compression::None] {
        let bytes = build(compression, 3000);
        let all = all_entries(&bytes);
        let hs = handles(&bytes);
        let n = bytes.len();
        let mut bad = bytes.clone();
        for i in [3usize, 4, 11] {
            bad[(hs[i].offset + 10) as usize] ^= 0x01;
        }
        bad[n - 48..].fill(0xff);
        let (entries, damaged) = split(salvage_bytes(&bad, CompressionProfile::default()));
        assert_same(
            &entries,
            &without_blocks(&bytes, &all, &[3, 4, 11]),
            "resync",
        );
        let stretches: Vec<(u64, Option<u64>)> = damaged.iter().map(|d| (d.0, d.1)).collect();
        assert_eq!(
            stretches,
            [
                (hs[3].offset, Some(hs[5].offset - hs[3].offset)),
                (hs[11].offset, Some(hs[12].offset - hs[11].offset)),
                (n as u64 - 48, Some(48)),
            ],
            "{compression:?}"
        );
    }
}

#[test]
fn real_leveldb_tables_are_salvaged_whole_without_their_footer() {
    for case in common::case_names() {
        let c = common::load_case(&case);
        for t in &c.tables {
            let bytes = std::fs::read(&t.path).unwrap();
            let reader = TableReader::open(bytes.clone(), OpenOptions::default()).unwrap();
            let want: Entries = reader
                .iter(&ReadOptions::default())
                .into_iter()
                .map(|r| r.unwrap())
                .map(|(k, v)| (k.to_vec(), v.to_vec()))
                .collect();
            assert_eq!(want.len(), t.entries.len());
            let (entries, damaged) = split(salvage_table(&reader, ReadOptions::default()));
            assert!(damaged.is_empty());
            assert_same(
                &entries,
                &want,
                &format!("{case}: salvage of an intact table"),
            );
            let profile = reader.compression_profile();
            let mut no_footer = bytes.clone();
            let n = no_footer.len();
            no_footer[n - 48..].fill(0);
            let (entries, damaged) = split(salvage_bytes(&no_footer, profile));
            assert_same(
                &entries,
                &want,
                &format!("{case}: {} {damaged:?}", t.path.display()),
            );
        }
    }
}

#[test]
fn with_checksums_salvage_never_returns_damaged_bytes() {
    let bytes = build(Compression::None, 2000);
    let all = all_entries(&bytes);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for round in 0..40 {
        let mut bad = bytes.clone();
        for _ in 0..1 + round % 4 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = (x % bad.len() as u64) as usize;
            bad[at] ^= 1 << (x >> 60 & 7);
        }
        let (entries, _) = split(salvage_bytes(&bad, CompressionProfile::default()));
        for e in &entries {
            assert!(all.contains(e), "round {round}: salvage made up an entry");
        }
        if let Ok(t) = TableReader::open(bad.clone(), OpenOptions::default().keys(KeyFormat::Plain))
        {
            let (entries, _) = split(salvage_table(&t, ReadOptions::default()));
            for e in &entries {
                assert!(all.contains(e), "round {round}: salvage made up an entry");
            }
        }
    }
}
