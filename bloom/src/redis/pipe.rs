//! The batch engine: a step's commands grouped by the master that serves their key (one
//! pipeline per node), sent in windows so that the next window is on its way while the
//! replies to the last are read, and retried until they succeed or the retry budget is spent.
//!
//! ```text
//! window w:  encode each command into its node's buffer -> send every buffer
//!            -> read the replies of window w-1 from every node
//! reply      MOVED slot host:port   the slot map learns it; resent (and the map reread)
//!            ASK slot host:port     resent there once, after ASKING
//!            TRYAGAIN, CLUSTERDOWN, MASTERDOWN, LOADING, READONLY, a lost connection,
//!            a node silent for the I/O timeout or whose slots another node took over:
//!                                   resent after a pause (10 ms, doubling to 500 ms)
//!                                   with the slot map reread
//!            MOVED or ASK from one server (not a cluster): the step fails at once
//!            any other error        the step fails at once, naming the command and node
//! ```
//!
//! Every command the filter pipelines is idempotent (setting bits, reading bits), so a
//! command whose reply was lost is simply sent again.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use redis::Value;

use super::conn::server_error_text;
use super::encode;
use super::servers::RedisStats;
use super::topology::{Topology, NO_NODE};
use crate::error::{Error, Result};

/// Commands per window (per step, over all nodes).
const WINDOW: usize = 1024;
/// First and longest pause between retries.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_millis(500);

/// One step's commands.
pub(super) trait Batch {
    /// Number of commands.
    fn len(&self) -> usize;
    /// Writes command `i` (RESP) to `out`; returns the slot of its key.
    fn encode(&mut self, i: usize, out: &mut Vec<u8>) -> u16;
    /// Takes command `i`'s reply; `Err` says what is wrong with its shape.
    fn reply(&mut self, i: usize, v: Value) -> std::result::Result<(), String>;
    /// Whether the commands write (their nodes are waited for in the replicas mode).
    fn writes(&self) -> bool;
}

#[derive(Clone, Copy)]
struct Sent {
    idx: u32,
    asking: bool,
}

#[derive(Clone, Copy)]
struct Todo {
    idx: u32,
    /// The node an `ASK` sent it to, or `NO_NODE`.
    ask: u16,
}

#[derive(Default)]
struct Queue {
    out: Vec<u8>,
    sent: VecDeque<Sent>,
    windows: VecDeque<u32>,
    in_window: u32,
    /// Connection generation on which writes were acknowledged (0: none).
    written: u64,
}

/// Why a pass left commands to retry.
#[derive(Default)]
struct Pass {
    refresh: bool,
    pause: bool,
    last: Option<Error>,
}

/// Reusable buffers of the engine (nothing is allocated per command once they have grown).
#[derive(Default)]
pub(super) struct Pipe {
    queues: Vec<Queue>,
    scratch: Vec<u8>,
    todo: Vec<Todo>,
    retry: Vec<Todo>,
    /// What was met so far.
    pub stats: RedisStats,
}

impl Pipe {
    /// Runs every command of `batch` to success, retrying for at most `retry_for`.
    pub fn run(
        &mut self,
        topo: &mut Topology,
        batch: &mut dyn Batch,
        what: &str,
        retry_for: Duration,
    ) -> Result<()> {
        let start = Instant::now();
        topo.deadline = Some(start + retry_for);
        let r = self.run_until(topo, batch, what, start, retry_for);
        topo.deadline = None;
        r
    }

