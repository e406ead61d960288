//! Whole-bitmap steps. When a batch puts many keys on one bitmap, one command per key
//! (`BITFIELD`, 30-40 arguments the server parses one by one) costs the server far more than
//! moving the bitmap itself: the bitmap is then read whole (`GET`) and tested here, or the
//! batch's bits are OR-ed into it by one script that returns the old bitmap, from which the
//! keys' answers are worked out here exactly as `BITFIELD SET`'s old bits would give them.
//!
//! ```text
//! whole(bitmap) when keys_on_it * key_cost >= bitmap bytes, key_cost (bitmap bytes that
//!               cost as much time as one key's command, measured, see `Step::key_cost`):
//!               check 512 (k + 1), add 64 (k + 2): at k = 8 and 1 Mbit bitmaps, 29 and
//!               205 keys on a bitmap
//! check: GET bloom:NAME:I:B                      -> each key's k bits tested here
//! add:   EVAL OR_LUA 2 bloom:NAME:I:B {bloom:NAME:I:B}:or DELTA
//!          old = GET KEYS[1]; SET KEYS[2] DELTA PX 60000;
//!          BITOP OR KEYS[1] KEYS[1] KEYS[2]; DEL KEYS[2]; return old
//!        atomic on the bitmap's slot (KEYS[2] hashes to it through its hash tag); then the
//!        keys are replayed over `old` in batch order: a key is new when one of its bits
//!        was 0, and the bits that went from 0 to 1 are counted.
//! ```
//!
//! Bit p of a bitmap is bit 7 - p % 8 of byte p / 8, as `SETBIT`/`BITFIELD u1` number them.
//! Both steps are idempotent (reading; OR-ing the same bits again), so the pipeline engine
//! resends them as it resends the per-key commands.

use redis::Value;

use super::bits::LayerKeys;
use super::encode::{array, bulk};
use super::pipe::Batch;
use crate::hash::KeyHash;

/// OR-s ARGV[1] into KEYS[1] through the scratch key KEYS[2]; returns KEYS[1]'s old value.
const OR_LUA: &str = r"
local old = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1], 'PX', 60000)
redis.call('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
return old
";

/// What a batch does with a layer's bitmaps: the per-key and whole forms of the two steps
/// cost different amounts, so each has its own break-even.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// `BITFIELD_RO` per key, or `GET` of the bitmap.
    Check,
    /// `BITFIELD ... SET` per key, or the OR script on the bitmap.
    Add,
}

impl Step {
    /// The bitmap bytes whose whole step takes as long as one key's per-key command, for
    /// `k` probes a key.
    ///
    /// Measured on one local redis-server 7.0 (loopback, 1 Mbit bitmaps, k = 8; the library
    /// bench `redis_bloom_bench` with one batch of N keys, each path forced, median of 5;
    /// docs/bloom.md, "Whole bitmaps"): a per-key `BITFIELD_RO` costs 2.4 us of the batch's
    /// time and a bitmap's `GET` 70 us, so one key is worth about 4,500 bytes of `GET`; a
    /// per-key `BITFIELD SET` 3.3 us and a bitmap's OR script (a `GET`, a `SET` and a `BITOP`
    /// of it) 0.67 ms, about 650 bytes. The per-key commands grow with k (their arguments and
    /// replies), the bitmap steps do not.
    fn key_cost(self, k: u32) -> u64 {
        let k = u64::from(k);
        match self {
            Step::Check => 512 * (k + 1),
            Step::Add => 64 * (k + 2),
        }
    }
}

/// Where a batch's keys fall in one layer, and which bitmaps go whole.
pub(super) struct Plan {
    /// Each key's hash and bitmap.
    pub at: Vec<(KeyHash, u32)>,
    /// For each bitmap: its index among the whole ones, or `u32::MAX`.
    pub whole: Vec<u32>,
    /// The whole bitmaps, in index order, each with its keys in batch order.
    pub bitmaps: Vec<(u32, Vec<u32>)>,
}

impl Plan {
    /// Locates `keys` in `layer` for `step`.
    pub fn new(layer: &LayerKeys, keys: &[&[u8]], step: Step) -> Plan {
        let nb = layer.layer.bitmaps as usize;
        let mut count = vec![0u64; nb];
        let at: Vec<(KeyHash, u32)> = keys
            .iter()
            .map(|k| {
                let (h, b) = layer.locate(k);
                (h, b as u32)
            })
            .collect();
        for &(_, b) in &at {
            if let Some(c) = count.get_mut(b as usize) {
                *c += 1;
            }
        }
        let per_key = step.key_cost(layer.layer.geometry.k);
        let bytes = layer.layer.bitmap_bits / 8;
        let mut whole = vec![u32::MAX; nb];
        let mut bitmaps = Vec::new();
        for (b, &c) in count.iter().enumerate() {
            if c > 0 && c * per_key >= bytes {
                whole[b] = bitmaps.len() as u32;
                bitmaps.push((b as u32, Vec::with_capacity(c as usize)));
            }
        }
        for (i, &(_, b)) in at.iter().enumerate() {
            let w = whole.get(b as usize).copied().unwrap_or(u32::MAX);
            if w != u32::MAX {
                bitmaps[w as usize].1.push(i as u32);
            }
        }
        Plan { at, whole, bitmaps }
    }

    /// Whether key `i` is on a whole bitmap.
    pub fn is_whole(&self, i: usize) -> bool {
        let b = self.at.get(i).map_or(u32::MAX, |&(_, b)| b);
        self.whole.get(b as usize).is_some_and(|&w| w != u32::MAX)
    }
}

