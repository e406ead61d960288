//! [`RedisBloomFilter`]: the scalable filter of `scalable.rs`, kept in Redis (one server or a
//! Redis Cluster) and shared by any number of processes.
//!
//! ```text
//! bloom:{NAME}:meta   hash (hash tag: one slot), created once by a Lua script:
//!   version      format version (1)            capacity   first layer's keys
//!   fp_rate      target compound rate          growth     capacity factor per layer
//!   ratio        rate factor per layer         seed       hash seed (u64, decimal)
//!   bitmap_bits  largest bitmap, in bits       layers     number of layers (only grows)
//!   count:I      keys reserved in layer I      set:I      bits set in layer I (approximate)
//! bloom:NAME:I:B      string (bitmap) B of layer I; no hash tag, so bitmaps spread over slots
//!
//! layer I: capacity, rate, bits, k as scalable.rs; split into nb = ceil(bits / bitmap_bits)
//!          equal bitmaps of ceil(bits / nb) bits rounded up to whole bytes;
//!          (a, b) = XXH3-128(key, seed + I * 0x9e3779b97f4a7c15)
//! key:     bitmap B = pick(a, b) mod nb; its k bits (a + j*b) mod bitmap bits, j = 0..k,
//!          all in that one bitmap: one BITFIELD command per key and layer
//!          (adds also `INCRBY u1 <last bit> 0`, so a bitmap is created at its full size)
//! ```
//!
//! Steps per batch of N keys, each one pipeline per node (`pipe.rs`: grouped by the master
//! serving each bitmap's slot, sent in windows while the last window's replies are read).
//! A bitmap that holds many of the batch's keys is moved whole instead of one command per
//! key (`dense.rs`: `GET` for a check, an OR script that returns the old bits for an add);
//! the per-key commands are:
//! - check: `HGET layers`, then a `BITFIELD_RO key GET u1 p ...` per key and layer;
//! - add: a probe of the layers older than the newest (none while there is one); `EVAL
//!   reserve` on the metadata, which hands out room in the newest layer or opens the next one;
//!   a `BITFIELD key SET u1 p 1 ...` per key, whose reply (the old bits) says whether the key
//!   was already there; `HINCRBY count:I` giving back the room of those, `HINCRBY set:I` with
//!   the bits that flipped. With [`Durability::Replicas`], a `WAIT`
//!   on the metadata's master after each reserve and on every written master after the sets.
//!
//! Concurrency: layers are only ever added, and every check reads the layer count before
//! probing, so a key whose add finished before a check began is always found. The reserve
//! script is the only writer of `layers` and `count:I`; it runs atomically on the metadata's
//! slot. Setting a bit twice is harmless, so any command whose reply was lost is sent again.

mod add;
mod bits;
mod conn;
mod dense;
mod encode;
mod meta;
mod pipe;
mod servers;
mod slots;
mod topology;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::Value;

use crate::error::{Error, Result};
use crate::format::{MAX_LAYERS, REDIS_FORMAT_VERSION};
use crate::scalable::ScalableParams;
use bits::{bitmap_key, LayerKeys, Many, Probe, RedisLayer};
use conn::server_error_text;
use dense::{GetWhole, Plan, Step};
use meta::{field, meta_key, INIT_LUA, RESERVE_LUA};
use pipe::{Batch, Pipe};
use topology::Topology;

pub use servers::{Durability, RedisOptions, RedisStats, Servers};

/// What [`RedisBloomFilter::add`] did with a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RedisAddSummary {
    /// Keys in the batch.
    pub keys: u64,
    /// Keys written (not found in the filter before).
    pub added: u64,
    /// Keys the filter already answered "maybe" for (not written again).
    pub present: u64,
    /// Layers after the batch.
    pub layers: u32,
}

/// A scalable bloom filter stored in Redis (see the layout at the top of `redis/mod.rs`),
/// shared by every process that opens the same name on the same server or cluster.
pub struct RedisBloomFilter {
    topo: Topology,
    pipe: Pipe,
    name: String,
    meta: String,
    params: ScalableParams,
    seed: u64,
    bitmap_max: u64,
    layers: u32,
    opts: RedisOptions,
    cache: Vec<LayerKeys>,
}

