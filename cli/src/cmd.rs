//! The subcommands, one module each, named as `sst --help` lists them. A command imports
//! what lies below `cmd/` (`input`, `render`, `chrome`, `exit`), never another command.

pub mod blocks;
pub mod bloom;
pub mod build;
pub mod conform;
pub mod db;
pub mod filter;
pub mod get;
pub mod log;
pub mod manifest;
pub mod profile;
pub mod refilter;
pub mod scan;
pub mod stats;
pub mod verify;
