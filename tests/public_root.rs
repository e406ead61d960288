//! The crate root stays small (about 20 names, at most 25): the names `src/lib.rs`
//! makes public at its top level (`pub mod` and the names of `pub use`), read from the source,
//! are counted and compared with the list below, so that adding one is a decision made here.
//! The list is checked against the compiler too: each name must resolve at the root.

use std::collections::BTreeSet;

/// The names at the root, sorted.
const ROOT: &[&str] = &[
    "BlockCache",
    "BytewiseComparator",
    "Comparator",
    "Compression",
    "Cursor",
    "Db",
    "Error",
    "FilterPolicy",
    "Lookup",
    "Options",
    "RandomAccess",
    "ReadOptions",
    "OpenOptions",
    "Result",
    "TableBuilder",
    "TableReader",
    "cursor",
    "db",
    "error",
    "filter",
    "raw",
    "refilter",
    "table",
];

/// The public names declared at brace depth 0 of `src` (a `lib.rs`).
fn root_names(src: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut depth = 0i32;
    let mut stmt = String::new();
    for line in src.lines() {
        let code = line.split("//").next().unwrap_or("");
        // A statement starts at depth 0 and may continue on the lines after it.
        if (depth == 0 && code.trim_start().starts_with("pub ")) || !stmt.is_empty() {
            stmt.push_str(code);
            stmt.push(' ');
            let t = stmt.trim();
            if let Some(rest) = t.strip_prefix("pub mod ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                names.insert(name);
                stmt.clear();
            } else if t.starts_with("pub use ") && t.ends_with(';') {
                names.extend(use_names(&t["pub use ".len()..t.len() - 1]));
                stmt.clear();
            } else if !t.starts_with("pub use ") {
                stmt.clear();
            }
        }
        depth += code.matches('{').count() as i32 - code.matches('}').count() as i32;
    }
    names
}

/// The names a use tree brings in: the last segment of each leaf (or its `as` alias).
fn use_names(tree: &str) -> Vec<String> {
    tree.split([',', '{', '}'])
        .map(str::trim)
        .filter(|leaf| !leaf.is_empty() && !leaf.ends_with("::"))
        .map(|leaf| match leaf.split_once(" as ") {
            Some((_, alias)) => alias.trim().to_string(),
            None => leaf.rsplit("::").next().unwrap_or(leaf).to_string(),
        })
        .collect()
}

#[test]
fn the_crate_root_has_at_most_25_names_and_they_are_the_listed_ones() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs"))
        .expect("src/lib.rs");
    let found = root_names(&src);
    let listed: BTreeSet<String> = ROOT.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        found, listed,
        "src/lib.rs's public root differs from the list"
    );
    assert!(found.len() <= 25, "{} names at the root", found.len());
}

#[test]
fn the_counter_sees_grouped_uses_modules_and_skips_nested_ones() {
    let src = "pub mod a;\nmod hidden;\npub use x::{B, y::C};\npub use z::{\n    D,\n    E,\n};\n\
               pub use w::H as I;\npub mod raw {\n    pub use crate::inner::F;\n}\n// pub use G;\n";
    let got: Vec<String> = root_names(src).into_iter().collect();
    assert_eq!(got, ["B", "C", "D", "E", "I", "a", "raw"]);
}

/// Each listed name resolves at the root (a name removed from lib.rs but left in the list
/// would fail the first test; this catches a list that names something else).
#[allow(unused_imports)]
mod resolve {
    use leveldb_table::{
        cursor, db, error, filter, raw, refilter, table, BlockCache, BytewiseComparator,
        Comparator, Compression, Cursor, Db, Error, FilterPolicy, Lookup, OpenOptions, Options,
        RandomAccess, ReadOptions, Result, TableBuilder, TableReader,
    };
}
