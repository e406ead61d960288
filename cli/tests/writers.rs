//! The commands that write (`build`, `db build`, `refilter`) print their summary the same
//! way: one `wrote PATH: ...` line on stdout, nothing on stderr.

use std::path::PathBuf;

mod common;

use common::sst;

#[test]
fn writing_commands_print_their_summary_on_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.jsonl");
    let rows: String = (0..500)
        .map(|i| {
            format!(
                "{{\"key\":\"{}\",\"value\":\"{}\"}}\n",
                hex::encode(format!("k{i:05}")),
                hex::encode(format!("v{i}"))
            )
        })
        .collect();
    std::fs::write(&input, rows).unwrap();
    let i = input.to_str().unwrap();
    let p = |n: &str| -> String { tmp.path().join(n).to_string_lossy().into_owned() };
    let table = p("t.ldb");
    let refiltered = p("r.ldb");
    let dir = p("db");
    for (args, path) in [
        (vec!["build", &table, "--from", i], &table),
        (vec!["db", "build", &dir, "--from", i], &dir),
        (
            vec!["refilter", &table, &refiltered, "--bloom-bits", "14"],
            &refiltered,
        ),
    ] {
        let (code, out, err) = sst(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
        assert_eq!(out.lines().count(), 1, "{args:?}: {out}");
        assert!(out.starts_with(&format!("wrote {path}: ")), "{out}");
        assert!(PathBuf::from(path).exists());
    }
    // What they wrote reads back.
    let (code, out, _) = sst(&["db", "scan", &dir, "--limit", "1"]);
    assert_eq!((code, out.as_str()), (0, "'k00000' @ 1 => 'v0'\n"));
}
