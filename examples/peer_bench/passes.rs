//! The timed passes over one table, the process's memory, and the JSON line.

use super::*;

// ----------------------------- passes ---------------------------------------

pub(crate) struct Pass {
    pub(crate) s: f64,
    pub(crate) bad: u64,
    pub(crate) reads: u64,
}

/// Filter-consulting point lookups of the hit probes, value compared with the expected one.
pub(crate) fn hit_pass(t: &Table, hits: &[(&[u8], &[u8])]) -> Pass {
    let mut val = Vec::with_capacity(256);
    let r0 = reads(t);
    let mut bad = 0;
    let a = Instant::now();
    for &(k, v) in hits {
        match t
            .get_into(k, &ReadOptions::default(), &mut val)
            .map(|l| l.is_found())
        {
            Ok(true) if val.as_slice() == v => {}
            Ok(_) => bad += 1,
            Err(e) => die(&format!("get: {e}")),
        }
    }
    let s = a.elapsed().as_secs_f64();
    Pass {
        s,
        bad,
        reads: reads(t) - r0,
    }
}

/// Filter-consulting point lookups of the miss probes; every one must be not-found.
pub(crate) fn miss_pass(t: &Table, misses: &[&[u8]]) -> Pass {
    let mut val = Vec::with_capacity(256);
    let r0 = reads(t);
    let mut bad = 0;
    let a = Instant::now();
    for &k in misses {
        match t
            .get_into(k, &ReadOptions::default(), &mut val)
            .map(|l| l.is_found())
        {
            Ok(false) => {}
            Ok(true) => bad += 1,
            Err(e) => die(&format!("get: {e}")),
        }
    }
    let s = a.elapsed().as_secs_f64();
    Pass {
        s,
        bad,
        reads: reads(t) - r0,
    }
}

/// Public-API lookup: iterator seek, then key compare; copies the value as C++ does.
#[inline]
pub(crate) fn iter_get(
    it: &mut leveldb_table::table::TableIter<'_, Source>,
    key: &[u8],
    val: &mut Vec<u8>,
) -> bool {
    it.seek(key);
    if it.valid() && it.key() == key {
        val.clear();
        val.extend_from_slice(it.value());
        return true;
    }
    if let Err(e) = it.status() {
        die(&format!("iterator: {e}"));
    }
    false
}

pub(crate) fn seek_hit_pass(t: &Table, hits: &[(&[u8], &[u8])]) -> Pass {
    let mut val = Vec::with_capacity(256);
    let mut it = t.iter(&ReadOptions::default());
    let r0 = reads(t);
    let mut bad = 0;
    let a = Instant::now();
    for &(k, v) in hits {
        if !iter_get(&mut it, k, &mut val) || val.as_slice() != v {
            bad += 1;
        }
    }
    let s = a.elapsed().as_secs_f64();
    Pass {
        s,
        bad,
        reads: reads(t) - r0,
    }
}

pub(crate) fn seek_miss_pass(t: &Table, misses: &[&[u8]]) -> Pass {
    let mut val = Vec::with_capacity(256);
    let mut it = t.iter(&ReadOptions::default());
    let r0 = reads(t);
    let mut bad = 0;
    let a = Instant::now();
    for &k in misses {
        if iter_get(&mut it, k, &mut val) {
            bad += 1;
        }
    }
    let s = a.elapsed().as_secs_f64();
    Pass {
        s,
        bad,
        reads: reads(t) - r0,
    }
}

pub(crate) struct Scan {
    pub(crate) s: f64,
    pub(crate) count: u64,
    pub(crate) reads: u64,
}

/// Timed full scan (iterator creation included, as in C++): touches every key and value
/// through borrowed slices (lengths plus the first value byte), no copy.
pub(crate) fn scan_pass(t: &Table) -> Scan {
    let r0 = reads(t);
    let (mut count, mut bytes, mut x) = (0u64, 0u64, 0u64);
    let a = Instant::now();
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        let (k, v) = (it.key(), it.value());
        count += 1;
        bytes += (k.len() + v.len()) as u64;
        if let Some(&b) = v.first() {
            x += u64::from(b);
        }
        it.next();
    }
    if let Err(e) = it.status() {
        die(&format!("scan: {e}"));
    }
    let s = a.elapsed().as_secs_f64();
    std::hint::black_box((bytes, x));
    Scan {
        s,
        count,
        reads: reads(t) - r0,
    }
}