impl Clone for RedisBloomFilter {
    /// Another handle on the same filter, with the same parameters, options and cluster
    /// map, and connections of its own (opened when first needed): no round trip, so a hung
    /// or dead node this handle already knows of is not asked again. Its
    /// [`stats`](Self::stats) start at zero.
    fn clone(&self) -> Self {
        RedisBloomFilter {
            topo: self.topo.clone(),
            pipe: Pipe::default(),
            name: self.name.clone(),
            meta: self.meta.clone(),
            params: self.params,
            seed: self.seed,
            bitmap_max: self.bitmap_max,
            layers: self.layers,
            opts: self.opts.clone(),
            cache: self.cache.clone(),
        }
    }
}

impl std::fmt::Debug for RedisBloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBloomFilter")
            .field("name", &self.name)
            .field("params", &self.params)
            .field("layers", &self.layers)
            .field("cluster", &self.topo.cluster)
            .finish_non_exhaustive()
    }
}

const FIELDS: [&str; 8] = [
    "version",
    "capacity",
    "fp_rate",
    "growth",
    "ratio",
    "seed",
    "bitmap_bits",
    "layers",
];

impl RedisBloomFilter {
    /// Opens the filter `name` on the server at `url` (`redis://host:port/db`), creating it
    /// with `params` when it does not exist: [`create_or_open_on`](Self::create_or_open_on)
    /// with one server and the default options.
    ///
    /// # Errors
    /// As [`create_or_open_on`](Self::create_or_open_on).
    pub fn create_or_open(url: &str, name: &str, params: ScalableParams) -> Result<Self> {
        Self::create_or_open_on(
            &Servers::single(url),
            name,
            params,
            &RedisOptions::default(),
        )
    }

    /// Opens an existing filter `name` on the server at `url`, with the parameters it was
    /// created with: [`open_on`](Self::open_on) with one server and the default options.
    ///
    /// # Errors
    /// As [`open_on`](Self::open_on).
    pub fn open(url: &str, name: &str) -> Result<Self> {
        Self::open_on(&Servers::single(url), name, &RedisOptions::default())
    }

