//! One connection to a Redis server: a TCP socket whose replies are read through a 1 MiB
//! buffer and parsed by the `redis` crate's RESP parser.
//!
//! ```text
//! open:  connect (timeout) -> TCP_NODELAY, read/write timeouts of one poll interval
//!        (AUTH and SELECT are sent by the topology, which decides how long to wait)
//! send:  RESP bytes written in pieces as the socket takes them; a poll interval in which
//!        it takes nothing is reported (`Ok(false)`), and the next call goes on from there
//! recv:  one reply (RESP2), parsed from the buffer, which is refilled by one read of up
//!        to 1 MiB when it runs dry; a poll interval in which nothing arrives is reported
//!        (`Ok(None)`), and the next call resumes the reply where the parser stopped
//! ```
//!
//! Reporting silence after each poll interval, instead of blocking for the whole I/O timeout,
//! lets the caller look at the cluster in between (`topology.rs`): a master that stopped
//! answering is given up as soon as another node serves its slots.
//!
//! Why not `redis::Connection`: its parser reads the socket 8 KiB at a time, so a check that
//! `GET`s whole bitmaps (4.6 MB a batch of 65,536 keys for a filter of 3.3 M keys) made
//! about 600 `recvfrom` calls a batch; through this buffer it makes a few. Measured in
//! docs/bloom.md ("Reading replies"). Replies are RESP2 whatever the URL's `protocol` says.

use std::io::{self, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use redis::{Parser, Value};

/// Bytes read from the socket at a time (at most).
const READ_BUFFER: usize = 1 << 20;

/// A connection: the socket, a buffered reader on a clone of it, and the parser (which keeps
/// any bytes of the next reply it has read, and a reply it has parsed in part).
pub(super) struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    parser: Parser,
    poll: Duration,
}

/// Whether an I/O error is a read or write timeout (nothing moved for one poll interval).
fn is_silence(kind: io::ErrorKind) -> bool {
    matches!(kind, io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

impl Conn {
    /// Connects to `host:port` within `timeout`; reads and writes then wait at most `poll`
    /// at a time.
    pub fn open(host: &str, port: u16, timeout: Duration, poll: Duration) -> Result<Conn, String> {
        let mut last = format!("{host}:{port}: no address");
        let addrs = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("{host}:{port}: {e}"))?;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => return Self::setup(s, poll).map_err(|e| e.to_string()),
                Err(e) => last = format!("{addr}: {e}"),
            }
        }
        Err(last)
    }

    fn setup(s: TcpStream, poll: Duration) -> io::Result<Conn> {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(poll))?;
        s.set_write_timeout(Some(poll))?;
        let writer = s.try_clone()?;
        Ok(Conn {
            reader: BufReader::with_capacity(READ_BUFFER, s),
            writer,
            parser: Parser::new(),
            poll,
        })
    }

    /// Writes `bytes[*at..]`, advancing `at`; `Ok(true)` once all is written, `Ok(false)`
    /// when the socket took nothing for a poll interval (call again to go on).
    pub fn send_some(&mut self, bytes: &[u8], at: &mut usize) -> io::Result<bool> {
        while let Some(rest) = bytes.get(*at..).filter(|r| !r.is_empty()) {
            match self.writer.write(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => *at += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_silence(e.kind()) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Reads one reply (an error reply is `Ok(Some(Value::ServerError))`); `Ok(None)` when
    /// nothing arrived for a poll interval (call again: the reply is resumed, not restarted).
    pub fn recv(&mut self) -> redis::RedisResult<Option<Value>> {
        match self.parser.parse_value(&mut self.reader) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_timeout() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sends a packed command and reads its reply, giving up after `limit` of silence; an
    /// error reply is an `Err`.
    pub fn query(&mut self, bytes: &[u8], limit: Duration) -> Result<Value, String> {
        let (mut at, mut silent) = (0, Duration::ZERO);
        let timed_out = |silent: Duration| format!("no answer in {:.1} s", silent.as_secs_f64());
        while !self.send_some(bytes, &mut at).map_err(|e| e.to_string())? {
            silent += self.poll;
            if silent >= limit {
                return Err(timed_out(silent));
            }
        }
        silent = Duration::ZERO;
        loop {
            match self.recv() {
                Ok(Some(Value::ServerError(e))) => {
                    return Err(server_error_text(e.code(), e.details()))
                }
                Ok(Some(v)) => return Ok(v),
                Ok(None) => {
                    silent += self.poll;
                    if silent >= limit {
                        return Err(timed_out(silent));
                    }
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}

/// An error reply as Redis wrote it (`WRONGTYPE Operation against a key ...`).
pub(super) fn server_error_text(code: &str, details: Option<&str>) -> String {
    match details {
        Some(d) => format!("{code} {d}"),
        None => code.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;
    use std::sync::mpsc;

    /// A reply cut in the middle by silence is resumed where it stopped: the peer writes
    /// part of each reply, waits until `recv` has reported the silence, then writes the rest.
    #[test]
    fn a_reply_interrupted_by_silence_is_resumed() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let replies: [&[u8]; 4] = [
            b"$11\r\nhello world\r\n",
            b"*3\r\n:42\r\n$-1\r\n*1\r\n$3\r\nabc\r\n",
            b"-WRONGTYPE Operation against a key\r\n",
            b"+OK\r\n",
        ];
        let (silent_tx, silent_rx) = mpsc::channel::<()>();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            let mut cmd = [0u8; 64];
            let _ = s.read(&mut cmd).expect("the command");
            for r in replies {
                // Every cut: after the first byte, inside a length, in the middle.
                let cut = [1, 3, r.len() / 2];
                let mut at = 0;
                for c in cut {
                    if c > at && c < r.len() {
                        // Silences seen before this part was written do not count.
                        while silent_rx.try_recv().is_ok() {}
                        s.write_all(&r[at..c]).expect("write");
                        at = c;
                        silent_rx.recv().expect("the reader saw silence");
                    }
                }
                s.write_all(&r[at..]).expect("write");
            }
        });
        let poll = Duration::from_millis(20);
        let mut c = Conn::open("127.0.0.1", port, Duration::from_secs(5), poll).expect("open");
        let mut at = 0;
        assert!(c.send_some(b"*1\r\n$4\r\nPING\r\n", &mut at).expect("send"));
        let mut got = Vec::new();
        while got.len() < replies.len() {
            match c.recv().expect("recv") {
                Some(v) => got.push(v),
                None => {
                    let _ = silent_tx.send(());
                }
            }
        }
        peer.join().expect("peer");
        let expected: Vec<Value> = replies
            .iter()
            .map(|r| redis::parse_redis_value(r).expect("parse whole"))
            .collect();
        assert_eq!(got, expected);
    }
}
