//! A path-based build that hits a real I/O error midway leaves nothing at the target path.
//!
//! The error is made real: a child copy of this test binary runs under `prlimit --fsize`
//! with SIGXFSZ ignored, so the temporary file's writes fail with EFBIG once it reaches the
//! limit, deep inside `TableFileBuilder::add`/`finish`.

use std::path::Path;
use std::process::Command;

use leveldb_table::{table::TableFileBuilder, Options, TableReader};

const CHILD_ENV: &str = "ATOMIC_WRITE_IO_ERROR_CHILD";

fn build(path: &Path, n: u32) -> leveldb_table::Result<()> {
    let mut b = TableFileBuilder::create(path, &Options::default().bloom(10))?;
    for i in 0..n {
        let v = format!("{i:08}").repeat(40);
        b.add(format!("key{i:08}").as_bytes(), v.as_bytes())?;
    }
    b.finish().map(|_| ())
}

/// As the child (run by the test below under a file-size limit): builds a big table and
/// reports how it ended. In a normal run: the same build with no limit succeeds and leaves
/// exactly the target file, so the failure the parent sees comes from the limit alone.
#[test]
fn child_build_under_file_size_limit() {
    let Ok(target) = std::env::var(CHILD_ENV) else {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("table.ldb");
        build(&target, 2_000).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["table.ldb"]);
        let t = TableReader::open_path(&target, Default::default()).unwrap();
        assert_eq!(
            t.get(b"key00001999", &Default::default())
                .map(|l| l.into_value())
                .unwrap()
                .unwrap()
                .len(),
            320
        );
        return;
    };
    match build(Path::new(&target), 200_000) {
        Ok(()) => println!("CHILD-RESULT ok"),
        Err(e) => println!("CHILD-RESULT err {e}"),
    }
}

#[test]
fn a_build_failing_with_an_io_error_leaves_nothing_at_the_target() {
    // (The child runs with `--exact child_build_under_file_size_limit`: this test never
    // runs inside it.)
    let dir = tempfile::tempdir().unwrap();
    for previous in [false, true] {
        let target = dir.path().join("table.ldb");
        let _ = std::fs::remove_file(&target);
        if previous {
            build(&target, 100).unwrap();
        }
        let before = std::fs::read(&target).ok();
        let exe = std::env::current_exe().unwrap();
        let out = Command::new("bash")
            .arg("-c")
            .arg("trap '' XFSZ; exec prlimit --fsize=200000 \"$0\" --exact child_build_under_file_size_limit --nocapture --test-threads=1")
            .arg(&exe)
            .env(CHILD_ENV, &target)
            .output()
            .expect("bash and prlimit (util-linux) are available");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("CHILD-RESULT err") && stdout.contains("File too large"),
            "the child must fail with EFBIG: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The error names the file being written.
        assert!(
            stdout.contains(&format!("CHILD-RESULT err {}: ", target.display())),
            "{stdout}"
        );
        // The target is untouched: absent, or the previous complete table.
        assert_eq!(std::fs::read(&target).ok(), before);
        if let Some(prev) = before {
            assert!(TableReader::open(prev, Default::default()).is_ok());
        }
        // And no temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "table.ldb")
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}
