//! Sibling modules import each other in one direction only, in every folder of every crate of
//! the workspace (the library, the `sst` CLI, `sst-bloom`, `sst-chrome`, the conformance kit,
//! the Python package, the engine).
//!
//! This is the coarse form of the layering rule (`tests/module_graph.rs` checks the fine form,
//! file by file, through re-exports): for two modules `a` and `b` in one folder, no file
//! under `a` may name a path into `b` while a file under `b` names a path into `a`. Every
//! `crate::` or `super::` path counts, in code and in doc links alike (a doc link is a
//! reference a reader follows); only what follows a file's first `#[cfg(test)]` is left out.
//! And no file of those crates is over 500 lines (the style guide's limit).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "bin") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `table/mod.rs` and `table.rs` are `table`, `lib.rs` the root.
fn module_path(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut p: ModPath = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = p.last().cloned().unwrap_or_default();
    if last == "mod" || (p.len() == 1 && (last == "lib" || last == "main")) {
        p.pop();
    }
    p
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths after each `prefix` (`crate::` or `super::`) in `text`, split at `::`.
fn paths_after(text: &str, prefix: &str) -> Vec<ModPath> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (at, _) in text.match_indices(prefix) {
        let mut i = at + prefix.len();
        let mut segs = Vec::new();
        loop {
            let start = i;
            while i < bytes.len() && is_ident_byte(bytes[i]) {
                i += 1;
            }
            if start == i {
                break;
            }
            segs.push(text[start..i].to_string());
            if text[i..].starts_with("::") {
                i += 2;
            } else {
                break;
            }
        }
        if !segs.is_empty() {
            out.push(segs);
        }
    }
    out
}

/// For each folder, the sibling edges `from -> to` its modules' files name.
fn sibling_edges(src: &Path) -> BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mods: BTreeSet<ModPath> = files.iter().map(|f| module_path(src, f)).collect();
    let mut edges: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let p = module_path(src, file);
        let text = fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut refs = paths_after(code, "crate::");
        for r in paths_after(code, "super::") {
            let mut full = p[..p.len().saturating_sub(1)].to_vec();
            full.extend(r);
            refs.push(full);
        }
        for r in refs {
            let k = p.iter().zip(&r).take_while(|(a, b)| a == b).count();
            if k < p.len() && k < r.len() && mods.contains(&r[..=k]) {
                edges
                    .entry(p[..k].to_vec())
                    .or_default()
                    .entry(p[k].clone())
                    .or_default()
                    .insert(r[k].clone());
            }
        }
    }
    edges
}

/// The circles of one folder's graph, each as the modules on it.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
        found: &mut Vec<Vec<String>>,
    ) {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            match state.get(d.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|s| s == d).unwrap_or(0);
                    found.push(stack[from..].to_vec());
                }
                None => visit(d, g, state, stack, found),
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
    }
    let (mut state, mut found) = (BTreeMap::new(), Vec::new());
    for n in g.keys() {
        if !state.contains_key(n) {
            visit(n, g, &mut state, &mut Vec::new(), &mut found);
        }
    }
    found
}

fn workspace_circles(crate_src: &str) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(crate_src);
    let mut out = Vec::new();
    for (folder, g) in sibling_edges(&src) {
        for c in circles(&g) {
            out.push(format!(
                "{crate_src}/{}: {}",
                folder.join("/"),
                c.join(" -> ")
            ));
        }
    }
    out
}

#[test]
fn siblings_import_one_way_in_every_crate() {
    let mut all = Vec::new();
    for src in [
        "src",
        "cli/src",
        "bloom/src",
        "chrome/src",
        "python/src",
        "conform/src",
        "examples/mini_lsm/src",
    ] {
        all.extend(workspace_circles(src));
    }
    // None known: the last one (cli/src/: bloom -> bloom_counting) went with cli/src/bloom/.
    assert!(all.is_empty(), "sibling modules in a circle: {all:?}");
}

#[test]
fn the_sibling_rule_sees_doc_links_and_super_paths() {
    let text = "/// See [`x`](crate::a::b::x).\nuse super::c::D;\n#[cfg(test)]\nuse crate::e;";
    let code = text.split("#[cfg(test)]").next().unwrap();
    assert_eq!(paths_after(code, "crate::"), vec![vec!["a", "b", "x"]]);
    assert_eq!(paths_after(code, "super::"), vec![vec!["c", "D"]]);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&g), vec![vec!["a".to_string(), "b".to_string()]]);
}

#[test]
fn no_file_of_the_library_or_the_cli_is_over_500_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut seen = 0;
    for src in [
        "src",
        "cli/src",
        "bloom/src",
        "chrome/src",
        "python/src",
        "conform/src",
        "examples/mini_lsm/src",
    ] {
        let mut files = Vec::new();
        rust_files(&root.join(src), &mut files);
        for f in files {
            seen += 1;
            let lines = fs::read_to_string(&f).unwrap().lines().count();
            if lines > 500 {
                long.push(format!("{} ({lines})", f.display()));
            }
        }
    }
    assert!(seen > 100, "only {seen} files found");
    assert!(long.is_empty(), "files over 500 lines: {long:?}");
}

#[test]
fn the_leveldb_crate_names_no_application() {
    // Chrome's storage is the sst-chrome crate's; an application's order reaches the
    // database reader through `DbOptions::comparators`.
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut named = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).unwrap().to_lowercase();
        for word in [
            "idb",
            "indexeddb",
            "chrome",
            "chromium",
            "v8value",
            "dom_storage",
        ] {
            if text.contains(word) {
                named.push(format!("{}: {word}", f.display()));
            }
        }
    }
    assert!(files.len() > 50, "only {} files", files.len());
    assert!(named.is_empty(), "{named:?}");
}
