//! The public items of the workspace's library crates, read from their source the way the
//! compiler finds modules (`mod x;` -> `x.rs` or `x/mod.rs`, `#[path]`, inline `mod x {}`),
//! and the resolution of a path through them: each step must be public (`pub`, not
//! `pub(crate)`), through modules, `pub use` re-exports (to any visibility inside the
//! crate, as the compiler allows), then at most one member of a type (a variant, a public
//! method, field or associated item, or a method of a trait it implements): `resolve.rs`.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::lex::{lex, skip_group, Tok};

/// What a name in a module stands for.
#[derive(Debug, Clone)]
pub(super) enum Def {
    Module(usize),
    /// A struct, enum, union, trait or type alias: it may have members.
    Type(String),
    /// A function, constant, static or macro: nothing below it.
    Leaf,
    /// `use PATH` (as this name); `glob`: `use PATH::*`.
    Use {
        path: Vec<String>,
        glob: bool,
    },
}

#[derive(Debug, Default)]
pub(super) struct Module {
    pub(super) parent: Option<usize>,
    /// name -> (public, what it is); a glob use is stored under "*".
    pub(super) names: Vec<(String, bool, Def)>,
}

/// One crate's module tree and its types' members (by type name).
#[derive(Debug, Default)]
pub struct CrateIndex {
    pub(super) modules: Vec<Module>,
    pub(super) members: HashMap<String, HashSet<String>>,
}

impl CrateIndex {
    /// Reads the crate whose root file is `lib`.
    pub fn read(lib: &Path) -> CrateIndex {
        let mut c = CrateIndex::default();
        c.modules.push(Module::default());
        let src = std::fs::read_to_string(lib).unwrap_or_else(|e| panic!("{}: {e}", lib.display()));
        let toks = lex(&src);
        let dir = lib.parent().unwrap().to_path_buf();
        c.parse_items(0, &toks, &dir);
        c
    }

