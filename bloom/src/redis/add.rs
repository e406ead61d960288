//! Adding keys (probe, reserve, set, count), the replicas mode's `WAIT`s, and the reports
//! (`layers`, `memory_usage`) of a [`RedisBloomFilter`].

use std::collections::HashSet;
use std::time::{Duration, Instant};

use redis::Value;

use super::bits::{Many, Set};
use super::dense::{OrWhole, Plan, Step};
use super::encode;
use super::pipe::Batch;
use super::{expired, wait_ms, Durability, RedisAddSummary, RedisBloomFilter, RESERVE_LUA};
use crate::error::{Error, Result};
use crate::format::{MAX_LAYERS, MAX_LAYER_FILL};
use crate::scalable::{compound_fp, LayerInfo};

/// Pause before writing again after a connection changed under a `WAIT`.
const REDO_PAUSE: Duration = Duration::from_millis(50);

impl RedisBloomFilter {
    /// Adds a batch of keys: keys already answered "maybe" are left alone, the others go to
    /// the newest layer (opening layers as they fill up). Returns once the masters (and, with
    /// [`Durability::Replicas`], their replicas) acknowledged every write.
    ///
    /// # Errors
    /// [`Error::AddStopped`], saying how many of the batch's keys were acknowledged before
    /// it stopped, with the cause as its source: [`Error::Redis`] naming the failed command
    /// once retries ran out, or [`Error::NotReplicated`] when replicas fell short in the
    /// replicas mode. Adds are idempotent: after an error the same batch can be sent again.
    pub fn add(&mut self, keys: &[&[u8]]) -> Result<RedisAddSummary> {
        let mut seen = HashSet::with_capacity(keys.len());
        let mut todo: Vec<&[u8]> = keys.iter().copied().filter(|k| seen.insert(*k)).collect();
        let mut writing = Vec::new();
        match self.add_distinct(&mut todo, &mut writing) {
            Ok(added) => Ok(RedisAddSummary {
                keys: keys.len() as u64,
                added,
                present: keys.len() as u64 - added,
                layers: self.layers,
            }),
            Err(e) => {
                // Acknowledged: every key no longer waiting and not in the step that failed.
                let pending: HashSet<&[u8]> = todo.iter().chain(&writing).copied().collect();
                let acknowledged = keys.iter().filter(|k| !pending.contains(*k)).count();
                Err(Error::AddStopped {
                    acknowledged: acknowledged as u64,
                    keys: keys.len() as u64,
                    source: Box::new(e),
                })
            }
        }
    }

