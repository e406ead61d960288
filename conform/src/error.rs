//! The kit's one error type: what stops a run before or between cases (never an adapter's
//! failure on a case, which is a `fail` row).

use std::fmt;
use std::io;
use std::path::PathBuf;

/// `Result` with the kit's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the kit could not run.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory of the kit's own (its work directory, a fixture) could not be
    /// read or written.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error from the operating system.
        source: io::Error,
    },
    /// The adapter's (or the reference's) `capabilities` failed or did not parse.
    Capabilities {
        /// The adapter command.
        command: String,
        /// What went wrong.
        reason: String,
    },
    /// A fixture in testdata/ is not what its listing says, or this project's reader
    /// disagrees with the listing the real writer left: the expected answers cannot be
    /// trusted, so the kit refuses to run.
    Fixture {
        /// The fixture.
        path: PathBuf,
        /// What disagrees.
        reason: String,
    },
    /// A case the kit generated does not read back as it was written with this project's
    /// reader (a bug here, not in the adapter).
    SelfCheck {
        /// The case.
        case: String,
        /// What disagrees.
        reason: String,
    },
    /// A usage error: an unknown group, a case pattern that selects nothing, a `--keep`
    /// directory that is not empty.
    Usage(String),
}

impl Error {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Capabilities { command, reason } => {
                write!(f, "adapter `{command}`: capabilities: {reason}")
            }
            Error::Fixture { path, reason } => write!(f, "fixture {}: {reason}", path.display()),
            Error::SelfCheck { case, reason } => {
                write!(f, "case {case}: the kit's own reader disagrees: {reason}")
            }
            Error::Usage(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
