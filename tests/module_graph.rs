//! Modules import downward only, at every level of nesting: this test reads the module tree
//! of the library (`src/lib.rs`), of Chrome's storage (`chrome/src/lib.rs`), of the `sst`
//! CLI (`cli/src/main.rs`) and of the engine (`examples/mini_lsm/src/lib.rs`), resolves every
//! path each module's code names (`crate::`, `super::`, `self::`, a child module's name, or a
//! name it imported) to the module that defines the item, and fails on any cycle in that
//! graph, naming the modules in it.
//!
//! Every module file is a node (`table::lookup`, `block`, ...). A re-export of a child's item
//! by its parent (`pub use iter::BlockIter;` in `block/mod.rs`) is containment, not a
//! dependency: a path through it resolves to the child that defines the item. Any other
//! import is an edge, including a child's `use super::...` and a parent's private
//! `use child::...`. Unit-test modules (`#[cfg(test)] mod ...`) may use anything and are left
//! out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
#[path = "module_graph/graph.rs"]
mod graph;
#[path = "module_graph/source.rs"]
mod source;

use graph::{cycles, graph};
use source::{code_of, scan, Module};
fn library_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")
}

fn chrome_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("chrome/src/lib.rs")
}

fn cli_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cli/src/main.rs")
}

fn engine_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mini_lsm/src/lib.rs")
}