/// `GET` of the whole bitmaps of several layers; `found[key]` set for keys all of whose
/// bits are set in one of them.
pub(super) struct GetWhole<'a> {
    pub layers: &'a [LayerKeys],
    pub plans: &'a [Plan],
    /// (layer, index into that plan's `bitmaps`) per command.
    pub cmds: Vec<(u32, u32)>,
    pub found: &'a mut [bool],
}

impl GetWhole<'_> {
    pub fn new<'a>(
        layers: &'a [LayerKeys],
        plans: &'a [Plan],
        found: &'a mut [bool],
    ) -> GetWhole<'a> {
        let mut cmds = Vec::new();
        for (l, p) in plans.iter().enumerate() {
            cmds.extend((0..p.bitmaps.len()).map(|w| (l as u32, w as u32)));
        }
        GetWhole {
            layers,
            plans,
            cmds,
            found,
        }
    }
}

impl Batch for GetWhole<'_> {
    fn len(&self) -> usize {
        self.cmds.len()
    }
    fn encode(&mut self, i: usize, out: &mut Vec<u8>) -> u16 {
        let Some(&(l, w)) = self.cmds.get(i) else {
            return 0;
        };
        let (Some(layer), Some(plan)) = (self.layers.get(l as usize), self.plans.get(l as usize))
        else {
            return 0;
        };
        let b = plan.bitmaps.get(w as usize).map_or(0, |&(b, _)| b);
        let (name, slot) = layer.bitmap(b as usize);
        array(out, 2);
        bulk(out, b"GET");
        bulk(out, name);
        slot
    }
    fn reply(&mut self, i: usize, v: Value) -> std::result::Result<(), String> {
        let bytes = bitmap_bytes(&v)?;
        let Some(&(l, w)) = self.cmds.get(i) else {
            return Ok(());
        };
        let (Some(layer), Some(plan)) = (self.layers.get(l as usize), self.plans.get(l as usize))
        else {
            return Ok(());
        };
        let Some((_, keys)) = plan.bitmaps.get(w as usize) else {
            return Ok(());
        };
        for &k in keys {
            if let (Some((h, _)), Some(f)) =
                (plan.at.get(k as usize), self.found.get_mut(k as usize))
            {
                *f |= layer.all_set(h, bytes);
            }
        }
        Ok(())
    }
    fn writes(&self) -> bool {
        false
    }
}

/// The batch's bits OR-ed into the whole bitmaps of one layer (`OR_LUA`); `new[key]` when
/// the key changed a bit, `flipped` the bits that went from 0 to 1.
pub(super) struct OrWhole<'a> {
    pub layer: &'a LayerKeys,
    pub plan: &'a Plan,
    pub flipped: u64,
    pub new: &'a mut [bool],
    delta: Vec<u8>,
    scratch: Vec<u8>,
}

impl<'a> OrWhole<'a> {
    pub fn new(layer: &'a LayerKeys, plan: &'a Plan, new: &'a mut [bool]) -> OrWhole<'a> {
        OrWhole {
            layer,
            plan,
            flipped: 0,
            new,
            delta: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn size(&self) -> usize {
        (self.layer.layer.bitmap_bits / 8) as usize
    }
}

impl Batch for OrWhole<'_> {
    fn len(&self) -> usize {
        self.plan.bitmaps.len()
    }
    fn encode(&mut self, i: usize, out: &mut Vec<u8>) -> u16 {
        let Some((b, keys)) = self.plan.bitmaps.get(i) else {
            return 0;
        };
        self.delta.clear();
        self.delta.resize(self.size(), 0);
        for &k in keys {
            if let Some((h, _)) = self.plan.at.get(k as usize) {
                self.layer.set_all(h, &mut self.delta);
            }
        }
        let (name, slot) = self.layer.bitmap(*b as usize);
        self.scratch.clear();
        self.scratch.push(b'{');
        self.scratch.extend_from_slice(name);
        self.scratch.extend_from_slice(b"}:or");
        array(out, 6);
        bulk(out, b"EVAL");
        bulk(out, OR_LUA.as_bytes());
        bulk(out, b"2");
        bulk(out, name);
        bulk(out, &self.scratch);
        bulk(out, &self.delta);
        slot
    }
    fn reply(&mut self, i: usize, v: Value) -> std::result::Result<(), String> {
        let old = bitmap_bytes(&v)?;
        let Some((_, keys)) = self.plan.bitmaps.get(i) else {
            return Ok(());
        };
        // Replay the keys over the old bitmap, in batch order.
        self.delta.clear();
        self.delta.resize(self.size(), 0);
        let n = old.len().min(self.delta.len());
        self.delta[..n].copy_from_slice(&old[..n]);
        let before = ones(&self.delta);
        for &k in keys {
            if let (Some((h, _)), Some(new)) =
                (self.plan.at.get(k as usize), self.new.get_mut(k as usize))
            {
                *new |= self.layer.set_all(h, &mut self.delta);
            }
        }
        self.flipped += ones(&self.delta) - before;
        Ok(())
    }
    fn writes(&self) -> bool {
        true
    }
}

/// The bytes of a `GET` reply (nil: an empty bitmap).
fn bitmap_bytes(v: &Value) -> std::result::Result<&[u8], String> {
    match v {
        Value::BulkString(b) => Ok(b),
        Value::Nil => Ok(&[]),
        other => Err(format!("GET answered {other:?}")),
    }
}

/// Bits set in `bytes`.
fn ones(bytes: &[u8]) -> u64 {
    bytes.iter().map(|b| u64::from(b.count_ones())).sum()
}
