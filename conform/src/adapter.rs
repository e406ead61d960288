//! Running an adapter: `sh -c 'COMMAND "$@"' sh VERB ARGS...` in a process group of its own,
//! stdin fed from memory, stdout and stderr read on threads (bounded), a time limit, and the
//! whole group killed when the call ends, so that nothing it started outlives its case.
//!
//! ```text
//! spawn (own process group) -> writer thread: stdin    readers: stdout (<= 512 MiB), stderr
//!   -> wait up to the time limit -> kill(-pgid, SIGKILL) (on time-out, and for leftovers)
//!   -> the readers' output (waited for 5 s more: a grandchild that left the group and holds
//!      the pipe open is reported, not waited for)
//! ```

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};
use wait_timeout::ChildExt;

use crate::error::{Error, Result};
use crate::protocol::Capabilities;

/// Most stdout bytes kept from one call; past it the output is drained and the call fails.
const MAX_STDOUT: usize = 512 << 20;
/// Most stderr bytes kept (the first ones).
const MAX_STDERR: usize = 64 << 10;
/// How long the output pipes may stay open after the process group is gone.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// How an adapter call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code (below 129).
    Code(i32),
    /// It died of this signal: reported by the system, or as a shell reports a command's
    /// death, exit code 128 + N.
    Signal(i32),
    /// It did not end within the time limit and was killed (with its process group).
    TimedOut(Duration),
    /// The shell could not be started.
    NotStarted(String),
}

/// What one adapter call did.
#[derive(Debug, Clone)]
pub struct Output {
    /// How it ended.
    pub exit: Exit,
    /// Its stdout (at most 512 MiB).
    pub stdout: Vec<u8>,
    /// stdout went past 512 MiB (the rest was read and dropped).
    pub stdout_over: bool,
    /// The first 64 KiB of its stderr.
    pub stderr: Vec<u8>,
    /// A process it started kept its output open after the call ended.
    pub lingered: bool,
}

impl Output {
    /// The first line of stderr (for messages), or "no message".
    pub fn message(&self) -> String {
        let s = String::from_utf8_lossy(&self.stderr);
        let line = s.lines().map(str::trim).find(|l| !l.is_empty());
        match line {
            Some(l) if l.chars().count() > 200 => {
                format!("{}...", l.chars().take(200).collect::<String>())
            }
            Some(l) => l.to_string(),
            None => "no message".to_string(),
        }
    }
}

/// An adapter command and its per-call time limit.
#[derive(Debug, Clone)]
pub struct Adapter {
    command: String,
    timeout: Duration,
}

impl Adapter {
    /// An adapter run as `sh -c 'COMMAND "$@"'`: `command` is a shell command line to which
    /// the verb and its arguments are appended as further words.
    pub fn new(command: impl Into<String>, timeout: Duration) -> Self {
        Adapter {
            command: command.into(),
            timeout,
        }
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Asks the adapter what it can do.
    ///
    /// # Errors
    /// [`Error::Capabilities`]: the call failed or its answer does not parse.
    pub fn capabilities(&self) -> Result<Capabilities> {
        let out = self.call("capabilities", &[], None);
        let fail = |reason: String| Error::Capabilities {
            command: self.command.clone(),
            reason,
        };
        match &out.exit {
            Exit::Code(0) => Capabilities::parse(&out.stdout).map_err(fail),
            other => Err(fail(format!("{}: {}", describe(other), out.message()))),
        }
    }

    /// Runs `COMMAND VERB ARGS...`, feeding `stdin` (or an empty stdin). Never fails: what
    /// went wrong is in the [`Output`].
    pub fn call(&self, verb: &str, args: &[OsString], stdin: Option<Arc<Vec<u8>>>) -> Output {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(format!("{} \"$@\"", self.command))
            .arg("sh")
            .arg(verb)
            .args(args)
            .process_group(0)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return Output {
                    exit: Exit::NotStarted(e.to_string()),
                    stdout: Vec::new(),
                    stdout_over: false,
                    stderr: Vec::new(),
                    lingered: false,
                }
            }
        };
        if let (Some(data), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // Detached: it ends when the input is written or the pipe's reader is gone
            // (a broken pipe is the adapter's business, seen in its answer).
            thread::spawn(move || {
                let _ = pipe.write_all(&data);
            });
        }
        let (tx, rx) = mpsc::channel();
        spawn_reader(
            child.stdout.take().map(|p| Box::new(p) as _),
            0,
            MAX_STDOUT,
            &tx,
        );
        spawn_reader(
            child.stderr.take().map(|p| Box::new(p) as _),
            1,
            MAX_STDERR,
            &tx,
        );
        drop(tx);
        let exit = self.wait(&mut child);
        let mut out = Output {
            exit,
            stdout: Vec::new(),
            stdout_over: false,
            stderr: Vec::new(),
            lingered: false,
        };
        let deadline = Instant::now() + DRAIN_GRACE;
        for _ in 0..2 {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((0, bytes, over)) => (out.stdout, out.stdout_over) = (bytes, over),
                Ok((_, bytes, _)) => out.stderr = bytes,
                Err(_) => {
                    out.lingered = true;
                    break;
                }
            }
        }
        out
    }

    /// Waits for the child up to the time limit, then kills its process group (on a
    /// time-out, and in any case for processes it left behind).
    fn wait(&self, child: &mut Child) -> Exit {
        let group = Pid::from_raw(child.id() as i32);
        let exit = match child.wait_timeout(self.timeout) {
            Ok(Some(status)) => match (status.code(), status.signal()) {
                (Some(c), _) if (129..=128 + 31).contains(&c) => Exit::Signal(c - 128),
                (Some(c), _) => Exit::Code(c),
                (None, Some(s)) => Exit::Signal(s),
                (None, None) => Exit::NotStarted("no exit status".into()),
            },
            Ok(None) => Exit::TimedOut(self.timeout),
            Err(e) => Exit::NotStarted(format!("waiting for it: {e}")),
        };
        if let Some(g) = group {
            // ESRCH (nothing left in the group) is the usual answer.
            let _ = kill_process_group(g, Signal::KILL);
        }
        if matches!(exit, Exit::TimedOut(_) | Exit::NotStarted(_)) {
            let _ = child.wait();
        }
        exit
    }
}

/// Reads a pipe to its end on a thread, keeping the first `cap` bytes, and sends
/// `(which, bytes, went_over)`.
fn spawn_reader(
    pipe: Option<Box<dyn Read + Send>>,
    which: u8,
    cap: usize,
    tx: &mpsc::Sender<(u8, Vec<u8>, bool)>,
) {
    let tx = tx.clone();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut over = false;
        if let Some(mut pipe) = pipe {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let room = cap - kept.len();
                        kept.extend_from_slice(&buf[..n.min(room)]);
                        over |= n > room;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
        }
        let _ = tx.send((which, kept, over));
    });
}

/// How an exit reads in a message: "exit 1", "crashed: signal 11 (SIGSEGV)", ...
pub(crate) fn describe(exit: &Exit) -> String {
    match exit {
        Exit::Code(c) => format!("exit {c}"),
        Exit::Signal(s) => format!("crashed: signal {s}{}", signal_name(*s)),
        Exit::TimedOut(d) => format!("no answer within {} s (killed)", d.as_secs_f64()),
        Exit::NotStarted(e) => format!("could not run: {e}"),
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}
