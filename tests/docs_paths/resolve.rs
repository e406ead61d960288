//! Resolving a path through the crates' item indexes (`items.rs`).

use std::collections::HashMap;
use std::path::PathBuf;

use super::items::{CrateIndex, Def};

/// The workspace's crates by name.
pub struct Workspace {
    pub crates: HashMap<String, CrateIndex>,
}

/// What a resolution step reached.
#[derive(Debug, Clone)]
enum Target {
    Module(String, usize),
    Type(String, String),
    Leaf,
    /// Something outside the workspace (a re-export of another crate's item).
    Outside,
}

impl Workspace {
    /// Reads every crate of `crates` (name, root file).
    pub fn read(crates: &[(&str, PathBuf)]) -> Workspace {
        let crates = crates
            .iter()
            .map(|(n, p)| (n.to_string(), CrateIndex::read(p)))
            .collect();
        Workspace { crates }
    }

    /// Whether `path` (`krate::a::b`) names a public item; `Err` says which step fails.
    pub fn resolve(&self, path: &str) -> Result<(), String> {
        let segs: Vec<String> = path.split("::").map(str::to_string).collect();
        let Some(_) = self.crates.get(&segs[0]) else {
            return Err(format!("no crate `{}` in the workspace", segs[0]));
        };
        let mut at = Target::Module(segs[0].clone(), 0);
        for (k, seg) in segs.iter().enumerate().skip(1) {
            at = match at {
                Target::Module(ref c, m) => self
                    .lookup(c, m, seg, true, 0)
                    .ok_or_else(|| format!("`{}` has no public `{seg}`", segs[..k].join("::")))?,
                Target::Type(ref c, ref ty) => {
                    let ok = self.crates[c]
                        .members
                        .get(ty)
                        .is_some_and(|s| s.contains(seg));
                    if !ok || k + 1 < segs.len() {
                        return Err(format!(
                            "`{}` has no public member `{seg}`",
                            segs[..k].join("::")
                        ));
                    }
                    Target::Leaf
                }
                Target::Leaf => {
                    return Err(format!(
                        "`{}` is not a module or a type",
                        segs[..k].join("::")
                    ))
                }
                Target::Outside => return Ok(()),
            };
        }
        Ok(())
    }

    /// Whether crate `c` has a top-level module `name` (public or not).
    pub fn resolve_module_name(&self, c: &str, name: &str) -> bool {
        self.crates.get(c).is_some_and(|k| {
            k.modules[0]
                .names
                .iter()
                .any(|(n, _, d)| n == name && matches!(d, Def::Module(_)))
        })
    }

    /// `name` in module `m` of crate `c` (only public names when `public`).
    fn lookup(&self, c: &str, m: usize, name: &str, public: bool, depth: u32) -> Option<Target> {
        if depth > 16 {
            return None;
        }
        let module = &self.crates[c].modules[m];
        for (n, p, def) in &module.names {
            if n != name || (public && !p) {
                continue;
            }
            return Some(match def {
                Def::Module(id) => Target::Module(c.to_string(), *id),
                Def::Type(t) => Target::Type(c.to_string(), t.clone()),
                Def::Leaf => Target::Leaf,
                Def::Use { path, .. } => self.follow(c, m, path, depth + 1)?,
            });
        }
        for (n, p, def) in &module.names {
            if let (true, true, Def::Use { path, glob: true }) = (n == "*", !public || *p, def) {
                if let Some(Target::Module(c2, m2)) = self.follow(c, m, path, depth + 1) {
                    if let Some(t) = self.lookup(&c2, m2, name, c2 != c || public, depth + 1) {
                        return Some(t);
                    }
                }
            }
        }
        None
    }

    /// Where a `use` path written in module `m` of crate `c` leads.
    fn follow(&self, c: &str, m: usize, path: &[String], depth: u32) -> Option<Target> {
        let (mut at, rest) = match path.first().map(String::as_str) {
            Some("crate") => (Target::Module(c.to_string(), 0), &path[1..]),
            Some("self") => (Target::Module(c.to_string(), m), &path[1..]),
            Some("super") => {
                let mut mm = m;
                let mut k = 0;
                while path.get(k).is_some_and(|s| s == "super") {
                    mm = self.crates[c].modules[mm].parent?;
                    k += 1;
                }
                (Target::Module(c.to_string(), mm), &path[k..])
            }
            Some(first) if self.crates.contains_key(first) && first != c => {
                (Target::Module(first.to_string(), 0), &path[1..])
            }
            Some(first) => {
                // A name in this module's scope (a child module or another use), else
                // another crate.
                match self.lookup(c, m, first, false, depth + 1) {
                    Some(t) => (t, &path[1..]),
                    None => return Some(Target::Outside),
                }
            }
            None => return None,
        };
        for seg in rest {
            at = match at {
                Target::Module(ref c2, m2) => self.lookup(c2, m2, seg, c2 != c, depth + 1)?,
                Target::Type(..) | Target::Leaf => Target::Leaf,
                Target::Outside => Target::Outside,
            };
        }
        Some(at)
    }
}
