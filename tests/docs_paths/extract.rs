//! What a Markdown document names: repository paths (`src/db/mod.rs`, `tools/gen.sh`,
//! `testdata/db/`), relative link targets, and Rust item paths (`leveldb_table::db::reader::Db`,
//! `db::engine::BulkBuilder`), each with its line.

/// The folders at the top of the repository: a word that starts with one of these and a
/// slash is a repository path (or, in a crate's README, a path in that crate).
pub const TOP_DIRS: &[&str] = &[
    "src", "cli", "docs", "tools", "scripts", "examples", "testdata", "tests", "benches", "fuzz",
    "bloom", "chrome", "python", "conform", ".ci",
];

/// The workspace's library crates, by the name Rust code uses for them.
pub const CRATES: &[&str] = &[
    "leveldb_table",
    "sst_chrome",
    "sst_bloom",
    "sst_conform",
    "mini_lsm",
];

/// One name found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// 1-based line.
    pub line: usize,
    /// The path as written (trailing punctuation and a `:LINE` suffix removed).
    pub path: String,
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./*{},".contains(c)
}

/// Repository paths: a word that starts with a top folder and a slash, not preceded by a
/// character that would make it part of a longer path or a URL.
pub fn repo_paths(text: &str) -> Vec<Named> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        let mut k = 0;
        while k < chars.len() {
            let (at, _) = chars[k];
            let prev = k.checked_sub(1).map(|p| chars[p].1);
            let boundary =
                prev.is_none_or(|p| !(p.is_ascii_alphanumeric() || "_-./~$:".contains(p)));
            let rest = &line[at..];
            let top = TOP_DIRS
                .iter()
                .find(|d| rest.starts_with(*d) && rest[d.len()..].starts_with('/'));
            if let (true, Some(_)) = (boundary, top) {
                let mut end = k;
                let mut braces = 0i32;
                while end < chars.len() {
                    let c = chars[end].1;
                    match c {
                        '{' => braces += 1,
                        '}' if braces > 0 => braces -= 1,
                        ',' if braces == 0 => break,
                        _ if !is_path_char(c) => break,
                        _ => {}
                    }
                    end += 1;
                }
                let stop = chars.get(end).map_or(line.len(), |c| c.0);
                let mut p = line[at..stop].to_string();
                // A placeholder (`testdata/<name>/`) or a command's output template is not
                // a path to check.
                let placeholder = chars.get(end).is_some_and(|c| c.1 == '<');
                while p.ends_with(['.', ',', ':', ';']) {
                    p.pop();
                }
                if !placeholder && !p.ends_with('{') {
                    out.push(Named {
                        line: i + 1,
                        path: p,
                    });
                }
                k = end.max(k + 1);
                continue;
            }
            k += 1;
        }
    }
    out
}

/// Targets of Markdown links that are neither URLs nor anchors in the same document:
/// `[text](../docs/database.md#section)` gives `../docs/database.md`.
pub fn link_targets(text: &str) -> Vec<Named> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(p) = rest.find("](") {
            let after = &rest[p + 2..];
            let Some(close) = after.find(')') else { break };
            let target = after[..close].split_whitespace().next().unwrap_or("");
            let target = target.split('#').next().unwrap_or("");
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                out.push(Named {
                    line: i + 1,
                    path: target.to_string(),
                });
            }
            rest = &after[close..];
        }
    }
    out
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Rust paths of two or more segments (`a::b`, `a::b::{C, d::E}` expanded into one path
/// each), not preceded by another path character.
pub fn rust_paths(text: &str) -> Vec<Named> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let b = line.as_bytes();
        let mut k = 0;
        while k < b.len() {
            let c = b[k] as char;
            let prev = k.checked_sub(1).map(|p| b[p] as char);
            if is_ident_start(c) && prev.is_none_or(|p| !(is_ident(p) || p == ':' || p == '.')) {
                let (paths, end) = parse_path(line, k);
                for p in paths {
                    if p.contains("::") {
                        out.push(Named {
                            line: i + 1,
                            path: p,
                        });
                    }
                }
                k = end.max(k + 1);
                continue;
            }
            k += 1;
        }
    }
    out
}

/// The path starting at byte `at` of `s`: its expansions and where it ends.
fn parse_path(s: &str, at: usize) -> (Vec<String>, usize) {
    let b = s.as_bytes();
    let mut k = at;
    let mut prefix = String::new();
    loop {
        let start = k;
        while k < b.len() && is_ident(b[k] as char) {
            k += 1;
        }
        prefix.push_str(&s[start..k]);
        if s[k..].starts_with("::") {
            let next = b.get(k + 2).map(|&c| c as char);
            match next {
                Some(c) if is_ident_start(c) => {
                    prefix.push_str("::");
                    k += 2;
                }
                Some('{') => {
                    // A group: each member (itself a path, possibly a group) under the prefix.
                    let mut out = Vec::new();
                    let mut j = k + 3;
                    loop {
                        while j < b.len() && (b[j] == b' ' || b[j] == b',') {
                            j += 1;
                        }
                        match b.get(j) {
                            Some(b'}') => return (out, j + 1),
                            Some(&c) if is_ident_start(c as char) => {
                                let (members, end) = parse_path(s, j);
                                for m in members {
                                    out.push(format!("{prefix}::{m}"));
                                }
                                j = end;
                                // `X as Y`
                                if s[j..].starts_with(" as ") {
                                    j += 4;
                                    while j < b.len() && is_ident(b[j] as char) {
                                        j += 1;
                                    }
                                }
                            }
                            // `self`, `*`, a line break inside the group: keep what was read.
                            _ => return (out, j),
                        }
                    }
                }
                _ => return (vec![prefix], k),
            }
        } else {
            return (vec![prefix], k);
        }
    }
}
