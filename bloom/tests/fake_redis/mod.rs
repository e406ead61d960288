//! A fake Redis server for tests of what real servers will not do on demand: answer each
//! command as a closure says, then fall silent (as a stopped process), or answer `MOVED`
//! while saying it is no cluster node. One connection, on a free loopback port.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;

/// A fake server on a free port for one connection: each command (its RESP bytes) gets the
/// reply `answer` gives, until it gives `None`; from then on nothing is answered (as a
/// stopped process). Ends when the client closes the connection.
pub fn fake_server(
    answer: impl Fn(&[u8]) -> Option<Vec<u8>> + Send + 'static,
) -> (String, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!(
        "redis://127.0.0.1:{}",
        l.local_addr().expect("address").port()
    );
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        let mut buf = vec![0u8; 1 << 16];
        let (mut seen, mut silent) = (Vec::new(), false);
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            while let Some(end) = command_end(&seen) {
                let cmd: Vec<u8> = seen.drain(..end).collect();
                silent = silent || {
                    match answer(&cmd) {
                        Some(reply) => s.write_all(&reply).is_err(),
                        None => true,
                    }
                };
            }
        }
    });
    (url, h)
}

/// Where the first whole RESP command of `b` ends, if it is all there.
pub fn command_end(b: &[u8]) -> Option<usize> {
    let line = |at: usize| -> Option<(usize, usize)> {
        let end = b.get(at..)?.windows(2).position(|w| w == b"\r\n")? + at;
        let n = std::str::from_utf8(b.get(at + 1..end)?)
            .ok()?
            .parse()
            .ok()?;
        Some((n, end + 2))
    };
    let (args, mut at) = line(0)?;
    for _ in 0..args {
        let (len, start) = line(at)?;
        at = start + len + 2;
        if at > b.len() {
            return None;
        }
    }
    Some(at)
}

/// Whether the command's bytes hold `name` (its name, for these tests' commands).
pub fn is(cmd: &[u8], name: &[u8]) -> bool {
    cmd.windows(name.len()).any(|w| w == name)
}

/// `INFO` of a server that is not a cluster node.
pub const NOT_A_CLUSTER: &[u8] = b"$30\r\n# Cluster\r\ncluster_enabled:0\r\n\r\n";

/// The `HMGET` reply of a filter's metadata (version 1, capacity 1000, rate 0.01, growth 2,
/// ratio 0.5, seed 7, bitmaps of 2^20 bits, one layer).
pub const FILTER_META: &[u8] = b"*8\r\n$1\r\n1\r\n$4\r\n1000\r\n$4\r\n0.01\r\n$1\r\n2\r\n\
$3\r\n0.5\r\n$1\r\n7\r\n$7\r\n1048576\r\n$1\r\n1\r\n";
