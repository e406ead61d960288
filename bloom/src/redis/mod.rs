//! [`RedisBloomFilter`]: the scalable filter of `scalable.rs`, kept in Redis and shared by
//! any number of processes.
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
//! Round trips per batch of N keys:
//! - check: `HGET layers` (1), then one pipeline of `BITFIELD_RO key GET u1 p ...` per key
//!   and layer (1);
//! - add: one pipeline probing every known layer (1), a `reserve` script on the metadata
//!   that hands out room in the newest layer or opens the next one (1 or a few), a pipeline
//!   of `BITFIELD key SET u1 p 1 ...` per new key (1), `HINCRBY set:I` with the bits that
//!   flipped (1).
//!
//! Concurrency: layers are only ever added, and every check reads the layer count before
//! probing, so a key whose add finished before a check began is always found. The reserve
//! script is the only writer of `layers` and `count:I`; it runs atomically on the metadata's
//! slot. Setting a bit twice is harmless, so a batch that failed half-way is simply sent again.

use std::time::{SystemTime, UNIX_EPOCH};

use redis::{Connection, Script, Value};

mod meta;

use crate::error::{Error, Result};
use crate::format::{MAX_LAYERS, MAX_LAYER_FILL, REDIS_BITMAP_MAX_BITS, REDIS_FORMAT_VERSION};
use crate::hash::{layer_seed, KeyHash};
use crate::scalable::{compound_fp, LayerGeometry, LayerInfo, ScalableParams};
use meta::{connect, failed, field, meta_key, INIT_LUA, RESERVE_LUA};

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

/// A layer's place in Redis.
#[derive(Debug, Clone, Copy)]
struct RedisLayer {
    geometry: LayerGeometry,
    bitmaps: u64,
    bitmap_bits: u64,
}

/// A scalable bloom filter stored in Redis (see the layout at the top of `redis.rs`), shared
/// by every process that opens the same name on the same server.
pub struct RedisBloomFilter {
    con: Connection,
    name: String,
    params: ScalableParams,
    seed: u64,
    bitmap_max: u64,
    layers: u32,
    reserve: Script,
}

impl std::fmt::Debug for RedisBloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBloomFilter")
            .field("name", &self.name)
            .field("params", &self.params)
            .field("layers", &self.layers)
            .finish_non_exhaustive()
    }
}

