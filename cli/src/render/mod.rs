//! What the subcommands print: the `--format` vocabulary and stdout (`output`), bytes as
//! text (`text`), Chrome's storage (IndexedDB keys and values, DOM storage) on them
//! (`chrome`), and the one entry formatter over all three (`rows`).

pub mod chrome;
pub mod output;
pub mod rows;
pub mod text;
