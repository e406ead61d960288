//! The library's modules import downward only: this test reads `src/*.rs`, collects every
//! `crate::<module>` path in non-test, non-comment code (`use crate::...` lines and inline
//! paths), and fails on any cycle in that graph, naming it.
//! There is none: `format` (layouts and constants) knows nothing of errors; decoding the
//! footer and checking handles with errors lives in `format_decode`, above both.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Module -> modules it names, from the library's top-level source files.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut names = BTreeSet::new();
    for e in fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && p.join("mod.rs").exists() {
            names.insert(p.file_name().unwrap().to_string_lossy().into_owned());
        } else if p.extension().is_some_and(|x| x == "rs") {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            if stem != "lib" {
                names.insert(stem);
            }
        }
    }
    let mut g = BTreeMap::new();
    for m in &names {
        let file = src.join(format!("{m}.rs"));
        // A directory module: every file under it, nested directories included; unit-test
        // files (`tests.rs`) may use anything.
        let files = if file.exists() {
            vec![file]
        } else {
            rust_files(&src.join(m))
        };
        let mut deps = BTreeSet::new();
        for f in files.iter().filter(|f| !f.ends_with("tests.rs")) {
            for line in fs::read_to_string(f).unwrap().lines() {
                let code = line.trim_start();
                if code.starts_with("#[cfg(test)]") {
                    break; // unit tests may use anything
                }
                if code.starts_with("//") {
                    continue;
                }
                let code = code.split("//").next().unwrap_or("");
                let mut rest = code;
                while let Some(at) = rest.find("crate::") {
                    rest = &rest[at + "crate::".len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if names.contains(&name) && &name != m {
                        deps.insert(name);
                    }
                }
            }
        }
        g.insert(m.clone(), deps);
    }
    g
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// Every cycle's modules, as strongly connected components of more than one module.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for d in &g[&m] {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen
    };
    let all: BTreeMap<_, _> = g.keys().map(|m| (m.clone(), reach(m))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for m in g.keys() {
        let scc: BTreeSet<String> = g
            .keys()
            .filter(|o| *o == m || (all[m].contains(*o) && all[*o].contains(m)))
            .cloned()
            .collect();
        if scc.len() > 1 && !out.contains(&scc) {
            out.push(scc);
        }
    }
    out
}

#[test]
fn modules_import_downward_only() {
    let g = graph();
    assert!(g.contains_key("table") && g.contains_key("format"), "{g:?}");
    let found = cycles(&g);
    assert!(
        found.is_empty(),
        "import cycles among src modules: {found:?}"
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let mut g = graph();
    // table_iter imports table; make table import table_iter as it once did.
    g.get_mut("table").unwrap().insert("table_iter".into());
    let found = cycles(&g);
    assert!(
        found
            .iter()
            .any(|c| c.contains("table") && c.contains("table_iter")),
        "{found:?}"
    );
}
