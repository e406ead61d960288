//! The hot path of `sst bloom`: keys read from stdin in large reads and handed out in
//! batches of slices into the buffer read (no allocation per key), and answers written as
//! text or JSON lines through one large buffer (no formatting machinery per key).

use crate::exit::Failure;
use crate::input::lines;
use crate::render::text;
use std::io::{self, Read, Write};

/// Keys per batch handed to the filter (a Redis batch is pipelined in windows inside). Large,
/// so that each Redis step's round trips are shared by many keys and a bitmap holding many
/// of a batch's keys is moved whole (`sst-bloom`'s `redis/dense.rs`).
pub const BATCH: usize = 65_536;
/// Bytes read from stdin at a time: 1 MiB, so that the first batch of short keys is ready
/// after a read or two while the filter is being opened.
const READ: usize = 1 << 20;
/// A batch is cut short once its keys take this many bytes (long keys).
const BATCH_BYTES: usize = 4 << 20;

/// A batch of keys: key i is `bytes[spans[i].0..spans[i].1]` (the lines as read, or the
/// hex-decoded keys back to back).
#[derive(Clone, Copy)]
pub struct Lines<'a> {
    pub bytes: &'a [u8],
    pub spans: &'a [(usize, usize)],
}

impl<'a> Lines<'a> {
    /// Key `i` (empty when out of range).
    pub fn key(&self, i: usize) -> &'a [u8] {
        let bytes = self.bytes;
        self.spans
            .get(i)
            .and_then(|&(a, b)| bytes.get(a..b))
            .unwrap_or_default()
    }

    /// The keys as slices (one vector per batch, none per key).
    pub fn keys(&self) -> Vec<&'a [u8]> {
        (0..self.spans.len()).map(|i| self.key(i)).collect()
    }
}

