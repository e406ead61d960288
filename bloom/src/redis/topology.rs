//! Which server holds which key: one server (every slot is node 0), or a Redis Cluster's
//! slot map read with `CLUSTER SLOTS` and read again after `MOVED`, a failover or a lost
//! connection. One connection ([`Conn`]) per master, opened when first needed, and one
//! more, the control connection, only for `CLUSTER SLOTS`.
//!
//! ```text
//! slots[s]  = index into nodes of the master serving slot s (NO_NODE: unknown)
//! waiting   for a reply (or for the socket to take a command), every poll interval (0.5 s)
//!           of silence: past the I/O timeout, or the step's retry budget -> give up;
//!           on a cluster, read the map from the other nodes; if they name another master
//!           for every slot of this one (a failover) -> give up at once
//! give up   drop the connection, mark the node failed: the step resends its commands
//!           (idempotent) where the map says, and failed nodes are asked for the map last
//! ```
//!
//! So a hung master (SIGSTOP, a frozen VM) costs a step the cluster's failover time plus
//! up to one poll interval and one `CLUSTER SLOTS`, not the I/O timeout; a dead one (refused
//! connections) is retried until the map read from the other nodes names its replica.

use std::time::{Duration, Instant};

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, Value};

use super::conn::{server_error_text, Conn};
use super::servers::Servers;
use super::slots::{slot_ranges, SLOTS};
use crate::error::{Error, Result};

/// No known master for a slot.
pub(super) const NO_NODE: u16 = u16::MAX;
/// How long a read or write waits before the cluster is looked at again (at most).
const POLL: Duration = Duration::from_millis(500);
/// Longest a `CLUSTER SLOTS` (or its connection) may stay silent before the next node is
/// asked: a node that answers it in more than a second is not one to wait for.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(1);

/// One server and its connection.
pub(super) struct Node {
    /// `host:port`, for messages and to match `MOVED`/`ASK` targets.
    pub addr: String,
    host: String,
    port: u16,
    con: Option<Conn>,
    /// Bumped each time the connection is replaced: writes acknowledged on an older
    /// connection are not covered by a `WAIT` on the new one.
    pub generation: u64,
    /// When it last failed (refused, lost, silent, given up); cleared when it answers. Nodes
    /// that failed are asked for the slot map last.
    failed: Option<Instant>,
}

impl Clone for Node {
    /// The same server, without a connection.
    fn clone(&self) -> Node {
        Node {
            addr: self.addr.clone(),
            host: self.host.clone(),
            port: self.port,
            con: None,
            generation: 0,
            failed: self.failed,
        }
    }
}

/// The servers of a filter and where each slot is.
pub(super) struct Topology {
    template: ConnectionInfo,
    seeds: Vec<(String, u16)>,
    pub cluster: bool,
    pub nodes: Vec<Node>,
    slots: Vec<u16>,
    io_timeout: Duration,
    poll: Duration,
    /// The connection `CLUSTER SLOTS` is asked on, and its node: never a data connection,
    /// which may have replies in flight when the map is read during a wait.
    control: Option<(usize, Conn)>,
    /// When the running step's retry budget ends; waits end there too.
    pub deadline: Option<Instant>,
}

impl Clone for Topology {
    /// The same servers, slot map and failed nodes, without connections (each opened when
    /// first needed): no round trip.
    fn clone(&self) -> Topology {
        Topology {
            template: self.template.clone(),
            seeds: self.seeds.clone(),
            cluster: self.cluster,
            nodes: self.nodes.clone(),
            slots: self.slots.clone(),
            io_timeout: self.io_timeout,
            poll: self.poll,
            control: None,
            deadline: None,
        }
    }
}

fn redis_err(command: &str, node: Option<&str>, e: impl std::fmt::Display) -> Error {
    Error::Redis {
        command: command.to_string(),
        node: node.map(str::to_string),
        detail: e.to_string(),
    }
}

