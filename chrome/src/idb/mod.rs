//! Chrome IndexedDB databases: the `idb_cmp1` order and the key and value coding.
//!
//! Chrome keeps each origin's IndexedDB data in a LevelDB directory whose MANIFEST names the
//! comparator `idb_cmp1`. Its tables use LevelDB's bloom filter over user keys, so they are
//! read like any other once the order is known: [`IdbComparator`] is that order, and
//! the database reader (`leveldb_table::Db::open`) takes it from the options
//! ([`known_order`], [`crate::db_options`]) when the MANIFEST names it. [`decode_key`] and
//! [`decode_record_value`] turn keys and values into their parts for display;
//! [`idb_catalog`] reads the names and [`idb_value`] a record's serialized value.
//! The coding is described in [`format`](mod@format) (`docs/indexeddb.md` has the whole story).

mod catalog;
mod coding;
mod comparator;
mod directory;
mod external;
pub mod format;
mod handle_token;
mod key;
mod key_json;
mod origin;
pub mod sqlite;
mod value;
mod wrapping;

pub use catalog::{
    decode_key_path, Catalog, DatabaseInfo, IndexInfo, KeyPath, Selection, StoreInfo,
};
pub use coding::{KeyPrefix, PrefixKind};
pub use comparator::{is_well_formed, key_prefix, known_order, IdbComparator};
pub use directory::{
    idb_blob_dir, idb_blob_list, idb_catalog, idb_catalog_with_deleted, idb_value, prefix_key,
    IdbValue, ValueSource,
};
pub use external::{
    blob_dir_name, blob_entry_key, blob_file_path, decode_external_objects, ExternalKind,
    ExternalObject,
};
pub use handle_token::{decode_handle_token, HandleLocation, HandleToken};
pub use key::{decode_key, DecodedKey, IdbKey, KeyBody, MetaField};
pub use key_json::{parse_key_json, write_json_string};
pub use origin::{origin_from_identifier, origin_of_directory};
pub use sqlite::{identify_sqlite, SqliteInfo};
pub use value::{decode_envelope, decode_exists_value, decode_record_value, Envelope, RecordValue};
pub use wrapping::{unwrap_value, Unwrapped};
