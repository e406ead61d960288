//! Which server holds which key: one server (every slot is node 0), or a Redis Cluster's
//! slot map read with `CLUSTER SLOTS` and read again after `MOVED`, a failover or a lost
//! connection. One connection ([`Conn`]) per master, opened when first needed.
//!
//! ```text
//! slot(key) = CRC16-XMODEM(tag or key) mod 16384, tag = the bytes between the first '{'
//!             and the next '}' when that is not empty (Redis Cluster's hash tags)
//! slots[s]  = index into nodes of the master serving slot s (NO_NODE: unknown)
//! ```

use std::time::Duration;

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, Value};

use super::conn::Conn;
use super::servers::Servers;
use crate::error::{Error, Result};

/// Hash slots of a Redis Cluster.
pub(super) const SLOTS: usize = 16384;
/// No known master for a slot.
pub(super) const NO_NODE: u16 = u16::MAX;

/// The slot of a Redis key (Redis Cluster's key-to-slot rule, hash tags included).
pub(super) fn key_slot(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        rest.iter()
            .position(|&b| b == b'}')
            .filter(|&close| close > 0)
            .map(|close| &rest[..close])
    });
    let hashed = tagged.unwrap_or(key);
    crc16::State::<crc16::XMODEM>::calculate(hashed) % SLOTS as u16
}

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
}

/// The servers of a filter and where each slot is.
pub(super) struct Topology {
    template: ConnectionInfo,
    seeds: Vec<(String, u16)>,
    pub cluster: bool,
    pub nodes: Vec<Node>,
    slots: Vec<u16>,
    io_timeout: Duration,
}

fn redis_err(command: &str, node: Option<&str>, e: impl std::fmt::Display) -> Error {
    Error::Redis {
        command: command.to_string(),
        node: node.map(str::to_string),
        detail: e.to_string(),
    }
}

impl Topology {
    /// Parses the URLs; for a cluster, reads the slot map from the first seed that answers.
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
        };
        if t.cluster {
            t.refresh()?;
        } else {
            let (host, port) = t.seeds[0].clone();
            let node = t.node_index(&host, port);
            t.slots.fill(node);
            // Connect now, so that an unreachable server is reported by `open`.
            t.connection(0)?;
        }
        Ok(t)
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

    /// The open connection to `node`, connecting when there is none.
    pub fn connection(&mut self, node: usize) -> Result<&mut Conn> {
        let n = self
            .nodes
            .get_mut(node)
            .ok_or_else(|| redis_err("connect", None, "no such node"))?;
        if n.con.is_none() {
            let con = Conn::open(&n.host, n.port, &self.template.redis, self.io_timeout)
                .map_err(|e| redis_err("connect", Some(&n.addr), e))?;
            n.generation += 1;
            n.con = Some(con);
        }
        n.con
            .as_mut()
            .ok_or_else(|| redis_err("connect", None, "no connection"))
    }

    /// Sends packed commands to `node`; on failure the connection is dropped.
    pub fn send(&mut self, node: usize, bytes: &[u8]) -> Result<()> {
        let sent = self
            .connection(node)?
            .send(bytes)
            .map_err(|e| e.to_string());
        sent.map_err(|e| {
            self.drop_connection(node);
            redis_err("send", self.nodes.get(node).map(|n| n.addr.as_str()), e)
        })
    }

    /// Reads one reply from `node`; on failure the connection is dropped.
    pub fn recv(&mut self, node: usize) -> Result<Value> {
        let got = match self.nodes.get_mut(node).and_then(|n| n.con.as_mut()) {
            Some(con) => con.recv().map_err(|e| e.to_string()),
            None => Err("connection lost".to_string()),
        };
        got.map_err(|e| {
            self.drop_connection(node);
            redis_err("read", self.nodes.get(node).map(|n| n.addr.as_str()), e)
        })
    }

    /// Forgets `node`'s connection (after an error, or with replies left unread).
    pub fn drop_connection(&mut self, node: usize) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.con = None;
        }
    }

    /// The masters serving at least one slot (a cluster), or the one server.
    pub fn masters(&self) -> Vec<usize> {
        let mut m: Vec<usize> = if self.cluster {
            self.slots
                .iter()
                .filter(|&&n| n != NO_NODE)
                .map(|&n| usize::from(n))
                .collect()
        } else {
            vec![0]
        };
        m.sort_unstable();
        m.dedup();
        m
    }

    /// Reads the slot map again (`CLUSTER SLOTS`), asking the known masters first and then
    /// the seeds, until one answers. A no-op for one server.
    pub fn refresh(&mut self) -> Result<()> {
        if !self.cluster {
            return Ok(());
        }
        let mut candidates: Vec<usize> = self.masters();
        for (host, port) in self.seeds.clone() {
            candidates.push(usize::from(self.node_index(&host, port)));
        }
        for i in 0..self.nodes.len() {
            candidates.push(i);
        }
        let mut last = String::from("no node to ask");
        let mut tried = Vec::new();
        for node in candidates {
            if tried.contains(&node) {
                continue;
            }
            tried.push(node);
            let reply = self.connection(node).and_then(|con| {
                con.query(redis::cmd("CLUSTER").arg("SLOTS"))
                    .map_err(|e| redis_err("CLUSTER SLOTS", None, e))
            });
            match reply.and_then(|v| self.apply_slots(node, &v)) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    self.drop_connection(node);
                    last = format!("{}: {e}", self.nodes[node].addr);
                }
            }
        }
        Err(redis_err("CLUSTER SLOTS", None, last))
    }

    /// Rebuilds the slot map from a `CLUSTER SLOTS` reply given by `from`.
    fn apply_slots(&mut self, from: usize, v: &Value) -> Result<()> {
        let bad = |what: &str| redis_err("CLUSTER SLOTS", None, what);
        let Value::Array(ranges) = v else {
            return Err(bad("the reply is not an array"));
        };
        let mut slots = vec![NO_NODE; SLOTS];
        for range in ranges {
            let Value::Array(fields) = range else {
                return Err(bad("a slot range is not an array"));
            };
            let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(master))) =
                (fields.first(), fields.get(1), fields.get(2))
            else {
                return Err(bad("a slot range without start, end and master"));
            };
            let host = match master.first() {
                Some(Value::BulkString(h)) if !h.is_empty() => {
                    String::from_utf8_lossy(h).into_owned()
                }
                // An empty host means "the node you asked".
                _ => self.nodes[from].host.clone(),
            };
            let Some(Value::Int(port)) = master.get(1) else {
                return Err(bad("a master without a port"));
            };
            let port = u16::try_from(*port).map_err(|_| bad("a port out of range"))?;
            let (start, end) = (*start, *end);
            if !(0 <= start && start <= end && end < SLOTS as i64) {
                return Err(bad("a slot range out of 0..16384"));
            }
            let node = self.node_index(&host, port);
            slots[start as usize..=end as usize].fill(node);
        }
        if slots.iter().all(|&n| n == NO_NODE) {
            return Err(bad("no slot is served"));
        }
        self.slots = slots;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::key_slot;

    #[test]
    fn slots_follow_redis_cluster() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(key_slot(b"123456789"), 0x31c3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"));
        assert_ne!(key_slot(b"foo{}{bar}"), key_slot(b"bar"));
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
    }
}
