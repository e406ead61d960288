//! A real `redis-server` for tests, benches and examples: started on a free loopback port in
//! its own temporary directory, ready once it answers PING, killed when dropped.
//!
//! Shared by `tests/bloom_redis.rs`, `cli/tests/bloom.rs`, `benches/bloom_redis.rs` and
//! `examples/redis_bloom_bench.rs` through `#[path]`.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How often readiness (PING) and shutdown are polled before giving up.
const TRIES: u32 = 1000;
const POLL: Duration = Duration::from_millis(10);

/// A running `redis-server`.
pub struct RedisServer {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: tempfile::TempDir,
    persistent: bool,
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port");
    l.local_addr().expect("local address").port()
}

/// Sends one inline command and returns the first reply line, or None when the server
/// cannot be reached.
fn inline(port: u16, command: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(format!("{command}\r\n").as_bytes()).ok()?;
    let mut buf = [0u8; 256];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).trim_end().to_string())
}

/// The output of `redis-cli -p PORT args...` (Debian package redis-tools).
pub fn redis_cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run redis-cli (Debian package redis-tools; scripts/setup.sh installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl RedisServer {
    /// A server without persistence.
    pub fn start() -> RedisServer {
        Self::launch(false)
    }

    /// A server with an append-only file fsynced on every write, so a restart loses
    /// nothing that was acknowledged.
    pub fn start_persistent() -> RedisServer {
        Self::launch(true)
    }

    fn launch(persistent: bool) -> RedisServer {
        let dir = tempfile::tempdir().expect("temporary directory for redis");
        let mut s = RedisServer {
            child: None,
            port: 0,
            dir,
            persistent,
        };
        // A port found free may be taken before redis binds it: try a few.
        for _ in 0..5 {
            s.port = free_port();
            if s.spawn() {
                return s;
            }
        }
        panic!("redis-server did not start (see {})", s.log().display());
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("redis.log")
    }

    /// Starts the process on `self.port` and waits for PING; false if it exited.
    fn spawn(&mut self) -> bool {
        let mut cmd = Command::new("redis-server");
        cmd.arg("--port")
            .arg(self.port.to_string())
            .arg("--bind")
            .arg("127.0.0.1")
            .arg("--save")
            .arg("")
            .arg("--dir")
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(self.log())
            .arg("--daemonize")
            .arg("no");
        if self.persistent {
            cmd.args(["--appendonly", "yes", "--appendfsync", "always"]);
        } else {
            cmd.args(["--appendonly", "no"]);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run redis-server (Debian package redis-server; scripts/setup.sh installs it)");
        self.child = Some(child);
        for _ in 0..TRIES {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(_)) = c.try_wait() {
                    self.child = None;
                    return false;
                }
            }
            if inline(self.port, "PING").as_deref() == Some("+PONG") {
                return true;
            }
            std::thread::sleep(POLL);
        }
        panic!("redis-server on port {} never answered PING", self.port);
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Shuts the server down cleanly (SHUTDOWN flushes the append-only file) and waits
    /// for the process to exit.
    pub fn stop(&mut self) {
        let _ = inline(self.port, "SHUTDOWN");
        if let Some(mut c) = self.child.take() {
            for _ in 0..TRIES {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(POLL);
            }
            let _ = c.kill();
            let _ = c.wait();
            panic!("redis-server on port {} ignored SHUTDOWN", self.port);
        }
    }

    /// A new server replicating this one, its link up (full sync done).
    pub fn start_replica(&self) -> RedisServer {
        let replica = RedisServer::start();
        // No 5 s wait for more replicas before a diskless full sync.
        redis_cli(
            self.port,
            &["CONFIG", "SET", "repl-diskless-sync-delay", "0"],
        );
        let ok = redis_cli(
            replica.port,
            &["REPLICAOF", "127.0.0.1", &self.port.to_string()],
        );
        assert!(ok.contains("OK"), "REPLICAOF: {ok}");
        for _ in 0..TRIES {
            if redis_cli(replica.port, &["INFO", "replication"]).contains("master_link_status:up") {
                return replica;
            }
            std::thread::sleep(POLL);
        }
        panic!("the replica on port {} never synced", replica.port);
    }

    /// Makes this server (a replica) a master of its own, and waits until `master` sees
    /// no replica left.
    pub fn detach_from(&self, master: &RedisServer) {
        let ok = redis_cli(self.port, &["REPLICAOF", "NO", "ONE"]);
        assert!(ok.contains("OK"), "REPLICAOF NO ONE: {ok}");
        for _ in 0..TRIES {
            if redis_cli(master.port, &["INFO", "replication"]).contains("connected_slaves:0") {
                return;
            }
            std::thread::sleep(POLL);
        }
        panic!("the master on port {} still has a replica", master.port);
    }

    /// Starts the server again on the same port and directory (reloading its data).
    pub fn restart(&mut self) {
        self.stop();
        assert!(
            self.spawn(),
            "redis-server did not restart on port {}",
            self.port
        );
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