impl RedisBloomFilter {
    /// Opens the filter `name` on the server at `url` (`redis://host:port/db`), creating it
    /// with `params` when it does not exist. Creation is atomic (a Lua script): of several
    /// processes opening at once, the first creates it and the others find it.
    ///
    /// # Errors
    /// [`Error::Redis`] when the server cannot be reached or answers with an error;
    /// [`Error::Mismatch`] when the filter exists with other parameters;
    /// [`Error::InvalidArgument`] for invalid parameters.
    pub fn create_or_open(url: &str, name: &str, params: ScalableParams) -> Result<Self> {
        params.validate()?;
        let mut con = connect(url)?;
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let seed = xxhash_rust::xxh3::xxh3_64(format!("{nonce}.{}", std::process::id()).as_bytes());
        let stored: Vec<Option<String>> = Script::new(INIT_LUA)
            .key(meta_key(name))
            .arg(REDIS_FORMAT_VERSION)
            .arg(params.capacity)
            .arg(params.fp_rate.to_string())
            .arg(params.growth)
            .arg(params.ratio.to_string())
            .arg(seed.to_string())
            .arg(REDIS_BITMAP_MAX_BITS)
            .invoke(&mut con)
            .map_err(failed("EVALSHA init"))?;
        let f = Self::from_stored(con, name, &stored)?;
        let mismatch = |field: &'static str, stored: String, requested: String| {
            Err(Error::Mismatch {
                name: name.to_string(),
                field,
                stored,
                requested,
            })
        };
        if f.params.capacity != params.capacity {
            return mismatch(
                "capacity",
                f.params.capacity.to_string(),
                params.capacity.to_string(),
            );
        }
        if f.params.fp_rate != params.fp_rate {
            return mismatch(
                "fp_rate",
                f.params.fp_rate.to_string(),
                params.fp_rate.to_string(),
            );
        }
        if f.params.growth != params.growth {
            return mismatch(
                "growth",
                f.params.growth.to_string(),
                params.growth.to_string(),
            );
        }
        if f.params.ratio != params.ratio {
            return mismatch(
                "ratio",
                f.params.ratio.to_string(),
                params.ratio.to_string(),
            );
        }
        Ok(f)
    }

    /// Opens an existing filter `name`, with the parameters it was created with.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is none; [`Error::Redis`] as for
    /// [`create_or_open`](Self::create_or_open).
    pub fn open(url: &str, name: &str) -> Result<Self> {
        let mut con = connect(url)?;
        let stored: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(meta_key(name))
            .arg(&[
                "version",
                "capacity",
                "fp_rate",
                "growth",
                "ratio",
                "seed",
                "bitmap_bits",
                "layers",
            ])
            .query(&mut con)
            .map_err(failed("HMGET"))?;
        if stored.iter().all(Option::is_none) {
            return Err(Error::NotFound {
                name: name.to_string(),
            });
        }
        Self::from_stored(con, name, &stored)
    }

    fn from_stored(con: Connection, name: &str, stored: &[Option<String>]) -> Result<Self> {
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
        Ok(RedisBloomFilter {
            con,
            name: name.to_string(),
            params,
            seed,
            bitmap_max,
            layers,
            reserve: Script::new(RESERVE_LUA),
        })
    }

    /// The filter's parameters.
    pub fn params(&self) -> ScalableParams {
        self.params
    }

    /// The filter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn layer(&self, i: u32) -> RedisLayer {
        let g = self.params.layer(i);
        let bitmaps = g.bits.div_ceil(self.bitmap_max).max(1);
        // Equal bitmaps, whole bytes, together just over the layer's bits.
        let bitmap_bits = g.bits.div_ceil(bitmaps).div_ceil(8) * 8;
        RedisLayer {
            geometry: LayerGeometry {
                bits: bitmaps * bitmap_bits,
                ..g
            },
            bitmaps,
            bitmap_bits,
        }
    }

    fn bitmap_key(&self, layer: u32, bitmap: u64) -> String {
        format!("bloom:{}:{layer}:{bitmap}", self.name)
    }

    /// Where `key`'s bits are in layer `layer`: the bitmap's Redis key and the k bit offsets.
    pub fn bit_locations(&self, key: &[u8], layer: u32) -> (String, Vec<u64>) {
        let l = self.layer(layer);
        let h = KeyHash::new(key, layer_seed(self.seed, layer));
        let bitmap = h.pick(l.bitmaps);
        let bits = (0..l.geometry.k).map(|j| h.bit(j, l.bitmap_bits)).collect();
        (self.bitmap_key(layer, bitmap), bits)
    }

    /// One `BITFIELD` (or `BITFIELD_RO`) command on `key`'s bitmap in `layer`.
    fn bitfield(&self, key: &[u8], layer: u32, set: bool) -> redis::Cmd {
        let (bitmap, bits) = self.bit_locations(key, layer);
        let mut cmd = redis::cmd(if set { "BITFIELD" } else { "BITFIELD_RO" });
        cmd.arg(bitmap);
        if set {
            // Adding 0 to the bitmap's last bit changes nothing, but makes Redis create the
            // bitmap at its full size at once (growing it bit by bit would over-allocate).
            let last = self.layer(layer).bitmap_bits - 1;
            cmd.arg("INCRBY").arg("u1").arg(last).arg(0);
        }
        for b in bits {
            if set {
                cmd.arg("SET").arg("u1").arg(b).arg(1);
            } else {
                cmd.arg("GET").arg("u1").arg(b);
            }
        }
        cmd
    }

    /// For each key, whether some layer of the first `layers` has all its bits set.
    fn probe(&mut self, keys: &[&[u8]], layers: u32) -> Result<Vec<bool>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for key in keys {
            for l in 0..layers {
                pipe.add_command(self.bitfield(key, l, false));
            }
        }
        let replies: Vec<Vec<i64>> = pipe.query(&mut self.con).map_err(failed("BITFIELD_RO"))?;
        let per_key = layers.max(1) as usize;
        Ok(keys
            .iter()
            .enumerate()
            .map(|(i, _)| {
                replies
                    .iter()
                    .skip(i * per_key)
                    .take(per_key)
                    .any(|bits| !bits.is_empty() && bits.iter().all(|&b| b == 1))
            })
            .collect())
    }

    /// Reads the current layer count.
    fn refresh_layers(&mut self) -> Result<u32> {
        let layers: Option<u32> = redis::cmd("HGET")
            .arg(meta_key(&self.name))
            .arg("layers")
            .query(&mut self.con)
            .map_err(failed("HGET"))?;
        let layers = layers.ok_or_else(|| Error::NotFound {
            name: self.name.clone(),
        })?;
        self.layers = layers.clamp(1, MAX_LAYERS);
        Ok(self.layers)
    }

    /// Whether each key may have been added, in order (two round trips for the batch).
    ///
    /// # Errors
    /// [`Error::Redis`] naming the failed command; the batch can be sent again.
    pub fn check(&mut self, keys: &[&[u8]]) -> Result<Vec<bool>> {
        let layers = self.refresh_layers()?;
        self.probe(keys, layers)
    }

    /// Adds a batch of keys: keys already answered "maybe" are left alone, the others go to
    /// the newest layer (opening layers as they fill up).
    ///
    /// # Errors
    /// [`Error::Redis`] naming the failed command. Adds are idempotent: after an error the
    /// same batch can be sent again, and every key is then in the filter.
    pub fn add(&mut self, keys: &[&[u8]]) -> Result<RedisAddSummary> {
        let known = self.layers;
        let present = self.probe(keys, known)?;
        let mut seen = std::collections::HashSet::new();
        let mut todo: Vec<&[u8]> = keys
            .iter()
            .zip(&present)
            .filter(|(k, &p)| !p && seen.insert(**k))
            .map(|(k, _)| *k)
            .collect();
        let added = todo.len() as u64;
        let meta = meta_key(&self.name);
        // Each pass either grants room (and writes at least one key) or sees one more layer.
        let mut passes = 0u64;
        while !todo.is_empty() {
            passes += 1;
            if passes > keys.len() as u64 + u64::from(MAX_LAYERS) + 1 {
                return Err(Error::Redis {
                    command: "EVALSHA reserve".into(),
                    node: None,
                    detail: "no room granted after repeated tries".into(),
                });
            }
            let top = self.layers - 1;
            let l = self.layer(top);
            let max_set = (l.geometry.bits as f64 * MAX_LAYER_FILL) as u64;
            let (layers, grant): (u32, u64) = self
                .reserve
                .key(&meta)
                .arg(top)
                .arg(l.geometry.capacity)
                .arg(max_set)
                .arg(todo.len() as u64)
                .arg(MAX_LAYERS)
                .invoke(&mut self.con)
                .map_err(failed("EVALSHA reserve"))?;
            self.layers = layers.clamp(1, MAX_LAYERS);
            if grant == 0 {
                continue;
            }
            let n = (grant as usize).min(todo.len());
            let batch: Vec<&[u8]> = todo.drain(..n).collect();
            let mut pipe = redis::pipe();
            for key in &batch {
                pipe.add_command(self.bitfield(key, top, true));
            }
            let old: Vec<Vec<i64>> = pipe.query(&mut self.con).map_err(failed("BITFIELD"))?;
            // Each reply: the last bit (from the INCRBY 0), then the old value of each bit.
            let flipped = old
                .iter()
                .flat_map(|r| r.iter().skip(1))
                .filter(|&&b| b == 0)
                .count() as u64;
            redis::cmd("HINCRBY")
                .arg(&meta)
                .arg(format!("set:{top}"))
                .arg(flipped)
                .query::<i64>(&mut self.con)
                .map_err(failed("HINCRBY"))?;
        }
        Ok(RedisAddSummary {
            keys: keys.len() as u64,
            added,
            present: keys.len() as u64 - added,
            layers: self.layers,
        })
    }

    /// The layers, oldest first: keys reserved in each and bits set (counted with
    /// `BITCOUNT` over its bitmaps).
    ///
    /// # Errors
    /// [`Error::Redis`] naming the failed command.
    pub fn layers(&mut self) -> Result<Vec<LayerInfo>> {
        let layers = self.refresh_layers()?;
        let meta = meta_key(&self.name);
        let mut pipe = redis::pipe();
        for i in 0..layers {
            pipe.cmd("HGET").arg(&meta).arg(format!("count:{i}"));
            for b in 0..self.layer(i).bitmaps {
                pipe.cmd("BITCOUNT").arg(self.bitmap_key(i, b));
            }
        }
        let replies: Vec<Value> = pipe.query(&mut self.con).map_err(failed("BITCOUNT"))?;
        let mut replies = replies.into_iter();
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
        let mut pipe = redis::pipe();
        pipe.cmd("MEMORY")
            .arg("USAGE")
            .arg(meta_key(&self.name))
            .arg("SAMPLES")
            .arg(0);
        for i in 0..layers {
            for b in 0..self.layer(i).bitmaps {
                pipe.cmd("MEMORY")
                    .arg("USAGE")
                    .arg(self.bitmap_key(i, b))
                    .arg("SAMPLES")
                    .arg(0);
            }
        }
        let sizes: Vec<Option<u64>> = pipe.query(&mut self.con).map_err(failed("MEMORY USAGE"))?;
        Ok(sizes.into_iter().flatten().sum())
    }
}
