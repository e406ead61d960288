//! The hot path of `sst bloom`: keys read from stdin in large reads and handed out in
//! batches of slices into the buffer read (no allocation per key), and answers written as
//! text or JSON lines through one large buffer (no formatting machinery per key).

use std::io::{self, Read, Write};

use crate::common::{self, Failure};

/// Keys per batch handed to the filter (a Redis batch is pipelined in windows inside). Large,
/// so that each Redis step's round trips are shared by many keys and a bitmap holding many
/// of a batch's keys is moved whole (`sst-bloom`'s `redis/dense.rs`).
pub const BATCH: usize = 65_536;
/// Bytes read from stdin at a time: 1 MiB, so that the first batch of short keys is ready
/// after a read or two while the filter is being opened.
const READ: usize = 1 << 20;
/// A batch is cut short once its keys take this many bytes (long keys).
const BATCH_BYTES: usize = 4 << 20;

/// Reads stdin, one key per line (without its `\n`; with `hex`, decoded from hex), and hands
/// the keys to `f` in batches of at most [`BATCH`].
pub fn for_each_batch(
    hex: bool,
    f: impl FnMut(&[&[u8]]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    batches(io::stdin().lock(), hex, f)
}

/// [`for_each_batch`] on any input.
fn batches(
    mut input: impl Read,
    hex: bool,
    mut f: impl FnMut(&[&[u8]]) -> Result<(), Failure>,
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

/// Hex-decoded keys back to back and where each one ends (reused from batch to batch).
#[derive(Default)]
struct Hexed {
    keys: Vec<u8>,
    ends: Vec<usize>,
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
    f: &mut impl FnMut(&[&[u8]]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let first = *line_no + 1;
    *line_no += spans.len() as u64;
    // One vector per batch, none per key.
    let mut keys: Vec<&[u8]> = Vec::with_capacity(spans.len());
    if !hex {
        keys.extend(
            spans
                .iter()
                .map(|&(a, b)| buf.get(a..b).unwrap_or_default()),
        );
        spans.clear();
        return f(&keys);
    }
    hexed.keys.clear();
    hexed.ends.clear();
    for (i, &(a, b)) in spans.iter().enumerate() {
        let line = buf.get(a..b).unwrap_or_default();
        common::unhex_into(common::trim(line), &mut hexed.key)
            .map_err(|e| Failure::error(format!("<stdin>: line {}: {e}", first + i as u64)))?;
        hexed.keys.extend_from_slice(&hexed.key);
        hexed.ends.push(hexed.keys.len());
    }
    spans.clear();
    let mut at = 0;
    for &end in &hexed.ends {
        keys.push(&hexed.keys[at..end]);
        at = end;
    }
    f(&keys)
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
                common::push_hex(out, &[b]);
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
        common::push_text(line, key, hex);
        line.push(b'\n');
        return;
    }
    line.extend_from_slice(b"{\"key\":");
    if hex {
        line.push(b'"');
        common::push_hex(line, key);
        line.push(b'"');
    } else if std::str::from_utf8(key).is_ok() {
        push_json_str(line, key);
    } else {
        // Not UTF-8: the text is escaped, the exact bytes are in key_hex.
        let mut text = Vec::with_capacity(key.len() + 8);
        common::push_escaped(&mut text, key);
        push_json_str(line, &text);
        line.extend_from_slice(b",\"key_hex\":\"");
        common::push_hex(line, key);
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

/// The rows of a batch whose keys lie back to back in `keys`, key i ending at `ends[i]`,
/// byte for byte as [`push_row`] writes them one by one. When the rows are text and no key
/// needs escaping (one test over the whole batch), each row is three copies.
pub fn push_rows(
    rows: &mut Vec<u8>,
    keys: &[u8],
    ends: &[usize],
    answers: &[bool],
    (hex, json): (bool, bool),
    field: &str,
) {
    let mut at = 0;
    if !hex && !json && common::all_plain(keys) {
        let (yes, no) = (word(field, true), word(field, false));
        rows.reserve(keys.len() + ends.len() * (yes.len().max(no.len()) + 3));
        for (&end, &answer) in ends.iter().zip(answers) {
            rows.extend_from_slice(if answer { yes } else { no });
            rows.push(b'\'');
            rows.extend_from_slice(keys.get(at..end).unwrap_or_default());
            rows.extend_from_slice(b"'\n");
            at = end;
        }
        return;
    }
    for (&end, &answer) in ends.iter().zip(answers) {
        let key = keys.get(at..end).unwrap_or_default();
        push_row(rows, key, hex, json, field, answer);
        at = end;
    }
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
            sizes.push(b.len());
            lines.extend(b.iter().map(|k| k.to_vec()));
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
            trickled.extend(b.iter().map(|k| k.to_vec()));
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
            keys.extend(b.iter().map(|k| k.to_vec()));
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
        let keys: [&[u8]; 5] = [b"plain", b"", b"q'uote", b"\xff", b"back\\slash"];
        for set in [&keys[..2], &keys[..]] {
            let mut bytes = Vec::new();
            let mut ends = Vec::new();
            for k in set {
                bytes.extend_from_slice(k);
                ends.push(bytes.len());
            }
            let answers: Vec<bool> = (0..set.len()).map(|i| i % 2 == 0).collect();
            for (hex, json) in [(false, false), (true, false), (false, true), (true, true)] {
                for field in ["maybe", "removed"] {
                    let mut one_by_one = Vec::new();
                    for (k, &a) in set.iter().zip(&answers) {
                        push_row(&mut one_by_one, k, hex, json, field, a);
                    }
                    let mut batch = Vec::new();
                    push_rows(&mut batch, &bytes, &ends, &answers, (hex, json), field);
                    assert_eq!(batch, one_by_one);
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
                Err(_) => assert_eq!(v["key_hex"], serde_json::json!(common::hex(key))),
            }
        }
    }
}
