//! One `--format` vocabulary for every subcommand: `text`, `json` and `jsonl`.
//!
//! Row commands (`scan`, `get`, `blocks`, `bloom check`) write one JSON object per row in
//! `jsonl`, and the same rows as one JSON array in `json`. Document commands (`stats`,
//! `filter`) write one JSON object, indented in `json` and on one line in `jsonl`.

use std::io::{self, BufWriter, Write};

/// `--format` of every subcommand.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutFormat {
    /// Readable text.
    Text,
    /// JSON: an array of the rows, or the one document, indented.
    Json,
    /// JSON lines: one object per row, or the one document on one line.
    Jsonl,
}

/// Writes a document (stats, filter) in the asked JSON flavour.
pub fn write_document(out: &mut impl Write, v: &serde_json::Value, f: OutFormat) -> io::Result<()> {
    if f == OutFormat::Jsonl {
        serde_json::to_writer(&mut *out, v)?;
    } else {
        serde_json::to_writer_pretty(&mut *out, v)?;
    }
    writeln!(out)
}

/// A writer that receives JSON-lines rows and, in `json` mode, writes them as one array
/// (`[`, the rows separated by `,` and a newline, `]`); in the other modes it passes the
/// bytes through. Call [`RowsOut::finish`] after the last row, also after an error, so the
/// array read so far is closed.
pub struct RowsOut<W: Write> {
    inner: W,
    array: bool,
    started: bool,
    pending_newline: bool,
}

impl<W: Write> RowsOut<W> {
    /// Wraps `inner` for rows in format `f`.
    pub fn new(inner: W, f: OutFormat) -> Self {
        RowsOut {
            inner,
            array: f == OutFormat::Json,
            started: false,
            pending_newline: false,
        }
    }

    /// Closes the array (`json`) and flushes.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.array {
            self.inner
                .write_all(if self.started { b"\n]\n" } else { b"[]\n" })?;
            self.array = false;
        }
        self.inner.flush()
    }
}

impl<W: Write> Write for RowsOut<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.array {
            return self.inner.write(buf);
        }
        // Rows end in '\n': each newline becomes the separator before the next row.
        let mut rest = buf;
        while !rest.is_empty() {
            if self.pending_newline {
                self.inner.write_all(b",\n")?;
                self.pending_newline = false;
            }
            if !self.started {
                self.inner.write_all(b"[\n")?;
                self.started = true;
            }
            match rest.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.inner.write_all(&rest[..i])?;
                    self.pending_newline = true;
                    rest = &rest[i + 1..];
                }
                None => {
                    self.inner.write_all(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(f: OutFormat, lines: &[&str]) -> String {
        let mut out = RowsOut::new(Vec::new(), f);
        for l in lines {
            out.write_all(l.as_bytes()).unwrap();
        }
        out.finish().unwrap();
        String::from_utf8(out.inner).unwrap()
    }

    #[test]
    fn json_is_an_array_of_the_jsonl_rows() {
        let r = ["{\"a\":1}\n", "{\"a\":2}\n"];
        assert_eq!(rows(OutFormat::Jsonl, &r), "{\"a\":1}\n{\"a\":2}\n");
        let j = rows(OutFormat::Json, &r);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v, serde_json::json!([{"a": 1}, {"a": 2}]));
        assert_eq!(rows(OutFormat::Json, &[]), "[]\n");
        // Rows written in pieces.
        let v: serde_json::Value =
            serde_json::from_str(&rows(OutFormat::Json, &["{\"a\"", ":1}\n{\"b\":", "2}\n"]))
                .unwrap();
        assert_eq!(v, serde_json::json!([{"a": 1}, {"b": 2}]));
    }
}
