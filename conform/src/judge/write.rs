//! Verdicts on `write-table`.
//!
//! ```text
//! write-X        exit 0, FILE there, read back by this project's reader as the input
//!                (checksums on), `verify` clean, and read back as the input by the
//!                reference (C++ LevelDB's adapter) when there is one
//! write-X-bytes  exit 0 and FILE byte for byte the table the reference wrote from the same
//!                input and flags (or, without a reference, this project's builder, whose
//!                output is LevelDB's byte for byte without compression)
//! ```

use std::path::Path;

use super::{broken_output, diff, not_done, read, Outcome, Verdict};
use crate::adapter::{Exit, Output};
use crate::cases::Group;
use crate::oracle;
use crate::protocol::Entry;

fn written_bytes(out: &Output, file: &Path) -> Result<Vec<u8>, Verdict> {
    if out.exit != Exit::Code(0) {
        return Err(not_done(out));
    }
    if let Some(why) = broken_output(out) {
        return Err(Verdict::fail(why));
    }
    std::fs::read(file)
        .map_err(|e| Verdict::fail(format!("exit 0, but the table cannot be read: {e}")))
}

/// The verdict on a `write-X` case. `reference` is the reference's name and its
/// `read-table` of the file, if there is a reference.
pub(crate) fn written(
    out: &Output,
    file: &Path,
    entries: &[Entry],
    reference: Option<(&str, &Output)>,
) -> Verdict {
    let bytes = match written_bytes(out, file) {
        Ok(b) => b,
        Err(v) => return v,
    };
    match oracle::table_entries(&bytes) {
        Err(e) => return Verdict::fail(format!("this project's reader: {e}")),
        Ok(read) => {
            if let Some(d) = diff(entries, &read) {
                return Verdict::fail(format!("read back: {d}"));
            }
        }
    }
    if let Err(e) = oracle::verify_table(&bytes) {
        return Verdict::fail(e);
    }
    let mut detail = format!(
        "{} entries, {} bytes, verify clean",
        entries.len(),
        bytes.len()
    );
    match reference {
        None => detail.push_str("; not read by a reference (none given)"),
        Some((name, ref_out)) => {
            let v = read(Group::Tables, entries, ref_out);
            match v.outcome {
                Outcome::Pass => detail.push_str(&format!("; {name} reads it back")),
                Outcome::Skip => detail.push_str(&format!("; {name} cannot read it: {}", v.detail)),
                Outcome::Fail => return Verdict::fail(format!("{name} reads it: {}", v.detail)),
            }
        }
    }
    Verdict::pass(detail)
}

/// The verdict on a `write-X-bytes` case: `reference` is the reference's name and the table
/// it wrote (or why it could not).
pub(crate) fn identical(
    out: &Output,
    file: &Path,
    reference: (&str, Result<Vec<u8>, String>),
) -> Verdict {
    let bytes = match written_bytes(out, file) {
        Ok(b) => b,
        Err(v) => return v,
    };
    let (name, wanted) = reference;
    let wanted = match wanted {
        Ok(w) => w,
        Err(why) => return Verdict::skip(format!("no table from {name}: {why}")),
    };
    if bytes == wanted {
        return Verdict::pass(format!(
            "identical to {name}'s table ({} bytes)",
            bytes.len()
        ));
    }
    let at = bytes
        .iter()
        .zip(&wanted)
        .position(|(a, b)| a != b)
        .unwrap_or(bytes.len().min(wanted.len()));
    Verdict::fail(format!(
        "differs from {name}'s table from byte {at} on, in its {}; {} bytes, {} expected",
        oracle::locate(&wanted, at as u64),
        bytes.len(),
        wanted.len()
    ))
}
