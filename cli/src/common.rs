//! Helpers shared by the subcommands: exit codes, error messages, output, hex and escaping,
//! keys from the command line. (Opening a table is `table_open.rs`.)

use std::ffi::OsStr;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use leveldb_table::raw::format::MAX_SEQUENCE;
use leveldb_table::raw::internal_key;
use leveldb_table::{table::KeyFormat, Error, OpenOptions, ReadOptions};

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

/// `--format` of the subcommands that print one record per line (one vocabulary for all).
pub use crate::output::OutFormat as LinesFormat;
/// `--format` of the subcommands that print one document (one vocabulary for all).
pub use crate::output::OutFormat as DocFormat;

/// The reading options (`--keys`, `--comparator`, `--no-verify`, wherever given; see
/// `flags.rs`), for every subcommand that reads tables.
#[derive(Debug, Clone, Copy)]
pub struct Global {
    /// Verify block checksums (true unless `--no-verify`).
    pub verify: bool,
    /// Key format (`--keys`).
    pub keys: KeyFormat,
    /// `--comparator`, for tables outside a database directory.
    pub comparator: Option<crate::flags::ComparatorArg>,
}

impl Global {
    /// Reader options for opening a table.
    pub fn reader_options(&self) -> OpenOptions {
        OpenOptions::default()
            .keys(self.keys)
            .verify_checksums(self.verify)
    }

    /// Per-read options (no cache filling; checksums are the reader's,
    /// [`reader_options`](Self::reader_options)).
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions::default().fill_cache(false)
    }
}

/// A buffered, locked stdout.
pub fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

/// stdout for subcommands whose exit code is a verdict (`verify`, `get`): once the reader
/// closes the pipe (`sst verify t.ldb | head -1`), the rest of the output is dropped but the
/// work goes on, so the exit code still says what was found.
pub fn verdict_stdout() -> VerdictOut<BufWriter<io::StdoutLock<'static>>> {
    VerdictOut {
        inner: stdout(),
        closed: false,
    }
}

/// A writer that swallows a broken pipe (see [`verdict_stdout`]); other errors pass through.
pub struct VerdictOut<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> VerdictOut<W> {
    fn closed_on<T>(&mut self, r: io::Result<T>, ok: T) -> io::Result<T> {
        match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(ok)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for VerdictOut<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.inner.write(buf);
        self.closed_on(r, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.flush();
        self.closed_on(r, ())
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

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends the lowercase hex of `bytes` to `out`.
pub fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(HEX[(b >> 4) as usize]);
        out.push(HEX[(b & 15) as usize]);
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut v = Vec::with_capacity(bytes.len() * 2);
    push_hex(&mut v, bytes);
    // ok: only ASCII hex digits were pushed.
    String::from_utf8(v).unwrap_or_default()
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Decodes hex (either case, even length) into `out` (cleared first).
pub fn unhex_into(s: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    if s.len() % 2 != 0 {
        return Err(format!("odd number of hex digits ({})", s.len()));
    }
    for (i, pair) in s.chunks_exact(2).enumerate() {
        match (hex_digit(pair[0]), hex_digit(pair[1])) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => {
                return Err(format!(
                    "not a hex digit at position {}",
                    if hex_digit(pair[0]).is_none() {
                        2 * i
                    } else {
                        2 * i + 1
                    }
                ))
            }
        }
    }
    Ok(())
}

/// Decodes hex.
pub fn unhex(s: &[u8]) -> Result<Vec<u8>, String> {
    let mut v = Vec::new();
    unhex_into(s, &mut v)?;
    Ok(v)
}

/// A byte [`push_escaped`] copies as it is: printable ASCII but the backslash and the quote.
pub fn plain(b: u8) -> bool {
    matches!(b, 0x20..=0x7e) && b != b'\\' && b != b'\''
}

/// Whether [`push_escaped`] copies `bytes` unchanged. Every byte is tested, without an early
/// exit, which the compiler vectorizes.
pub fn all_plain(bytes: &[u8]) -> bool {
    bytes.iter().fold(true, |all, &b| all & plain(b))
}

/// Appends `bytes` with printable ASCII kept and everything else escaped: `\xNN`, and `\\`
/// and `\'` for the backslash and the quote, so the text is unambiguous.
pub fn push_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    // Most keys need no escape: one test, then one copy.
    if all_plain(bytes) {
        out.extend_from_slice(bytes);
        return;
    }
    let mut rest = bytes;
    while !rest.is_empty() {
        // Runs of plain bytes are copied at once.
        let run = rest.iter().position(|&b| !plain(b)).unwrap_or(rest.len());
        out.extend_from_slice(&rest[..run]);
        let Some((&b, tail)) = rest[run..].split_first() else {
            break;
        };
        rest = tail;
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\'' => out.extend_from_slice(b"\\'"),
            _ => {
                out.extend_from_slice(b"\\x");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
            }
        }
    }
}

