//! The options that say how a table is read (`--keys`, `--comparator`, `--no-verify`):
//! their values.

/// `--keys`: how a table's keys are read.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeysArg {
    /// Detect: internal keys (a LevelDB database's tables) or plain keys.
    Auto,
    /// Internal keys: user key + 8-byte sequence/type tag.
    Internal,
    /// Plain keys, as stored.
    Plain,
}

/// The orders `--comparator` names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ComparatorArg {
    /// `leveldb.BytewiseComparator`: keys as unsigned bytes (LevelDB's default).
    Bytewise,
    /// Chrome IndexedDB's `idb_cmp1`.
    #[value(name = "idb_cmp1")]
    IdbCmp1,
}

impl ComparatorArg {
    /// The comparator's registered name.
    pub fn name(self) -> &'static str {
        match self {
            ComparatorArg::Bytewise => "leveldb.BytewiseComparator",
            ComparatorArg::IdbCmp1 => leveldb_table::idb::format::IDB_COMPARATOR_NAME,
        }
    }
}
