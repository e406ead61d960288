//! Every I/O failure of a call given a path names the file (`Error::InFile`): opening a
//! table or a database that cannot be read, creating a table, a file or a database where
//! nothing can be written, and a write that fails part-way (a full disk: a child copy of this
//! test binary runs under `prlimit --fsize` with SIGXFSZ ignored, so its writes fail with
//! EFBIG once a file reaches the limit).

use std::path::Path;
use std::process::Command;

use leveldb_table::db::engine::{BulkBuilder, BulkOptions, DirLock};
use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::raw::write_atomically;
use leveldb_table::table::TableFileBuilder;
use leveldb_table::{Error, OpenOptions, Options, TableReader};

const CHILD_ENV: &str = "IO_ERRORS_CHILD";

/// `e` is an I/O error in the file shown as `file`, and its message says so.
fn names(e: &Error, file: &Path) {
    let shown = file.display().to_string();
    match e {
        Error::InFile { file, source } => {
            assert_eq!(file, &shown);
            assert!(
                matches!(**source, Error::Io { .. }),
                "an I/O error: {source:?}"
            );
        }
        other => panic!("not an error in {shown}: {other:?}"),
    }
    assert!(e.to_string().starts_with(&shown), "{e}");
    assert!(!e.is_corruption(), "{e}");
}

#[test]
fn opening_a_table_that_cannot_be_read_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.ldb");
    let e = TableReader::open_path(&missing, OpenOptions::default())
        .err()
        .unwrap();
    names(&e, &missing);
    // A directory opens (O_RDONLY) but cannot be read: EISDIR on the first read.
    let e = TableReader::open_path(dir.path(), OpenOptions::default())
        .err()
        .unwrap();
    names(&e, dir.path());
}

#[test]
fn damage_in_a_table_opened_by_path_names_it_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.ldb");
    std::fs::write(&path, b"not a table").unwrap();
    let e = TableReader::open_path(&path, OpenOptions::default())
        .err()
        .unwrap();
    assert!(e.is_corruption(), "{e}");
    assert!(
        matches!(&e, Error::InFile { file, source }
            if *file == path.display().to_string() && matches!(**source, Error::TooShort { .. })),
        "{e:?}"
    );
}

#[test]
fn writing_where_nothing_can_be_written_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // A parent that is a file: ENOTDIR, whoever runs the test (root included).
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let target = file.join("t.ldb");
    let e = TableFileBuilder::create(&target, &Options::default())
        .err()
        .unwrap();
    names(&e, &target);
    let e = write_atomically(&target, b"bytes").err().unwrap();
    names(&e, &target);
    let e = BulkBuilder::create(file.join("db"), BulkOptions::default())
        .err()
        .unwrap();
    names(&e, &file);
    let e = DirLock::acquire(&file).err().unwrap();
    names(&e, &file.join("LOCK"));
    // A directory nothing may create files in, for root too (sysfs: EACCES).
    let target = Path::new("/sys/leveldb-table-test.ldb");
    let e = TableFileBuilder::create(target, &Options::default())
        .err()
        .unwrap();
    names(&e, target);
    let e = write_atomically(target, b"bytes").err().unwrap();
    names(&e, target);
}

#[test]
fn a_database_whose_files_cannot_be_read_names_them() {
    let d = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/db/basic");
    for e in std::fs::read_dir(&root).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
    }
    // CURRENT unreadable (a directory in its place).
    std::fs::remove_file(d.path().join("CURRENT")).unwrap();
    std::fs::create_dir(d.path().join("CURRENT")).unwrap();
    let e = Db::open(d.path(), DbOptions::default()).err().unwrap();
    assert!(e.to_string().starts_with("CURRENT: "), "{e}");
    assert!(!e.is_corruption(), "{e}");
}

/// A bulk build and a table build as the child (under a file-size limit); in a normal run,
/// both succeed, so the failures the parent sees come from the limit alone.
#[test]
fn child_builds_under_file_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (table, db) = match std::env::var(CHILD_ENV) {
        Ok(d) => (Path::new(&d).join("t.ldb"), Path::new(&d).join("db")),
        Err(_) => (dir.path().join("t.ldb"), dir.path().join("db")),
    };
    let n: u32 = if std::env::var(CHILD_ENV).is_ok() {
        100_000
    } else {
        2_000
    };
    let value = [7u8; 200];
    let built = (|| {
        let mut b = TableFileBuilder::create(&table, &Options::default())?;
        for i in 0..n {
            b.add(format!("key{i:08}").as_bytes(), &value)?;
        }
        b.finish().map(|_| ())
    })();
    let bulk = (|| {
        let mut b = BulkBuilder::create(&db, BulkOptions::default())?;
        for i in 0..n {
            b.add(format!("key{i:08}").as_bytes(), &value)?;
        }
        b.finish().map(|_| ())
    })();
    if std::env::var(CHILD_ENV).is_err() {
        built.unwrap();
        bulk.unwrap();
        return;
    }
    for (what, r) in [("table", built), ("bulk", bulk)] {
        match r {
            Ok(()) => println!("CHILD-RESULT {what} ok"),
            Err(Error::InFile { file, source }) => {
                println!("CHILD-RESULT {what} in-file {file} :: {source}")
            }
            Err(e) => println!("CHILD-RESULT {what} other {e:?}"),
        }
    }
}

#[test]
fn a_full_disk_names_the_file_being_written() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(
            "trap '' XFSZ; exec prlimit --fsize=200000 \"$0\" --exact \
             child_builds_under_file_size_limit --nocapture --test-threads=1",
        )
        .arg(&exe)
        .env(CHILD_ENV, dir.path())
        .output()
        .expect("bash and prlimit (util-linux) are available");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = |what: &str| {
        let tag = format!("CHILD-RESULT {what} ");
        stdout
            .lines()
            .find_map(|l| l.find(&tag).map(|at| l[at..].to_string()))
            .unwrap_or_else(|| panic!("no {what} result: {stdout}"))
    };
    let table = line("table");
    let shown = dir.path().join("t.ldb").display().to_string();
    assert!(
        table.starts_with(&format!("CHILD-RESULT table in-file {shown} :: "))
            && table.contains("File too large"),
        "{table}"
    );
    // The bulk build's tables are written in a temporary directory beside the target:
    // the error names the table file there.
    let bulk = line("bulk");
    let prefix = format!(
        "CHILD-RESULT bulk in-file {}/.db.bulk-",
        dir.path().display()
    );
    assert!(
        bulk.starts_with(&prefix) && bulk.contains(".ldb :: ") && bulk.contains("File too large"),
        "{bulk}"
    );
    assert!(!dir.path().join("db").exists());
}
