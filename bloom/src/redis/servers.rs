//! Where a [`RedisBloomFilter`](super::RedisBloomFilter) lives and how it behaves: the
//! servers (one, or the seed nodes of a Redis Cluster) and the options (durability, retry
//! budget, bitmap size).

use std::time::Duration;

use crate::error::{Error, Result};
use crate::format::REDIS_BITMAP_MAX_BITS;

/// The Redis servers holding a filter: one server, or seed nodes of a Redis Cluster (any
/// reachable one is enough; the others are found with `CLUSTER SLOTS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Servers {
    pub(crate) urls: Vec<String>,
    pub(crate) cluster: bool,
}

impl Servers {
    /// One server, `redis://host:port/db` (or a cluster proxy).
    pub fn single(url: &str) -> Servers {
        Servers {
            urls: vec![url.to_string()],
            cluster: false,
        }
    }

    /// The seed nodes of a Redis Cluster, `redis://host:port` each.
    pub fn cluster<S: Into<String>>(seeds: impl IntoIterator<Item = S>) -> Servers {
        Servers {
            urls: seeds.into_iter().map(Into::into).collect(),
            cluster: true,
        }
    }

    /// The `sst bloom` contract: `--redis` takes one URL or a comma-separated list of seed
    /// nodes, and `--cluster` says they form a Redis Cluster.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty list, an empty entry, or several URLs without
    /// `cluster`.
    pub fn parse(list: &str, cluster: bool) -> Result<Servers> {
        let urls: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
        if urls.iter().any(String::is_empty) {
            return Err(Error::InvalidArgument(format!(
                "--redis {list:?}: an empty server URL in the list"
            )));
        }
        if urls.len() > 1 && !cluster {
            return Err(Error::InvalidArgument(format!(
                "--redis lists {} servers: several seed nodes are a Redis Cluster (add --cluster)",
                urls.len()
            )));
        }
        Ok(Servers { urls, cluster })
    }

    /// The URLs as given.
    pub fn urls(&self) -> &[String] {
        &self.urls
    }

    /// Whether the servers form a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        self.cluster
    }
}

/// When [`RedisBloomFilter::add`](super::RedisBloomFilter::add) reports a batch added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// When every master that holds a written bitmap (and the metadata) has acknowledged the
    /// writes. Redis replicates asynchronously, so a master that fails over right after can
    /// take the latest writes with it: the promoted replica may miss keys reported added.
    #[default]
    Primary,
    /// Also wait (`WAIT replicas timeout`) until that many replicas of each of those masters
    /// acknowledged them; fewer in time is [`Error::NotReplicated`] and the batch is not
    /// reported added (sending it again is safe). A layer opened by the batch is waited for
    /// before any key is written into it.
    Replicas {
        /// Replicas each written master must reach.
        count: u32,
        /// Longest wait per master (Redis's `WAIT` timeout).
        timeout: Duration,
    },
}

/// How a [`RedisBloomFilter`](super::RedisBloomFilter) talks to Redis.
#[derive(Debug, Clone, PartialEq)]
pub struct RedisOptions {
    /// When an add is reported done (default [`Durability::Primary`]).
    pub durability: Durability,
    /// The retry budget: how long one step of a batch (a check's reads, an add's writes)
    /// keeps retrying through a failover, a resharding or a lost connection (`MOVED`/`ASK`
    /// are followed at once; `CLUSTERDOWN`, `TRYAGAIN`, `LOADING`, refused or lost
    /// connections, a node silent for `io_timeout` are retried with growing pauses, the slot
    /// map read again each time) before the error reaches the caller. A wait for a reply
    /// ends when it runs out, so a step returns within about this long. Default 60 s: a
    /// failover with Redis's default `cluster-node-timeout` of 15 s took 19-23 s here
    /// (docs/bloom.md), and an election that fails is tried again after twice the node
    /// timeout.
    pub retry_for: Duration,
    /// Largest bitmap of a new filter, in bits (a multiple of 8, at least 64; default 2^20).
    /// Smaller bitmaps spread a small filter over more cluster slots. Stored with the filter:
    /// opening an existing one uses its stored value.
    pub bitmap_bits: u64,
    /// The I/O timeout: the longest a connection may stay silent (no byte of a reply, or a
    /// command the socket does not take) before the node is given up and the commands
    /// resent; also the connect timeout (default 10 s). On a cluster a silent master is
    /// given up sooner, as soon as the other nodes name another master for its slots (the
    /// map is read from them every 0.5 s of silence), so riding a failover does not need a
    /// short timeout.
    pub io_timeout: Duration,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            durability: Durability::Primary,
            retry_for: Duration::from_secs(60),
            bitmap_bits: REDIS_BITMAP_MAX_BITS,
            io_timeout: Duration::from_secs(10),
        }
    }
}

impl RedisOptions {
    /// Checks the options.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a bitmap size that is not a multiple of 8 in
    /// `64..=2^32`, or a zero timeout.
    pub fn validate(&self) -> Result<()> {
        if !(64..=1 << 32).contains(&self.bitmap_bits) || self.bitmap_bits % 8 != 0 {
            return Err(Error::InvalidArgument(format!(
                "bitmap size {} bits is not a multiple of 8 in 64..=2^32",
                self.bitmap_bits
            )));
        }
        if self.io_timeout.is_zero() {
            return Err(Error::InvalidArgument("redis I/O timeout of 0".into()));
        }
        if let Durability::Replicas { timeout, .. } = self.durability {
            if timeout.is_zero() {
                return Err(Error::InvalidArgument(
                    "WAIT timeout of 0 (Redis would wait forever)".into(),
                ));
            }
        }
        Ok(())
    }
}

/// What a [`RedisBloomFilter`](super::RedisBloomFilter) met so far (for tests and tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RedisStats {
    /// `MOVED` replies followed (a slot served elsewhere: after resharding or a failover).
    pub moved: u64,
    /// `ASK` replies followed (a slot in the middle of a migration).
    pub ask: u64,
    /// Commands sent again after `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `READONLY`,
    /// `MASTERDOWN`, a slot without a master, or a lost connection.
    pub retried: u64,
    /// Steps (batches) run again because a connection changed before `WAIT` (replicas mode).
    pub rewritten: u64,
}
