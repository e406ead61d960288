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
use std::fs;
use std::path::{Path, PathBuf};

/// A module path from the crate root (`[]` is the root).
type ModPath = Vec<String>;

/// One module file.
#[derive(Default, Debug)]
struct Module {
    /// Child modules declared in this file (outside unit tests).
    children: BTreeSet<String>,
    /// Names this module re-exports (`pub use`), each to the path it names.
    aliases: BTreeMap<String, ModPath>,
    /// Paths of glob re-exports (`pub use path::*`).
    globs: Vec<ModPath>,
    /// Paths named by its code: private imports and inline paths, as written.
    uses: Vec<ModPath>,
    /// Names its private imports bring in, each to the path it names.
    imported: BTreeMap<String, ModPath>,
}

/// The module tree of the crate whose root file is `root`.
fn modules(root: &Path) -> BTreeMap<ModPath, Module> {
    let mut out = BTreeMap::new();
    let mut todo = vec![(Vec::new(), root.to_path_buf())];
    while let Some((path, file)) = todo.pop() {
        let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = code_of(&text);
        let mut m = Module::default();
        scan(&code, &mut m);
        // Where child module files are: beside a mod.rs / lib.rs / main.rs, else in a
        // folder named after the file.
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = if ["mod", "lib", "main"].contains(&name.as_str()) {
            file.parent().unwrap().to_path_buf()
        } else {
            file.parent().unwrap().join(&name)
        };
        for c in &m.children {
            let flat = dir.join(format!("{c}.rs"));
            let nested = dir.join(c).join("mod.rs");
            let f = if flat.exists() { flat } else { nested };
            assert!(f.exists(), "module {c} of {}: no file", file.display());
            let mut p = path.clone();
            p.push(c.clone());
            todo.push((p, f));
        }
        out.insert(path, m);
    }
    out
}

/// The source without comments, string literals and unit-test modules.
fn code_of(text: &str) -> String {
    // Comments and literals out, character by character.
    let mut s = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                s.push_str("\"\"");
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                // A character literal ('a', '\n', '\''), not a lifetime.
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                s.push_str("' '");
            }
            c => {
                s.push(c as char);
                i += 1;
            }
        }
    }
    // Unit-test modules out: `#[cfg(test)]` before `mod name;` or `mod name { ... }`.
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let is_mod = item.starts_with("mod ") || item.starts_with("pub mod ");
        let open = item.find('{');
        let semi = item.find(';');
        rest = match (is_mod, open, semi) {
            (true, _, Some(sc)) if open.is_none_or(|o| sc < o) => &item[sc + 1..],
            (true, Some(o), _) => {
                let mut depth = 0;
                let mut end = item.len();
                for (j, c) in item[o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = o + j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                &item[end..]
            }
            // A test-only item that is not a module: kept (it may only add edges).
            _ => after,
        };
    }
    out.push_str(rest);
    out
}

/// Tokens: identifiers, `::`, and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let mut t = Vec::new();
    let b: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            t.push(b[start..i].iter().collect());
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            t.push("::".into());
            i += 2;
        } else if c == '$' && b.get(i + 1) == Some(&'c') {
            // `$crate` in a macro: an absolute path, kept as `crate`.
            i += 1;
        } else {
            if !c.is_whitespace() {
                t.push(c.to_string());
            }
            i += 1;
        }
    }
    t
}

/// Fills `m` from a module's code: child modules, re-exports, imports and inline paths.
fn scan(code: &str, m: &mut Module) {
    let t = tokens(code);
    let mut i = 0;
    // Brace depth of the code at i, and the depth of each inline module entered (its
    // contents are the file's, but its `pub use`s re-export from the inline module).
    let mut depth = 0usize;
    let mut inline_mods: Vec<usize> = Vec::new();
    while i < t.len() {
        let tok = t[i].as_str();
        match tok {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline_mods.last() == Some(&depth) {
                    inline_mods.pop();
                }
            }
            _ => {}
        }
        // Visibility before `use` / `mod`: `pub`, `pub(crate)`, `pub(super)`, `pub(in p)`.
        let (public, j) = if tok == "pub" {
            let mut j = i + 1;
            if t.get(j).map(String::as_str) == Some("(") {
                while j < t.len() && t[j] != ")" {
                    j += 1;
                }
                j += 1;
            }
            (true, j)
        } else {
            (false, i)
        };
        match t.get(j).map(String::as_str) {
            Some("mod") if t.get(j + 2).map(String::as_str) == Some(";") => {
                m.children.insert(t[j + 1].clone());
                i = j + 3;
                continue;
            }
            Some("mod") if t.get(j + 2).map(String::as_str) == Some("{") => {
                inline_mods.push(depth);
                depth += 1;
                i = j + 3;
                continue;
            }
            Some("use") => {
                let end = (j..t.len()).find(|&k| t[k] == ";").unwrap_or(t.len());
                let mut leaves = Vec::new();
                use_tree(&t[j + 1..end], &[], &mut leaves);
                for (path, name) in leaves {
                    if !inline_mods.is_empty() {
                        // Re-exports of an inline module (`pub mod raw { pub use ... }`):
                        // nothing in the crate imports through them.
                        continue;
                    }
                    match (public, name) {
                        (true, Some(n)) => {
                            m.aliases.insert(n, path);
                        }
                        (true, None) => m.globs.push(path),
                        (false, Some(n)) => {
                            m.imported.insert(n, path.clone());
                            m.uses.push(path);
                        }
                        (false, None) => m.uses.push(path),
                    }
                }
                i = end + 1;
                continue;
            }
            _ => {}
        }
        // An inline path: ident (:: ident)+ not preceded by `::`.
        let starts = (tok.chars().next().unwrap().is_alphabetic() || tok.starts_with('_'))
            && t.get(i + 1).map(String::as_str) == Some("::")
            && (i == 0 || t[i - 1] != "::");
        if starts {
            let mut path = vec![t[i].clone()];
            let mut k = i + 1;
            while t.get(k).map(String::as_str) == Some("::")
                && t.get(k + 1)
                    .is_some_and(|x| x.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                path.push(t[k + 1].clone());
                k += 2;
            }
            m.uses.push(path);
            i = k;
            continue;
        }
        i += 1;
    }
}

