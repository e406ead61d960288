//! Each subcommand's `--help` lists the reading options (`--keys`, `--comparator`,
//! `--no-verify`) it uses and no other; and every subcommand still accepts them before and
//! after its name, as when they were global options, so no invocation that worked breaks.

use std::collections::BTreeMap;

mod common;

use common::sst;

/// The reading options each subcommand uses, as its `--help` must list them.
fn expected() -> BTreeMap<&'static str, &'static [&'static str]> {
    let all: &[&str] = &["--keys", "--comparator", "--no-verify"];
    BTreeMap::from([
        ("scan", all),
        ("get", all),
        ("stats", all),
        ("filter", all),
        ("verify", &["--keys", "--comparator"][..]),
        ("blocks", &["--keys", "--no-verify"][..]),
        ("refilter", &["--keys", "--comparator"][..]),
        ("build", &["--keys"][..]),
        ("conform", &[][..]),
        ("bloom", &[][..]),
        ("bloom add", &[][..]),
        ("bloom check", &[][..]),
        ("bloom remove", &[][..]),
        ("bloom info", &[][..]),
        ("db", &[][..]),
        ("db scan", &["--comparator", "--no-verify"][..]),
        ("db get", &["--comparator", "--no-verify"][..]),
        ("db records", &["--comparator", "--no-verify"][..]),
        ("db info", &["--comparator", "--no-verify"][..]),
        ("db verify", &["--comparator"][..]),
        ("db build", &[][..]),
        ("log", &["--comparator"][..]),
        ("manifest", &[][..]),
        ("profile", &[][..]),
    ])
}

/// The subcommands a `--help` text lists (the lines under `Commands:`), but `help`.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The options a `--help` text lists (the lines under `Options:` that name one).
fn options(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Options:"))
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t
                .strip_prefix("-h, ")
                .or(t.strip_prefix("-V, "))
                .unwrap_or(t);
            t.starts_with("--")
                .then(|| t.split([' ', '=', '<']).next().unwrap().to_string())
        })
        .collect()
}

fn help(path: &str) -> String {
    let mut args: Vec<&str> = path.split_whitespace().collect();
    args.push("--help");
    let (code, out, err) = sst(&args);
    assert_eq!(code, 0, "sst {path} --help: {err}");
    out
}

#[test]
fn every_subcommand_is_in_the_table() {
    let mut found = Vec::new();
    for c in commands(&help("")) {
        let sub = commands(&help(&c));
        found.push(c.clone());
        found.extend(sub.into_iter().map(|s| format!("{c} {s}")));
    }
    let want: Vec<String> = expected().keys().map(|k| k.to_string()).collect();
    found.sort();
    assert_eq!(
        found, want,
        "a new subcommand? say which reading options it uses"
    );
}

#[test]
fn each_help_lists_only_the_reading_options_its_subcommand_uses() {
    for (path, uses) in expected() {
        let listed = options(&help(path));
        assert!(listed.contains(&"--help".to_string()), "{path}: {listed:?}");
        for flag in ["--keys", "--comparator", "--no-verify"] {
            assert_eq!(
                listed.contains(&flag.to_string()),
                uses.contains(&flag),
                "sst {path} --help and {flag}: {listed:?}"
            );
        }
    }
    // `sst --help` itself lists them, as options given before any subcommand.
    let top = options(&help(""));
    for flag in ["--keys", "--comparator", "--no-verify"] {
        assert!(top.contains(&flag.to_string()), "{top:?}");
    }
}

#[test]
fn every_subcommand_accepts_the_reading_options_before_and_after_it() {
    for path in expected().keys() {
        let words: Vec<&str> = path.split_whitespace().collect();
        for flag in [&["--keys", "auto"][..], &["--comparator", "bytewise"][..]] {
            for before in [true, false] {
                let args: Vec<&str> = if before {
                    [flag, &words[..]].concat()
                } else {
                    [&words[..], flag].concat()
                };
                let (_, _, err) = sst(&args);
                // The arguments the subcommand needs are missing, so it stops there; what
                // must not happen is clap refusing the option.
                assert!(
                    !err.contains("unexpected argument"),
                    "sst {}: {err}",
                    args.join(" ")
                );
            }
        }
    }
}

#[test]
fn options_that_change_nothing_say_so_and_refused_ones_exit_2() {
    let t = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/cases/small_snappy/000005.ldb"
    );
    // --comparator does nothing for blocks: the listing is the same, with a note.
    let (code, plain, _) = sst(&["blocks", t]);
    assert_eq!(code, 0);
    let (code, out, err) = sst(&["blocks", t, "--comparator", "idb_cmp1"]);
    assert_eq!((code, out.as_str()), (0, plain.as_str()));
    assert!(
        err.contains("--comparator changes nothing for `sst blocks`"),
        "{err}"
    );
    // --no-verify where everything is always verified, or nothing is read: refused.
    for args in [
        &["verify", t, "--no-verify"][..],
        &["--no-verify", "verify", t][..],
        &["--no-verify", "bloom", "info", "--file", "x"][..],
        &["log", t, "--no-verify"][..],
    ] {
        let (code, out, err) = sst(args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(err.contains("--no-verify does not apply to"), "{err}");
    }
    // The order given before or after the subcommand is the same order.
    let log = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/idb/chromium/000004.log"
    );
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("000004.log");
    std::fs::copy(log, &copy).unwrap();
    let c = copy.to_str().unwrap();
    let (code, before, _) = sst(&["--comparator", "idb_cmp1", "log", c]);
    assert_eq!(code, 0);
    let (code, after, _) = sst(&["log", c, "--comparator", "idb_cmp1"]);
    assert_eq!(code, 0);
    assert_eq!(before, after);
    let (_, bytes, _) = sst(&["log", c]);
    assert_ne!(
        before, bytes,
        "outside its directory, idb_cmp1 decodes the keys"
    );
}
