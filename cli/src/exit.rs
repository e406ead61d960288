//! How a subcommand ends: exit codes, the failure it returns, and the messages it prints on
//! stderr (errors name the file and the offset).

use std::io::{self, Write};
use std::path::Path;

use leveldb_table::Error;

/// Everything worked; for `get`, every key was found.
pub const EXIT_OK: i32 = 0;
/// Corruption found (or, for `get`, a key not found).
pub const EXIT_FAIL: i32 = 1;
/// Usage error, a file that cannot be opened or read, an I/O error.
pub const EXIT_ERROR: i32 = 2;

/// How a subcommand ends when it does not end normally.
#[derive(Debug)]
pub enum Failure {
    /// stdout was closed by the reader (`sst scan t.ldb | head`): end quietly with 0.
    BrokenPipe,
    /// Print the message on stderr and exit with the code.
    Exit(i32, String),
}

/// What a subcommand returns: its exit code, or a failure.
pub type CmdResult = Result<i32, Failure>;

impl Failure {
    /// A usage or I/O error (exit 2).
    pub fn error(msg: impl Into<String>) -> Self {
        Failure::Exit(EXIT_ERROR, msg.into())
    }
}

/// `?` on output writes: a closed pipe ends quietly, anything else is exit 2.
impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::error(format!("error writing output: {e}"))
        }
    }
}

/// Writes a line on stderr, ignoring failures (stderr may be closed too).
pub fn warn(msg: &str) {
    let mut e = io::stderr().lock();
    let _ = writeln!(e, "sst: {msg}");
}

/// `"PATH: offset N: what"` (or `"PATH: what"` when the error has no offset).
pub fn describe(path: &Path, err: &Error) -> String {
    match err.offset() {
        Some(off) => format!("{}: offset {off}: {err}", path.display()),
        None => format!("{}: {err}", path.display()),
    }
}

/// Exit code for an error met while reading an opened table: 1 for corruption, 2 for I/O.
pub fn code_for(err: &Error) -> i32 {
    if err.is_corruption() {
        EXIT_FAIL
    } else {
        EXIT_ERROR
    }
}
