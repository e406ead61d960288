//! The dependency graph of a crate's modules (every named path resolved to the module that
//! defines its item) and its cycles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::source::{modules, ModPath, Module};

/// The module that defines what `path`, named in module `from`, refers to; `None` for
/// paths outside the crate (std, dependencies) and for local items of `from`.
pub fn resolve(
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
pub fn graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
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
pub fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
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
