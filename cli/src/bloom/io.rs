//! The hot path of `sst bloom`: keys read from stdin in large chunks and handed out in
//! batches of slices into the chunk (no allocation per key), and answers written as text or
//! JSON lines through one large buffer (no formatting machinery per key).

use std::io::{self, Read, Write};

use crate::common::{self, Failure};

/// Keys per batch handed to the filter (a Redis batch is pipelined in windows inside). Large,
/// so that each Redis step's round trips are shared by many keys and a bitmap holding many
/// of a batch's keys is moved whole (`sst-bloom`'s `redis/dense.rs`).
pub const BATCH: usize = 65_536;
/// Bytes read from stdin at a time.
const CHUNK: usize = 4 << 20;

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
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK);
    // Decoded hex keys and where each one ends.
    let mut decoded: Vec<u8> = Vec::new();
    let mut ends: Vec<usize> = Vec::with_capacity(BATCH);
    let mut key = Vec::new();
    let mut line_no = 0u64;
    let mut eof = false;
    while !eof {
        let start = buf.len();
        buf.resize(start + CHUNK, 0);
        let n = read_full(&mut input, &mut buf[start..])
            .map_err(|e| Failure::error(format!("<stdin>: read error: {e}")))?;
        buf.truncate(start + n);
        eof = n == 0;
        // Whole lines only, until the input ends (maybe without a final newline).
        let whole = match buf.iter().rposition(|&b| b == b'\n') {
            _ if eof => buf.len(),
            Some(i) => i + 1,
            None => continue,
        };
        let mut lines: Vec<&[u8]> = Vec::with_capacity(BATCH);
        let mut rest = &buf[..whole];
        // Bytes of `buf` whose lines have gone to `f`.
        let mut done = 0;
        while !rest.is_empty() {
            let (line, tail) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &rest[rest.len()..]),
            };
            rest = tail;
            line_no += 1;
            lines.push(line);
            if lines.len() == BATCH {
                run(
                    hex,
                    &lines,
                    line_no,
                    &mut decoded,
                    &mut ends,
                    &mut key,
                    &mut f,
                )?;
                lines.clear();
                done = whole - rest.len();
            }
        }
        // A short batch at the end of a chunk waits for the next chunk's lines (a Redis
        // batch costs about the same short or full: whole bitmaps are fetched), unless the
        // input ended or it is already a chunk's worth of bytes (long keys).
        if !lines.is_empty() && (eof || whole - done >= CHUNK) {
            run(
                hex,
                &lines,
                line_no,
                &mut decoded,
                &mut ends,
                &mut key,
                &mut f,
            )?;
            done = whole;
        } else {
            line_no -= lines.len() as u64;
        }
        buf.drain(..done);
    }
    Ok(())
}

/// Hands one batch of lines to `f`, decoding hex first when asked.
fn run(
    hex: bool,
    lines: &[&[u8]],
    last_line: u64,
    decoded: &mut Vec<u8>,
    ends: &mut Vec<usize>,
    key: &mut Vec<u8>,
    f: &mut impl FnMut(&[&[u8]]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    if !hex {
        return f(lines);
    }
    decoded.clear();
    ends.clear();
    let first = last_line + 1 - lines.len() as u64;
    for (i, line) in lines.iter().enumerate() {
        common::unhex_into(common::trim(line), key)
            .map_err(|e| Failure::error(format!("<stdin>: line {}: {e}", first + i as u64)))?;
        decoded.extend_from_slice(key);
        ends.push(decoded.len());
    }
    let mut keys: Vec<&[u8]> = Vec::with_capacity(ends.len());
    let mut at = 0;
    for &end in ends.iter() {
        keys.push(&decoded[at..end]);
        at = end;
    }
    f(&keys)
}

/// Reads until `buf` is full or the input ends.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(m) => n += m,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
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
        let word: &[u8] = match (field, yes) {
            ("maybe", true) => b"maybe\t",
            ("maybe", false) => b"absent\t",
            (_, true) => b"removed\t",
            (_, false) => b"absent\t",
        };
        line.extend_from_slice(word);
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
    fn batches_are_full_across_chunks() {
        // About 1.5 MiB per batch: several chunks, none on a batch boundary.
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
        // Long keys: a batch is cut once it holds a chunk's worth of bytes.
        let long: Vec<Vec<u8>> = (0..20_000)
            .map(|i| format!("{i:0999}").into_bytes())
            .collect();
        let (sizes, lines) = split(&long.join(&b'\n'));
        assert_eq!(lines, long);
        assert!(sizes.len() > 1 && sizes.iter().all(|&n| n < BATCH));
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
