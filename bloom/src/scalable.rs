//! A scalable bloom filter (Almeida et al., "Scalable Bloom Filters", 2007): a list of plain
//! bloom layers, each larger and stricter than the one before.
//!
//! ```text
//! layer i: capacity n_i = capacity * growth^i
//!          rate     e_i = fp_rate * (1 - ratio) * ratio^i      (sum over all i = fp_rate)
//!          bits, k  = sizing(n_i, e_i)   (m/n = log2(1/e)/ln 2, k = round(ln 2 * m/n))
//!          probes   = XXH3-128(key, layer seed), bit (a + j*b) mod bits, j = 0..k
//! add:   a key already answered "maybe" by some layer is not added again; otherwise it goes
//!        to the newest layer, after opening a new one when the newest holds n_i keys or more
//!        than half of its bits are set
//! check: "maybe" when any layer has all k bits set
//! ```
//!
//! The compound rate is at most `1 - prod(1 - e_i) <= sum e_i = fp_rate`, however many layers
//! open. The stored form is in `scalable_file.rs`.

use crate::error::{Error, Result};
use crate::format::{MAX_LAYERS, MAX_LAYER_FILL};
use crate::hash::{layer_fp, layer_seed, sizing, KeyHash};

/// Parameters of a scalable filter (local or in Redis).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalableParams {
    /// Keys the first layer holds.
    pub capacity: u64,
    /// Target compound false-positive rate, in `(0, 0.5]`.
    pub fp_rate: f64,
    /// Each layer holds this many times the keys of the one before (at least 1).
    pub growth: u32,
    /// Each layer's rate is this times the one before, in `(0, 1)`.
    pub ratio: f64,
}

impl Default for ScalableParams {
    /// 1,000,000 keys at 1%, growth 2, ratio 0.5 (RedisBloom's expansion and tightening).
    fn default() -> Self {
        ScalableParams {
            capacity: 1_000_000,
            fp_rate: 0.01,
            growth: 2,
            ratio: 0.5,
        }
    }
}

/// The size of one layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LayerGeometry {
    pub capacity: u64,
    pub fp_rate: f64,
    pub bits: u64,
    pub k: u32,
}

impl ScalableParams {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a capacity of 0, a rate outside `(0, 0.5]`, a growth of 0
    /// or a ratio outside `(0, 1)`.
    pub fn validate(&self) -> Result<()> {
        if self.capacity == 0 {
            return Err(Error::InvalidArgument(
                "bloom capacity must be at least 1".into(),
            ));
        }
        if !(self.fp_rate > 0.0 && self.fp_rate <= 0.5) {
            return Err(Error::InvalidArgument(format!(
                "bloom false-positive rate {} is not in (0, 0.5]",
                self.fp_rate
            )));
        }
        if self.growth == 0 {
            return Err(Error::InvalidArgument(
                "bloom growth must be at least 1".into(),
            ));
        }
        if !(self.ratio > 0.0 && self.ratio < 1.0) {
            return Err(Error::InvalidArgument(format!(
                "bloom tightening ratio {} is not in (0, 1)",
                self.ratio
            )));
        }
        Ok(())
    }

    /// Capacity, rate, bits and k of layer `i`.
    pub(crate) fn layer(&self, i: u32) -> LayerGeometry {
        let capacity = u64::from(self.growth)
            .checked_pow(i)
            .and_then(|g| g.checked_mul(self.capacity))
            .unwrap_or(u64::MAX / 64);
        let fp_rate = self.fp_rate * (1.0 - self.ratio) * self.ratio.powi(i as i32);
        let (bits, k) = sizing(capacity, fp_rate);
        LayerGeometry {
            capacity,
            fp_rate,
            bits,
            k,
        }
    }
}

/// What one layer holds, for reports (`sst bloom info`).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerInfo {
    /// Keys the layer was sized for.
    pub capacity: u64,
    /// The layer's target false-positive rate.
    pub fp_rate: f64,
    /// Size of its bit array(s) in bits.
    pub bits: u64,
    /// Probes per key.
    pub k: u32,
    /// Keys added to it.
    pub items: u64,
    /// Bits set.
    pub bits_set: u64,
}

impl LayerInfo {
    /// Fraction of bits set.
    pub fn fill(&self) -> f64 {
        self.bits_set as f64 / self.bits.max(1) as f64
    }

    /// Estimated false-positive rate from the fill: `fill^k`.
    pub fn estimated_fp_rate(&self) -> f64 {
        layer_fp(self.fill(), self.k)
    }

    /// Estimated compound rate of a filter with these layers: `1 - prod(1 - fill_i^k_i)`.
    pub fn compound_fp_rate(layers: &[LayerInfo]) -> f64 {
        compound_fp(layers)
    }
}

/// Estimated compound rate of some layers: `1 - prod(1 - fill_i^k_i)`.
pub(crate) fn compound_fp(layers: &[LayerInfo]) -> f64 {
    1.0 - layers
        .iter()
        .map(|l| 1.0 - l.estimated_fp_rate())
        .product::<f64>()
}