/// `bytes` escaped as by [`push_escaped`].
pub fn escaped(bytes: &[u8]) -> String {
    let mut v = Vec::with_capacity(bytes.len());
    push_escaped(&mut v, bytes);
    String::from_utf8(v).unwrap_or_default()
}

/// Appends a key or value for text output: hex when `as_hex`, else quoted and escaped.
pub fn push_text(out: &mut Vec<u8>, bytes: &[u8], as_hex: bool) {
    if as_hex {
        push_hex(out, bytes);
    } else {
        out.push(b'\'');
        push_escaped(out, bytes);
        out.push(b'\'');
    }
}

/// Appends `s` as a JSON string literal.
pub fn push_json_str(out: &mut Vec<u8>, s: &str) {
    let lit = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    out.extend_from_slice(lit.as_bytes());
}

/// The bytes of a command-line argument.
pub fn os_bytes(s: &OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        s.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        s.to_string_lossy().into_owned().into_bytes()
    }
}

/// A key given on the command line: raw bytes, or hex with `--hex`.
pub fn key_arg(s: &OsStr, as_hex: bool, what: &str) -> Result<Vec<u8>, Failure> {
    let b = os_bytes(s);
    if as_hex {
        unhex(&b).map_err(|e| Failure::error(format!("{what}: invalid hex key {:?}: {e}", s)))
    } else {
        Ok(b)
    }
}

/// The key a seek for user key `k` uses: `k` itself for plain tables; for internal tables
/// `k | tag(MAX_SEQUENCE, value)`, which sorts before every version of `k`.
pub fn seek_key(internal: bool, k: &[u8]) -> Vec<u8> {
    if internal {
        let mut v = Vec::with_capacity(k.len() + 8);
        internal_key::lookup_key(&mut v, k, MAX_SEQUENCE);
        v
    } else {
        k.to_vec()
    }
}

/// Reads the lines of `path` (`-` is stdin) one at a time, without the `\n`.
pub struct LineReader {
    inner: Box<dyn io::BufRead>,
    /// 1-based number of the line last read.
    pub line_no: u64,
    /// Bytes read so far.
    pub bytes_read: u64,
    name: String,
}

impl LineReader {
    /// Opens `path` (`-` for stdin).
    pub fn open(path: &Path) -> Result<Self, Failure> {
        let (inner, name): (Box<dyn io::BufRead>, String) = if path.as_os_str() == "-" {
            (
                Box::new(io::BufReader::with_capacity(1 << 16, io::stdin())),
                "<stdin>".into(),
            )
        } else {
            let f = std::fs::File::open(path)
                .map_err(|e| Failure::error(format!("{}: cannot open: {e}", path.display())))?;
            (
                Box::new(io::BufReader::with_capacity(1 << 16, f)),
                path.display().to_string(),
            )
        };
        Ok(LineReader {
            inner,
            line_no: 0,
            bytes_read: 0,
            name,
        })
    }

    /// The name used in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads the next line into `buf` (without its `\n`); false at the end.
    pub fn next_line(&mut self, buf: &mut Vec<u8>) -> Result<bool, Failure> {
        buf.clear();
        let n = self
            .inner
            .read_until(b'\n', buf)
            .map_err(|e| Failure::error(format!("{}: read error: {e}", self.name)))?;
        if n == 0 {
            return Ok(false);
        }
        self.bytes_read += n as u64;
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        self.line_no += 1;
        Ok(true)
    }
}

/// Trims ASCII whitespace at both ends.
pub fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &b[start..end.max(start)]
}

/// A key for text listings: escaped, shortened to 40 characters, and shown as
/// `'user_key' @ seq` when the table's keys are internal keys (as `blocks` and `stats` print
/// them).
pub fn key_text(k: &[u8], internal: bool) -> String {
    if internal {
        if let Some(p) = leveldb_table::raw::internal_key::parse_internal_key(k) {
            let tag = match p.sequence {
                MAX_SEQUENCE => "max".to_string(),
                s => s.to_string(),
            };
            return format!("{} @ {tag}", key_text(p.user_key, false));
        }
    }
    let e = escaped(k);
    if e.chars().count() > 40 {
        let short: String = e.chars().take(37).collect();
        format!("'{short}...'")
    } else {
        format!("'{e}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        assert_eq!(hex(b"\x00\xffA"), "00ff41");
        assert_eq!(unhex(b"00FF41").unwrap(), b"\x00\xffA");
        assert!(unhex(b"0").is_err());
        assert!(unhex(b"zz").is_err());
    }

    #[test]
    fn escaping() {
        assert_eq!(escaped(b"a'b\\c\x01\x7f"), "a\\'b\\\\c\\x01\\x7f");
    }

    #[test]
    fn trimming() {
        assert_eq!(trim(b"  ab \r"), b"ab");
        assert_eq!(trim(b"   "), b"");
    }
}
