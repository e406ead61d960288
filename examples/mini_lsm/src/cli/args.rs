//! The command line's arguments, checked before anything runs: each command's flags and
//! number of operands; keys and values as the arguments' raw bytes, hex, or standard input.
//!
//! ```text
//! args:  [--hex] DIR COMMAND (operand | --flag VALUE | --flag=VALUE | --switch | --hex)*
//!        [-- operand*]         after `--`, nothing is a flag
//! ```

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

/// A command's outcome, or the message of its failure.
pub type Outcome = Result<ExitCode, String>;

/// Flags taking a value, switches, and the number of operands of a command.
struct Spec {
    values: &'static [&'static str],
    switches: &'static [&'static str],
    operands: usize,
}

fn spec(command: &str) -> Option<Spec> {
    let s = |values, switches, operands| Spec {
        values,
        switches,
        operands,
    };
    Some(match command {
        "put" => s(&[], &[], 2),
        "get" | "delete" => s(&[], &[], 1),
        "scan" => s(&["--from", "--to", "--format"], &["--reverse"], 0),
        "compact" => s(&["--from", "--to"], &[], 0),
        "repair" => s(&[], &[], 0),
        "bench" => s(
            &[
                "--num",
                "--benchmarks",
                "--threads",
                "--value_size",
                "--bloom_bits",
            ],
            &["--fresh", "--json", "--sync"],
            0,
        ),
        _ => return None,
    })
}

/// A parsed command line.
pub struct Args {
    /// The database directory.
    pub dir: PathBuf,
    /// The command.
    pub command: String,
    /// Keys and values are hex.
    pub hex: bool,
    operands: Vec<OsString>,
    values: HashMap<&'static str, OsString>,
    switches: Vec<&'static str>,
}

impl Args {
    /// Parses `args` (without the program name).
    ///
    /// # Errors
    /// What is wrong with them, to print before the usage.
    pub fn parse(args: &[OsString]) -> Result<Args, String> {
        let mut hex = false;
        let mut it = args.iter();
        let mut head = Vec::new();
        for a in it.by_ref() {
            if a == "--hex" {
                hex = true;
                continue;
            }
            head.push(a);
            if head.len() == 2 {
                break;
            }
        }
        let [dir, command] = head[..] else {
            return Err("a directory and a command are needed".into());
        };
        let command = command
            .to_str()
            .ok_or_else(|| format!("unknown command {command:?}"))?
            .to_string();
        let spec = spec(&command).ok_or_else(|| format!("unknown command {command:?}"))?;
        let mut a = Args {
            dir: PathBuf::from(dir),
            command,
            hex,
            operands: Vec::new(),
            values: HashMap::new(),
            switches: Vec::new(),
        };
        let mut only_operands = false;
        while let Some(arg) = it.next() {
            let text = arg.to_str();
            match text {
                _ if only_operands => a.operands.push(arg.clone()),
                Some("--") => only_operands = true,
                Some("--hex") => a.hex = true,
                Some(t) if t.starts_with("--") && t.len() > 2 => {
                    let (name, inline) = match t.split_once('=') {
                        Some((n, v)) => (n, Some(OsString::from(v))),
                        None => (t, None),
                    };
                    if let Some(&s) = spec.switches.iter().find(|s| **s == name) {
                        if inline.is_some() {
                            return Err(format!("{name} takes no value"));
                        }
                        a.switches.push(s);
                    } else if let Some(&v) = spec.values.iter().find(|v| **v == name) {
                        let value = match inline {
                            Some(v) => v,
                            None => it
                                .next()
                                .ok_or_else(|| format!("{name} needs a value"))?
                                .clone(),
                        };
                        a.values.insert(v, value);
                    } else {
                        return Err(format!("{} takes no flag {name}", a.command));
                    }
                }
                _ => a.operands.push(arg.clone()),
            }
        }
        if a.operands.len() != spec.operands {
            return Err(format!(
                "{} takes {} operand{}, not {}",
                a.command,
                spec.operands,
                if spec.operands == 1 { "" } else { "s" },
                a.operands.len()
            ));
        }
        Ok(a)
    }

    /// The operands.
    pub fn operands(&self) -> &[OsString] {
        &self.operands
    }

    /// Whether switch `name` was given.
    pub fn switch(&self, name: &str) -> bool {
        self.switches.contains(&name)
    }

    /// The value of flag `name`, as given.
    pub fn value(&self, name: &str) -> Option<&OsStr> {
        self.values.get(name).map(OsString::as_os_str)
    }

    /// The value of flag `name` as text.
    ///
    /// # Errors
    /// It is not UTF-8.
    pub fn text(&self, name: &str) -> Result<Option<&str>, String> {
        self.value(name)
            .map(|v| v.to_str().ok_or_else(|| format!("{name}: not text: {v:?}")))
            .transpose()
    }

    /// The value of flag `name` as a number no larger than `max`.
    ///
    /// # Errors
    /// It is not a number, or too large.
    pub fn number(&self, name: &str, default: u64, max: u64) -> Result<u64, String> {
        match self.text(name)? {
            None => Ok(default),
            Some(t) => match t.parse::<u64>() {
                Ok(n) if n <= max => Ok(n),
                Ok(_) => Err(format!("{name} {t}: at most {max}")),
                Err(_) => Err(format!("{name} {t}: not a number")),
            },
        }
    }
}

/// Where keys and values come from: the argument's bytes, hex, or standard input (`-`,
/// once per command).
pub struct Input<'a> {
    stdin: Option<&'a mut dyn Read>,
    hex: bool,
}

impl<'a> Input<'a> {
    /// Keys and values from arguments (hex when `hex`) or `stdin`.
    pub fn new(stdin: &'a mut dyn Read, hex: bool) -> Input<'a> {
        Input {
            stdin: Some(stdin),
            hex,
        }
    }

    /// The bytes argument `arg` stands for.
    ///
    /// # Errors
    /// Bad hex, standard input asked for twice, or unreadable.
    pub fn bytes(&mut self, arg: &OsStr) -> Result<Vec<u8>, String> {
        let raw = if arg == "-" {
            let stdin = self
                .stdin
                .take()
                .ok_or("standard input (-) can stand for one argument only")?;
            let mut buf = Vec::new();
            stdin
                .read_to_end(&mut buf)
                .map_err(|e| format!("standard input: {e}"))?;
            buf
        } else {
            os_bytes(arg)
        };
        match self.hex {
            true => from_hex(&raw),
            false => Ok(raw),
        }
    }
}

/// The bytes of an argument as the system gave them (on Unix, any bytes).
fn os_bytes(s: &OsStr) -> Vec<u8> {
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

/// Hex text (whitespace ignored) as bytes.
fn from_hex(text: &[u8]) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if digits.len() % 2 != 0 {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    let nibble = |b: u8| match b {
        b'0'..=b'9' => Ok(b - b'0'),
        b'a'..=b'f' => Ok(b - b'a' + 10),
        b'A'..=b'F' => Ok(b - b'A' + 10),
        _ => Err(format!("not a hex digit: {:?}", char::from(b))),
    };
    digits
        .chunks(2)
        .map(|p| Ok(nibble(p[0])? << 4 | nibble(p[1])?))
        .collect()
}