impl Topology {
    /// Parses the URLs; for a cluster, reads the slot map from the first seed that answers;
    /// for one server, connects and refuses a Redis Cluster node.
    pub fn new(servers: &Servers, io_timeout: Duration) -> Result<Topology> {
        let mut infos = Vec::new();
        for url in &servers.urls {
            let info = url
                .as_str()
                .into_connection_info()
                .map_err(|e| redis_err("connect", Some(url), e))?;
            let ConnectionAddr::Tcp(host, port) = &info.addr else {
                return Err(Error::InvalidArgument(format!(
                    "{url}: only redis://host:port servers are supported"
                )));
            };
            infos.push((host.clone(), *port, info.clone()));
        }
        let Some((_, _, template)) = infos.first().cloned() else {
            return Err(Error::InvalidArgument("no Redis server given".into()));
        };
        let mut t = Topology {
            template,
            seeds: infos.iter().map(|(h, p, _)| (h.clone(), *p)).collect(),
            cluster: servers.cluster,
            nodes: Vec::new(),
            slots: vec![NO_NODE; SLOTS],
            io_timeout,
            poll: POLL.min(io_timeout),
            control: None,
            deadline: None,
        };
        if t.cluster {
            t.refresh()?;
        } else {
            let (host, port) = t.seeds[0].clone();
            let node = t.node_index(&host, port);
            t.slots.fill(node);
            // Connect now, so that an unreachable server is reported by `open`, and a
            // cluster node given as one server at once.
            t.refuse_cluster_node()?;
        }
        Ok(t)
    }

    /// `INFO cluster` on the one server: `cluster_enabled:1` is [`Error::ClusterNode`]
    /// (its keys would be refused with `MOVED` one slot in three). A server that does not
    /// know `INFO` (a proxy) is taken as it is.
    fn refuse_cluster_node(&mut self) -> Result<()> {
        let mut cmd = Vec::new();
        super::encode::command(&mut cmd, &[b"INFO", b"cluster"]);
        self.send(0, &cmd)?;
        if let Value::BulkString(info) = self.recv(0)? {
            if info
                .split(|&b| b == b'\n')
                .any(|l| l.trim_ascii() == b"cluster_enabled:1")
            {
                return Err(Error::ClusterNode {
                    node: self.nodes[0].addr.clone(),
                    evidence: "INFO says cluster_enabled:1".into(),
                });
            }
        }
        Ok(())
    }

    /// The node serving `slot`, if known.
    pub fn node_of(&self, slot: u16) -> Option<usize> {
        if !self.cluster {
            return Some(0);
        }
        match self.slots.get(usize::from(slot)) {
            Some(&n) if n != NO_NODE => Some(usize::from(n)),
            _ => None,
        }
    }

    /// The node of `host:port`, added when new.
    pub fn node_index(&mut self, host: &str, port: u16) -> u16 {
        if let Some(i) = self
            .nodes
            .iter()
            .position(|n| n.port == port && n.host == host)
        {
            return i as u16;
        }
        self.nodes.push(Node {
            addr: format!("{host}:{port}"),
            host: host.to_string(),
            port,
            con: None,
            generation: 0,
            failed: None,
        });
        (self.nodes.len() - 1) as u16
    }

    /// The node named by a `MOVED`/`ASK` reply (`host:port`), added when new.
    pub fn node_by_addr(&mut self, addr: &str) -> Option<u16> {
        let (host, port) = addr.rsplit_once(':')?;
        let port = port.parse().ok()?;
        Some(self.node_index(host, port))
    }

    /// Records that `slot` is now served by `node` (after `MOVED`).
    pub fn set_slot(&mut self, slot: u16, node: u16) {
        if let Some(s) = self.slots.get_mut(usize::from(slot)) {
            *s = node;
        }
    }

    fn addr(&self, node: usize) -> Option<&str> {
        self.nodes.get(node).map(|n| n.addr.as_str())
    }