    fn run_until(
        &mut self,
        topo: &mut Topology,
        batch: &mut dyn Batch,
        what: &str,
        start: Instant,
        retry_for: Duration,
    ) -> Result<()> {
        let mut pause = FIRST_PAUSE;
        self.todo.clear();
        self.todo.extend((0..batch.len()).map(|i| Todo {
            idx: i as u32,
            ask: NO_NODE,
        }));
        loop {
            let mut pass = Pass::default();
            self.pass(topo, batch, what, &mut pass)?;
            if self.retry.is_empty() {
                return Ok(());
            }
            if start.elapsed() > retry_for {
                let last = pass.last.map_or(String::new(), |e| format!(": {e}"));
                return Err(Error::Redis {
                    command: what.to_string(),
                    node: None,
                    detail: format!(
                        "{} commands still failing after {:.1} s of retries{last}",
                        self.retry.len(),
                        retry_for.as_secs_f64()
                    ),
                });
            }
            if pass.pause {
                std::thread::sleep(pause);
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            if pass.refresh {
                // A failed refresh leaves the old map: the next pass fails and comes back.
                let _ = topo.refresh();
            }
            std::mem::swap(&mut self.todo, &mut self.retry);
            self.retry.clear();
        }
    }

    /// The nodes written since the last call, with the connection generation of the writes.
    pub fn take_written(&mut self) -> Vec<(usize, u64)> {
        let mut out = Vec::new();
        for (node, q) in self.queues.iter_mut().enumerate() {
            if q.written != 0 {
                out.push((node, q.written));
                q.written = 0;
            }
        }
        out
    }

    fn queue(&mut self, node: usize) -> &mut Queue {
        if self.queues.len() <= node {
            self.queues.resize_with(node + 1, Queue::default);
        }
        &mut self.queues[node]
    }

    /// One pass over `self.todo`; what must be sent again goes to `self.retry`.
    fn pass(
        &mut self,
        topo: &mut Topology,
        batch: &mut dyn Batch,
        what: &str,
        pass: &mut Pass,
    ) -> Result<()> {
        let todo = std::mem::take(&mut self.todo);
        let result = self.pass_inner(topo, batch, what, pass, &todo);
        self.todo = todo;
        if result.is_err() {
            // Replies left unread would be taken for the next step's: drop those connections.
            for (node, q) in self.queues.iter_mut().enumerate() {
                if !q.sent.is_empty() {
                    topo.drop_connection(node);
                }
                q.sent.clear();
                q.windows.clear();
                q.out.clear();
                q.in_window = 0;
            }
        }
        result
    }

    fn pass_inner(
        &mut self,
        topo: &mut Topology,
        batch: &mut dyn Batch,
        what: &str,
        pass: &mut Pass,
        todo: &[Todo],
    ) -> Result<()> {
        for chunk in todo.chunks(WINDOW) {
            for t in chunk {
                self.scratch.clear();
                let slot = batch.encode(t.idx as usize, &mut self.scratch);
                let node = if t.ask != NO_NODE {
                    Some(usize::from(t.ask))
                } else {
                    topo.node_of(slot)
                };
                let Some(node) = node else {
                    // A slot nobody serves (mid-failover): wait for the map to fill.
                    self.stats.retried += 1;
                    self.retry.push(*t);
                    pass.refresh = true;
                    pass.pause = true;
                    continue;
                };
                let scratch = std::mem::take(&mut self.scratch);
                let q = self.queue(node);
                if t.ask != NO_NODE {
                    encode::command(&mut q.out, &[b"ASKING"]);
                }
                q.out.extend_from_slice(&scratch);
                q.sent.push_back(Sent {
                    idx: t.idx,
                    asking: t.ask != NO_NODE,
                });
                q.in_window += 1;
                self.scratch = scratch;
            }
            for node in 0..self.queues.len() {
                let q = &mut self.queues[node];
                if q.in_window == 0 {
                    continue;
                }
                q.windows.push_back(q.in_window);
                q.in_window = 0;
                let sent = topo.send(node, &q.out);
                q.out.clear();
                if let Err(e) = sent {
                    self.lose_node(node, e, pass);
                }
            }
            for node in 0..self.queues.len() {
                while self.queues[node].windows.len() > 1 {
                    self.read_window(topo, batch, what, node, pass)?;
                }
            }
        }
        for node in 0..self.queues.len() {
            while !self.queues[node].windows.is_empty() {
                self.read_window(topo, batch, what, node, pass)?;
            }
        }
        Ok(())
    }

    /// A node's connection failed: everything sent to it is sent again.
    fn lose_node(&mut self, node: usize, e: Error, pass: &mut Pass) {
        let q = &mut self.queues[node];
        self.stats.retried += q.sent.len() as u64;
        self.retry.extend(q.sent.drain(..).map(|s| Todo {
            idx: s.idx,
            ask: NO_NODE,
        }));
        q.windows.clear();
        pass.refresh = true;
        pass.pause = true;
        pass.last = Some(e);
    }

    /// Reads the replies to `node`'s oldest window.
    fn read_window(
        &mut self,
        topo: &mut Topology,
        batch: &mut dyn Batch,
        what: &str,
        node: usize,
        pass: &mut Pass,
    ) -> Result<()> {
        let n = self.queues[node].windows.pop_front().unwrap_or(0);
        for _ in 0..n {
            let Some(s) = self.queues[node].sent.pop_front() else {
                break;
            };
            let reply = if s.asking {
                // ASKING's own +OK; an error here shows again in the command's reply.
                topo.recv(node).and_then(|_| topo.recv(node))
            } else {
                topo.recv(node)
            };
            if let Ok(Value::ServerError(e)) = &reply {
                let redo = Todo {
                    idx: s.idx,
                    ask: NO_NODE,
                };
                let target = e.details().and_then(|d| d.split(' ').nth(1));
                match e.code() {
                    // One server that is a cluster node: every retry would be refused too.
                    "MOVED" | "ASK" if !topo.cluster => {
                        return Err(Error::ClusterNode {
                            node: topo.nodes[node].addr.clone(),
                            evidence: format!(
                                "it answered {}",
                                server_error_text(e.code(), e.details())
                            ),
                        })
                    }
                    "MOVED" => {
                        let slot = e.details().and_then(|d| d.split(' ').next());
                        let slot = slot.and_then(|s| s.parse::<u16>().ok());
                        if let (Some(slot), Some(to)) = (slot, target) {
                            if let Some(to) = topo.node_by_addr(to) {
                                topo.set_slot(slot, to);
                            }
                        }
                        pass.refresh = true;
                        self.stats.moved += 1;
                        self.retry.push(redo);
                        continue;
                    }
                    "ASK" => {
                        self.stats.ask += 1;
                        let ask = target.and_then(|to| topo.node_by_addr(to));
                        self.retry.push(Todo {
                            ask: ask.unwrap_or(NO_NODE),
                            ..redo
                        });
                        continue;
                    }
                    "TRYAGAIN" | "CLUSTERDOWN" | "MASTERDOWN" | "LOADING" | "READONLY" => {
                        pass.refresh = true;
                        pass.pause = true;
                        pass.last = Some(Error::Redis {
                            command: what.to_string(),
                            node: Some(topo.nodes[node].addr.clone()),
                            detail: server_error_text(e.code(), e.details()),
                        });
                        self.stats.retried += 1;
                        self.retry.push(redo);
                        continue;
                    }
                    // Not retried: the step fails.
                    _ => {
                        return Err(Error::Redis {
                            command: what.to_string(),
                            node: Some(topo.nodes[node].addr.clone()),
                            detail: server_error_text(e.code(), e.details()),
                        })
                    }
                }
            }
            match reply {
                Ok(v) => {
                    batch
                        .reply(s.idx as usize, v)
                        .map_err(|detail| Error::Redis {
                            command: what.to_string(),
                            node: Some(topo.nodes[node].addr.clone()),
                            detail: format!("unexpected reply: {detail}"),
                        })?;
                    if batch.writes() {
                        self.queues[node].written = topo.nodes[node].generation;
                    }
                }
                Err(e) => {
                    // The connection is gone (topo dropped it): this and the rest are resent.
                    self.stats.retried += 1;
                    self.retry.push(Todo {
                        idx: s.idx,
                        ask: NO_NODE,
                    });
                    self.lose_node(node, e, pass);
                    break;
                }
            }
        }
        Ok(())
    }
}
