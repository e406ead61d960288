//! Nothing is lost and nothing is half-written:
//! (a) a process killed (SIGKILL) in the middle of a `TableFileBuilder` build leaves the
//!     target path as it was: absent, or the previous complete table, byte for byte;
//! (b) an I/O error at any write of a build makes `add`/`finish` fail, the failure is sticky
//!     (`BuilderFailed`), and a `TableFileBuilder` that is dropped unfinished or fed keys out
//!     of order leaves nothing behind, not even its temporary file;
//! (c) reading never writes: opening, scanning, getting and verifying leave every file and
//!     the directory as they were, and files are opened read-only.
//!
//! (a) re-runs this test binary as the child (`--exact child_build` with `ROBUST_CHILD` set
//! to the target path).

mod robust_common;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use leveldb_table::Cursor;
use leveldb_table::{
    table::TableFileBuilder, Compression, Error, OpenOptions, Options, ReadOptions, TableBuilder,
    TableReader,
};

const CHILD_ENV: &str = "ROBUST_CHILD";

fn key(i: u64) -> Vec<u8> {
    format!("key-{i:012}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    format!("value {i} {}", "x".repeat((i % 200) as usize)).into_bytes()
}

/// Files in `dir` whose names look like `TableFileBuilder`'s temporary files, with sizes.
fn temp_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(".sst-") && n.ends_with(".tmp")
        })
        .map(|e| (e.path(), e.metadata().map_or(0, |m| m.len())))
        .collect();
    v.sort();
    v
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn small_table_at(path: &Path, n: u64) -> Vec<u8> {
    let mut b = TableFileBuilder::create(path, &Options::default().bloom(10)).unwrap();
    for i in 0..n {
        b.add(&key(i), &value(i)).unwrap();
    }
    b.finish().unwrap();
    fs::read(path).unwrap()
}

/// The child of `killed_build_leaves_nothing_or_the_previous_table`; in a normal test run
/// (no `ROBUST_CHILD`), checks that a finished build leaves exactly the target file.
///
/// As the child it builds until its table holds `ROBUST_PAUSE_AT` bytes, then says so on
/// stdout and waits for stdin to close: the parent kills it at exactly that point, with no
/// timing involved.
#[test]
fn child_build() {
    let Ok(target) = std::env::var(CHILD_ENV) else {
        let dir = tempfile::tempdir().unwrap();
        let bytes = small_table_at(&dir.path().join("t.ldb"), 100);
        assert_eq!(names(dir.path()), ["t.ldb"]);
        let t = TableReader::open(bytes, OpenOptions::default()).unwrap();
        assert_eq!(
            t.get(&key(7), &Default::default())
                .map(|l| l.into_value())
                .unwrap(),
            Some(value(7))
        );
        return;
    };
    let pause_at: u64 = std::env::var(PAUSE_ENV).unwrap().parse().unwrap();
    let opts = Options::default().compression(Compression::None);
    let mut b = TableFileBuilder::create(&target, &opts).unwrap();
    let mut i = 0;
    while b.builder().file_size() < pause_at {
        b.add(&key(i), &value(i)).unwrap();
        i += 1;
    }
    println!("PAUSED {i} entries, {} bytes", b.builder().file_size());
    io::stdout().flush().unwrap();
    // Blocks until the parent closes stdin; it kills this process first.
    let mut rest = Vec::new();
    let _ = io::Read::read_to_end(&mut io::stdin(), &mut rest);
    std::process::exit(3);
}

const PAUSE_ENV: &str = "ROBUST_PAUSE_AT";

#[test]
fn killed_build_leaves_nothing_or_the_previous_table() {
    // Kill points: before the first block is written out, and deep into the data blocks.
    for (pre_existing, pause_at) in [(false, 0), (false, 3 << 20), (true, 0), (true, 3 << 20)] {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("000123.ldb");
        let previous = pre_existing.then(|| small_table_at(&target, 500));

        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_build", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &target)
            .env(PAUSE_ENV, pause_at.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the child to reach its kill point (it prints one line there; with
        // `--nocapture` libtest's "test child_build ... " may precede it on that line).
        let mut out = io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            let n = io::BufRead::read_line(&mut out, &mut line).unwrap();
            assert!(n > 0, "the child ended before its kill point");
            if line.contains("PAUSED ") {
                break;
            }
        }
        child.kill().unwrap(); // SIGKILL on Unix: no destructor runs in the child.
        let status = child.wait().unwrap();
        assert!(!status.success());
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(9), "{status}");
        }

        match &previous {
            None => assert!(!target.exists(), "a killed build left a file at the target"),
            Some(p) => {
                assert_eq!(&fs::read(&target).unwrap(), p, "the previous table changed");
                let t = TableReader::open_path(&target, Default::default()).unwrap();
                assert!(t.verify().is_ok());
                assert_eq!(
                    t.get(&key(499), &Default::default())
                        .map(|l| l.into_value())
                        .unwrap(),
                    Some(value(499))
                );
            }
        }
        // The killed build's temporary file stays behind (nobody was left to remove it);
        // it never has the target's name.
        let tmps = temp_files(dir.path());
        assert_eq!(tmps.len(), 1, "{tmps:?}");
        let mut expected = vec![tmps[0]
            .0
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()];
        if pre_existing {
            expected.push("000123.ldb".into());
        }
        expected.sort();
        assert_eq!(names(dir.path()), expected);
    }
}

