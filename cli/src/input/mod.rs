//! What the subcommands read and how: the reading flags (`flags`), a table opened with them
//! (`table_open`), its comparator (`order`), a damaged table's salvage (`salvage`), the kind
//! of a file given (`filekind`), keys given on the command line (`keys`), input read line by
//! line (`lines`), the entries `build` and `db build` write and the filter they write (`entries`,
//! `filter_flags`), files in the log
//! format (`log_file`).

pub mod entries;
pub mod filekind;
pub mod filter_flags;
pub mod flags;
pub mod keys;
pub mod lines;
pub mod log_file;
pub mod order;
pub mod salvage;
pub mod table_open;