/// Reads stdin, one key per line (without its `\n`; with `hex`, decoded from hex), and hands
/// the keys to `f` in batches of at most [`BATCH`].
pub fn for_each_batch(
    hex: bool,
    mut f: impl FnMut(&[&[u8]]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    batches(io::stdin().lock(), hex, |lines| f(&lines.keys()))
}

/// [`for_each_batch`] handing each batch over as [`Lines`] (the bytes as read, no slice
/// per key).
pub fn for_each_lines(
    hex: bool,
    f: impl FnMut(Lines<'_>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    batches(io::stdin().lock(), hex, f)
}

/// [`for_each_lines`] on any input.
fn batches(
    mut input: impl Read,
    hex: bool,
    mut f: impl FnMut(Lines<'_>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH_BYTES + READ);
    // The lines of the batch being gathered, as ranges of `buf`; bytes of `buf` split so far.
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(BATCH);
    let mut scanned = 0;
    let mut hexed = Hexed::default();
    let mut line_no = 0u64;
    loop {
        // Up to `READ` bytes more, into spare capacity (nothing zeroed first); a short read
        // is the end of the input, since `take` stops only there or at `READ`.
        buf.reserve(READ);
        let n = (&mut input)
            .take(READ as u64)
            .read_to_end(&mut buf)
            .map_err(|e| Failure::error(format!("<stdin>: read error: {e}")))?;
        let eof = n < READ;
        // The new whole lines (and at the end a last line without its newline).
        let mut at = scanned;
        for i in memchr::memchr_iter(b'\n', &buf[scanned..]) {
            spans.push((at, scanned + i));
            at = scanned + i + 1;
            if spans.len() == BATCH {
                emit(&buf, &mut spans, &mut line_no, hex, &mut hexed, &mut f)?;
            }
        }
        scanned = at;
        if eof && scanned < buf.len() {
            spans.push((scanned, buf.len()));
            scanned = buf.len();
        }
        // A short batch waits for the next read's lines (a Redis batch costs about the same
        // short or full: whole bitmaps are fetched), unless the input ended or its keys
        // already take `BATCH_BYTES` (long keys).
        let bytes = spans.last().map_or(0, |l| l.1) - spans.first().map_or(0, |l| l.0);
        if !spans.is_empty() && (eof || bytes >= BATCH_BYTES) {
            emit(&buf, &mut spans, &mut line_no, hex, &mut hexed, &mut f)?;
        }
        if eof {
            return Ok(());
        }
        // Bytes before the first line still waiting are done with.
        let done = spans.first().map_or(scanned, |l| l.0);
        buf.drain(..done);
        scanned -= done;
        for l in &mut spans {
            *l = (l.0 - done, l.1 - done);
        }
    }
}

/// Hex-decoded keys back to back and where each one is (reused from batch to batch).
#[derive(Default)]
struct Hexed {
    keys: Vec<u8>,
    spans: Vec<(usize, usize)>,
    key: Vec<u8>,
}

/// Hands the lines `spans` of `buf` to `f` as one batch (decoded from hex with `hex`), counts
/// them in `line_no` and clears `spans`.
fn emit(
    buf: &[u8],
    spans: &mut Vec<(usize, usize)>,
    line_no: &mut u64,
    hex: bool,
    hexed: &mut Hexed,
    f: &mut impl FnMut(Lines<'_>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let first = *line_no + 1;
    *line_no += spans.len() as u64;
    if !hex {
        let r = f(Lines { bytes: buf, spans });
        spans.clear();
        return r;
    }
    hexed.keys.clear();
    hexed.spans.clear();
    for (i, &(a, b)) in spans.iter().enumerate() {
        let line = buf.get(a..b).unwrap_or_default();
        text::unhex_into(lines::trim(line), &mut hexed.key)
            .map_err(|e| Failure::error(format!("<stdin>: line {}: {e}", first + i as u64)))?;
        let start = hexed.keys.len();
        hexed.keys.extend_from_slice(&hexed.key);
        hexed.spans.push((start, hexed.keys.len()));
    }
    spans.clear();
    f(Lines {
        bytes: &hexed.keys,
        spans: &hexed.spans,
    })
}

/// Large buffered stdout.
pub fn out() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::with_capacity(1 << 20, io::stdout().lock())
}

/// Appends `s` as a JSON string literal, escaped as serde_json does (`\"`, `\\`, the short
/// forms of control characters, `\u00XX` for the others).
fn push_json_str(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..=0x1f => {
                out.extend_from_slice(b"\\u00");
                text::push_hex(out, &[b]);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// One answer row: text `maybe\t'key'` / `absent\t'key'`, or the JSON line
/// `{"key":...,"maybe":bool}` (`key_hex` too when the key is not UTF-8; with `hex`, the key
/// in hex), appended to `line`.
pub fn push_row(line: &mut Vec<u8>, key: &[u8], hex: bool, json: bool, field: &str, yes: bool) {
    if !json {
        line.extend_from_slice(word(field, yes));
        text::push_text(line, key, hex);
        line.push(b'\n');
        return;
    }
    line.extend_from_slice(b"{\"key\":");
    if hex {
        line.push(b'"');
        text::push_hex(line, key);
        line.push(b'"');
    } else if std::str::from_utf8(key).is_ok() {
        push_json_str(line, key);
    } else {
        // Not UTF-8: the text is escaped, the exact bytes are in key_hex.
        let mut text = Vec::with_capacity(key.len() + 8);
        text::push_escaped(&mut text, key);
        push_json_str(line, &text);
        line.extend_from_slice(b",\"key_hex\":\"");
        text::push_hex(line, key);
        line.push(b'"');
    }
    line.extend_from_slice(b",\"");
    line.extend_from_slice(field.as_bytes());
    line.extend_from_slice(if yes { b"\":true}\n" } else { b"\":false}\n" });
}

/// The first column of a text row.
fn word(field: &str, yes: bool) -> &'static [u8] {
    match (field, yes) {
        ("maybe", true) => b"maybe\t",
        ("maybe", false) => b"absent\t",
        (_, true) => b"removed\t",
        (_, false) => b"absent\t",
    }
}

/// The rows of a batch, byte for byte as [`push_row`] writes them one by one. When the rows
/// are text and no key needs escaping (one test over the batch's bytes), each row is three
/// copies.
pub fn push_rows(
    rows: &mut Vec<u8>,
    lines: Lines<'_>,
    answers: &[bool],
    (hex, json): (bool, bool),
    field: &str,
) {
    let n = lines.spans.len().min(answers.len());
    if !hex && !json && plain_lines(lines) {
        let (yes, no) = (word(field, true), word(field, false));
        rows.reserve(lines.bytes.len() + n * (yes.len().max(no.len()) + 3));
        for (i, &answer) in answers.iter().enumerate().take(n) {
            rows.extend_from_slice(if answer { yes } else { no });
            rows.push(b'\'');
            rows.extend_from_slice(lines.key(i));
            rows.extend_from_slice(b"'\n");
        }
        return;
    }
    for (i, &answer) in answers.iter().enumerate().take(n) {
        push_row(rows, lines.key(i), hex, json, field, answer);
    }
}

/// Whether no key of `lines` needs escaping, tested over the bytes from the first key to the
/// last at once: keys one newline apart (lines as read), and every byte there plain or one of
/// those newlines.
fn plain_lines(lines: Lines<'_>) -> bool {
    let (Some(first), Some(last)) = (lines.spans.first(), lines.spans.last()) else {
        return true;
    };
    let separated = lines
        .spans
        .windows(2)
        .all(|w| w[1].0 == w[0].1 + 1 && lines.bytes.get(w[0].1) == Some(&b'\n'));
    let region = lines.bytes.get(first.0..last.1).unwrap_or_default();
    // Passes without early exits and with byte-wide counters, which the compiler vectorizes.
    let plain = region
        .iter()
        .fold(true, |all, &b| all & (b == b'\n' || text::plain(b)));
    let newlines: usize = region
        .chunks(255)
        .map(|c| usize::from(c.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'))))
        .sum();
    separated && plain && newlines + 1 == lines.spans.len()
}

/// Writes a finished row buffer.
pub fn write_rows(out: &mut impl Write, rows: &mut Vec<u8>) -> Result<(), Failure> {
    out.write_all(rows)?;
    rows.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The batches of `input`: their sizes and their lines in order.
    fn split(input: &[u8]) -> (Vec<usize>, Vec<Vec<u8>>) {
        let (mut sizes, mut lines) = (Vec::new(), Vec::new());
        batches(input, false, |b| {
            sizes.push(b.spans.len());
            lines.extend(b.keys().iter().map(|k| k.to_vec()));
            Ok(())
        })
        .expect("batches");
        (sizes, lines)
    }

    #[test]
    fn batches_are_full_across_reads() {
        // About 1.5 MiB per batch: several reads, none on a batch boundary.
        let keys: Vec<Vec<u8>> = (0..200_000)
            .map(|i| format!("key:{i:019}").into_bytes())
            .collect();
        for last_newline in [true, false] {
            let mut input = keys.join(&b'\n');
            if last_newline {
                input.push(b'\n');
            }
            let (sizes, lines) = split(&input);
            assert_eq!(lines, keys);
            assert_eq!(sizes, [BATCH, BATCH, BATCH, 200_000 - 3 * BATCH]);
        }
        // Long keys: a batch is cut once its keys take `BATCH_BYTES`.
        let long: Vec<Vec<u8>> = (0..20_000)
            .map(|i| format!("{i:0999}").into_bytes())
            .collect();
        let (sizes, lines) = split(&long.join(&b'\n'));
        assert_eq!(lines, long);
        assert!(sizes.len() > 1 && sizes.iter().all(|&n| n < BATCH));
    }

    /// Hands out at most 7 bytes a read, as a slow pipe may.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(7).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn lines_are_the_same_however_the_input_arrives() {
        let mut input = Vec::new();
        for i in 0..150_000 {
            input.extend_from_slice(format!("k{i}\n").as_bytes());
            if i % 1000 == 0 {
                input.push(b'\n'); // an empty key
            }
        }
        let (sizes, lines) = split(&input);
        let mut trickled = Vec::new();
        batches(Trickle(&input), false, |b| {
            trickled.extend(b.keys().iter().map(|k| k.to_vec()));
            Ok(())
        })
        .expect("batches");
        assert_eq!(trickled, lines);
        assert_eq!(lines.len(), 150_150);
        assert_eq!(lines[1], b"");
        assert_eq!(sizes, [BATCH, BATCH, 150_150 - 2 * BATCH]);
        // Nothing in, no batch.
        assert_eq!(split(b""), (vec![], vec![]));
    }

    #[test]
    fn hex_keys_are_decoded_and_a_bad_line_is_named() {
        let mut keys = Vec::new();
        batches(&b"6b31\n 6b32 \n\n"[..], true, |b| {
            keys.extend(b.keys().iter().map(|k| k.to_vec()));
            Ok(())
        })
        .expect("hex");
        assert_eq!(keys, [b"k1".to_vec(), b"k2".to_vec(), Vec::new()]);
        let mut input = "6b31\n".repeat(BATCH + 5);
        input.push_str("zz\n");
        let err = batches(input.as_bytes(), true, |_| Ok(())).expect_err("bad hex");
        assert!(
            format!("{err:?}").contains(&format!("line {}", BATCH + 6)),
            "{err:?}"
        );
    }

    #[test]
    fn batch_rows_are_the_rows_one_by_one() {
        let keys: [&[u8]; 6] = [
            b"plain",
            b"",
            b"q'uote",
            b"\xff",
            b"back\\slash",
            b"new\nline",
        ];
        for set in [&keys[..2], &keys[..], &keys[5..]] {
            // Lines as read (one newline apart) and keys back to back (as hex decodes them).
            for gap in [1, 0] {
                let mut bytes = Vec::new();
                let mut spans = Vec::new();
                for k in set {
                    let start = bytes.len();
                    bytes.extend_from_slice(k);
                    spans.push((start, bytes.len()));
                    bytes.extend(std::iter::repeat_n(b'\n', gap));
                }
                let lines = Lines {
                    bytes: &bytes,
                    spans: &spans,
                };
                let answers: Vec<bool> = (0..set.len()).map(|i| i % 2 == 0).collect();
                for (hex, json) in [(false, false), (true, false), (false, true), (true, true)] {
                    for field in ["maybe", "removed"] {
                        let mut one_by_one = Vec::new();
                        for (k, &a) in set.iter().zip(&answers) {
                            push_row(&mut one_by_one, k, hex, json, field, a);
                        }
                        let mut batch = Vec::new();
                        push_rows(&mut batch, lines, &answers, (hex, json), field);
                        assert_eq!(batch, one_by_one, "{set:?} gap {gap}");
                    }
                }
            }
        }
    }

    #[test]
    fn json_rows_match_serde_json() {
        for key in [
            &b"plain"[..],
            b"q\"uo\\te",
            b"tab\there\x01\x1f",
            b"\xff\xfe",
        ] {
            let mut line = Vec::new();
            push_row(&mut line, key, false, true, "maybe", true);
            let v: serde_json::Value = serde_json::from_slice(&line).expect("valid JSON");
            match std::str::from_utf8(key) {
                Ok(s) => assert_eq!(v, serde_json::json!({"key": s, "maybe": true})),
                Err(_) => assert_eq!(v["key_hex"], serde_json::json!(text::hex(key))),
            }
        }
    }
}
