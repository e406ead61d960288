//! The adapter protocol, as it goes over the wire.
//!
//! ```text
//! COMMAND capabilities
//!   stdout: {"name": STR, "verbs": [VERB..], "compressions": [NAME..], "comparators": [NAME..]}
//!           (one JSON line; "comparators" optional, default ["leveldb.BytewiseComparator"])
//! COMMAND read-table FILE        stdout: ROW per entry, in table order (keys as stored)
//! COMMAND read-db DIR            stdout: ROW per live key, in the directory's order
//! COMMAND write-table FILE [--block-size N] [--restart-interval N]
//!                          [--compression none|snappy] [--bloom-bits N]
//!                                stdin: ROW per entry, sorted; exit 0 once FILE is complete
//! ROW  = {"key": HEX, "value": HEX}   (one JSON object a line; other fields are ignored)
//! exit 0 = done; 3 = this verb (or these parameters) not supported; anything else = error
//! ```
//!
//! Compression names: `none`, `snappy`, `zstd` (id 2, as LevelDB main writes it), `zlib`
//! (id 2, Mojang's fork) and `deflate` (raw deflate, id 4, Minecraft Bedrock); `sst build`
//! uses the same names. write-table's defaults are LevelDB's: block size 4096, restart
//! interval 16, snappy, no filter.

use std::borrow::Cow;

use serde::Deserialize;

/// The exit code of a verb (or parameters) the adapter does not support.
pub const EXIT_UNSUPPORTED: i32 = 3;

/// The comparator an adapter reads in when its capabilities list none.
pub const DEFAULT_COMPARATOR: &str = "leveldb.BytewiseComparator";

/// A key and its value.
pub type Entry = (Vec<u8>, Vec<u8>);

/// What a case asks the adapter to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `read-table FILE`.
    ReadTable,
    /// `read-db DIR`.
    ReadDb,
    /// `write-table FILE [options]`.
    WriteTable,
}

impl Verb {
    /// The verb as the adapter gets it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::ReadTable => "read-table",
            Verb::ReadDb => "read-db",
            Verb::WriteTable => "write-table",
        }
    }
}

/// What an adapter says it can do (`capabilities`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// The implementation's name (and version).
    pub name: String,
    /// The verbs it supports.
    pub verbs: Vec<String>,
    /// The block compressions it reads and writes.
    pub compressions: Vec<String>,
    /// The comparators (orders) it reads in.
    pub comparators: Vec<String>,
}

#[derive(Deserialize)]
struct RawCapabilities {
    name: String,
    verbs: Vec<String>,
    compressions: Vec<String>,
    comparators: Option<Vec<String>>,
}

impl Capabilities {
    /// Parses `capabilities` output: one JSON line (leading blank lines are ignored).
    ///
    /// # Errors
    /// No line, not JSON, or a missing or mistyped field: a message saying which.
    pub fn parse(stdout: &[u8]) -> Result<Capabilities, String> {
        let line = stdout
            .split(|&b| b == b'\n')
            .find(|l| !l.iter().all(u8::is_ascii_whitespace))
            .ok_or("printed nothing")?;
        let raw: RawCapabilities = serde_json::from_slice(line)
            .map_err(|e| format!("not the capabilities object: {e}"))?;
        Ok(Capabilities {
            name: raw.name,
            verbs: raw.verbs,
            compressions: raw.compressions,
            comparators: raw
                .comparators
                .unwrap_or_else(|| vec![DEFAULT_COMPARATOR.to_string()]),
        })
    }

    /// Whether `verb` is listed.
    pub fn has_verb(&self, verb: Verb) -> bool {
        self.verbs.iter().any(|v| v == verb.as_str())
    }

    /// Whether compression `name` is listed (`none` always counts as listed).
    pub fn has_compression(&self, name: &str) -> bool {
        name == "none" || self.compressions.iter().any(|c| c == name)
    }

    /// Whether the comparator named `name` is listed.
    pub fn has_comparator(&self, name: &str) -> bool {
        self.comparators.iter().any(|c| c == name)
    }
}

#[derive(Deserialize)]
struct Row<'a> {
    #[serde(borrow)]
    key: Cow<'a, str>,
    #[serde(borrow)]
    value: Cow<'a, str>,
}