/// One plain layer in memory.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layer {
    pub geometry: LayerGeometry,
    pub bits: Vec<u8>,
    pub items: u64,
    pub bits_set: u64,
}

impl Layer {
    pub(crate) fn new(geometry: LayerGeometry) -> Result<Layer> {
        let bytes = usize::try_from(geometry.bits.div_ceil(8)).map_err(|_| {
            Error::InvalidArgument(format!("bloom layer of {} bits", geometry.bits))
        })?;
        Ok(Layer {
            geometry,
            bits: vec![0; bytes],
            items: 0,
            bits_set: 0,
        })
    }

    fn test(&self, pos: u64) -> bool {
        self.bits
            .get((pos / 8) as usize)
            .is_some_and(|b| b & (1 << (pos % 8)) != 0)
    }

    fn contains(&self, seed: u64, index: u32, key: &[u8]) -> bool {
        let h = KeyHash::new(key, layer_seed(seed, index));
        (0..self.geometry.k).all(|j| self.test(h.bit(j, self.geometry.bits)))
    }

    fn insert(&mut self, seed: u64, index: u32, key: &[u8]) {
        let h = KeyHash::new(key, layer_seed(seed, index));
        for j in 0..self.geometry.k {
            let pos = h.bit(j, self.geometry.bits);
            if let Some(b) = self.bits.get_mut((pos / 8) as usize) {
                let mask = 1 << (pos % 8);
                if *b & mask == 0 {
                    *b |= mask;
                    self.bits_set += 1;
                }
            }
        }
        self.items += 1;
    }

    fn is_full(&self) -> bool {
        self.items >= self.geometry.capacity
            || self.bits_set as f64 > MAX_LAYER_FILL * self.geometry.bits as f64
    }

    pub(crate) fn info(&self) -> LayerInfo {
        LayerInfo {
            capacity: self.geometry.capacity,
            fp_rate: self.geometry.fp_rate,
            bits: self.geometry.bits,
            k: self.geometry.k,
            items: self.items,
            bits_set: self.bits_set,
        }
    }
}

/// A bloom filter that grows: layers of growing capacity and tightening rate keep the
/// compound false-positive rate within [`ScalableParams::fp_rate`] however many keys arrive.
///
/// ```
/// use sst_bloom::{ScalableBloomFilter, ScalableParams};
///
/// # fn main() -> sst_bloom::Result<()> {
/// let params = ScalableParams { capacity: 100, fp_rate: 0.01, ..ScalableParams::default() };
/// let mut f = ScalableBloomFilter::new(params)?;
/// for i in 0..1000u32 {
///     f.add(&i.to_le_bytes())?;
/// }
/// assert!(f.layers().len() > 1, "it grew");
/// assert!((0..1000u32).all(|i| f.may_contain(&i.to_le_bytes())));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ScalableBloomFilter {
    pub(crate) params: ScalableParams,
    pub(crate) seed: u64,
    pub(crate) layers: Vec<Layer>,
}

impl ScalableBloomFilter {
    /// An empty filter with one layer.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the parameters do not [validate](ScalableParams::validate).
    pub fn new(params: ScalableParams) -> Result<Self> {
        params.validate()?;
        Ok(ScalableBloomFilter {
            params,
            seed: 0,
            layers: vec![Layer::new(params.layer(0))?],
        })
    }

    /// The filter's parameters.
    pub fn params(&self) -> ScalableParams {
        self.params
    }

    /// Whether `key` may have been added (false positives at about the target rate).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.layers
            .iter()
            .enumerate()
            .any(|(i, l)| l.contains(self.seed, i as u32, key))
    }

    /// Adds `key`; returns `false` when it was (maybe) there already, and then adds nothing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when a new layer is needed past the 40th, or does not fit
    /// in memory.
    pub fn add(&mut self, key: &[u8]) -> Result<bool> {
        if self.may_contain(key) {
            return Ok(false);
        }
        let full = self.layers.last().is_none_or(Layer::is_full);
        if full {
            let next = self.layers.len() as u32;
            if next >= MAX_LAYERS {
                return Err(Error::InvalidArgument(format!(
                    "bloom filter is full: it has {MAX_LAYERS} layers"
                )));
            }
            self.layers.push(Layer::new(self.params.layer(next))?);
        }
        let index = self.layers.len() as u32 - 1;
        let seed = self.seed;
        if let Some(layer) = self.layers.last_mut() {
            layer.insert(seed, index, key);
        }
        Ok(true)
    }

    /// Keys added (each counted once; keys that were false positives were not added).
    pub fn items(&self) -> u64 {
        self.layers.iter().map(|l| l.items).sum()
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> Vec<LayerInfo> {
        self.layers.iter().map(Layer::info).collect()
    }

    /// Estimated false-positive rate from the layers' fill: `1 - prod(1 - fill_i^k_i)`.
    pub fn estimated_fp_rate(&self) -> f64 {
        compound_fp(&self.layers())
    }

    /// Bytes of bit arrays held.
    pub fn memory_bytes(&self) -> usize {
        self.layers.iter().map(|l| l.bits.len()).sum()
    }
}