/// Untimed full verification scan: every key and value equals the workload's.
/// Returns (mismatches, entries seen).
pub(crate) fn verify_scan(t: &Table, w: &Workload) -> (u64, u64) {
    let (mut bad, mut i) = (0u64, 0usize);
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        let ok = w
            .entries
            .get(i)
            .is_some_and(|&(k, v)| it.key() == k && it.value() == v);
        if !ok {
            if bad < 3 {
                eprintln!(
                    "scan mismatch at entry {i}: key={}",
                    String::from_utf8_lossy(it.key())
                );
            }
            bad += 1;
        }
        i += 1;
        it.next();
    }
    if let Err(e) = it.status() {
        die(&format!("verify scan: {e}"));
    }
    if i != w.entries.len() {
        bad += 1;
    }
    (bad, i as u64)
}

// ----------------------------- memory --------------------------------------

/// A field of /proc/self/status in bytes (VmRSS, VmHWM), 0 where unavailable.
pub(crate) fn proc_status_bytes(field: &str) -> u64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

// ----------------------------- JSON -----------------------------------------

/// One JSON object on one line, fields in insertion order.
pub(crate) struct Json(pub(crate) String);

impl Json {
    pub(crate) fn new() -> Json {
        Json(String::from("{"))
    }
    pub(crate) fn key(&mut self, k: &str) {
        if self.0.len() > 1 {
            self.0.push_str(", ");
        }
        self.0.push_str(&serde_json::to_string(k).expect("string"));
        self.0.push_str(": ");
    }
    pub(crate) fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.0.push_str(&serde_json::to_string(v).expect("string"));
    }
    /// Six significant digits, like C's `%.6g`; non-finite numbers become null.
    pub(crate) fn num(&mut self, k: &str, v: f64) {
        self.key(k);
        if !v.is_finite() {
            self.0.push_str("null");
        } else if v != 0.0 && (v.abs() < 1e-4 || v.abs() >= 1e6) {
            self.0.push_str(&format!("{v:.5e}"));
        } else {
            let digits = if v == 0.0 {
                0
            } else {
                (5 - v.abs().log10().floor() as i32).max(0)
            };
            self.0.push_str(&format!("{:.*}", digits as usize, v));
        }
    }
    pub(crate) fn u64(&mut self, k: &str, v: u64) {
        self.key(k);
        self.0.push_str(&v.to_string());
    }
    pub(crate) fn boolean(&mut self, k: &str, v: bool) {
        self.key(k);
        self.0.push_str(if v { "true" } else { "false" });
    }
    pub(crate) fn done(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

pub(crate) fn common_fields(j: &mut Json, c: &Config, w: &Workload) {
    j.str("impl", IMPL);
    let mut label = IMPL.to_string();
    if c.parallel_compression {
        label.push_str("+parallel_compression");
    }
    if c.local_bloom {
        label.push_str("+cache_local_bloom");
    }
    j.str("label", &label);
    j.str(
        "filter_policy",
        if c.local_bloom {
            "leveldb-table.CacheLocalBloom.1"
        } else {
            "leveldb.BuiltinBloomFilter2"
        },
    );
    j.u64("n", w.entries.len() as u64);
    j.u64("hits", w.hits.len() as u64);
    j.u64("misses", w.misses.len() as u64);
    j.str("compression", if c.snappy { "snappy" } else { "none" });
    j.u64("block_size", 4096);
    j.u64("restart_interval", 16);
    j.u64("bloom_bits_per_key", 10);
    j.u64("block_cache_mb", c.cache_mb);
    // ReadOptions::default() verifies every data block's CRC; opening verifies metadata.
    j.boolean("verify_checksums", true);
}