    /// Opens the filter `name` on `servers`, creating it with `params` (and
    /// `opts.bitmap_bits`) when it does not exist. Creation is atomic (a Lua script): of
    /// several processes opening at once, the first creates it and the others find it.
    ///
    /// # Errors
    /// [`Error::Redis`] when no server can be reached or one answers with an error;
    /// [`Error::Mismatch`] when the filter exists with other parameters;
    /// [`Error::InvalidArgument`] for invalid parameters or options.
    pub fn create_or_open_on(
        servers: &Servers,
        name: &str,
        params: ScalableParams,
        opts: &RedisOptions,
    ) -> Result<Self> {
        params.validate()?;
        opts.validate()?;
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let seed = xxhash_rust::xxh3::xxh3_64(format!("{nonce}.{}", std::process::id()).as_bytes());
        let mut f = Self::connect(servers, name, opts)?;
        let args: Vec<String> = vec![
            REDIS_FORMAT_VERSION.to_string(),
            params.capacity.to_string(),
            params.fp_rate.to_string(),
            params.growth.to_string(),
            params.ratio.to_string(),
            seed.to_string(),
            opts.bitmap_bits.to_string(),
        ];
        let stored = f.script(INIT_LUA, &args, "EVAL init")?;
        f.adopt(&stored)?;
        let mismatch = |field: &'static str, stored: String, requested: String| {
            Err(Error::Mismatch {
                name: name.to_string(),
                field,
                stored,
                requested,
            })
        };
        let p = f.params;
        if p.capacity != params.capacity {
            return mismatch(
                "capacity",
                p.capacity.to_string(),
                params.capacity.to_string(),
            );
        }
        if p.fp_rate != params.fp_rate {
            return mismatch("fp_rate", p.fp_rate.to_string(), params.fp_rate.to_string());
        }
        if p.growth != params.growth {
            return mismatch("growth", p.growth.to_string(), params.growth.to_string());
        }
        if p.ratio != params.ratio {
            return mismatch("ratio", p.ratio.to_string(), params.ratio.to_string());
        }
        Ok(f)
    }

    /// Opens an existing filter `name` on `servers`, with the parameters it was created with.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is none; [`Error::Redis`] as for
    /// [`create_or_open_on`](Self::create_or_open_on).
    pub fn open_on(servers: &Servers, name: &str, opts: &RedisOptions) -> Result<Self> {
        opts.validate()?;
        let mut f = Self::connect(servers, name, opts)?;
        let meta = f.meta.clone();
        let mut args: Vec<&[u8]> = vec![b"HMGET", meta.as_bytes()];
        args.extend(FIELDS.iter().map(|s| s.as_bytes()));
        let stored = f.request(&args, "HMGET", false)?;
        let stored: Vec<Option<String>> = strings(&stored, "HMGET")?;
        if stored.iter().all(Option::is_none) {
            return Err(Error::NotFound {
                name: name.to_string(),
            });
        }
        f.adopt(&stored)?;
        Ok(f)
    }

    fn connect(servers: &Servers, name: &str, opts: &RedisOptions) -> Result<Self> {
        Ok(RedisBloomFilter {
            topo: Topology::new(servers, opts.io_timeout)?,
            pipe: Pipe::default(),
            name: name.to_string(),
            meta: meta_key(name),
            params: ScalableParams::default(),
            seed: 0,
            bitmap_max: opts.bitmap_bits,
            layers: 1,
            opts: opts.clone(),
            cache: Vec::new(),
        })
    }

    /// Takes the stored metadata fields (in `FIELDS` order).
    fn adopt(&mut self, stored: &[Option<String>]) -> Result<()> {
        let name = self.name.as_str();
        let get = |i: usize| stored.get(i).cloned().flatten();
        let version: u32 = field(&get(0), "version", name)?;
        if version != REDIS_FORMAT_VERSION {
            return Err(Error::Mismatch {
                name: name.to_string(),
                field: "format version",
                stored: version.to_string(),
                requested: REDIS_FORMAT_VERSION.to_string(),
            });
        }
        let params = ScalableParams {
            capacity: field(&get(1), "capacity", name)?,
            fp_rate: field(&get(2), "fp_rate", name)?,
            growth: field(&get(3), "growth", name)?,
            ratio: field(&get(4), "ratio", name)?,
        };
        let bad = |what: &str| Error::Redis {
            command: "HMGET".into(),
            node: None,
            detail: format!("bloom filter '{name}': stored {what} is out of range"),
        };
        params.validate().map_err(|_| bad("parameters"))?;
        let seed: u64 = field(&get(5), "seed", name)?;
        let bitmap_max: u64 = field(&get(6), "bitmap_bits", name)?;
        if !(64..=1 << 32).contains(&bitmap_max) || bitmap_max % 8 != 0 {
            return Err(bad("bitmap_bits"));
        }
        let layers: u32 = field(&get(7), "layers", name)?;
        if layers == 0 || layers > MAX_LAYERS {
            return Err(bad("layer count"));
        }
        (self.params, self.seed, self.bitmap_max, self.layers) = (params, seed, bitmap_max, layers);
        Ok(())
    }

    /// The filter's parameters.
    pub fn params(&self) -> ScalableParams {
        self.params
    }

    /// The filter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The largest bitmap of this filter, in bits (as stored when it was created).
    pub fn bitmap_bits(&self) -> u64 {
        self.bitmap_max
    }

    /// When adds are reported done.
    pub fn durability(&self) -> Durability {
        self.opts.durability
    }

    /// Redirections and retries met so far.
    pub fn stats(&self) -> RedisStats {
        self.pipe.stats
    }

    /// Whether the servers form a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        self.topo.cluster
    }

    /// Changes when adds are reported done (see [`Durability`]).
    pub fn set_durability(&mut self, d: Durability) {
        self.opts.durability = d;
    }

    fn layer(&self, i: u32) -> RedisLayer {
        RedisLayer::new(self.params.layer(i), self.bitmap_max)
    }

    fn ensure_cache(&mut self, layers: u32) {
        while (self.cache.len() as u32) < layers {
            let i = self.cache.len() as u32;
            let keys = LayerKeys::new(&self.name, i, self.layer(i), self.seed);
            self.cache.push(keys);
        }
    }

    /// Where `key`'s bits are in layer `layer`: the bitmap's Redis key and the k bit offsets.
    pub fn bit_locations(&self, key: &[u8], layer: u32) -> (String, Vec<u64>) {
        match self.cache.get(layer as usize) {
            Some(l) => l.bits_of(key),
            None => LayerKeys::new(&self.name, layer, self.layer(layer), self.seed).bits_of(key),
        }
    }

    /// One command, routed by its second argument (the key), retried as the pipelines are.
    fn request(&mut self, args: &[&[u8]], what: &str, writes: bool) -> Result<Value> {
        let mut many = Many::new(writes);
        many.push(args.get(1).copied().unwrap_or_default(), args);
        self.pipe
            .run(&mut self.topo, &mut many, what, self.opts.retry_for)?;
        let reply = many.replies.pop().unwrap_or(Value::Nil);
        match reply {
            Value::ServerError(e) => Err(Error::Redis {
                command: what.to_string(),
                node: None,
                detail: server_error_text(e.code(), e.details()),
            }),
            v => Ok(v),
        }
    }

    /// `EVAL script 1 meta args...` (always the text: a promoted replica runs it too).
    fn script(&mut self, lua: &str, args: &[String], what: &str) -> Result<Vec<Option<String>>> {
        let meta = self.meta.clone();
        let mut all: Vec<&[u8]> = vec![b"EVAL", lua.as_bytes(), b"1", meta.as_bytes()];
        all.extend(args.iter().map(|a| a.as_bytes()));
        // Route by the metadata key, not by the script text.
        let mut many = Many::new(true);
        many.push(meta.as_bytes(), &all);
        self.pipe
            .run(&mut self.topo, &mut many, what, self.opts.retry_for)?;
        let reply = many.replies.pop().unwrap_or(Value::Nil);
        if let Value::ServerError(e) = &reply {
            return Err(Error::Redis {
                command: what.to_string(),
                node: None,
                detail: server_error_text(e.code(), e.details()),
            });
        }
        strings(&reply, what)
    }

    /// Reads the current layer count.
    fn refresh_layers(&mut self) -> Result<u32> {
        let meta = self.meta.clone();
        let v = self.request(&[b"HGET", meta.as_bytes(), b"layers"], "HGET", false)?;
        let layers: Option<u32> = redis::from_redis_value(&v).map_err(|e| Error::Redis {
            command: "HGET".into(),
            node: None,
            detail: format!("layers: {e}"),
        })?;
        let layers = layers.ok_or_else(|| Error::NotFound {
            name: self.name.clone(),
        })?;
        self.layers = layers.clamp(1, MAX_LAYERS);
        Ok(self.layers)
    }

    /// For each key, whether some layer in `layers` has all its bits set.
    fn probe(
        &mut self,
        keys: &[&[u8]],
        layers: std::ops::Range<u32>,
        found: &mut Vec<bool>,
    ) -> Result<()> {
        self.ensure_cache(layers.end);
        found.clear();
        found.resize(keys.len(), false);
        let Self {
            pipe,
            topo,
            cache,
            opts,
            ..
        } = self;
        let end = (layers.end as usize).min(cache.len());
        let layers = &cache[(layers.start as usize).min(end)..end];
        // Bitmaps with many of the batch's keys are read whole; the rest key by key.
        let plans: Vec<Plan> = layers
            .iter()
            .map(|l| Plan::new(l, keys, Step::Check))
            .collect();
        let mut whole = GetWhole::new(layers, &plans, found);
        if whole.len() > 0 {
            pipe.run(topo, &mut whole, "GET", opts.retry_for)?;
        }
        let per = layers.len();
        let items: Vec<u32> = (0..keys.len() * per)
            .filter(|&i| !plans[i % per].is_whole(i / per))
            .map(|i| i as u32)
            .collect();
        if items.is_empty() {
            return Ok(());
        }
        let mut probe = Probe {
            keys,
            layers,
            items: &items,
            found,
        };
        pipe.run(topo, &mut probe, "BITFIELD_RO", opts.retry_for)
    }

    /// Whether each key may have been added, in order.
    ///
    /// # Errors
    /// [`Error::Redis`] naming the failed command, once retries through failovers and
    /// resharding ran out; the batch can be sent again.
    pub fn check(&mut self, keys: &[&[u8]]) -> Result<Vec<bool>> {
        let mut out = Vec::new();
        self.check_into(keys, &mut out)?;
        Ok(out)
    }

    /// [`check`](Self::check) into a reused vector (cleared first).
    ///
    /// # Errors
    /// As [`check`](Self::check).
    pub fn check_into(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) -> Result<()> {
        let layers = self.refresh_layers()?;
        self.probe(keys, 0..layers, out)
    }
}

/// A reply of bulk strings and nils, as strings.
fn strings(v: &Value, what: &str) -> Result<Vec<Option<String>>> {
    redis::from_redis_value(v).map_err(|e| Error::Redis {
        command: what.to_string(),
        node: None,
        detail: format!("unexpected reply: {e}"),
    })
}

/// `Duration` in whole milliseconds for `WAIT`, at least 1 (0 would wait forever).
fn wait_ms(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

/// Time left of a retry budget that started at `start`.
fn expired(start: Instant, budget: Duration) -> bool {
    start.elapsed() > budget
}
