//! Docs that are true: every repository path (`src/...`, `tools/...`, a relative link) and
//! every Rust item path (`leveldb_table::db::reader::Db`, or `db::reader::Db` after a crate
//! module) that README.md, docs/*.md and the crates' and examples' READMEs name must exist:
//! files on disk, items public in their crate (read from the crates' source: module files,
//! `pub` declarations, `pub use` re-exports, members of public types). A failure names the
//! document, the line and the path.

use std::path::{Path, PathBuf};

#[path = "docs_paths/extract.rs"]
mod extract;
#[path = "docs_paths/items.rs"]
mod items;
#[path = "docs_paths/lex.rs"]
mod lex;
#[path = "docs_paths/resolve.rs"]
mod resolve;

use extract::{link_targets, repo_paths, rust_paths, CRATES};
use resolve::Workspace;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The documents checked: the README, docs/*.md, every crate's or example's README, and the
/// fixtures' READMEs.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md")];
    let mut md: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    md.sort();
    docs.extend(md);
    // The fixtures' READMEs too: where each fixture comes from.
    let mut fixtures: Vec<String> = std::fs::read_dir(root.join("testdata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("README.md").exists())
        .map(|p| p.strip_prefix(root).unwrap().display().to_string())
        .collect();
    fixtures.sort();
    let crates = [
        "cli",
        "bloom",
        "chrome",
        "python",
        "conform",
        "fuzz",
        "examples/mini_lsm",
        "tests/cpp",
    ];
    for dir in crates.iter().map(|d| d.to_string()).chain(fixtures) {
        let readme = root.join(dir).join("README.md");
        if readme.exists() {
            docs.push(readme);
        }
    }
    docs
}

/// The workspace's library crates with their root files.
fn crate_roots(root: &Path) -> Vec<(&'static str, PathBuf)> {
    let dirs = [".", "chrome", "bloom", "conform", "examples/mini_lsm"];
    CRATES
        .iter()
        .zip(dirs)
        .map(|(n, d)| (*n, root.join(d).join("src/lib.rs")))
        .collect()
}

/// Whether `path` (relative, possibly with `*` or `{a,b}`) names something on disk under
/// `base`.
fn exists_under(base: &Path, path: &str) -> bool {
    if let (Some(open), Some(close)) = (path.find('{'), path.find('}')) {
        if open < close {
            let (head, tail) = (&path[..open], &path[close + 1..]);
            return path[open + 1..close]
                .split(',')
                .all(|alt| exists_under(base, &format!("{head}{}{tail}", alt.trim())));
        }
    }
    if !path.contains('*') {
        return base.join(path).exists();
    }
    // A glob: some file matches it, one segment at a time.
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    matches_glob(base, &segs)
}

fn matches_glob(dir: &Path, segs: &[&str]) -> bool {
    let Some((first, rest)) = segs.split_first() else {
        return true;
    };
    if !first.contains('*') {
        return dir.join(first).exists() && matches_glob(&dir.join(first), rest);
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(|e| e.ok()).any(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        wildcard(first, &name) && matches_glob(&e.path(), rest)
    })
}

/// `*` matches any run of characters.
fn wildcard(pat: &str, s: &str) -> bool {
    match pat.split_once('*') {
        None => pat == s,
        Some((head, tail)) => {
            s.starts_with(head) && (head.len()..=s.len()).any(|k| wildcard(tail, &s[k..]))
        }
    }
}

/// Folders the root .gitignore names (`/fuzz/corpus`): what runs make there is named in the
/// docs but never committed.
fn ignored_dirs(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join(".gitignore"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().strip_prefix('/'))
        .filter(|l| !l.contains('*'))
        .map(|l| format!("{l}/"))
        .collect()
}

/// The crates the workspace depends on (`redis`, `bytes`): a path that starts with one of
/// them may be that crate's, not ours.
fn dependencies(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for dir in [
        ".",
        "cli",
        "bloom",
        "chrome",
        "python",
        "conform",
        "examples/mini_lsm",
    ] {
        let toml = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap_or_default();
        let mut in_deps = false;
        for line in toml.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_deps = line.ends_with("dependencies]");
            } else if let (true, Some((name, _))) = (in_deps, line.split_once('=')) {
                out.push(name.trim().replace('-', "_"));
            }
        }
    }
    out
}

/// A path as a pattern: a segment in capitals (`fuzz/seeds/TARGET/`) stands for any name.
fn placeholders_as_globs(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            let caps = seg.len() > 1 && seg.chars().all(|c| c.is_ascii_uppercase() || c == '_');
            if caps {
                "*"
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// What is wrong in one document's `text` (`doc`: its path, which relative paths and links
/// start from), one line per wrong name: `doc:line: path: why`.
fn check(root: &Path, doc: &Path, text: &str, ws: &Workspace) -> Vec<String> {
    let shown = doc.strip_prefix(root).unwrap_or(doc).display().to_string();
    let dir = doc.parent().unwrap_or(root);
    let mut bad = Vec::new();
    let ignored = ignored_dirs(root);
    let deps = dependencies(root);
    for n in repo_paths(text) {
        if ignored.iter().any(|i| n.path.starts_with(i.as_str())) {
            continue;
        }
        // In a crate's README, `src/lib.rs` is that crate's.
        let p = placeholders_as_globs(&n.path);
        if !exists_under(dir, &p) && !exists_under(root, &p) {
            bad.push(format!(
                "{shown}:{}: {}: no such file or folder",
                n.line, n.path
            ));
        }
    }
    for n in link_targets(text) {
        if !exists_under(dir, &n.path) {
            bad.push(format!("{shown}:{}: {}: link to no file", n.line, n.path));
        }
    }
    for n in rust_paths(text) {
        let first = n.path.split("::").next().unwrap_or("");
        let result = if ws.crates.contains_key(first) {
            ws.resolve(&n.path)
        } else {
            // A path after a crate's top-level module (`db::reader::Db`): it must resolve
            // in one of the crates that has such a module.
            let homes: Vec<&str> = CRATES
                .iter()
                .copied()
                .filter(|c| ws.resolve_module_name(c, first))
                .collect();
            if homes.is_empty() || deps.iter().any(|d| d == first) {
                continue;
            }
            homes
                .iter()
                .map(|c| ws.resolve(&format!("{c}::{}", n.path)))
                .find(|r| r.is_ok())
                .unwrap_or_else(|| ws.resolve(&format!("{}::{}", homes[0], n.path)))
        };
        if let Err(why) = result {
            bad.push(format!("{shown}:{}: {}: {why}", n.line, n.path));
        }
    }
    bad
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = repo();
    let ws = Workspace::read(&crate_roots(&root));
    let mut bad = Vec::new();
    for doc in documents(&root) {
        let text = std::fs::read_to_string(&doc).unwrap();
        bad.extend(check(&root, &doc, &text, &ws));
    }
    assert!(
        bad.is_empty(),
        "{} wrong paths:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Planted wrong names are caught, with their line; right ones pass.
#[test]
fn the_checker_fails_on_planted_wrong_paths() {
    let root = repo();
    let ws = Workspace::read(&crate_roots(&root));
    let doc = root.join("docs/planted.md");
    let text = "\
Right: `src/lib.rs`, tools/, `tests/docs_paths.rs:12`, [db](database.md#x), `src/{lib,io}.rs`.
Right: `leveldb_table::db::reader::Db`, `leveldb_table::Error`, `db::reader::{Db, DbOptions}`.
Right: `leveldb_table::TableReader::open`, `leveldb_table::Error::ChecksumMismatch`, `mini_lsm::Db::open`.
Wrong: src/table/nope.rs and `tools/gen_nothing.sh`; right: fuzz/corpus/x (ignored), fuzz/seeds/TARGET/.
Wrong: [gone](gone.md), `leveldb_table::raw::NoSuchThing`.
Wrong: `db::bulk::BulkBuilder` (a private module), `leveldb_table::TableReader::no_such_method`.
Wrong: `leveldb_table::{Db, DbOptions}` (DbOptions is not at the root), `src/{lib,nope}.rs`.
Wrong: `leveldb_table::Error::Corrupt` (no such variant).
";
    let bad = check(&root, &doc, text, &ws);
    let want = [
        "docs/planted.md:4: src/table/nope.rs: no such file or folder",
        "docs/planted.md:4: tools/gen_nothing.sh: no such file or folder",
        "docs/planted.md:5: gone.md: link to no file",
        "docs/planted.md:5: leveldb_table::raw::NoSuchThing: `leveldb_table::raw` has no public `NoSuchThing`",
        "docs/planted.md:6: db::bulk::BulkBuilder: `leveldb_table::db` has no public `bulk`",
        "docs/planted.md:6: leveldb_table::TableReader::no_such_method: `leveldb_table::TableReader` has no public member `no_such_method`",
        "docs/planted.md:7: leveldb_table::DbOptions: `leveldb_table` has no public `DbOptions`",
        "docs/planted.md:7: src/{lib,nope}.rs: no such file or folder",
        "docs/planted.md:8: leveldb_table::Error::Corrupt: `leveldb_table::Error` has no public member `Corrupt`",
    ];
    let mut bad = bad;
    bad.sort_by_key(|b| {
        (
            b.split(':').nth(1).and_then(|l| l.parse::<usize>().ok()),
            b.clone(),
        )
    });
    assert_eq!(bad, want);
}

/// The extractors read paths out of prose, code spans, links and groups.
#[test]
fn extractors_read_paths_out_of_markdown() {
    let text = "See src/db/mod.rs:48-72, (`tools/x.sh`), https://x.org/src/a.rs, ../src/y.rs and\n\
                `use leveldb_table::{raw::{map_file, BlockBuilder}, Error as E};` [t](a/b.md#h)";
    let files: Vec<String> = repo_paths(text).into_iter().map(|n| n.path).collect();
    assert_eq!(files, ["src/db/mod.rs", "tools/x.sh"]);
    let items: Vec<String> = rust_paths(text).into_iter().map(|n| n.path).collect();
    assert_eq!(
        items,
        [
            "leveldb_table::raw::map_file",
            "leveldb_table::raw::BlockBuilder",
            "leveldb_table::Error"
        ]
    );
    let links: Vec<(usize, String)> = link_targets(text)
        .into_iter()
        .map(|n| (n.line, n.path))
        .collect();
    assert_eq!(links, [(2, "a/b.md".to_string())]);
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Rustdoc (`///`, `//!`) carries no dates and no issue numbers, in any crate: a date is a
/// measurement's, kept in docs/performance.md with its command; an issue is the tracker's.
#[test]
fn rustdoc_names_no_date_and_no_issue() {
    let root = repo();
    let mut files = Vec::new();
    for dir in [
        "src",
        "cli/src",
        "bloom/src",
        "chrome/src",
        "conform/src",
        "python/src",
        "examples",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if !(t.starts_with("///") || t.starts_with("//!")) {
                continue;
            }
            let lower = t.to_ascii_lowercase();
            let issue = ["issue ", "issues ", "issue #"].iter().any(|w| {
                lower
                    .match_indices(w)
                    .any(|(at, _)| lower[at + w.len()..].starts_with(|c: char| c.is_ascii_digit()))
            });
            let b = t.as_bytes();
            let date = (0..b.len().saturating_sub(7)).any(|k| {
                b[k..k + 2] == *b"20"
                    && b[k + 2..k + 4].iter().all(u8::is_ascii_digit)
                    && b[k + 4] == b'-'
                    && b[k + 5..k + 7].iter().all(u8::is_ascii_digit)
            });
            if issue || date {
                let shown = f.strip_prefix(&root).unwrap_or(f).display();
                bad.push(format!("{shown}:{}: {}", i + 1, t));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "rustdoc with a date or an issue:\n{}",
        bad.join("\n")
    );
}

/// The count of `unsafe` in lib.rs's note is the count in the source: `unsafe` blocks and
/// `unsafe fn`s of the library, and every file that holds one is named in the note.
#[test]
fn the_unsafe_note_counts_every_unsafe_block() {
    let root = repo();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let (mut blocks, mut fns) = (0, 0);
    let mut holders = Vec::new();
    for f in &files {
        let toks = lex::lex(&std::fs::read_to_string(f).unwrap());
        let before = (blocks, fns);
        for w in toks.windows(2) {
            if w[0].is_kw("unsafe") && w[1].is('{') {
                blocks += 1;
            }
            if w[0].is_kw("unsafe") && w[1].is_kw("fn") {
                fns += 1;
            }
        }
        if (blocks, fns) != before {
            let rel = f
                .strip_prefix(root.join("src"))
                .unwrap()
                .display()
                .to_string();
            holders.push(rel);
        }
    }
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let note: String = lib
        .lines()
        .skip_while(|l| !l.starts_with("// `unsafe` is denied"))
        .take_while(|l| l.starts_with("//"))
        .map(|l| l.trim_start_matches('/').trim())
        .collect::<Vec<_>>()
        .join(" ");
    let words = [
        "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen",
    ];
    let said = |n: usize, what: &str| note.contains(&format!("{} {what}", words[n]));
    assert!(
        said(fns, "`unsafe fn`s"),
        "lib.rs's note must say {fns} `unsafe fn`s: {note}"
    );
    assert!(
        said(blocks, "`unsafe` blocks"),
        "lib.rs's note must say {blocks} `unsafe` blocks: {note}"
    );
    assert!(
        said(holders.len(), "files"),
        "lib.rs's note must say {} files: {note}",
        holders.len()
    );
    for h in &holders {
        assert!(
            note.contains(h.as_str()),
            "lib.rs's note does not name {h}: {note}"
        );
    }
}
