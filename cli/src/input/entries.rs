//! The entries `build` and `db build` write: read from jsonl or tsv, one per line, each
//! with the line it came from.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};

use crate::exit::Failure;
use crate::input::lines::{self, LineReader};
use crate::render::text;

/// `--format` of the entries.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    Jsonl,
    Tsv,
}

/// Where the entries of `build` and `db build` come from.
#[derive(clap::Args, Debug)]
pub struct InputArgs {
    /// Input file (`-` is stdin).
    #[arg(long, value_name = "PATH|-", required = true)]
    pub from: PathBuf,
    /// Input format.
    #[arg(long, value_enum, default_value_t = InputFormat::Jsonl)]
    pub format: InputFormat,
    /// tsv input: keys and values are hex.
    #[arg(long)]
    pub hex: bool,
}

/// One input entry and the line it came from.
pub struct Entry {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
    pub line: u64,
}

/// Reads entries one at a time.
pub struct Input {
    lines: LineReader,
    format: InputFormat,
    hex: bool,
    buf: Vec<u8>,
    /// Whether a jsonl row carried "seq" (auto-detection of internal keys).
    saw_seq: Option<bool>,
}

impl Input {
    /// Opens the input `a` names (`-` for stdin).
    pub fn open(a: &InputArgs) -> Result<Self, Failure> {
        Ok(Input {
            lines: LineReader::open(&a.from)?,
            format: a.format,
            hex: a.hex,
            buf: Vec::new(),
            saw_seq: None,
        })
    }

    /// Whether the first jsonl row carried "seq" (`None` before any row, or for tsv).
    pub fn saw_seq(&self) -> Option<bool> {
        self.saw_seq
    }

    /// Bytes read so far (for a progress bar).
    pub fn bytes_read(&self) -> u64 {
        self.lines.bytes_read
    }

    /// An error naming the input and the line last read.
    pub fn err(&self, msg: impl std::fmt::Display) -> Failure {
        Failure::error(format!(
            "{}: line {}: {msg}",
            self.lines.name(),
            self.lines.line_no
        ))
    }

    /// The next entry, or `None` at the end (blank jsonl lines are skipped).
    pub fn next(&mut self) -> Result<Option<Entry>, Failure> {
        loop {
            if !self.lines.next_line(&mut self.buf)? {
                return Ok(None);
            }
            let line = self.lines.line_no;
            match self.format {
                InputFormat::Jsonl => {
                    if lines::trim(&self.buf).is_empty() {
                        continue;
                    }
                    let v: serde_json::Value = serde_json::from_slice(&self.buf)
                        .map_err(|e| self.err(format!("invalid JSON: {e}")))?;
                    let field = |name: &str| -> Result<Vec<u8>, Failure> {
                        let s = v
                            .get(name)
                            .and_then(|x| x.as_str())
                            .ok_or_else(|| self.err(format!("no \"{name}\" string")))?;
                        text::unhex(s.as_bytes())
                            .map_err(|e| self.err(format!("\"{name}\" is not hex: {e}")))
                    };
                    let key = field("key")?;
                    let value = field("value")?;
                    if self.saw_seq.is_none() {
                        self.saw_seq = Some(v.get("seq").is_some());
                    }
                    return Ok(Some(Entry { key, value, line }));
                }
                InputFormat::Tsv => {
                    let Some(tab) = self.buf.iter().position(|&b| b == b'\t') else {
                        return Err(self.err("no TAB between key and value"));
                    };
                    let (k, v) = (&self.buf[..tab], &self.buf[tab + 1..]);
                    let (key, value) = if self.hex {
                        (
                            text::unhex(lines::trim(k))
                                .map_err(|e| self.err(format!("key is not hex: {e}")))?,
                            text::unhex(lines::trim(v))
                                .map_err(|e| self.err(format!("value is not hex: {e}")))?,
                        )
                    } else {
                        (k.to_vec(), v.to_vec())
                    };
                    return Ok(Some(Entry { key, value, line }));
                }
            }
        }
    }
}

/// A progress bar on stderr for an input file of 64 MiB or more, when stderr is a terminal.
pub fn progress(from: &Path) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() || from.as_os_str() == "-" {
        return None;
    }
    let len = std::fs::metadata(from).ok()?.len();
    if len < (64 << 20) {
        return None;
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} ({eta}) {msg}")
    {
        pb.set_style(style);
    }
    Some(pb)
}
