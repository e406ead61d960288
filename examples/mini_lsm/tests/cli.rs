//! The `mini_lsm` command line: its fixed contract (`DIR put K V | get K | delete K | scan |
//! bench`), and what it must never do: panic on an argument (non-UTF-8 included), print an
//! ambiguous line, remove a file that is not a database's.

mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::ExitCode;

use common::leveldb_reads;

/// Runs the command line on `dir` with `args` (raw bytes each) and `stdin`: exit code,
/// standard output, standard error.
fn run_in(dir: &Path, args: &[&[u8]], stdin: &[u8]) -> (ExitCode, Vec<u8>, String) {
    let mut all = vec![dir.as_os_str().to_owned()];
    all.extend(args.iter().map(|a| OsString::from_vec(a.to_vec())));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mini_lsm::cli::main(&all, &mut &stdin[..], &mut out, &mut err);
    (code, out, String::from_utf8(err).unwrap())
}

fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap()
}

const OK: ExitCode = ExitCode::SUCCESS;

/// The command line's fixed contract: `get` prints the value and exits 0, or exits 1 when
/// the key is absent; `scan` prints key<TAB>value lines in key order, `--from` inclusive,
/// `--to` exclusive; bad usage exits 2.
#[test]
fn the_command_line_keeps_its_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let run = |args: &[&str]| {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let (code, out, _) = run_in(&dir, &args, b"");
        (code, text(out))
    };
    for (k, v) in [("b", "2"), ("a", "1"), ("c", "three 3"), ("d", "4")] {
        assert_eq!(run(&["put", k, v]), (OK, String::new()));
    }
    assert_eq!(run(&["delete", "d"]), (OK, String::new()));
    assert_eq!(run(&["get", "c"]), (OK, "three 3\n".into()));
    assert_eq!(run(&["get", "d"]), (ExitCode::from(1), String::new()));
    assert_eq!(run(&["get", "zz"]).0, ExitCode::from(1));
    assert_eq!(run(&["scan"]), (OK, "a\t1\nb\t2\nc\tthree 3\n".into()));
    assert_eq!(
        run(&["scan", "--from", "b"]),
        (OK, "b\t2\nc\tthree 3\n".into())
    );
    assert_eq!(
        run(&["scan", "--from", "a", "--to", "c"]),
        (OK, "a\t1\nb\t2\n".into())
    );
    assert_eq!(run(&["scan", "--to", "b"]), (OK, "a\t1\n".into()));
    assert_eq!(
        run(&["scan", "--reverse", "--to", "c"]),
        (OK, "b\t2\na\t1\n".into())
    );
    assert_eq!(run(&["bench", "--num", "2000"]).0, OK);
    assert_eq!(run(&["frobnicate"]).0, ExitCode::from(2));
    assert_eq!(run(&["get"]).0, ExitCode::from(2));
    // The directory is LevelDB's: 2,000 bench keys plus a, b, c.
    assert_eq!(
        leveldb_reads(&dir, false).len(),
        run(&["scan"]).1.lines().count()
    );
}

/// Binary keys and values: from non-UTF-8 arguments as they are, as hex, or from standard
/// input; `scan` escapes them (text) or gives them as hex (jsonl), never ambiguously.
#[test]
fn binary_keys_from_raw_arguments_hex_and_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // A key that is not UTF-8, given as the argument's bytes.
    assert_eq!(run_in(&dir, &[b"put", b"k\xff\x00", b"v\xfe"], b"").0, OK);
    let (code, out, _) = run_in(&dir, &[b"get", b"k\xff\x00"], b"");
    assert_eq!((code, out), (OK, b"v\xfe\n".to_vec()));
    // The same key as hex, anywhere in the line.
    let (code, out, _) = run_in(&dir, &[b"get", b"6bff00", b"--hex"], b"");
    assert_eq!((code, text(out)), (OK, "76fe\n".into()));
    // A value from standard input, bytes as they are (newlines and tabs included).
    assert_eq!(
        run_in(&dir, &[b"put", b"tab\tkey", b"-"], b"line1\nline2\t\\").0,
        OK
    );
    let (_, out, _) = run_in(&dir, &[b"get", b"tab\tkey"], b"");
    assert_eq!(out, b"line1\nline2\t\\\n");
    // With --hex, standard input is hex text.
    assert_eq!(
        run_in(&dir, &[b"--hex", b"put", b"-", b"00"], b" 0a0d \n").0,
        OK
    );
    let (_, out, _) = run_in(&dir, &[b"get", b"\n\r"], b"");
    assert_eq!(out, b"\x00\n");
    // `-` stands for one argument only.
    assert_eq!(
        run_in(&dir, &[b"put", b"-", b"-"], b"x").0,
        ExitCode::from(2)
    );
    // Escaped text: one line per entry, every byte named.
    let (_, out, _) = run_in(&dir, &[b"scan"], b"");
    assert_eq!(
        text(out),
        "\\n\\r\t\\x00\nk\\xff\\x00\tv\\xfe\ntab\\tkey\tline1\\nline2\\t\\\\\n"
    );
    // JSON lines: strings for UTF-8, hex fields for the rest.
    let (_, out, _) = run_in(&dir, &[b"scan", b"--format", b"jsonl"], b"");
    assert_eq!(
        text(out),
        "{\"key\":\"\\n\\r\",\"value\":\"\\u0000\"}\n\
         {\"key_hex\":\"6bff00\",\"value_hex\":\"76fe\"}\n\
         {\"key\":\"tab\\tkey\",\"value\":\"line1\\nline2\\t\\\\\"}\n"
    );
    let (_, out, _) = run_in(
        &dir,
        &[b"--hex", b"scan", b"--reverse", b"--from", b"6b"],
        b"",
    );
    assert_eq!(
        text(out),
        "746162096b6579\t6c696e65310a6c696e65320945c\n6bff00\t76fe\n".replace("45c", "5c")
    );
    // A key starting with "--" after "--".
    assert_eq!(run_in(&dir, &[b"put", b"--", b"--k", b"v"], b"").0, OK);
    assert_eq!(run_in(&dir, &[b"get", b"--", b"--k"], b"").1, b"v\n");
}

