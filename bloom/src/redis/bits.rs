//! The bitmaps of a layer and the pipelined commands on them: `BITFIELD_RO` to probe,
//! `BITFIELD` to set, and plain commands for the rest. Bitmap names and their slots are
//! computed once per layer, so encoding a key's command allocates nothing.

use redis::Value;

use super::encode::{array, bulk, bulk_u64};
use super::pipe::Batch;
use super::slots::key_slot;
use crate::hash::{layer_seed, KeyHash};

use crate::scalable::LayerGeometry;

/// A layer's size and how it is split into bitmaps.
#[derive(Debug, Clone, Copy)]
pub(super) struct RedisLayer {
    pub geometry: LayerGeometry,
    pub bitmaps: u64,
    pub bitmap_bits: u64,
}

impl RedisLayer {
    /// Layer geometry `g` split into equal bitmaps of at most `bitmap_max` bits, whole
    /// bytes each, together just over the layer's bits.
    pub fn new(g: LayerGeometry, bitmap_max: u64) -> RedisLayer {
        let bitmaps = g.bits.div_ceil(bitmap_max).max(1);
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
}

/// `bloom:NAME:I:B`, the Redis key of bitmap `B` of layer `I`.
pub(super) fn bitmap_key(name: &str, layer: u32, bitmap: u64) -> String {
    format!("bloom:{name}:{layer}:{bitmap}")
}

/// A layer with its bitmaps' names and slots.
#[derive(Clone)]
pub(super) struct LayerKeys {
    pub layer: RedisLayer,
    seed: u64,
    names: Vec<Box<[u8]>>,
    slots: Vec<u16>,
}

impl LayerKeys {
    pub fn new(name: &str, index: u32, layer: RedisLayer, filter_seed: u64) -> LayerKeys {
        let names: Vec<Box<[u8]>> = (0..layer.bitmaps)
            .map(|b| bitmap_key(name, index, b).into_bytes().into_boxed_slice())
            .collect();
        let slots = names.iter().map(|n| key_slot(n)).collect();
        LayerKeys {
            layer,
            seed: layer_seed(filter_seed, index),
            names,
            slots,
        }
    }

    /// The key's hash in this layer and its bitmap.
    pub fn locate(&self, key: &[u8]) -> (KeyHash, usize) {
        let h = KeyHash::new(key, self.seed);
        (h, h.pick(self.layer.bitmaps) as usize)
    }

    /// Bitmap `b`'s Redis key and slot.
    pub fn bitmap(&self, b: usize) -> (&[u8], u16) {
        let name = self.names.get(b).map_or(&[][..], |n| &n[..]);
        (name, self.slots.get(b).copied().unwrap_or(0))
    }

    /// Whether every bit of the key hashed `h` is set in `bitmap` (the bytes of a bitmap as
    /// `GET` returns them: bit p is bit 7 - p % 8 of byte p / 8, missing bytes are 0).
    pub fn all_set(&self, h: &KeyHash, bitmap: &[u8]) -> bool {
        (0..self.layer.geometry.k).all(|j| {
            let p = h.bit(j, self.layer.bitmap_bits);
            let byte = bitmap.get((p / 8) as usize).copied().unwrap_or(0);
            byte & (0x80 >> (p % 8)) != 0
        })
    }

    /// Sets the bits of the key hashed `h` in `bitmap` (whole-size); true when one was 0.
    pub fn set_all(&self, h: &KeyHash, bitmap: &mut [u8]) -> bool {
        let mut changed = false;
        for j in 0..self.layer.geometry.k {
            let p = h.bit(j, self.layer.bitmap_bits);
            if let Some(byte) = bitmap.get_mut((p / 8) as usize) {
                let mask = 0x80 >> (p % 8);
                changed |= *byte & mask == 0;
                *byte |= mask;
            }
        }
        changed
    }

    /// The bitmap's name and bit offsets for `key`.
    pub fn bits_of(&self, key: &[u8]) -> (String, Vec<u64>) {
        let (h, b) = self.locate(key);
        let name = self
            .names
            .get(b)
            .map(|n| String::from_utf8_lossy(n).into_owned());
        let bits = (0..self.layer.geometry.k)
            .map(|j| h.bit(j, self.layer.bitmap_bits))
            .collect();
        (name.unwrap_or_default(), bits)
    }