/// The leaves of a use tree: (full path, the name it binds: `None` for a glob).
fn use_tree(t: &[String], prefix: &[String], out: &mut Vec<(ModPath, Option<String>)>) {
    // Split at top-level commas.
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (k, x) in t.iter().enumerate() {
        match x.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            "," if depth == 0 => {
                parts.push(&t[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&t[start..]);
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let mut path = prefix.to_vec();
        let mut k = 0;
        while k < part.len() {
            match part[k].as_str() {
                "::" => {}
                "{" => {
                    let close = part.len() - 1 - part.iter().rev().position(|x| x == "}").unwrap();
                    use_tree(&part[k + 1..close], &path, out);
                    break;
                }
                "*" => {
                    out.push((path.clone(), None));
                    break;
                }
                "as" => {
                    let name = part[k + 1].clone();
                    if name != "_" {
                        out.push((path.clone(), Some(name)));
                    }
                    break;
                }
                "self" if k > 0 || !path.is_empty() => {
                    // `a::{self}`: binds `a`.
                    let name = path.last().cloned();
                    out.push((path.clone(), name));
                    break;
                }
                seg => {
                    path.push(seg.to_string());
                    if k + 1 == part.len() {
                        out.push((path.clone(), Some(seg.to_string())));
                    }
                }
            }
            k += 1;
        }
    }
}

/// The module that defines what `path`, named in module `from`, refers to; `None` for
/// paths outside the crate (std, dependencies) and for local items of `from`.
fn resolve(
    mods: &BTreeMap<ModPath, Module>,
    from: &ModPath,
    path: &[String],
    hops: usize,
) -> Option<ModPath> {
    if hops > 16 || path.is_empty() {
        return None;
    }
    let mut at: ModPath = match path[0].as_str() {
        "crate" => Vec::new(),
        "self" => from.clone(),
        "super" => from[..from.len().checked_sub(1)?].to_vec(),
        first => {
            if mods[from].children.contains(first) {
                let mut p = from.clone();
                p.push(first.to_string());
                p
            } else if let Some(target) = mods[from].imported.get(first) {
                // A name this module imported: continue from what it names.
                if target.len() == 1 && target[0] == first {
                    return None; // an external crate (`use bytes;`)
                }
                let mut full = target.clone();
                full.extend_from_slice(&path[1..]);
                return resolve(mods, from, &full, hops + 1);
            } else {
                return None;
            }
        }
    };
    let mut rest = &path[1..];
    while let Some(seg) = rest.first() {
        match seg.as_str() {
            "super" => {
                at.pop();
            }
            "self" => {}
            s if mods[&at].children.contains(s) => at.push(s.to_string()),
            s => {
                let m = &mods[&at];
                if let Some(target) = m.aliases.get(s) {
                    let mut full = target.clone();
                    full.extend_from_slice(&rest[1..]);
                    return resolve(mods, &at, &full, hops + 1);
                }
                if let Some(g) = m.globs.first() {
                    // Only the crate's own glob re-exports get here (none inside it).
                    let mut full = g.clone();
                    full.extend_from_slice(rest);
                    return resolve(mods, &at, &full, hops + 1);
                }
                break;
            }
        }
        rest = &rest[1..];
    }
    Some(at)
}

/// Module -> modules it depends on.
fn graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(root);
    let name = |p: &ModPath| {
        if p.is_empty() {
            "crate".to_string()
        } else {
            p.join("::")
        }
    };
    let mut g = BTreeMap::new();
    for (path, m) in &mods {
        let mut deps = BTreeSet::new();
        for u in &m.uses {
            if let Some(d) = resolve(&mods, path, u, 0) {
                if &d != path {
                    deps.insert(name(&d));
                }
            }
        }
        g.insert(name(path), deps);
    }
    g
}

/// Every cycle's modules, as strongly connected components of more than one module.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for d in g.get(&m).into_iter().flatten() {
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