/// No argument makes the command panic: each of these exits 2 with a message (or works),
/// non-UTF-8 flags, directories and commands included.
#[test]
fn no_argument_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let bad: &[&[&[u8]]] = &[
        &[],
        &[b"\xff"],
        &[b"get"],
        &[b"\xffcmd", b"k"],
        &[b"put", b"k"],
        &[b"put", b"k", b"v", b"w"],
        &[b"get", b"k", b"--\xff"],
        &[b"scan", b"--from"],
        &[b"scan", b"--format", b"xml"],
        &[b"scan", b"--format", b"\xff"],
        &[b"scan", b"--reverse=1"],
        &[b"--hex", b"get", b"zz"],
        &[b"--hex", b"get", b"abc"],
        &[b"bench", b"--num", b"-1"],
        &[b"bench", b"--num", b"99999999999999999999"],
        &[b"bench", b"--num", b"\xff"],
        &[b"bench", b"--threads", b"1000"],
        &[b"bench", b"--benchmarks", b"nope"],
        &[b"bench", b"--benchmarks", b"fillseq"],
        &[b"bench", b"--value_size", b"999999999"],
        &[b"compact", b"extra"],
        &[b"repair", b"--fresh"],
    ];
    for args in bad {
        let (code, _, err) = run_in(&dir, args, b"");
        assert_eq!(code, ExitCode::from(2), "{args:?}: {err}");
        assert!(err.starts_with("mini_lsm: "), "{args:?}: {err}");
    }
    // A non-UTF-8 directory name is a directory like any other.
    let odd = tmp.path().join(OsString::from_vec(b"d\xffir".to_vec()));
    assert_eq!(run_in(&odd, &[b"put", b"k", b"v"], b"").0, OK);
    assert_eq!(run_in(&odd, &[b"get", b"k"], b"").1, b"v\n");
    // A directory that is a file.
    std::fs::write(tmp.path().join("file"), b"x").unwrap();
    let (code, _, err) = run_in(&tmp.path().join("file"), &[b"get", b"k"], b"");
    assert_eq!(code, ExitCode::from(2), "{err}");
}

/// `bench --fresh` removes a database's files and nothing else: a directory holding
/// anything else is refused, every file left as it was.
#[test]
fn bench_fresh_never_removes_what_is_not_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("project");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    std::fs::write(dir.join("src/main.rs"), b"fn main() {}").unwrap();
    let fresh: &[&[u8]] = &[
        b"bench",
        b"--num",
        b"500",
        b"--benchmarks",
        b"fillseq",
        b"--fresh",
    ];
    let (code, _, err) = run_in(&dir, fresh, b"");
    assert_eq!(code, ExitCode::from(2), "{err}");
    assert!(
        err.contains("notes.txt") && err.contains("refusing"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(
        std::fs::read(dir.join("src/main.rs")).unwrap(),
        b"fn main() {}"
    );
    // A database directory: its files are replaced, the directory kept.
    let db = tmp.path().join("db");
    assert_eq!(run_in(&db, &[b"put", b"old", b"1"], b"").0, OK);
    let (code, out, err) = run_in(&db, fresh, b"");
    assert_eq!(code, OK, "{err}");
    assert!(text(out).starts_with("fillseq      :"));
    assert_eq!(run_in(&db, &[b"get", b"old"], b"").0, ExitCode::from(1));
    assert_eq!(run_in(&db, &[b"get", b"0000000000000499"], b"").0, OK);
    // A foreign file beside a database: refused, nothing removed.
    std::fs::write(db.join("keep.me"), b"x").unwrap();
    let before: Vec<_> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(run_in(&db, fresh, b"").0, ExitCode::from(2));
    let after: Vec<_> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before.len(), after.len());
    assert_eq!(run_in(&db, &[b"get", b"0000000000000499"], b"").0, OK);
}