    fn mark_failed(&mut self, node: usize) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.failed = Some(Instant::now());
        }
    }

    /// The open connection to `node`, connecting (and authenticating) when there is none.
    pub fn connection(&mut self, node: usize) -> Result<&mut Conn> {
        let Some(n) = self.nodes.get(node) else {
            return Err(redis_err("connect", None, "no such node"));
        };
        if n.con.is_none() {
            let (host, port) = (n.host.clone(), n.port);
            let mut timeout = self.io_timeout;
            if let Some(d) = self.deadline {
                timeout = timeout.min(d.saturating_duration_since(Instant::now()).max(self.poll));
            }
            let mut con = Conn::open(&host, port, timeout, self.poll).map_err(|e| {
                self.mark_failed(node);
                redis_err("connect", self.addr(node), e)
            })?;
            for (what, cmd) in self.setup_commands(true) {
                self.exchange(node, &mut con, &what, &cmd)?;
            }
            let n = &mut self.nodes[node];
            n.generation += 1;
            n.con = Some(con);
        }
        self.nodes[node]
            .con
            .as_mut()
            .ok_or_else(|| redis_err("connect", None, "no connection"))
    }

    /// `AUTH [user] password` when the URL has a password; `SELECT db` (with `select`) when
    /// it names a database other than 0.
    fn setup_commands(&self, select: bool) -> Vec<(String, Vec<u8>)> {
        let info = &self.template.redis;
        let mut out = Vec::new();
        if let Some(password) = &info.password {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            if let Some(user) = &info.username {
                args.push(user.as_bytes());
            }
            args.push(password.as_bytes());
            let mut cmd = Vec::new();
            super::encode::command(&mut cmd, &args);
            out.push(("AUTH".to_string(), cmd));
        }
        if select && info.db != 0 {
            let db = info.db.to_string();
            let mut cmd = Vec::new();
            super::encode::command(&mut cmd, &[b"SELECT", db.as_bytes()]);
            out.push((format!("SELECT {db}"), cmd));
        }
        out
    }

    /// Sends one command on `con` (a connection to `node` being set up) and takes its
    /// reply, waiting as [`recv`](Self::recv) does; an error reply is an error naming `what`.
    fn exchange(&mut self, node: usize, con: &mut Conn, what: &str, cmd: &[u8]) -> Result<()> {
        let failed = |t: &mut Self, e: String| {
            t.mark_failed(node);
            redis_err(what, t.addr(node), e)
        };
        let (mut at, mut silent) = (0, Duration::ZERO);
        loop {
            match con.send_some(cmd, &mut at) {
                Ok(true) => break,
                Ok(false) => {
                    silent += self.poll;
                    self.keep_waiting(node, silent, Duration::ZERO)
                        .map_err(|e| failed(self, e))?;
                }
                Err(e) => return Err(failed(self, e.to_string())),
            }
        }
        silent = Duration::ZERO;
        loop {
            match con.recv() {
                Ok(Some(Value::ServerError(e))) => {
                    return Err(failed(self, server_error_text(e.code(), e.details())))
                }
                Ok(Some(_)) => return Ok(()),
                Ok(None) => {
                    silent += self.poll;
                    self.keep_waiting(node, silent, Duration::ZERO)
                        .map_err(|e| failed(self, e))?;
                }
                Err(e) => return Err(failed(self, e.to_string())),
            }
        }
    }

    /// Whether to go on waiting for `node`, silent for `silent`: not past the I/O timeout
    /// (plus `extra`, for a command that waits on the server, `WAIT`) nor the step's
    /// deadline, and, on a cluster, still serving slots in the map read again from the other
    /// nodes (a hung master is given up once its replica took over, not after the timeout).
    fn keep_waiting(
        &mut self,
        node: usize,
        silent: Duration,
        extra: Duration,
    ) -> std::result::Result<(), String> {
        if silent >= self.io_timeout + extra {
            return Err(format!(
                "no reply in {:.1} s (the I/O timeout)",
                silent.as_secs_f64()
            ));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(format!(
                "no reply in {:.1} s, and the retry budget ran out",
                silent.as_secs_f64()
            ));
        }
        if self.cluster && self.refresh_except(Some(node)).is_ok() && !self.serves_slots(node) {
            return Err(format!(
                "no reply in {:.1} s, and another node took over its slots (failover)",
                silent.as_secs_f64()
            ));
        }
        Ok(())
    }

    fn serves_slots(&self, node: usize) -> bool {
        self.slots.iter().any(|&n| usize::from(n) == node)
    }

    /// Sends packed commands to `node`; on failure the connection is dropped.
    pub fn send(&mut self, node: usize, bytes: &[u8]) -> Result<()> {
        let (mut at, mut silent) = (0, Duration::ZERO);
        loop {
            let sent = self
                .connection(node)?
                .send_some(bytes, &mut at)
                .map_err(|e| e.to_string());
            let waited = match sent {
                Ok(true) => return Ok(()),
                Ok(false) => {
                    silent += self.poll;
                    self.keep_waiting(node, silent, Duration::ZERO)
                }
                Err(e) => Err(e),
            };
            if let Err(e) = waited {
                self.drop_connection(node);
                self.mark_failed(node);
                return Err(redis_err("send", self.addr(node), e));
            }
        }
    }

    /// Reads one reply from `node`; on failure the connection is dropped.
    pub fn recv(&mut self, node: usize) -> Result<Value> {
        self.recv_within(node, Duration::ZERO)
    }

    /// [`recv`](Self::recv) for a command the server may hold for up to `extra` (`WAIT`).
    pub fn recv_within(&mut self, node: usize, extra: Duration) -> Result<Value> {
        let mut silent = Duration::ZERO;
        loop {
            let got = match self.nodes.get_mut(node).and_then(|n| n.con.as_mut()) {
                Some(con) => con.recv().map_err(|e| e.to_string()),
                None => Err("connection lost".to_string()),
            };
            let waited = match got {
                Ok(Some(v)) => {
                    self.nodes[node].failed = None;
                    return Ok(v);
                }
                Ok(None) => {
                    silent += self.poll;
                    self.keep_waiting(node, silent, extra)
                }
                Err(e) => Err(e),
            };
            if let Err(e) = waited {
                self.drop_connection(node);
                self.mark_failed(node);
                return Err(redis_err("read", self.addr(node), e));
            }
        }
    }

    /// Forgets `node`'s connection (after an error, or with replies left unread).
    pub fn drop_connection(&mut self, node: usize) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.con = None;
        }
    }

    /// Reads the slot map again (`CLUSTER SLOTS`) until one node answers. A no-op for one
    /// server.
    pub fn refresh(&mut self) -> Result<()> {
        self.refresh_except(None)
    }

    /// [`refresh`](Self::refresh) without asking `skip`. The node that answered last is
    /// asked first, then the seeds, then every node known; nodes that failed go last, the
    /// longest ago first, so a hung node is not asked (and waited for) again while another
    /// can answer. Asked on a connection of its own, with a short timeout.
    fn refresh_except(&mut self, skip: Option<usize>) -> Result<()> {
        if !self.cluster {
            return Ok(());
        }
        let mut order: Vec<usize> = self.control.iter().map(|(n, _)| *n).collect();
        for (host, port) in self.seeds.clone() {
            order.push(usize::from(self.node_index(&host, port)));
        }
        order.extend(0..self.nodes.len());
        let mut seen = vec![false; self.nodes.len()];
        order.retain(|&n| Some(n) != skip && !std::mem::replace(&mut seen[n], true));
        // Stable: the order above among nodes that did not fail.
        order.sort_by_key(|&n| self.nodes[n].failed);
        let mut last = String::from("no node to ask");
        for node in order {
            match self.ask_slots(node) {
                Ok(()) => {
                    self.nodes[node].failed = None;
                    return Ok(());
                }
                Err(e) => {
                    self.control = None;
                    self.mark_failed(node);
                    last = format!("{}: {e}", self.nodes[node].addr);
                }
            }
        }
        Err(redis_err("CLUSTER SLOTS", None, last))
    }

    /// `CLUSTER SLOTS` on `node` through the control connection (opened when it is on
    /// another node), and the map rebuilt from the reply.
    fn ask_slots(&mut self, node: usize) -> std::result::Result<(), String> {
        let limit = CONTROL_TIMEOUT.min(self.io_timeout);
        let mut con = match self.control.take() {
            Some((n, con)) if n == node => con,
            _ => {
                let n = &self.nodes[node];
                let mut con = Conn::open(&n.host, n.port, limit, self.poll)?;
                for (what, cmd) in self.setup_commands(false) {
                    con.query(&cmd, limit).map_err(|e| format!("{what}: {e}"))?;
                }
                con
            }
        };
        let mut cmd = Vec::new();
        super::encode::command(&mut cmd, &[b"CLUSTER", b"SLOTS"]);
        let reply = con.query(&cmd, limit)?;
        self.apply_slots(node, &reply).map_err(|e| e.to_string())?;
        self.control = Some((node, con));
        Ok(())
    }
    /// Rebuilds the slot map from a `CLUSTER SLOTS` reply given by `from`.
    fn apply_slots(&mut self, from: usize, v: &Value) -> Result<()> {
        let ranges = slot_ranges(v).map_err(|e| redis_err("CLUSTER SLOTS", None, e))?;
        let mut slots = vec![NO_NODE; SLOTS];
        for r in ranges {
            // An empty host means "the node you asked".
            let host = r.host.unwrap_or_else(|| self.nodes[from].host.clone());
            let node = self.node_index(&host, r.port);
            slots[usize::from(r.start)..=usize::from(r.end)].fill(node);
        }
        self.slots = slots;
        Ok(())
    }
}