    /// Adds the distinct keys `todo`, taking them out as they are acknowledged; the keys
    /// being written are in `writing` until they are. Returns how many were added.
    fn add_distinct<'k>(
        &mut self,
        todo: &mut Vec<&'k [u8]>,
        writing: &mut Vec<&'k [u8]>,
    ) -> Result<u64> {
        let total = todo.len() as u64;
        // Every key left in `todo` was probed in the layers below `probed`; the newest layer
        // is probed by the write itself (BITFIELD SET returns the old bits: a key whose bits
        // were all set was there, and nothing changed).
        let mut probed = 0u32;
        let mut added = 0u64;
        let mut found = Vec::new();
        // Each pass either grants room (and writes at least one key) or sees one more layer.
        let mut passes = 0u64;
        while !todo.is_empty() {
            passes += 1;
            if passes > total + u64::from(MAX_LAYERS) + 1 {
                return Err(Error::Redis {
                    command: "EVAL reserve".into(),
                    node: None,
                    detail: "no room granted after repeated tries".into(),
                });
            }
            let top = self.layers - 1;
            if probed < top {
                // A key in an older layer is present: it is not added again.
                self.probe(todo, probed..top, &mut found)?;
                let mut answers = found.iter();
                todo.retain(|_| answers.next() != Some(&true));
                probed = top;
                if todo.is_empty() {
                    break;
                }
            }
            let (layers, grant) = self.reserve(top, todo.len() as u64)?;
            self.layers = layers.clamp(1, MAX_LAYERS);
            if grant == 0 {
                continue;
            }
            let n = (grant as usize).min(todo.len());
            writing.clear();
            writing.extend(todo.drain(..n));
            let (flipped, new) = self.set_bits(writing, top)?;
            let n = writing.len();
            // Written (and in the replicas mode replicated): acknowledged.
            writing.clear();
            added += new;
            // Give back the room of keys that were already in the layer; count the bits set.
            let meta = self.meta.clone();
            let (count_field, set_field) = (format!("count:{top}"), format!("set:{top}"));
            let unused = (new as i64 - n as i64).to_string();
            let flipped = flipped.to_string();
            let mut many = Many::new(true);
            for (field, by) in [(&count_field, &unused), (&set_field, &flipped)] {
                many.push(
                    meta.as_bytes(),
                    &[b"HINCRBY", meta.as_bytes(), field.as_bytes(), by.as_bytes()],
                );
            }
            self.pipe
                .run(&mut self.topo, &mut many, "HINCRBY", self.opts.retry_for)?;
        }
        Ok(added)
    }

    /// Asks the reserve script for room for `want` keys in layer `top`: (layers, granted).
    /// In the replicas mode the grant (and a layer it opened) is replicated before it is used.
    fn reserve(&mut self, top: u32, want: u64) -> Result<(u32, u64)> {
        let l = self.layer(top);
        let max_set = (l.geometry.bits as f64 * MAX_LAYER_FILL) as u64;
        let args = [
            top.to_string(),
            l.geometry.capacity.to_string(),
            max_set.to_string(),
            want.to_string(),
            MAX_LAYERS.to_string(),
        ];
        let mut out = (top + 1, 0);
        self.durably(|f| {
            let r = f.script(RESERVE_LUA, &args, "EVAL reserve")?;
            let num = |i: usize| r.get(i).cloned().flatten().and_then(|s| s.parse().ok());
            match (num(0), num(1)) {
                (Some(layers), Some(grant)) => {
                    out = (layers as u32, grant);
                    Ok(())
                }
                _ => Err(Error::Redis {
                    command: "EVAL reserve".into(),
                    node: None,
                    detail: format!("unexpected reply {r:?}"),
                }),
            }
        })?;
        Ok(out)
    }

    /// Sets the bits of `keys` in layer `top`; returns how many bits went from 0 to 1 and
    /// how many keys changed at least one (the others were already in the layer).
    fn set_bits(&mut self, keys: &[&[u8]], top: u32) -> Result<(u64, u64)> {
        self.ensure_cache(top + 1);
        let mut flipped = 0;
        let mut new = vec![false; keys.len()];
        self.durably(|f| {
            let RedisBloomFilter {
                pipe,
                topo,
                cache,
                opts,
                ..
            } = f;
            let Some(layer) = cache.get(top as usize) else {
                return Ok(());
            };
            // Bitmaps with many of the batch's keys are OR-ed whole; the rest key by key.
            let plan = Plan::new(layer, keys, Step::Add);
            let mut whole = OrWhole::new(layer, &plan, &mut new);
            if whole.len() > 0 {
                pipe.run(topo, &mut whole, "EVAL or", opts.retry_for)?;
            }
            flipped += whole.flipped;
            let items: Vec<u32> = (0..keys.len() as u32)
                .filter(|&i| !plan.is_whole(i as usize))
                .collect();
            if items.is_empty() {
                return Ok(());
            }
            let mut set = Set {
                keys,
                layer,
                items: &items,
                flipped: 0,
                new: &mut new,
            };
            pipe.run(topo, &mut set, "BITFIELD", opts.retry_for)?;
            flipped += set.flipped;
            Ok(())
        })?;
        Ok((flipped, new.iter().filter(|&&n| n).count() as u64))
    }

    /// Runs `step` (idempotent writes), then in the replicas mode `WAIT`s on every master it
    /// wrote to; a connection replaced in between (its writes may be on a dead master) makes
    /// the step run again, within the retry budget.
    fn durably(&mut self, mut step: impl FnMut(&mut Self) -> Result<()>) -> Result<()> {
        let Durability::Replicas { count, timeout } = self.opts.durability else {
            return step(self);
        };
        let start = Instant::now();
        loop {
            self.pipe.take_written();
            step(self)?;
            let written = self.pipe.take_written();
            match self.wait_replicas(&written, count, timeout)? {
                None => return Ok(()),
                Some(why) if expired(start, self.opts.retry_for) => {
                    return Err(Error::Redis {
                        command: "WAIT".into(),
                        node: None,
                        detail: format!("gave up after the retry budget: {why}"),
                    })
                }
                Some(_) => {
                    self.pipe.stats.rewritten += 1;
                    std::thread::sleep(REDO_PAUSE);
                    let _ = self.topo.refresh();
                }
            }
        }
    }

    /// `WAIT count timeout` on each written master. `Some(why)` when the writes must be sent
    /// again (a connection was replaced or lost, or the node is no longer a master).
    fn wait_replicas(
        &mut self,
        written: &[(usize, u64)],
        count: u32,
        timeout: Duration,
    ) -> Result<Option<String>> {
        let mut cmd = Vec::new();
        encode::array(&mut cmd, 3);
        encode::bulk(&mut cmd, b"WAIT");
        encode::bulk_u64(&mut cmd, u64::from(count));
        encode::bulk_u64(&mut cmd, wait_ms(timeout));
        for &(node, generation) in written {
            let addr = self.topo.nodes[node].addr.clone();
            if self.topo.nodes[node].generation != generation {
                return Ok(Some(format!("the connection to {addr} was replaced")));
            }
            // The server holds WAIT for up to its timeout: that is not silence.
            let reply = self
                .topo
                .send(node, &cmd)
                .and_then(|()| self.topo.recv_within(node, timeout));
            match reply {
                Ok(Value::Int(n)) if n >= i64::from(count) => {}
                Ok(Value::Int(n)) => {
                    return Err(Error::NotReplicated {
                        node: addr,
                        acked: n.max(0) as u64,
                        wanted: count,
                    })
                }
                Ok(other) => return Ok(Some(format!("WAIT on {addr} answered {other:?}"))),
                Err(e) => return Ok(Some(e.to_string())),
            }
        }
        Ok(None)
    }

    /// The layers, oldest first: keys reserved in each and bits set (counted with
    /// `BITCOUNT` over its bitmaps).
    ///
    /// # Errors
    /// [`Error::Redis`] naming the failed command.
    pub fn layers(&mut self) -> Result<Vec<LayerInfo>> {
        let layers = self.refresh_layers()?;
        let meta = self.meta.clone();
        let mut many = Many::new(false);
        for i in 0..layers {
            let count = format!("count:{i}");
            many.push(
                meta.as_bytes(),
                &[b"HGET", meta.as_bytes(), count.as_bytes()],
            );
            for b in 0..self.layer(i).bitmaps {
                let key = super::bitmap_key(&self.name, i, b);
                many.push(key.as_bytes(), &[b"BITCOUNT", key.as_bytes()]);
            }
        }
        self.pipe
            .run(&mut self.topo, &mut many, "BITCOUNT", self.opts.retry_for)?;
        let mut replies = many.replies.into_iter();
        let mut out = Vec::new();
        for i in 0..layers {
            let l = self.layer(i);
            let items: Option<u64> = replies
                .next()
                .and_then(|v| redis::from_redis_value(&v).ok());
            let mut bits_set = 0u64;
            for _ in 0..l.bitmaps {
                bits_set += replies
                    .next()
                    .and_then(|v| redis::from_redis_value::<u64>(&v).ok())
                    .unwrap_or(0);
            }
            out.push(LayerInfo {
                capacity: l.geometry.capacity,
                fp_rate: l.geometry.fp_rate,
                bits: l.geometry.bits,
                k: l.geometry.k,
                items: items.unwrap_or(0),
                bits_set,
            });
        }
        Ok(out)
    }

    /// Estimated compound false-positive rate from the layers' fill.
    ///
    /// # Errors
    /// As [`layers`](Self::layers).
    pub fn estimated_fp_rate(&mut self) -> Result<f64> {
        Ok(compound_fp(&self.layers()?))
    }

    /// Bytes Redis reports (`MEMORY USAGE`) for the metadata and every bitmap written.
    ///
    /// # Errors
    /// [`Error::Redis`] naming the failed command.
    pub fn memory_usage(&mut self) -> Result<u64> {
        let layers = self.refresh_layers()?;
        let mut keys = vec![self.meta.clone()];
        for i in 0..layers {
            for b in 0..self.layer(i).bitmaps {
                keys.push(super::bitmap_key(&self.name, i, b));
            }
        }
        let mut many = Many::new(false);
        for k in &keys {
            many.push(
                k.as_bytes(),
                &[b"MEMORY", b"USAGE", k.as_bytes(), b"SAMPLES", b"0"],
            );
        }
        // MEMORY USAGE names its key third: route by it.
        self.pipe.run(
            &mut self.topo,
            &mut many,
            "MEMORY USAGE",
            self.opts.retry_for,
        )?;
        Ok(many
            .replies
            .iter()
            .filter_map(|v| redis::from_redis_value::<Option<u64>>(v).ok().flatten())
            .sum())
    }
}