/// Fails naming every cycle of the crate at `root` but the `known` ones, and on a known
/// one that is gone (so that the list only shrinks, and is empty once they are all fixed).
fn assert_cycles(root: &Path, known: &[&[&str]]) {
    let g = graph(root);
    let found = cycles(&g);
    let known: Vec<BTreeSet<String>> = known
        .iter()
        .map(|c| c.iter().map(|m| m.to_string()).collect())
        .collect();
    let report = |cs: &[&BTreeSet<String>]| -> String {
        cs.iter()
            .map(|c| {
                let edges: Vec<String> = c
                    .iter()
                    .flat_map(|m| {
                        g[m].iter()
                            .filter(|d| c.contains(*d))
                            .map(move |d| format!("{m} -> {d}"))
                    })
                    .collect();
                format!("  {}", edges.join(", "))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let new: Vec<&BTreeSet<String>> = found.iter().filter(|c| !known.contains(c)).collect();
    assert!(
        new.is_empty(),
        "import cycles among the modules of {}:\n{}",
        root.display(),
        report(&new)
    );
    let gone: Vec<&BTreeSet<String>> = known.iter().filter(|c| !found.contains(c)).collect();
    assert!(
        gone.is_empty(),
        "cycles listed as known are gone (take them off the list): {gone:?}"
    );
}

/// The CLI has no import cycle at any level (the list must stay empty: the test fails on a
/// listed cycle that is gone).
const KNOWN_CLI_CYCLES: &[&[&str]] = &[];

/// The library has no import cycle at any level.
const KNOWN_LIBRARY_CYCLES: &[&[&str]] = &[];

#[test]
fn library_modules_import_downward_only() {
    let g = graph(&library_root());
    // The walk reaches nested modules and resolves re-exports to where items are defined.
    assert!(
        g.contains_key("table::lookup") && g.contains_key("block::iter"),
        "{g:?}"
    );
    assert!(g["block::iter"].contains("block"), "{:?}", g["block::iter"]);
    assert_cycles(&library_root(), KNOWN_LIBRARY_CYCLES);
}

#[test]
fn chrome_modules_import_downward_only() {
    let g = graph(&chrome_root());
    assert!(
        g.contains_key("idb::directory") && g.contains_key("v8value::decode"),
        "{g:?}"
    );
    assert!(
        g["idb::directory"].contains("error"),
        "{:?}",
        g["idb::directory"]
    );
    assert_cycles(&chrome_root(), &[]);
}

#[test]
fn cli_modules_import_downward_only() {
    let g = graph(&cli_root());
    assert!(
        g.contains_key("cmd::db::get") && g.contains_key("exit"),
        "{g:?}"
    );
    assert_cycles(&cli_root(), KNOWN_CLI_CYCLES);
}

/// The CLI's command of a module: `db` for `cmd::db::get`, `None` outside `cmd/`.
fn command_of(module: &str) -> Option<&str> {
    let mut parts = module.split("::");
    (parts.next() == Some("cmd"))
        .then(|| parts.next())
        .flatten()
}

/// Every import of one command's module by another command's (`cmd::a::x -> cmd::b`), in a
/// CLI module graph: commands share only what lies below `cmd/`.
fn cross_command_imports(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for (m, deps) in g {
        let Some(from) = command_of(m) else { continue };
        for d in deps {
            if command_of(d).is_some_and(|to| to != from) {
                out.push(format!("{m} -> {d}"));
            }
        }
    }
    out
}

#[test]
fn cli_commands_import_no_other_command() {
    let g = graph(&cli_root());
    // Every subcommand is a module under cmd/, nested ones (db) included.
    for m in ["cmd::scan", "cmd::db", "cmd::db::get", "cmd::bloom::io"] {
        assert!(g.contains_key(m), "{m} not in {:?}", g.keys());
    }
    let found = cross_command_imports(&g);
    assert!(
        found.is_empty(),
        "CLI commands importing another command (move what they share below cmd/): {found:?}"
    );
}

#[test]
fn the_command_check_finds_a_command_importing_another() {
    let mut g = graph(&cli_root());
    // `db build` reads its entries from input/, as `build` does; make it import `build`.
    let (a, b) = ("cmd::db::build", "cmd::build");
    assert!(g.contains_key(b), "{:?}", g.keys());
    assert!(cross_command_imports(&g).is_empty());
    g.get_mut(a).unwrap().insert(b.into());
    assert_eq!(cross_command_imports(&g), vec![format!("{a} -> {b}")]);
    // A command's own modules and what lies below cmd/ are not another command.
    g.get_mut(a).unwrap().remove(b);
    g.get_mut(a).unwrap().insert("cmd::db::open".into());
    g.get_mut(a).unwrap().insert("input::entries".into());
    assert!(cross_command_imports(&g).is_empty());
}

#[test]
fn engine_modules_import_downward_only() {
    let g = graph(&engine_root());
    assert!(
        g.contains_key("cli::bench") && g.contains_key("write"),
        "{g:?}"
    );
    assert_cycles(&engine_root(), &[]);
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let mut g = graph(&library_root());
    // table::footer imports format (the constants); make format import the footer.
    let (a, b) = ("format", "table::footer");
    assert!(g[b].contains(a), "{:?}", g[b]);
    g.get_mut(a).unwrap().insert(b.into());
    let found = cycles(&g);
    assert!(
        found.iter().any(|c| c.contains(a) && c.contains(b)),
        "{found:?}"
    );
}

#[test]
fn paths_resolve_through_imports_and_re_exports() {
    let code = "use crate::a::{self, b::{C as D, E}, f::*};\npub use inner::G;\nmod inner;\n\
                fn x() { a::h::i(); crate::j::K::new(); }\n#[cfg(test)]\nmod tests { use crate::z; }";
    let mut m = Module::default();
    scan(&code_of(code), &mut m);
    assert_eq!(m.children, BTreeSet::from(["inner".to_string()]));
    assert_eq!(m.aliases["G"], vec!["inner", "G"]);
    assert_eq!(m.imported["a"], vec!["crate", "a"]);
    assert_eq!(m.imported["D"], vec!["crate", "a", "b", "C"]);
    let uses: BTreeSet<String> = m.uses.iter().map(|p| p.join("::")).collect();
    for want in [
        "crate::a::b::C",
        "crate::a::b::E",
        "crate::a::f",
        "a::h::i",
        "crate::j::K::new",
    ] {
        assert!(uses.contains(want), "{want} not in {uses:?}");
    }
    assert!(
        !uses.iter().any(|u| u.contains('z')),
        "the test module was read: {uses:?}"
    );
}