/// A writer that fails its `n`-th call (write or flush), counting from 1; 0 never fails.
struct FailingWriter {
    out: Vec<u8>,
    calls: usize,
    fail_at: usize,
}

impl FailingWriter {
    fn tick(&mut self) -> io::Result<()> {
        self.calls += 1;
        if self.calls == self.fail_at {
            return Err(io::Error::other(format!(
                "injected failure at call {}",
                self.calls
            )));
        }
        Ok(())
    }
}

impl Write for FailingWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tick()?;
        self.out.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tick()
    }
}

fn build_opts() -> Options {
    Options::default().bloom(10).block_size(512)
}

const ENTRIES: u64 = 300;

#[test]
fn an_io_error_at_any_write_fails_the_build_and_sticks() {
    let mut w = FailingWriter {
        out: Vec::new(),
        calls: 0,
        fail_at: 0,
    };
    {
        let mut b = TableBuilder::new(&mut w, &build_opts()).unwrap();
        for i in 0..ENTRIES {
            b.add(&key(i), &value(i)).unwrap();
        }
        b.finish().unwrap();
    }
    let total = w.calls;
    let good = w.out.clone();
    assert!(total > 20, "only {total} writer calls");
    for n in 1..=total {
        let mut w = FailingWriter {
            out: Vec::new(),
            calls: 0,
            fail_at: n,
        };
        let mut b = TableBuilder::new(&mut w, &build_opts()).unwrap();
        let mut first: Option<Error> = None;
        for i in 0..ENTRIES {
            match b.add(&key(i), &value(i)) {
                Ok(()) => assert!(first.is_none(), "call {n}: add succeeded after a failure"),
                Err(e) => {
                    if first.is_none() {
                        assert!(matches!(e, Error::Io { .. }), "call {n}: {e}");
                        assert!(e.to_string().contains("injected"), "call {n}: {e}");
                        first = Some(e);
                    } else {
                        assert!(matches!(e, Error::BuilderFailed { .. }), "call {n}: {e}");
                        assert!(e.to_string().contains("injected"), "call {n}: {e}");
                    }
                }
            }
        }
        if first.is_some() {
            assert!(
                matches!(b.flush(), Err(Error::BuilderFailed { .. })),
                "call {n}"
            );
        }
        let fin = b.finish();
        let e = fin
            .err()
            .unwrap_or_else(|| panic!("call {n}: finish succeeded after an I/O error"));
        if first.is_some() {
            assert!(matches!(e, Error::BuilderFailed { .. }), "call {n}: {e}");
        } else {
            assert!(matches!(e, Error::Io { .. }), "call {n}: {e}");
        }
        if n < total {
            // (The last call is the final flush: every byte was written, and still the build
            // reports the failure.)
            assert!(
                w.out.len() < good.len(),
                "call {n}: a failed build wrote a whole table"
            );
        }
    }
}