/// Parses an adapter's rows: one `{"key": HEX, "value": HEX}` a line (upper or lower case
/// hex; blank lines and other fields are ignored).
///
/// # Errors
/// The first line that is not such a row: `line N: what is wrong`.
pub fn parse_rows(stdout: &[u8]) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for (i, line) in stdout.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let row: Row = serde_json::from_slice(line).map_err(|e| {
            format!(
                "output line {}: not a {{\"key\", \"value\"}} row: {e}: {}",
                i + 1,
                excerpt(line)
            )
        })?;
        let field = |name: &str, s: &str| {
            hex::decode(s).map_err(|e| format!("output line {}: \"{name}\" is not hex: {e}", i + 1))
        };
        out.push((field("key", &row.key)?, field("value", &row.value)?));
    }
    Ok(out)
}

/// The rows of `entries`, as write-table's stdin (and as adapters print them).
pub fn encode_rows(entries: &[Entry]) -> Vec<u8> {
    let size: usize = entries
        .iter()
        .map(|(k, v)| 2 * (k.len() + v.len()) + 25)
        .sum();
    let mut out = Vec::with_capacity(size);
    for (k, v) in entries {
        out.extend_from_slice(b"{\"key\":\"");
        out.extend_from_slice(hex::encode(k).as_bytes());
        out.extend_from_slice(b"\",\"value\":\"");
        out.extend_from_slice(hex::encode(v).as_bytes());
        out.extend_from_slice(b"\"}\n");
    }
    out
}

/// The first 80 characters of an output line, for messages.
pub(crate) fn excerpt(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    match s.char_indices().nth(80) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.into_owned(),
    }
}

/// write-table's `--compression`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteCompression {
    /// `none` (id 0).
    None,
    /// `snappy` (id 1), kept for a block only when it saves more than 12.5%.
    Snappy,
}

impl WriteCompression {
    /// The name on the command line (and in `capabilities`).
    pub fn as_str(self) -> &'static str {
        match self {
            WriteCompression::None => "none",
            WriteCompression::Snappy => "snappy",
        }
    }
}

/// write-table's parameters; every one is passed explicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteParams {
    /// `--block-size`: uncompressed size at which a data block is cut.
    pub block_size: usize,
    /// `--restart-interval`: keys between restart points.
    pub restart_interval: usize,
    /// `--compression`.
    pub compression: WriteCompression,
    /// `--bloom-bits`: LevelDB's bloom filter with this many bits per key; no filter when
    /// `None` (the flag is then left out).
    pub bloom_bits: Option<u32>,
}

impl Default for WriteParams {
    /// LevelDB's defaults: 4096, 16, snappy, no filter.
    fn default() -> Self {
        WriteParams {
            block_size: 4096,
            restart_interval: 16,
            compression: WriteCompression::Snappy,
            bloom_bits: None,
        }
    }
}

impl WriteParams {
    /// The flags after `write-table FILE`.
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![
            "--block-size".to_string(),
            self.block_size.to_string(),
            "--restart-interval".to_string(),
            self.restart_interval.to_string(),
            "--compression".to_string(),
            self.compression.as_str().to_string(),
        ];
        if let Some(b) = self.bloom_bits {
            a.push("--bloom-bits".to_string());
            a.push(b.to_string());
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_bad_rows_name_their_line() {
        let e = vec![(vec![], vec![0]), (vec![0xff, 0], b"v".to_vec())];
        assert_eq!(parse_rows(&encode_rows(&e)).unwrap(), e);
        let upper = b"\n{\"key\": \"FF00\", \"value\": \"76\", \"seq\": 3}\n\n";
        assert_eq!(
            parse_rows(upper).unwrap(),
            vec![(vec![0xff, 0], b"v".to_vec())]
        );
        let bad = b"{\"key\":\"00\",\"value\":\"\"}\n{\"key\":\"0g\",\"value\":\"\"}\n";
        assert!(parse_rows(bad)
            .unwrap_err()
            .starts_with("output line 2: \"key\""));
        assert!(parse_rows(b"{\"key\":\"00\"}")
            .unwrap_err()
            .starts_with("output line 1"));
    }

    #[test]
    fn capabilities_default_their_comparator() {
        let c = Capabilities::parse(
            b"\n{\"name\":\"x\",\"verbs\":[\"read-db\"],\"compressions\":[\"snappy\"]}\n",
        )
        .unwrap();
        assert!(c.has_verb(Verb::ReadDb) && !c.has_verb(Verb::ReadTable));
        assert!(c.has_comparator(DEFAULT_COMPARATOR) && c.has_compression("none"));
        assert!(!c.has_compression("zstd"));
        assert!(Capabilities::parse(b"{\"name\":\"x\"}").is_err());
        assert!(Capabilities::parse(b"").is_err());
    }
}
