//! The engine's one error type: what the table library reports (damage with its file,
//! offset and block; I/O with its file), and what only an engine says (a write after a
//! failure, a directory that is not only a database, a key too large for a batch).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// What went wrong.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// The table library's error: damage (a checksum, a bad block, a damaged MANIFEST or
    /// log record, each naming its file) or I/O.
    Storage(Arc<leveldb_table::Error>),
    /// An I/O error on a file or directory of the engine's own, with its path.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: Arc<std::io::Error>,
    },
    /// An earlier write or background job failed; the engine takes no more writes until it
    /// is reopened (what LevelDB calls its background error).
    Stopped(Arc<Error>),
    /// A directory that `--fresh` or `destroy` would clear holds files that are not the
    /// engine's (nothing was removed).
    Foreign {
        /// The directory.
        dir: PathBuf,
        /// Some of the names that are not a database's files.
        names: Vec<String>,
    },
    /// An argument the engine cannot take.
    InvalidArgument(String),
}

/// The engine's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source: Arc::new(source),
        }
    }

    /// Whether this is damage in the data (a checksum, a bad record or block) rather than
    /// a failed system call or a bad argument.
    pub fn is_corruption(&self) -> bool {
        match self {
            Error::Storage(e) => e.is_corruption(),
            Error::Stopped(e) => e.is_corruption(),
            _ => false,
        }
    }
}

impl From<leveldb_table::Error> for Error {
    fn from(e: leveldb_table::Error) -> Error {
        Error::Storage(Arc::new(e))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Storage(e) => write!(f, "{e}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Stopped(e) => write!(f, "the engine stopped taking writes after: {e}"),
            Error::Foreign { dir, names } => write!(
                f,
                "{} holds files that are not a database's ({}): refusing to clear it",
                dir.display(),
                names.join(", ")
            ),
            Error::InvalidArgument(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Storage(e) => Some(&**e),
            Error::Io { source, .. } => Some(&**source),
            Error::Stopped(e) => Some(&**e),
            _ => None,
        }
    }
}
