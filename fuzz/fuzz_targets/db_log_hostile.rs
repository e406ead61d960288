//! Any bytes as a database log file: `db::log_reader::LogReader`, and every record it yields
//! read as a WriteBatch and as a VersionEdit (the two payloads a LevelDB log carries).
//!
//! Checked properties: nothing panics or loops; items come in increasing file offsets; a
//! record is never longer than the file; damage and torn tails name offsets inside the file;
//! a VersionEdit that decodes re-encodes to bytes that decode to the same edit.
#![no_main]

use leveldb_table::db::files::VersionEdit;
use leveldb_table::db::files::WriteBatchReader;
use leveldb_table::Error;
use leveldb_table::{db::files::LogItem, db::files::LogReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut last: Option<u64> = None;
    let mut items = 0usize;
    for item in LogReader::new(data) {
        items += 1;
        assert!(items <= data.len() + 1, "more items than bytes");
        let at = match &item {
            LogItem::Record { offset, data: rec } => {
                assert!(rec.len() <= data.len());
                if let Ok(b) = WriteBatchReader::new(rec) {
                    let n = b.records().take(100_000).filter(|r| r.is_ok()).count();
                    assert!(n <= rec.len());
                }
                if let Ok(e) = VersionEdit::decode(rec) {
                    let mut again = Vec::new();
                    e.encode(&mut again);
                    assert_eq!(VersionEdit::decode(&again).expect("re-encoded edit"), e);
                }
                *offset
            }
            LogItem::Damage(Error::BadLogRecord {
                offset, dropped, ..
            }) => {
                assert!(offset + dropped <= data.len() as u64 + 7);
                *offset
            }
            LogItem::Damage(other) => panic!("unexpected error {other}"),
            LogItem::TornTail { offset, len } => {
                assert_eq!(offset + len, data.len() as u64);
                *offset
            }
        };
        assert!(at < data.len() as u64 || data.is_empty());
        if let Some(l) = last {
            assert!(at >= l, "offsets went back from {l} to {at}");
        }
        last = Some(at);
    }
});
