//! The module tree of a crate read from its source: module files, their children, re-exports,
//! imports and the paths their code names.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// A module path from the crate root (`[]` is the root).
pub type ModPath = Vec<String>;

/// One module file.
#[derive(Default, Debug)]
pub struct Module {
    /// Child modules declared in this file (outside unit tests).
    pub children: BTreeSet<String>,
    /// Names this module re-exports (`pub use`), each to the path it names.
    pub aliases: BTreeMap<String, ModPath>,
    /// Paths of glob re-exports (`pub use path::*`).
    pub globs: Vec<ModPath>,
    /// Paths named by its code: private imports and inline paths, as written.
    pub uses: Vec<ModPath>,
    /// Names its private imports bring in, each to the path it names.
    pub imported: BTreeMap<String, ModPath>,
}

/// The module tree of the crate whose root file is `root`.
pub fn modules(root: &Path) -> BTreeMap<ModPath, Module> {
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
pub fn code_of(text: &str) -> String {
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
pub fn tokens(code: &str) -> Vec<String> {
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
pub fn scan(code: &str, m: &mut Module) {
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
pub fn use_tree(t: &[String], prefix: &[String], out: &mut Vec<(ModPath, Option<String>)>) {
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
