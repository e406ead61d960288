//! Chrome IndexedDB's LevelDB key coding: the constants and the byte layouts.
//!
//! Every constant here is Chromium's, from
//! `content/browser/indexed_db/indexed_db_leveldb_coding.cc` and its description in
//! `content/browser/indexed_db/docs/leveldb_coding_scheme.md`.
//!
//! ```text
//! key    = prefix | body
//! prefix = +--------+-----------+-----------+-----------+
//!          | packed | db id     | store id  | index id  |   ids: little-endian, minimal
//!          | 1 byte | 1..8 B    | 1..8 B    | 1..4 B    |   length, value 0 = "none"
//!          +--------+-----------+-----------+-----------+
//!          packed = (db_len - 1) << 5 | (store_len - 1) << 2 | (index_len - 1)
//!
//! prefix (db, store, index)         body
//! (0, _, _)  global metadata        type byte [+ fields: 100 varint db id;
//!                                    201 origin, database name (varint length + UTF-16BE)]
//! (d, 0, _)  database metadata      type byte [+ fields: 50 store, meta byte; 100 store,
//!                                    index, meta byte; 150 store; 151 store, index;
//!                                    200 store name; 201 store, index name]
//! (d, s, 1)  object store data      IDB key                    value: varint version | SSV
//! (d, s, 2)  exists entry           IDB key                    value: varint version
//! (d, s, 3)  blob entry             IDB key                    value: blob descriptions
//! (d, s, i)  index data, i >= 30    IDB key [varint sequence [primary IDB key]]
//!
//! IDB key = type byte | payload
//!   0 null (sorts last)   1 string: varint n | n UTF-16BE code units
//!   2 date: f64 LE        3 number: f64 LE
//!   4 array: varint n | n IDB keys          5 min key (sorts first)
//!   6 binary: varint n | n bytes
//! varint = 7 bits per byte, little-endian groups, high bit = more (at most 64 bits)
//! ```

/// The comparator's name, as Chromium registers it with LevelDB (and as the MANIFEST
/// records it).
pub const IDB_COMPARATOR_NAME: &str = "idb_cmp1";

/// IDB key type byte: null (Chromium's "invalid" key, greater than every other key).
pub const KEY_NULL: u8 = 0;
/// IDB key type byte: string.
pub const KEY_STRING: u8 = 1;
/// IDB key type byte: date.
pub const KEY_DATE: u8 = 2;
/// IDB key type byte: number.
pub const KEY_NUMBER: u8 = 3;
/// IDB key type byte: array.
pub const KEY_ARRAY: u8 = 4;
/// IDB key type byte: the minimum key (less than every other key).
pub const KEY_MIN: u8 = 5;
/// IDB key type byte: binary.
pub const KEY_BINARY: u8 = 6;

/// Deepest array nesting Chromium encodes (`IndexedDBKey::kMaximumDepth`).
pub const MAX_KEY_DEPTH: usize = 2000;

/// Index id of object store data records.
pub const INDEX_DATA_RECORDS: i64 = 1;
/// Index id of exists entries.
pub const INDEX_EXISTS: i64 = 2;
/// Index id of blob entries.
pub const INDEX_BLOB: i64 = 3;
/// Smallest index id of a user index.
pub const MIN_USER_INDEX: i64 = 30;

/// Global metadata type bytes below this carry no fields (schema version, max database
/// id, data version, blob journals, sweep and compaction times).
pub const GLOBAL_SIMPLE_LIMIT: u8 = 7;
/// Global metadata: LevelDB scopes (Chromium's undo log), compared bytewise after the byte.
pub const GLOBAL_SCOPES: u8 = 50;
/// Global metadata: database free list (varint database id).
pub const GLOBAL_DB_FREE_LIST: u8 = 100;
/// Global metadata: database name (origin, name).
pub const GLOBAL_DB_NAME: u8 = 201;

/// Database metadata type bytes below this carry no fields (origin, name, version...).
pub const DB_SIMPLE_LIMIT: u8 = 6;
/// Database metadata: object store metadata (varint store id, metadata type byte).
pub const DB_STORE_META: u8 = 50;
/// Database metadata: index metadata (store id, index id, metadata type byte).
pub const DB_INDEX_META: u8 = 100;
/// Database metadata: object store free list (store id).
pub const DB_STORE_FREE_LIST: u8 = 150;
/// Database metadata: index free list (store id, index id).
pub const DB_INDEX_FREE_LIST: u8 = 151;
/// Database metadata: object store names (name).
pub const DB_STORE_NAMES: u8 = 200;
/// Database metadata: index names (store id, name).
pub const DB_INDEX_NAMES: u8 = 201;

/// Blink's serialized-value version tag, the first byte of a record's value after its
/// version varint (`kVersionTag` in Blink's `SerializedScriptValue`).
pub const SSV_VERSION_TAG: u8 = 0xff;
/// Blink wrapper version 17, whose encoding hole IndexedDB uses for processed values
/// (`kRequiresProcessingSSVPseudoVersion` in Blink's `idb_value_wrapping.cc`).
pub const SSV_PSEUDO_VERSION: u8 = 0x11;
/// After the pseudo-version: the value is in a blob (varint size, varint blob index).
pub const SSV_WRAPPED_IN_BLOB: u8 = 1;
/// After the pseudo-version: the serialized value is snappy-compressed.
pub const SSV_SNAPPY: u8 = 2;
/// After Blink's version (21 and later): the trailer offset tag, followed by the trailer's
/// 8-byte offset and 4-byte size (`kTrailerOffsetTag` in Blink's serializer).
pub const SSV_TRAILER_TAG: u8 = 0xfe;
/// The trailer offset tag and its 12 bytes.
pub const SSV_TRAILER_LEN: usize = 13;
