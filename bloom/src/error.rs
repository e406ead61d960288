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
    /// One server was given, but it is a node of a Redis Cluster (it answered `MOVED`, or
    /// `INFO` says `cluster_enabled:1`): open it as a cluster, with
    /// `Servers::cluster` (`sst bloom`: `--cluster`).
    ClusterNode {
        /// The server (`host:port`).
        node: String,
        /// What showed it (`INFO says cluster_enabled:1`, the `MOVED` reply).
        evidence: String,
    },
    /// An add stopped part-way: `source` is why. `acknowledged` of the batch's `keys` are
    /// in the filter (added, or found present) as the filter's durability promises; the
    /// others may or may not be. Adds are idempotent: sending the whole batch again is safe.
    AddStopped {
        /// Keys of the batch acknowledged before it stopped (duplicates each counted).
        acknowledged: u64,
        /// Keys in the batch.
        keys: u64,
        /// Why it stopped.
        source: Box<Error>,
    },
}

impl Error {
    /// The error that caused this one: for [`Error::AddStopped`] its source (followed
    /// down), otherwise the error itself.
    pub fn root_cause(&self) -> &Error {
        match self {
            Error::AddStopped { source, .. } => source.root_cause(),
            e => e,
        }
    }
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
            Error::ClusterNode { node, evidence } => write!(
                f,
                "{node} is a Redis Cluster node ({evidence}): open it as a cluster, with its \
                 seed nodes"
            ),
            Error::AddStopped {
                acknowledged,
                keys,
                source,
            } => write!(
                f,
                "add stopped with {acknowledged} of the batch's {keys} keys acknowledged: \
                 {source}"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::AddStopped { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