/// Short writes and `Interrupted` errors are not failures: the bytes come out the same.
#[test]
fn short_writes_and_interruptions_give_the_same_bytes() {
    struct Choppy {
        out: Vec<u8>,
        calls: usize,
    }
    impl Write for Choppy {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls % 3 == 0 {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(7);
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut plain = TableBuilder::new(Vec::new(), &build_opts()).unwrap();
    let mut choppy = TableBuilder::new(
        Choppy {
            out: Vec::new(),
            calls: 0,
        },
        &build_opts(),
    )
    .unwrap();
    for i in 0..ENTRIES {
        plain.add(&key(i), &value(i)).unwrap();
        choppy.add(&key(i), &value(i)).unwrap();
    }
    let (a, _) = plain.finish().unwrap();
    let (b, _) = choppy.finish().unwrap();
    assert!(b.calls > a.len() / 7);
    assert_eq!(a, b.out);
}

#[test]
fn unfinished_or_failed_file_builds_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.ldb");

    // Dropped without finish.
    {
        let mut b = TableFileBuilder::create(&target, &build_opts()).unwrap();
        for i in 0..ENTRIES {
            b.add(&key(i), &value(i)).unwrap();
        }
        assert_eq!(
            temp_files(dir.path()).len(),
            1,
            "the build writes to a temporary file"
        );
        assert!(!target.exists());
    }
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));

    // A key out of order: the add fails (naming both keys), and dropping the builder then
    // leaves nothing.
    {
        let mut b = TableFileBuilder::create(&target, &build_opts()).unwrap();
        b.add(&key(5), &value(5)).unwrap();
        let e = b.add(&key(4), &value(4)).unwrap_err();
        assert!(matches!(e, Error::OutOfOrder { .. }), "{e}");
        assert!(e.to_string().contains("key-000000000004"), "{e}");
        let e = b.add(&key(5), &value(5)).unwrap_err();
        assert!(
            matches!(e, Error::OutOfOrder { .. }),
            "a duplicate key: {e}"
        );
    }
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));

    // The target is a directory: finish fails, the directory is untouched, no temp remains.
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    fs::write(sub.join("keep"), b"keep").unwrap();
    {
        let mut b = TableFileBuilder::create(&sub, &build_opts()).unwrap();
        b.add(&key(1), &value(1)).unwrap();
        assert!(b.finish().is_err());
    }
    assert_eq!(names(dir.path()), ["sub"]);
    assert_eq!(names(&sub), ["keep"]);

    // A target in a directory that does not exist: create fails, nothing appears.
    assert!(TableFileBuilder::create(dir.path().join("missing/t.ldb"), &build_opts()).is_err());
    assert_eq!(names(dir.path()), ["sub"]);
}

/// (name, size, modification time, contents) of every file in `dir`.
fn snapshot(dir: &Path) -> Vec<(String, u64, SystemTime, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                m.len(),
                m.modified().unwrap(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[cfg(unix)]
#[test]
fn reading_never_writes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real = robust_common::read_testdata("cases/small_snappy/000005.ldb");
    fs::write(dir.path().join("000005.ldb"), &real).unwrap();
    let built = small_table_at(&dir.path().join("built.ldb"), 300);
    // A damaged copy too: error paths must not write either.
    let mut damaged = real.clone();
    damaged[100] ^= 0xff;
    fs::write(dir.path().join("damaged.ldb"), &damaged).unwrap();
    for f in ["000005.ldb", "built.ldb", "damaged.ldb"] {
        fs::set_permissions(dir.path().join(f), fs::Permissions::from_mode(0o444)).unwrap();
    }
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o555)).unwrap();
    let dir_mtime = fs::metadata(dir.path()).unwrap().modified().unwrap();
    let before = snapshot(dir.path());
    // Tests run as root, where permission bits do not stop writes: what proves that nothing
    // was written is the comparison of the snapshots below.
    std::thread::sleep(std::time::Duration::from_millis(20));

    for f in ["000005.ldb", "built.ldb", "damaged.ldb"] {
        let path = dir.path().join(f);
        let by_path = TableReader::open_path(&path, Default::default()).unwrap();
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::io::AsRawFd;
            let fd = by_path.source().as_raw_fd();
            let info = fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap();
            let flags = info
                .lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .unwrap()
                .trim();
            let flags = u32::from_str_radix(flags, 8).unwrap();
            assert_eq!(
                flags & 0o3,
                0,
                "{f}: opened with flags {flags:o}, not read-only"
            );
        }
        let by_file = TableReader::open(
            fs::File::open(&path).unwrap(),
            OpenOptions::default().block_cache(Some(robust_common::shared_cache())),
        )
        .unwrap();
        for t in [&by_path, &by_file] {
            let mut it = t.iter(&ReadOptions::default());
            it.seek_to_first();
            let n = it.into_iter().count();
            assert!(n > 0);
            let _ = t
                .get(b"key-0007", &Default::default())
                .map(|l| l.into_value());
            let _ = t.get(&key(7), &Default::default()).map(|l| l.into_value());
            let _ = t.filter_excludes(b"nope");
            let report = t.verify();
            assert_eq!(report.is_ok(), f != "damaged.ldb", "{f}");
        }
    }
    assert_eq!(
        built.len() as u64,
        before.iter().find(|e| e.0 == "built.ldb").unwrap().1
    );

    let after = snapshot(dir.path());
    assert_eq!(after, before, "a read changed a file");
    assert_eq!(
        fs::metadata(dir.path()).unwrap().modified().unwrap(),
        dir_mtime,
        "the directory changed"
    );
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
}
