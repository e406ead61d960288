//! A real Redis Cluster for tests, benches and scripts: 3 masters and 3 replicas of the Debian
//! `redis-server` on free loopback ports (and their cluster-bus ports, +10000), each in its own
//! temporary directory, joined by `redis-cli --cluster create ... --cluster-replicas 1`. Ready
//! once every node says `cluster_state:ok` with all 16384 slots and every replica's link is
//! up; every process is killed (and the directories removed) when dropped, even after a
//! failed assertion.
//!
//! Every wait polls observable state (`CLUSTER INFO`, `INFO replication`) with a bounded
//! number of tries: no sleeps standing in for "long enough".
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// Polling: 600 tries 100 ms apart (one minute) before a wait fails.
const TRIES: u32 = 600;
const POLL: Duration = Duration::from_millis(100);

/// One node of the cluster.
pub struct Node {
    pub port: u16,
    child: Option<Child>,
    dir: tempfile::TempDir,
    node_timeout_ms: u64,
}

/// A running cluster.
pub struct RedisCluster {
    pub nodes: Vec<Node>,
    /// Its `cluster-node-timeout`: how long a node may be unreachable before it is failed
    /// (and its replica promoted, a second or two later).
    pub node_timeout_ms: u64,
}

/// A port whose cluster-bus port (+10000) is free too.
fn free_port_pair() -> u16 {
    for _ in 0..200 {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port");
        let port = l.local_addr().expect("local address").port();
        if port > 55_000 {
            continue;
        }
        if TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
    panic!("no free pair of loopback ports (port and port + 10000)");
}

/// `redis-cli -p PORT args...`.
pub fn cli(port: u16, args: &[&str]) -> Output {
    Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run redis-cli (Debian package redis-tools; scripts/setup.sh installs it)")
}

/// The text of `redis-cli -p PORT args...`, or "" when the node does not answer.
pub fn cli_text(port: u16, args: &[&str]) -> String {
    let out = cli(port, args);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Polls `f` until it is true; panics naming `what` after a minute.
pub fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..TRIES {
        if f() {
            return;
        }
        std::thread::sleep(POLL);
    }
    panic!("timed out waiting for {what}");
}

impl Node {
    /// Starts redis-server on `self.port`; false when it exited (the port was taken).
    fn spawn(&mut self) -> bool {
        let log = self.dir.path().join("redis.log");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
            ])
            .args([
                "--cluster-node-timeout",
                &self.node_timeout_ms.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(&log)
            .args(["--daemonize", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run redis-server (Debian package redis-server; scripts/setup.sh installs it)");
        self.child = Some(child);
        let port = self.port;
        let dir = self.dir.path().to_string_lossy().into_owned();
        let mut exited = false;
        let child = &mut self.child;
        wait_for(
            &format!("redis-server on port {port} to answer PING"),
            || {
                if let Some(c) = child.as_mut() {
                    if let Ok(Some(_)) = c.try_wait() {
                        exited = true;
                        return true;
                    }
                }
                // The node answering must be this one (its directory), not another test's.
                cli_text(port, &["PING"]).trim() == "PONG"
                    && cli_text(port, &["CONFIG", "GET", "dir"]).contains(&dir)
            },
        );
        if exited {
            self.child = None;
        }
        !exited
    }

    /// Its log file, for failure messages.
    pub fn log(&self) -> PathBuf {
        self.dir.path().join("redis.log")
    }
}

impl RedisCluster {
    /// Starts 6 nodes and creates the cluster (3 masters, 1 replica each), with a
    /// `cluster-node-timeout` of 1 s.
    pub fn start() -> RedisCluster {
        Self::start_with_node_timeout(1000)
    }

    /// [`start`](Self::start) with a `cluster-node-timeout` of `node_timeout_ms`.
    pub fn start_with_node_timeout(node_timeout_ms: u64) -> RedisCluster {
        let mut c = RedisCluster {
            nodes: Vec::new(),
            node_timeout_ms,
        };
        for _ in 0..6 {
            let mut n = Node {
                port: 0,
                child: None,
                dir: tempfile::tempdir().expect("temporary directory for redis"),
                node_timeout_ms,
            };
            // A port found free may be taken before redis binds it: try a few.
            let started = (0..5).any(|_| {
                n.port = free_port_pair();
                n.spawn()
            });
            assert!(
                started,
                "redis-server did not start (see {})",
                n.log().display()
            );
            c.nodes.push(n);
        }
        let addrs: Vec<String> = c
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .expect("run redis-cli --cluster create");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        c.wait_healthy();
        c
    }

    /// The seed list for `--redis`: every node, comma-separated.
    pub fn seeds(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("redis://127.0.0.1:{}", n.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The seed URLs.
    pub fn seed_urls(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|n| format!("redis://127.0.0.1:{}", n.port))
            .collect()
    }

    /// Ports of the running nodes.
    pub fn running(&self) -> Vec<u16> {
        self.nodes
            .iter()
            .filter(|n| n.child.is_some())
            .map(|n| n.port)
            .collect()
    }

    /// `role:master` or `role:slave` from `INFO replication`.
    pub fn role(&self, port: u16) -> String {
        let info = cli_text(port, &["INFO", "replication"]);
        info.lines()
            .find_map(|l| l.strip_prefix("role:"))
            .unwrap_or("")
            .trim()
            .to_string()
    }

    /// Ports of the running masters that serve slots.
    pub fn masters(&self) -> Vec<u16> {
        self.running()
            .into_iter()
            .filter(|&p| self.role(p) == "master" && self.slots_of(p) > 0)
            .collect()
    }

    /// How many slots the node at `port` serves (from its own `CLUSTER NODES` line).
    pub fn slots_of(&self, port: u16) -> usize {
        let nodes = cli_text(port, &["CLUSTER", "NODES"]);
        let Some(me) = nodes.lines().find(|l| l.contains("myself")) else {
            return 0;
        };
        me.split_whitespace()
            .skip(8)
            .filter(|r| !r.starts_with('['))
            .map(|r| match r.split_once('-') {
                Some((a, b)) => {
                    b.parse::<usize>().unwrap_or(0) + 1 - a.parse::<usize>().unwrap_or(0)
                }
                None => 1,
            })
            .sum()
    }

    /// The node id of the node at `port`.
    pub fn node_id(&self, port: u16) -> String {
        cli_text(port, &["CLUSTER", "MYID"]).trim().to_string()
    }

    /// The replica (port) of the master at `port`.
    pub fn replica_of(&self, master: u16) -> Option<u16> {
        let id = self.node_id(master);
        self.running().into_iter().find(|&p| {
            p != master && self.role(p) == "slave" && {
                let info = cli_text(p, &["CLUSTER", "NODES"]);
                info.lines()
                    .any(|l| l.contains("myself") && l.split_whitespace().nth(3) == Some(&id))
            }
        })
    }

    /// True when every running node says the cluster is ok with all slots, and every
    /// running replica's link to its master is up.
    pub fn healthy(&self) -> bool {
        self.running().into_iter().all(|p| {
            let info = cli_text(p, &["CLUSTER", "INFO"]);
            let ok = info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:16384");
            let repl = cli_text(p, &["INFO", "replication"]);
            ok && (repl.contains("role:master") || repl.contains("master_link_status:up"))
        })
    }

    /// Waits until [`healthy`](Self::healthy).
    pub fn wait_healthy(&self) {
        wait_for("the cluster to be ok on every node", || self.healthy());
    }

    /// SIGKILLs the node at `port` (no shutdown, nothing flushed).
    pub fn kill(&mut self, port: u16) {
        if let Some(n) = self.nodes.iter_mut().find(|n| n.port == port) {
            if let Some(mut c) = n.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to the node at `port` with kill(1).
    fn signal(&self, port: u16, signal: &str) {
        let pid = self
            .nodes
            .iter()
            .find(|n| n.port == port)
            .and_then(|n| n.child.as_ref())
            .map(|c| c.id())
            .unwrap_or_else(|| panic!("no running node on port {port}"));
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {pid}");
    }

    /// SIGSTOPs the node at `port`: it keeps its sockets (connections are accepted by the
    /// kernel) but answers nothing, a hung server.
    pub fn pause(&self, port: u16) {
        self.signal(port, "STOP");
    }

    /// SIGCONTs a node [`pause`](Self::pause)d.
    pub fn resume(&self, port: u16) {
        self.signal(port, "CONT");
    }

    /// The port of the master serving `slot`, as the node at `ask` sees it.
    pub fn master_of_slot(&self, ask: u16, slot: u16) -> Option<u16> {
        let nodes = cli_text(ask, &["CLUSTER", "NODES"]);
        nodes.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let master = f.get(2).is_some_and(|flags| flags.contains("master"));
            let serves = f.iter().skip(8).any(|r| match r.split_once('-') {
                Some((a, b)) => {
                    a.parse::<u16>().is_ok_and(|a| a <= slot)
                        && b.parse::<u16>().is_ok_and(|b| slot <= b)
                }
                None => r.parse::<u16>() == Ok(slot),
            });
            let port = f.get(1)?.split(['@', ':']).nth(1)?.parse().ok()?;
            (master && serves).then_some(port)
        })
    }

    /// Waits until every replica of the master at `port` has all of its writes (their
    /// offsets in its `INFO replication` equal its own).
    pub fn wait_replicated(&self, master: u16) {
        wait_for(&format!("the replicas of {master} to catch up"), || {
            let info = cli_text(master, &["INFO", "replication"]);
            let own = info
                .lines()
                .find_map(|l| l.strip_prefix("master_repl_offset:"))
                .map(|v| v.trim().to_string());
            let replicas: Vec<&str> = info
                .lines()
                .filter(|l| l.starts_with("slave") && l.contains("offset="))
                .collect();
            !replicas.is_empty()
                && replicas.iter().all(|l| {
                    l.split(',')
                        .find_map(|f| f.strip_prefix("offset="))
                        .map(str::trim)
                        == own.as_deref()
                })
        });
    }

    /// Starts the node at `port` again in its directory (its nodes.conf makes it rejoin).
    pub fn restart(&mut self, port: u16) {
        if let Some(n) = self.nodes.iter_mut().find(|n| n.port == port) {
            assert!(n.spawn(), "redis-server did not restart on port {port}");
        }
    }

    /// Moves `slots` slots from the master at `from` to the master at `to` with
    /// `redis-cli --cluster reshard` (keys and all), waiting for it to finish.
    pub fn reshard(&self, from: u16, to: u16, slots: usize) -> Output {
        Command::new("redis-cli")
            .arg("--cluster")
            .arg("reshard")
            .arg(format!("127.0.0.1:{from}"))
            .args(["--cluster-from", &self.node_id(from)])
            .args(["--cluster-to", &self.node_id(to)])
            .args(["--cluster-slots", &slots.to_string(), "--cluster-yes"])
            .args(["--cluster-pipeline", "100"])
            .stdin(Stdio::null())
            .output()
            .expect("run redis-cli --cluster reshard")
    }

    /// Keys matching `pattern` on the node at `port` (`--scan`).
    pub fn keys_on(&self, port: u16, pattern: &str) -> Vec<String> {
        cli_text(port, &["--scan", "--pattern", pattern])
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            if let Some(mut c) = n.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}