    /// Parses the items of module `m` from `t`; `dir`: where its child modules' files are.
    fn parse_items(&mut self, m: usize, t: &[Tok], dir: &Path) {
        let mut i = 0;
        let mut path_attr: Option<String> = None;
        let mut macro_export = false;
        while i < t.len() {
            // Attributes.
            if t[i].is('#') {
                let open = if t.get(i + 1).is_some_and(|x| x.is('!')) {
                    i + 2
                } else {
                    i + 1
                };
                let end = skip_group(t, open);
                let inner = &t[open.min(end)..end];
                if inner.get(1).is_some_and(|x| x.is_kw("path")) {
                    if let Some(Tok::Str(p)) = inner.get(3) {
                        path_attr = Some(p.clone());
                    }
                }
                if inner.get(1).is_some_and(|x| x.is_kw("macro_export")) {
                    macro_export = true;
                }
                i = end;
                continue;
            }
            let mut public = false;
            if t[i].is_kw("pub") {
                if t.get(i + 1).is_some_and(|x| x.is('(')) {
                    i = skip_group(t, i + 1);
                } else {
                    public = true;
                    i += 1;
                }
            }
            // Qualifiers before the item keyword.
            while i < t.len()
                && (t[i].is_kw("unsafe")
                    || t[i].is_kw("async")
                    || t[i].is_kw("default")
                    || t[i].is_kw("extern") && matches!(t.get(i + 1), Some(Tok::Str(_)))
                    || (t[i].is_kw("const")
                        && t.get(i + 1)
                            .is_some_and(|x| x.is_kw("fn") || x.is_kw("unsafe"))))
            {
                i += if t[i].is_kw("extern") { 2 } else { 1 };
            }
            let Some(kw) = t.get(i).and_then(|x| x.ident()).map(str::to_string) else {
                i += 1;
                path_attr = None;
                macro_export = false;
                continue;
            };
            let name = t.get(i + 1).and_then(|x| x.ident()).map(str::to_string);
            match kw.as_str() {
                "mod" => {
                    let name = name.unwrap_or_default();
                    let child = self.modules.len();
                    self.modules.push(Module {
                        parent: Some(m),
                        names: Vec::new(),
                    });
                    self.modules[m]
                        .names
                        .push((name.clone(), public, Def::Module(child)));
                    if t.get(i + 2).is_some_and(|x| x.is('{')) {
                        let end = skip_group(t, i + 2);
                        let body = t[i + 3..end - 1].to_vec();
                        self.parse_items(child, &body, &dir.join(&name));
                        i = end;
                    } else {
                        let file = match &path_attr {
                            Some(p) => dir.join(p),
                            None if dir.join(format!("{name}.rs")).exists() => {
                                dir.join(format!("{name}.rs"))
                            }
                            None => dir.join(&name).join("mod.rs"),
                        };
                        // A missing file is a `#[cfg]`'d module of another platform.
                        if let Ok(src) = std::fs::read_to_string(&file) {
                            let child_dir = if file.file_name().is_some_and(|f| f == "mod.rs")
                                || path_attr.is_some()
                            {
                                file.parent().unwrap().to_path_buf()
                            } else {
                                dir.join(&name)
                            };
                            self.parse_items(child, &lex(&src), &child_dir);
                        }
                        i += 3;
                    }
                }
                "use" => {
                    let end = (i..t.len()).find(|&j| t[j].is(';')).unwrap_or(t.len());
                    for (path, alias, glob) in use_tree(&t[i + 1..end]) {
                        let key = if glob { "*".to_string() } else { alias };
                        self.modules[m]
                            .names
                            .push((key, public, Def::Use { path, glob }));
                    }
                    i = end + 1;
                }
                "struct" | "enum" | "union" | "trait" | "type" => {
                    let name = name.unwrap_or_default();
                    self.modules[m]
                        .names
                        .push((name.clone(), public, Def::Type(name.clone())));
                    let end = item_end(t, i);
                    if let Some(open) = (i..end).find(|&j| t[j].is('{') || t[j].is('(')) {
                        self.collect_members(&kw, &name, &t[open..end]);
                    }
                    i = end;
                }
                "fn" | "const" | "static" => {
                    if let Some(name) = name.filter(|n| n != "_" && n != "mut") {
                        self.modules[m].names.push((name, public, Def::Leaf));
                    } else if let Some(n) = t.get(i + 2).and_then(|x| x.ident()) {
                        // `static mut NAME`
                        self.modules[m]
                            .names
                            .push((n.to_string(), public, Def::Leaf));
                    }
                    i = item_end(t, i);
                }
                "macro_rules" => {
                    if let Some(n) = t.get(i + 2).and_then(|x| x.ident()) {
                        // An exported macro lives at the crate root.
                        let at = if macro_export { 0 } else { m };
                        self.modules[at]
                            .names
                            .push((n.to_string(), macro_export, Def::Leaf));
                    }
                    i = skip_group(t, i + 3);
                }
                "impl" => {
                    let end = item_end(t, i);
                    let open = (i..end).find(|&j| t[j].is('{')).unwrap_or(end);
                    if let Some((ty, is_trait)) = impl_target(&t[i + 1..open]) {
                        self.collect_impl(&ty, is_trait, &t[open..end]);
                    }
                    i = end;
                }
                _ => {
                    // A macro call at item level (`thread_local! { .. }`): not an item.
                    if t.get(i + 1).is_some_and(|x| x.is('!')) {
                        i = skip_group(t, i + 2);
                        if t.get(i).is_some_and(|x| x.is(';')) {
                            i += 1;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            path_attr = None;
            macro_export = false;
        }
    }

    fn add_member(&mut self, ty: &str, name: &str) {
        self.members
            .entry(ty.to_string())
            .or_default()
            .insert(name.to_string());
    }

    /// Variants of an enum, public fields of a struct, items of a trait.
    fn collect_members(&mut self, kw: &str, ty: &str, body: &[Tok]) {
        if !body.first().is_some_and(|x| x.is('{')) {
            return;
        }
        let inner = &body[1..skip_group(body, 0).saturating_sub(1)];
        let mut j = 0;
        let mut at_start = true;
        while j < inner.len() {
            let x = &inner[j];
            if x.is('#') {
                j = skip_group(inner, j + 1);
                continue;
            }
            if x.is('(') || x.is('{') || x.is('[') || x.is('<') && kw != "trait" {
                j = if x.is('<') {
                    j + 1
                } else {
                    skip_group(inner, j)
                };
                continue;
            }
            match kw {
                "enum" if at_start => {
                    if let Some(n) = x.ident() {
                        self.add_member(ty, n);
                    }
                }
                "struct" | "union" if at_start && x.is_kw("pub") => {
                    let k = if inner.get(j + 1).is_some_and(|y| y.is('(')) {
                        j = skip_group(inner, j + 1);
                        at_start = false;
                        continue;
                    } else {
                        j + 1
                    };
                    if let Some(n) = inner.get(k).and_then(|y| y.ident()) {
                        self.add_member(ty, n);
                    }
                }
                "trait" if x.is_kw("fn") || x.is_kw("const") || x.is_kw("type") => {
                    if let Some(n) = inner.get(j + 1).and_then(|y| y.ident()) {
                        self.add_member(ty, n);
                    }
                }
                _ => {}
            }
            at_start = x.is(',') || x.is(';') || x.is('}');
            j += 1;
        }
    }

    /// Methods and associated items of an impl block: the public ones, or all of a trait's.
    fn collect_impl(&mut self, ty: &str, is_trait: bool, body: &[Tok]) {
        if body.is_empty() {
            return;
        }
        let inner = &body[1..skip_group(body, 0).saturating_sub(1)];
        let mut j = 0;
        while j < inner.len() {
            let x = &inner[j];
            if x.is('{') || x.is('#') {
                j = if x.is('#') {
                    skip_group(inner, j + 1)
                } else {
                    skip_group(inner, j)
                };
                continue;
            }
            if x.is_kw("fn") || x.is_kw("const") || x.is_kw("type") {
                let before_pub = (j.saturating_sub(4)..j)
                    .any(|k| inner[k].is_kw("pub") && !inner.get(k + 1).is_some_and(|y| y.is('(')));
                if is_trait || before_pub {
                    if let Some(n) = inner.get(j + 1).and_then(|y| y.ident()) {
                        self.add_member(ty, n);
                    }
                }
            }
            j += 1;
        }
    }
}

/// Where the item starting at `i` ends: after its `;` or its body's closing brace.
fn item_end(t: &[Tok], i: usize) -> usize {
    let mut j = i;
    while j < t.len() {
        if t[j].is(';') {
            return j + 1;
        }
        if t[j].is('{') {
            let e = skip_group(t, j);
            // `const X: T = T { .. };` ends at its `;`.
            return if t.get(e).is_some_and(|x| x.is(';')) {
                e + 1
            } else {
                e
            };
        }
        if t[j].is('(') || t[j].is('[') {
            j = skip_group(t, j);
            continue;
        }
        j += 1;
    }
    t.len()
}

/// The type an impl header (between `impl` and `{`) is for, and whether it implements a
/// trait: the last path segment before its generics, after `for` when there is one.
fn impl_target(h: &[Tok]) -> Option<(String, bool)> {
    let mut depth = 0i32;
    let mut for_at = None;
    for (k, x) in h.iter().enumerate() {
        match x {
            Tok::Punct('<') => depth += 1,
            Tok::Punct('>') => depth -= 1,
            _ if depth == 0 && x.is_kw("for") => for_at = Some(k),
            _ => {}
        }
    }
    let start = for_at.map_or(0, |k| k + 1);
    let mut depth = 0i32;
    let mut last = None;
    for x in &h[start..] {
        match x {
            Tok::Punct('<') => depth += 1,
            Tok::Punct('>') => depth -= 1,
            Tok::Ident(s) if depth == 0 && s == "where" => break,
            Tok::Ident(s) if depth == 0 && s != "dyn" && s != "mut" => last = Some(s.clone()),
            _ => {}
        }
    }
    last.map(|l| (l, for_at.is_some()))
}

/// The paths a use tree brings in: (path, name it is bound to, glob).
fn use_tree(t: &[Tok]) -> Vec<(Vec<String>, String, bool)> {
    let mut out = Vec::new();
    walk_tree(t, &[], &mut out);
    out
}

fn walk_tree(t: &[Tok], prefix: &[String], out: &mut Vec<(Vec<String>, String, bool)>) {
    let mut path = prefix.to_vec();
    let mut j = 0;
    // A leading `::` (an absolute path) changes nothing here.
    while j < t.len() {
        match &t[j] {
            Tok::Ident(s) if s == "as" => {
                if let Some(alias) = t.get(j + 1).and_then(|x| x.ident()) {
                    let name = if alias == "_" {
                        String::new()
                    } else {
                        alias.to_string()
                    };
                    out.push((path.clone(), name, false));
                }
                return;
            }
            Tok::Ident(s) => path.push(s.clone()),
            Tok::Punct('*') => {
                out.push((path.clone(), String::new(), true));
                return;
            }
            Tok::Punct('{') => {
                let end = skip_group(t, j);
                let inner = &t[j + 1..end - 1];
                // Split the group at its top-level commas.
                let mut depth = 0;
                let mut start = 0;
                for k in 0..=inner.len() {
                    let at_end = k == inner.len();
                    if !at_end {
                        match &inner[k] {
                            Tok::Punct('{') => depth += 1,
                            Tok::Punct('}') => depth -= 1,
                            _ => {}
                        }
                    }
                    if at_end || (depth == 0 && inner[k].is(',')) {
                        if k > start {
                            walk_tree(&inner[start..k], &path, out);
                        }
                        start = k + 1;
                    }
                }
                return;
            }
            _ => {}
        }
        j += 1;
    }
    // `self` in a group names the module itself.
    if path.last().is_some_and(|l| l == "self") {
        path.pop();
    }
    if let Some(last) = path.last().cloned() {
        out.push((path, last, false));
    }
}
