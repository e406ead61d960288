//! Reading past damage (a database opened with
//! `DbOptions::salvage`): what was skipped, as
//! [`Damage`] in a [`DamageLog`], and the walks over a table whose blocks are damaged (past
//! them) or whose footer or index is lost (its blocks found by their checksums).

mod damage;
mod table;

pub use damage::{Damage, DamageLog};
pub use table::{EntryPos, EntryPosition, FoundCursor, FoundEntry, FoundTable, SkipIter};
