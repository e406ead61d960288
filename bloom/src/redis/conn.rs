//! One connection to a Redis server: a TCP socket whose replies are read through a 1 MiB
//! buffer and parsed by the `redis` crate's RESP parser.
//!
//! ```text
//! open:  connect (timeout) -> TCP_NODELAY, read/write timeouts
//!        [AUTH [username] password]   when the URL has a password
//!        [SELECT db]                  when the URL names a database other than 0
//! send:  RESP bytes written whole (pipelined commands back to back)
//! recv:  one reply (RESP2), parsed from the buffer, which is refilled by one read of up
//!        to 1 MiB when it runs dry
//! ```
//!
//! Why not `redis::Connection`: its parser reads the socket 8 KiB at a time, so a check that
//! `GET`s whole bitmaps (4.6 MB a batch of 65,536 keys for a filter of 3.3 M keys) made
//! about 600 `recvfrom` calls a batch; through this buffer it makes a few. Measured in
//! docs/bloom.md ("Reading replies"). Replies are RESP2 whatever the URL's `protocol` says.

use std::io::{self, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use redis::{Cmd, Parser, RedisConnectionInfo, Value};

/// Bytes read from the socket at a time (at most).
const READ_BUFFER: usize = 1 << 20;

/// A connection: the socket, a buffered reader on a clone of it, and the parser (which keeps
/// any bytes of the next reply it has read).
pub(super) struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    parser: Parser,
}

impl Conn {
    /// Connects to `host:port` within `timeout` (also the read and write timeout), then
    /// authenticates and selects the database as `info` says.
    pub fn open(
        host: &str,
        port: u16,
        info: &RedisConnectionInfo,
        timeout: Duration,
    ) -> Result<Conn, String> {
        let mut last = format!("{host}:{port}: no address");
        let addrs = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("{host}:{port}: {e}"))?;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => return Self::setup(s, info, timeout).map_err(|e| e.to_string()),
                Err(e) => last = format!("{addr}: {e}"),
            }
        }
        Err(last)
    }

    fn setup(s: TcpStream, info: &RedisConnectionInfo, timeout: Duration) -> io::Result<Conn> {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        let writer = s.try_clone()?;
        let mut c = Conn {
            reader: BufReader::with_capacity(READ_BUFFER, s),
            writer,
            parser: Parser::new(),
        };
        if let Some(password) = &info.password {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = &info.username {
                auth.arg(user);
            }
            auth.arg(password);
            c.query(&auth)
                .map_err(|e| io::Error::other(format!("AUTH: {e}")))?;
        }
        if info.db != 0 {
            c.query(redis::cmd("SELECT").arg(info.db))
                .map_err(|e| io::Error::other(format!("SELECT {}: {e}", info.db)))?;
        }
        Ok(c)
    }

    /// Writes already encoded commands.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.write_all(bytes)
    }

    /// Reads one reply; an error reply is `Ok(Value::ServerError)`.
    pub fn recv(&mut self) -> redis::RedisResult<Value> {
        self.parser.parse_value(&mut self.reader)
    }

    /// Sends `cmd` and reads its reply; an error reply is an `Err`.
    pub fn query(&mut self, cmd: &Cmd) -> Result<Value, String> {
        self.send(&cmd.get_packed_command())
            .map_err(|e| e.to_string())?;
        match self.recv() {
            Ok(Value::ServerError(e)) => Err(server_error_text(e.code(), e.details())),
            Ok(v) => Ok(v),
            Err(e) => Err(e.to_string()),
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
