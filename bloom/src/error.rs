//! The crate's one error type: every failure says what failed and where (the file offset, the
//! Redis command and node, the filter's name and field).

use std::fmt;
use std::io;
use std::path::PathBuf;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong with a standalone bloom filter.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is out of range (capacity 0, a rate outside `(0, 0.5]`, ...), or a filter
    /// reached its last layer.
    InvalidArgument(String),
    /// Reading or writing a filter file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The error from the operating system.
        source: io::Error,
    },
    /// A stored filter (a scalable or counting filter file) does not decode.
    BadFile {
        /// Offset of the first field found wrong.
        offset: u64,
        /// What is wrong there.
        reason: &'static str,
    },
    /// A Redis command failed: connection refused or lost, a timeout, an error reply, or a
    /// cluster that stayed unavailable for longer than the retry budget.
    Redis {
        /// The command (`BITFIELD`, `EVALSHA reserve`, `connect`, ...).
        command: String,
        /// The server (`host:port`) it went to, when known.
        node: Option<String>,
        /// What went wrong.
        detail: String,
    },
    /// A Redis filter exists under this name with other parameters.
    Mismatch {
        /// The filter's name.
        name: String,
        /// The parameter that differs.
        field: &'static str,
        /// Its stored value.
        stored: String,
        /// The value asked for.
        requested: String,
    },
    /// No Redis filter exists under this name (and none was to be created).
    NotFound {
        /// The filter's name.
        name: String,
    },
    /// In the waiting durability mode, fewer replicas than asked acknowledged a batch's
    /// writes within the timeout: the batch is not reported added (sending it again is safe).
    NotReplicated {
        /// The master whose replicas fell short (`host:port`).
        node: String,
        /// Replicas that acknowledged.
        acked: u64,
        /// Replicas asked for.
        wanted: u32,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(msg) => write!(f, "invalid argument: {msg}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::BadFile { offset, reason } => {
                write!(f, "bad bloom filter file: {reason} at offset {offset}")
            }
            Error::Redis {
                command,
                node: Some(node),
                detail,
            } => write!(f, "redis {command} on {node} failed: {detail}"),
            Error::Redis {
                command, detail, ..
            } => write!(f, "redis {command} failed: {detail}"),
            Error::Mismatch {
                name,
                field,
                stored,
                requested,
            } => write!(
                f,
                "bloom filter '{name}' exists with {field} {stored}, not {requested}"
            ),
            Error::NotFound { name } => write!(f, "no bloom filter named '{name}'"),
            Error::NotReplicated {
                node,
                acked,
                wanted,
            } => write!(
                f,
                "redis WAIT on {node}: {acked} of {wanted} replicas acknowledged the batch in time \
                 (not reported added; sending it again is safe)"
            ),
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
