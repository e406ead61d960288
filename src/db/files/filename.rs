//! The files of a database directory, by name (LevelDB's `db/filename.cc`), and CURRENT.
//!
//! ```text
//! CURRENT            "MANIFEST-000002\n": the descriptor in use
//! MANIFEST-NNNNNN    log of VersionEdits (the live tables per level)
//! NNNNNN.log         write-ahead log: WriteBatches not yet in a table
//! NNNNNN.ldb / .sst  tables (.sst is the name before LevelDB 1.14)
//! NNNNNN.dbtmp       a file being written (repair, CURRENT update)
//! LOCK, LOG, LOG.old the lock file and the informational log
//! ```

use std::path::Path;

use crate::error::{Error, Result};

/// What a file of a database directory is, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    /// `NNNNNN.log`: a write-ahead log.
    Log(u64),
    /// `NNNNNN.ldb` or `NNNNNN.sst`: a table.
    Table(u64),
    /// `MANIFEST-NNNNNN`: a descriptor.
    Manifest(u64),
    /// `CURRENT`.
    Current,
    /// `LOCK`.
    Lock,
    /// `LOG` or `LOG.old`: LevelDB's informational log (text).
    InfoLog,
    /// `NNNNNN.dbtmp`: a temporary file.
    Temp(u64),
}

fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl FileKind {
    /// Classifies a file name, or `None` for a name LevelDB does not use.
    pub fn parse(name: &str) -> Option<FileKind> {
        match name {
            "CURRENT" => return Some(FileKind::Current),
            "LOCK" => return Some(FileKind::Lock),
            "LOG" | "LOG.old" => return Some(FileKind::InfoLog),
            _ => {}
        }
        if let Some(n) = name.strip_prefix("MANIFEST-") {
            return number(n).map(FileKind::Manifest);
        }
        let (stem, ext) = name.rsplit_once('.')?;
        let n = number(stem)?;
        match ext {
            "log" => Some(FileKind::Log(n)),
            "ldb" | "sst" => Some(FileKind::Table(n)),
            "dbtmp" => Some(FileKind::Temp(n)),
            _ => None,
        }
    }

    /// Classifies the last component of `path`.
    pub fn of_path(path: &Path) -> Option<FileKind> {
        path.file_name()?.to_str().and_then(FileKind::parse)
    }

    /// What this file is, in words, and the `sst` command that reads it.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Log(_) => "a write-ahead log of a LevelDB database (read it with `sst log`)",
            FileKind::Table(_) => "a table",
            FileKind::Manifest(_) => {
                "a MANIFEST (the list of live tables) of a LevelDB database (read it with `sst manifest`)"
            }
            FileKind::Current => {
                "the CURRENT file of a LevelDB database, naming its MANIFEST (read the directory with `sst db info`)"
            }
            FileKind::Lock => "the LOCK file of a LevelDB database (empty; read the directory with `sst db info`)",
            FileKind::InfoLog => "LevelDB's informational text log (not data)",
            FileKind::Temp(_) => "a temporary file of a LevelDB database",
        }
    }
}

/// The name of table `number` as LevelDB 1.14+ writes it.
pub fn table_file_name(number: u64) -> String {
    format!("{number:06}.ldb")
}

/// The name of log `number`.
pub fn log_file_name(number: u64) -> String {
    format!("{number:06}.log")
}

/// The name of MANIFEST `number`.
pub fn manifest_file_name(number: u64) -> String {
    format!("MANIFEST-{number:06}")
}

/// Reads CURRENT in `dir`: the MANIFEST's name and number.
///
/// # Errors
/// [`Error::Io`] if it cannot be read; [`Error::BadCurrent`] if it is empty, does not end
/// in a newline (LevelDB writes it whole, so a missing newline means a torn write), or does
/// not name a MANIFEST.
pub fn read_current(dir: &Path) -> Result<(String, u64)> {
    let bytes = std::fs::read(dir.join("CURRENT"))?;
    let bad = |reason: String| Error::BadCurrent { reason };
    let Some(body) = bytes.strip_suffix(b"\n") else {
        return Err(bad(if bytes.is_empty() {
            "it is empty".into()
        } else {
            "it does not end in a newline (a torn write?)".into()
        }));
    };
    let name = std::str::from_utf8(body)
        .map_err(|_| bad("it is not text".into()))?
        .to_string();
    match FileKind::parse(&name) {
        Some(FileKind::Manifest(n)) => Ok((name, n)),
        _ => Err(bad(format!("{name:?} is not a MANIFEST name"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_classified_as_leveldb_does() {
        assert_eq!(FileKind::parse("000005.ldb"), Some(FileKind::Table(5)));
        assert_eq!(FileKind::parse("000005.sst"), Some(FileKind::Table(5)));
        assert_eq!(FileKind::parse("123.log"), Some(FileKind::Log(123)));
        assert_eq!(
            FileKind::parse("MANIFEST-000002"),
            Some(FileKind::Manifest(2))
        );
        assert_eq!(FileKind::parse("CURRENT"), Some(FileKind::Current));
        assert_eq!(FileKind::parse("LOG.old"), Some(FileKind::InfoLog));
        assert_eq!(FileKind::parse("000009.dbtmp"), Some(FileKind::Temp(9)));
        for bad in [
            "",
            "x.ldb",
            "-1.ldb",
            "1.txt",
            "MANIFEST-",
            "MANIFEST-x",
            ".ldb",
            "1e3.log",
        ] {
            assert_eq!(FileKind::parse(bad), None, "{bad}");
        }
        assert_eq!(table_file_name(7), "000007.ldb");
        assert_eq!(manifest_file_name(1_234_567), "MANIFEST-1234567");
    }

    #[test]
    fn current_must_end_in_a_newline_and_name_a_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let cur = dir.path().join("CURRENT");
        std::fs::write(&cur, "MANIFEST-000002\n").unwrap();
        assert_eq!(
            read_current(dir.path()).unwrap(),
            ("MANIFEST-000002".into(), 2)
        );
        for bad in ["MANIFEST-000002", "", "000002.log\n", "MANIFEST-00x\n"] {
            std::fs::write(&cur, bad).unwrap();
            assert!(
                matches!(read_current(dir.path()), Err(Error::BadCurrent { .. })),
                "{bad:?}"
            );
        }
    }
}