    /// Encodes `BITFIELD(_RO) bitmap ...` for `key`; returns the bitmap's slot.
    fn encode(&self, key: &[u8], set: bool, out: &mut Vec<u8>) -> u16 {
        let (h, b) = self.locate(key);
        let k = self.layer.geometry.k as usize;
        let name = self.names.get(b).map_or(&[][..], |n| &n[..]);
        if set {
            array(out, 6 + 4 * k);
            bulk(out, b"BITFIELD");
            bulk(out, name);
            // Adding 0 to the bitmap's last bit changes nothing, but makes Redis create the
            // bitmap at its full size at once (growing it bit by bit would over-allocate).
            bulk(out, b"INCRBY");
            bulk(out, b"u1");
            bulk_u64(out, self.layer.bitmap_bits - 1);
            bulk(out, b"0");
        } else {
            array(out, 2 + 3 * k);
            bulk(out, b"BITFIELD_RO");
            bulk(out, name);
        }
        for j in 0..self.layer.geometry.k {
            bulk(out, if set { b"SET" } else { b"GET" });
            bulk(out, b"u1");
            bulk_u64(out, h.bit(j, self.layer.bitmap_bits));
            if set {
                bulk(out, b"1");
            }
        }
        self.slots.get(b).copied().unwrap_or(0)
    }
}

/// The integers of a `BITFIELD` reply.
fn ints(v: &Value) -> std::result::Result<&[Value], String> {
    match v {
        Value::Array(items) if items.iter().all(|i| matches!(i, Value::Int(_))) => Ok(items),
        other => Err(format!("BITFIELD answered {other:?}")),
    }
}

/// Probes keys in layers: `found[key]` when some layer has all its bits set. `items` lists
/// the (key, layer) pairs to send, as `key * layers + layer`.
pub(super) struct Probe<'a> {
    pub keys: &'a [&'a [u8]],
    pub layers: &'a [LayerKeys],
    pub items: &'a [u32],
    pub found: &'a mut [bool],
}

impl Batch for Probe<'_> {
    fn len(&self) -> usize {
        self.items.len()
    }
    fn encode(&mut self, i: usize, out: &mut Vec<u8>) -> u16 {
        let i = self.items.get(i).map_or(usize::MAX, |&i| i as usize);
        let per = self.layers.len().max(1);
        match (self.keys.get(i / per), self.layers.get(i % per)) {
            (Some(key), Some(l)) => l.encode(key, false, out),
            _ => 0,
        }
    }
    fn reply(&mut self, i: usize, v: Value) -> std::result::Result<(), String> {
        let i = self.items.get(i).map_or(usize::MAX, |&i| i as usize);
        let items = ints(&v)?;
        if !items.is_empty() && items.iter().all(|b| matches!(b, Value::Int(1))) {
            if let Some(f) = self.found.get_mut(i / self.layers.len().max(1)) {
                *f = true;
            }
        }
        Ok(())
    }
    fn writes(&self) -> bool {
        false
    }
}

/// Sets keys' bits in one layer, counting the bits that went from 0 to 1; `new[i]` when key
/// `i` changed a bit (it was not in the layer before), kept across repeated runs. `items`
/// lists the keys to send.
pub(super) struct Set<'a> {
    pub keys: &'a [&'a [u8]],
    pub layer: &'a LayerKeys,
    pub items: &'a [u32],
    pub flipped: u64,
    pub new: &'a mut [bool],
}

impl Batch for Set<'_> {
    fn len(&self) -> usize {
        self.items.len()
    }
    fn encode(&mut self, i: usize, out: &mut Vec<u8>) -> u16 {
        let i = self.items.get(i).map_or(usize::MAX, |&i| i as usize);
        match self.keys.get(i) {
            Some(key) => self.layer.encode(key, true, out),
            None => 0,
        }
    }
    fn reply(&mut self, i: usize, v: Value) -> std::result::Result<(), String> {
        let i = self.items.get(i).map_or(usize::MAX, |&i| i as usize);
        // The last bit (from the INCRBY 0), then the old value of each bit.
        let items = ints(&v)?;
        let flipped = items
            .iter()
            .skip(1)
            .filter(|b| matches!(b, Value::Int(0)))
            .count() as u64;
        self.flipped += flipped;
        if let Some(n) = self.new.get_mut(i) {
            *n |= flipped > 0;
        }
        Ok(())
    }
    fn writes(&self) -> bool {
        true
    }
}

/// Any commands, encoded beforehand, with their replies kept.
pub(super) struct Many {
    pub cmds: Vec<(Vec<u8>, u16)>,
    pub replies: Vec<Value>,
    pub writes: bool,
}

impl Many {
    pub fn new(writes: bool) -> Many {
        Many {
            cmds: Vec::new(),
            replies: Vec::new(),
            writes,
        }
    }

    /// Adds a command on `key` (its first argument after the name, or the one that routes it).
    pub fn push(&mut self, key: &[u8], args: &[&[u8]]) {
        let mut out = Vec::new();
        super::encode::command(&mut out, args);
        self.cmds.push((out, key_slot(key)));
        self.replies.push(Value::Nil);
    }
}

impl Batch for Many {
    fn len(&self) -> usize {
        self.cmds.len()
    }
    fn encode(&mut self, i: usize, out: &mut Vec<u8>) -> u16 {
        match self.cmds.get(i) {
            Some((cmd, slot)) => {
                out.extend_from_slice(cmd);
                *slot
            }
            None => 0,
        }
    }
    fn reply(&mut self, i: usize, v: Value) -> std::result::Result<(), String> {
        if let Some(r) = self.replies.get_mut(i) {
            *r = v;
        }
        Ok(())
    }
    fn writes(&self) -> bool {
        self.writes
    }
}
