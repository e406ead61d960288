//! Verdicts: an adapter's answer against the right one.
//!
//! ```text
//! read (tables, directories)   exit 0 and exactly the expected entries, in order
//! read (damaged)               exit != 0 (an error), or exit 0 and exactly the expected
//!                              entries; never exit 0 with altered, missing or extra data
//! any                          exit 3: skip; a crash (a signal, or exit 128+N through the
//!                              shell), a time-out, output over 512 MiB: fail
//! write                        see `write.rs`
//! ```

mod write;

pub(crate) use write::{identical, written};

use crate::adapter::{describe, Exit, Output};
use crate::cases::Group;
use crate::protocol::{parse_rows, Entry, EXIT_UNSUPPORTED};

/// A case's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// The adapter gave the right answer.
    Pass,
    /// It did not (or crashed, hung, printed something unreadable).
    Fail,
    /// The case was not run: the adapter does not list its verb, compression or
    /// comparator, or answered exit 3.
    Skip,
}

impl Outcome {
    /// `pass`, `fail` or `skip`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Skip => "skip",
        }
    }
}

/// An outcome and the one line that explains it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub outcome: Outcome,
    pub detail: String,
}

impl Verdict {
    pub(crate) fn pass(detail: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Pass,
            detail: detail.into(),
        }
    }

    pub(crate) fn fail(detail: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Fail,
            detail: detail.into(),
        }
    }

    pub(crate) fn skip(detail: impl Into<String>) -> Self {
        Verdict {
            outcome: Outcome::Skip,
            detail: detail.into(),
        }
    }
}

/// What is wrong with a call that exited 0, before its output is read: `None` if nothing.
pub(crate) fn broken_output(out: &Output) -> Option<String> {
    if out.lingered {
        return Some("its output stayed open after it exited (a process it started?)".into());
    }
    if out.stdout_over {
        return Some("printed over 512 MiB".into());
    }
    None
}

/// A call that did not exit 0: skip (exit 3) or fail, with why.
pub(crate) fn not_done(out: &Output) -> Verdict {
    match &out.exit {
        Exit::Code(EXIT_UNSUPPORTED) => Verdict::skip("not supported (exit 3)"),
        e => Verdict::fail(format!("{}: {}", describe(e), out.message())),
    }
}

/// The verdict on a `read-table` or `read-db` answer.
pub(crate) fn read(group: Group, expected: &[Entry], out: &Output) -> Verdict {
    match &out.exit {
        Exit::Code(0) => {}
        Exit::Code(c) if group == Group::Damaged && *c != EXIT_UNSUPPORTED => {
            return Verdict::pass(format!("refused: exit {c}: {}", out.message()));
        }
        _ => return not_done(out),
    }
    if let Some(why) = broken_output(out) {
        return Verdict::fail(why);
    }
    let got = match parse_rows(&out.stdout) {
        Ok(g) => g,
        Err(why) => return Verdict::fail(why),
    };
    match (diff(expected, &got), group) {
        (None, Group::Damaged) => Verdict::pass(format!("read all {} entries intact", got.len())),
        (None, _) => Verdict::pass(format!("{} entries", got.len())),
        (Some(d), Group::Damaged) => Verdict::fail(format!("exit 0 with wrong data: {d}")),
        (Some(d), _) => Verdict::fail(d),
    }
}

/// How `got` differs from `expected`, or `None` when they are equal: the first difference
/// (a missing, extra or altered entry) and the counts.
pub(crate) fn diff(expected: &[Entry], got: &[Entry]) -> Option<String> {
    let common = expected.len().min(got.len());
    let i = (0..common)
        .find(|&i| expected[i] != got[i])
        .unwrap_or(common);
    if i == expected.len() && i == got.len() {
        return None;
    }
    let what = if i == got.len() {
        format!(
            "entries missing from entry {i} on (key {})",
            show(&expected[i].0)
        )
    } else if i == expected.len() {
        format!("extra entries from entry {i} on (key {})", show(&got[i].0))
    } else if expected[i].0 == got[i].0 {
        let (g, e) = (&got[i].1, &expected[i].1);
        let at = g
            .iter()
            .zip(e)
            .position(|(a, b)| a != b)
            .unwrap_or(g.len().min(e.len()));
        format!(
            "entry {i} (key {}): value altered from byte {at} on: {} given, {} expected",
            show(&got[i].0),
            show_from(g, at),
            show_from(e, at)
        )
    } else if expected[i + 1..].iter().take(10_000).any(|e| *e == got[i]) {
        format!("entry {i} (key {}) missing", show(&expected[i].0))
    } else {
        format!(
            "entry {i}: key {} given, {} expected",
            show(&got[i].0),
            show(&expected[i].0)
        )
    };
    Some(format!(
        "{what}; {} entries given, {} expected",
        got.len(),
        expected.len()
    ))
}

