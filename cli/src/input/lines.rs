//! Input read line by line: a file or stdin, one line at a time, with its line number.

use std::io;
use std::path::Path;

use crate::exit::Failure;
use crate::render::text;

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

    /// Decodes a line read (`line`, trimmed) from hex into `out`: a key given in hex; the
    /// error names the input and the line.
    pub fn unhex_line(&self, line: &[u8], out: &mut Vec<u8>) -> Result<(), Failure> {
        text::unhex_into(trim(line), out).map_err(|e| {
            Failure::error(format!(
                "{}: line {}: invalid hex key: {e}",
                self.name, self.line_no
            ))
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming() {
        assert_eq!(trim(b"  ab \r"), b"ab");
        assert_eq!(trim(b"   "), b"");
    }
}