/// Bytes as hex, the first 24 of a longer string followed by its length.
pub(crate) fn show(b: &[u8]) -> String {
    if b.len() <= 24 {
        format!("'{}'", hex::encode(b))
    } else {
        format!("'{}...' ({} bytes)", hex::encode(&b[..24]), b.len())
    }
}

/// A value from byte `at` on, for a difference found there: its length, and hex of up to 16
/// bytes from `at`.
fn show_from(b: &[u8], at: usize) -> String {
    let part = &b[at.min(b.len())..];
    let shown = &part[..part.len().min(16)];
    let more = if part.len() > 16 { "..." } else { "" };
    format!("{} bytes, '{}{more}' there", b.len(), hex::encode(shown))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(k: &str, v: &str) -> Entry {
        (k.as_bytes().to_vec(), v.as_bytes().to_vec())
    }

    #[test]
    fn a_diff_names_the_first_missing_extra_or_altered_entry() {
        let x = vec![e("a", "1"), e("b", "2"), e("c", "3")];
        assert_eq!(diff(&x, &x), None);
        let d = diff(&x, &[e("a", "1"), e("c", "3")]).unwrap();
        assert!(d.starts_with("entry 1 (key '62') missing"), "{d}");
        let d = diff(&x, &[e("a", "1"), e("b", "X"), e("c", "3")]).unwrap();
        let want = "entry 1 (key '62'): value altered from byte 0 on: 1 bytes, '58' there given, \
                    1 bytes, '32' there expected";
        assert!(d.starts_with(want), "{d}");
        let d = diff(&x, &x[..2]).unwrap();
        assert!(d.starts_with("entries missing from entry 2 on"), "{d}");
        let d = diff(&x[..1], &x).unwrap();
        assert!(d.starts_with("extra entries from entry 1 on"), "{d}");
        assert!(d.ends_with("3 entries given, 1 expected"), "{d}");
    }

    fn output(exit: Exit, stdout: &[u8]) -> Output {
        Output {
            exit,
            stdout: stdout.to_vec(),
            stdout_over: false,
            stderr: b"\nboom: bad block\n".to_vec(),
            lingered: false,
        }
    }

    #[test]
    fn damaged_input_passes_with_an_error_or_every_entry_and_fails_otherwise() {
        let x = vec![e("a", "1"), e("b", "2")];
        let all = crate::protocol::encode_rows(&x);
        let some = crate::protocol::encode_rows(&x[..1]);
        let v = read(Group::Damaged, &x, &output(Exit::Code(1), &some));
        assert_eq!(
            (v.outcome, v.detail.as_str()),
            (Outcome::Pass, "refused: exit 1: boom: bad block")
        );
        assert_eq!(
            read(Group::Damaged, &x, &output(Exit::Code(0), &all)).outcome,
            Outcome::Pass
        );
        assert_eq!(
            read(Group::Damaged, &x, &output(Exit::Code(0), &some)).outcome,
            Outcome::Fail
        );
        assert_eq!(
            read(Group::Damaged, &x, &output(Exit::Signal(11), b"")).outcome,
            Outcome::Fail
        );
        assert_eq!(
            read(Group::Damaged, &x, &output(Exit::Code(3), b"")).outcome,
            Outcome::Skip
        );
        // Outside "damaged", an error is a failure.
        assert_eq!(
            read(Group::Tables, &x, &output(Exit::Code(1), &all)).outcome,
            Outcome::Fail
        );
        assert_eq!(
            read(Group::Tables, &x, &output(Exit::Code(0), &all)).outcome,
            Outcome::Pass
        );
        assert_eq!(
            read(Group::Tables, &x, &output(Exit::Code(0), b"{")).outcome,
            Outcome::Fail
        );
    }
}
