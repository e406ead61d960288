//! SSTable peer benchmark for `leveldb-table`, speaking the protocol of the shared harness
//! (`shared/bench/README.md`, "Adding an implementation"): same workload file, same passes,
//! same timing boundaries and the same JSON field names as the C++ peer
//! (`leveldb_cpp/table_bench.cc`) and the `sstable` peer.
//!
//! ```text
//! cargo build --release --example peer_bench
//! peer_bench --workload W --table T [--compression snappy|none] [--cache-mb 64] [--read mmap|pread] [--build-only]
//! peer_bench --workload W --verify-table T [--compression snappy|none]
//! ```
//!
//! Benchmark mode builds T from the workload, then measures (each timed around a whole loop):
//! open; a cold then a warm full scan on one freshly opened table; cold and warm passes over
//! the hit probes, then the miss probes, then iterator-seek hits and misses, on a second
//! freshly opened table; and the data blocks one pass over the misses reads on a third table
//! opened without a block cache. It prints one JSON line and exits 1 on any wrong answer.
//!
//! Every read verifies block checksums (`ReadOptions::default()`), and opening verifies the
//! index, metaindex and filter blocks (`OpenOptions::default()`): compare with the C++
//! `+verify_checksums` row for like with like. The block cache is a
//! [`BlockCache`] of `--cache-mb` MiB charged in uncompressed bytes, as LevelDB charges.
//!
//! Not part of the harness protocol: `--build-only` stops after the build and reports the
//! build time and memory (used by `scripts/bench_scaling.sh` to show that a build streams);
//! `--only build|open|scan|get-hit|get-miss|seek-hit|db-get-hit|db-get-miss --repeat R [--reuse-table]` runs one phase R
//! times on one table (built first unless `--reuse-table`), for profilers (`docs/performance.md`, "Profiles");
//! `--parallel-compression` builds with `Options::parallel_compression` (snappy on a helper
//! thread; its JSON label says so), for a separate `--peer` next to the default one.
//! `--cache-policy clock|quick` chooses the block cache's [`CachePolicy`] (default: the
//! library's) and `--no-record-links` keeps tables' lookup records from holding cache
//! entries ([`BlockCache::record_links`]), for peers comparing them in one run.

use std::fs::File;
use std::io::BufWriter;
use std::process::exit;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::Cursor as _;
use leveldb_table::{db::engine::BulkBuilder, db::engine::BulkOptions};
use leveldb_table::{
    raw::map_file, raw::CountingReader, table::CachePolicy, table::FilterStatus, table::KeyFormat,
    BlockCache, Compression, Lookup, OpenOptions, Options, RandomAccess, ReadOptions, TableBuilder,
    TableReader,
};

const IMPL: &str = concat!("leveldb-table-", env!("CARGO_PKG_VERSION"));

fn die(msg: &str) -> ! {
    eprintln!("peer_bench: {msg}");
    exit(2)
}

// ----------------------------- workload -----------------------------------

/// The workload file (`shared/bench/WORKLOAD.md`), parsed by its length fields. The buffer is
/// leaked so that every key and value is a `&'static [u8]` into it (one process, one workload).
struct Workload {
    entries: Vec<(&'static [u8], &'static [u8])>,
    hits: Vec<(&'static [u8], &'static [u8])>,
    misses: Vec<&'static [u8]>,
    kv_bytes: u64,
    file_bytes: u64,
}

struct Cursor {
    buf: &'static [u8],
    pos: usize,
}

impl Cursor {
    fn u32(&mut self) -> u32 {
        let Some(b) = self.buf.get(self.pos..self.pos + 4) else {
            die("workload truncated")
        };
        self.pos += 4;
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn bytes(&mut self) -> &'static [u8] {
        let n = self.u32() as usize;
        let end = self
            .pos
            .checked_add(n)
            .unwrap_or_else(|| die("workload truncated"));
        let Some(s) = self.buf.get(self.pos..end) else {
            die("workload truncated")
        };
        self.pos = end;
        s
    }
}

fn load_workload(path: &str) -> Workload {
    let data =
        std::fs::read(path).unwrap_or_else(|e| die(&format!("cannot read workload {path}: {e}")));
    let file_bytes = data.len() as u64;
    let buf: &'static [u8] = Box::leak(data.into_boxed_slice());
    if !buf.starts_with(b"LDBBENCH-WORKLOAD") {
        die("bad workload header");
    }
    let nl = buf
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or_else(|| die("bad workload header"));
    let mut c = Cursor { buf, pos: nl + 1 };
    let n = c.u32() as usize;
    let mut entries = Vec::with_capacity(n);
    let mut kv_bytes = 0u64;
    for _ in 0..n {
        let k = c.bytes();
        let v = c.bytes();
        kv_bytes += (k.len() + v.len()) as u64;
        entries.push((k, v));
    }
    let h = c.u32() as usize;
    let mut hits = Vec::with_capacity(h);
    for _ in 0..h {
        let k = c.bytes();
        let v = c.bytes();
        hits.push((k, v));
    }
    let m = c.u32() as usize;
    let mut misses = Vec::with_capacity(m);
    for _ in 0..m {
        misses.push(c.bytes());
    }
    if c.pos != buf.len() {
        die("trailing bytes in workload");
    }
    Workload {
        entries,
        hits,
        misses,
        kv_bytes,
        file_bytes,
    }
}

// ----------------------------- configuration -------------------------------

struct Config {
    workload: String,
    table: String,
    verify_table: String,
    snappy: bool,
    cache_mb: u64,
    build_only: bool,
    /// Profiling aid (not part of the harness protocol): run one phase `repeat` times.
    only: Option<String>,
    repeat: u32,
    reuse_table: bool,
    /// Outside the protocol: compress data blocks on a helper thread while building.
    parallel_compression: bool,
    /// `--db DIR` (with the harness's `--peer-db`): the database level, see `db_fields`.
    db: String,
    /// Outside the protocol: build with the cache-local bloom filter (10 bits/key) instead
    /// of LevelDB's.
    local_bloom: bool,
    /// Outside the protocol: read the database's tables with pread instead of maps.
    db_pread: bool,
}

fn build_options(c: &Config) -> Options {
    let o = Options::default()
        .block_size(4096)
        .block_restart_interval(16);
    let o = if c.local_bloom {
        o.local_bloom(10.0)
    } else {
        o.bloom(10)
    };
    o.compression(if c.snappy {
        Compression::Snappy
    } else {
        Compression::None
    })
    .parallel_compression(c.parallel_compression)
}

/// The table's source: a read-only memory map (the default, as LevelDB's `PosixEnv` reads
/// tables) or the file read with `pread` (`--read pread`).
type Source = CountingReader<Box<dyn RandomAccess + Send + Sync>>;
type Table = TableReader<Source>;

/// `--read pread`: read with positioned reads instead of a memory map.
static PREAD: OnceLock<bool> = OnceLock::new();
/// `--cache-policy` (none: the library's default).
static POLICY: OnceLock<CachePolicy> = OnceLock::new();
/// `--no-record-links` given.
static NO_LINKS: OnceLock<bool> = OnceLock::new();

/// A block cache of `bytes` with the policy and record links the command line chose.
fn new_cache(bytes: u64) -> BlockCache {
    let policy = POLICY.get().copied().unwrap_or_default();
    BlockCache::with_policy(bytes, policy).record_links(!NO_LINKS.get().copied().unwrap_or(false))
}

/// Opens `path` for reading with a block cache of `cache_bytes` (none for 0), counting reads.
fn open_table(path: &str, cache_bytes: u64) -> Table {
    let f = File::open(path).unwrap_or_else(|e| die(&format!("open {path}: {e}")));
    let src: Box<dyn RandomAccess + Send + Sync> = if *PREAD.get().unwrap_or(&false) {
        Box::new(f)
    } else {
        // SAFETY: the benchmark's table is written before it is read and never changed.
        let map = unsafe { map_file(&f) };
        Box::new(map.unwrap_or_else(|e| die(&format!("map {path}: {e}"))))
    };
    let mut ro = OpenOptions::default().keys(KeyFormat::Plain);
    if cache_bytes > 0 {
        ro = ro.block_cache(Some(Arc::new(new_cache(cache_bytes))));
    }
    TableReader::open(CountingReader::new(src), ro)
        .unwrap_or_else(|e| die(&format!("open table {path}: {e}")))
}

fn reads(t: &Table) -> u64 {
    t.source().reads()
}

// ----------------------------- passes ---------------------------------------

struct Pass {
    s: f64,
    bad: u64,
    reads: u64,
}

/// Filter-consulting point lookups of the hit probes, value compared with the expected one.
fn hit_pass(t: &Table, hits: &[(&[u8], &[u8])]) -> Pass {
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
fn miss_pass(t: &Table, misses: &[&[u8]]) -> Pass {
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
fn iter_get(
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

fn seek_hit_pass(t: &Table, hits: &[(&[u8], &[u8])]) -> Pass {
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

fn seek_miss_pass(t: &Table, misses: &[&[u8]]) -> Pass {
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

struct Scan {
    s: f64,
    count: u64,
    reads: u64,
}

/// Timed full scan (iterator creation included, as in C++): touches every key and value
/// through borrowed slices (lengths plus the first value byte), no copy.
fn scan_pass(t: &Table) -> Scan {
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
fn verify_scan(t: &Table, w: &Workload) -> (u64, u64) {
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
fn proc_status_bytes(field: &str) -> u64 {
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
struct Json(String);

impl Json {
    fn new() -> Json {
        Json(String::from("{"))
    }
    fn key(&mut self, k: &str) {
        if self.0.len() > 1 {
            self.0.push_str(", ");
        }
        self.0.push_str(&serde_json::to_string(k).expect("string"));
        self.0.push_str(": ");
    }
    fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.0.push_str(&serde_json::to_string(v).expect("string"));
    }
    /// Six significant digits, like C's `%.6g`; non-finite numbers become null.
    fn num(&mut self, k: &str, v: f64) {
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
    fn u64(&mut self, k: &str, v: u64) {
        self.key(k);
        self.0.push_str(&v.to_string());
    }
    fn boolean(&mut self, k: &str, v: bool) {
        self.key(k);
        self.0.push_str(if v { "true" } else { "false" });
    }
    fn done(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

fn common_fields(j: &mut Json, c: &Config, w: &Workload) {
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

// ----------------------------- benchmark mode --------------------------------

fn run_bench(c: &Config, w: &Workload) -> i32 {
    let mut errors = 0u64;
    let opts = build_options(c);
    let rss_before_build = proc_status_bytes("VmRSS");
    let hwm_before_build = proc_status_bytes("VmHWM");

    // -------- build --------
    let _ = std::fs::remove_file(&c.table);
    let a = Instant::now();
    let f = File::create(&c.table).unwrap_or_else(|e| die(&format!("create {}: {e}", c.table)));
    let mut tb = TableBuilder::new(BufWriter::with_capacity(65536, f), &opts)
        .unwrap_or_else(|e| die(&format!("TableBuilder::new: {e}")));
    for &(k, v) in &w.entries {
        tb.add(k, v).unwrap_or_else(|e| die(&format!("add: {e}")));
    }
    let (writer, stats) = tb.finish().unwrap_or_else(|e| die(&format!("finish: {e}")));
    // finish() flushed the BufWriter; close the file inside the timed region, as C++ does.
    let file = writer
        .into_inner()
        .unwrap_or_else(|e| die(&format!("flush: {}", e.error())));
    drop(file);
    let build_s = a.elapsed().as_secs_f64();
    let hwm_after_build = proc_status_bytes("VmHWM");
    let file_bytes = stats.file_size;

    let nh = w.hits.len().max(1) as f64;
    let nm = w.misses.len().max(1) as f64;
    let mb = w.kv_bytes as f64 / 1e6;
    let mut j = Json::new();
    common_fields(&mut j, c, w);
    j.num("build_s", build_s);
    j.num("build_mb_s", mb / build_s);
    j.u64("file_bytes", file_bytes);
    j.u64("kv_bytes", w.kv_bytes);
    j.u64("data_blocks", stats.data_blocks);
    j.u64("workload_file_bytes", w.file_bytes);
    j.u64("rss_before_build_bytes", rss_before_build);
    j.u64("hwm_before_build_bytes", hwm_before_build);
    j.u64("hwm_after_build_bytes", hwm_after_build);
    if c.build_only {
        j.str("mode", "build-only");
        j.u64("errors", 0);
        j.boolean("ok", true);
        println!("{}", j.done());
        return 0;
    }

    let cache_bytes = c.cache_mb << 20;

    // -------- scans (fresh table, empty block cache) --------
    let a = Instant::now();
    let t0 = open_table(&c.table, cache_bytes);
    let open_s = a.elapsed().as_secs_f64();
    let open_reads = reads(&t0);
    // The crate reads the filter block on first use, LevelDB's Table::Open reads it at open:
    // time that first use too, so that open + filter compares with C++'s open.
    let a = Instant::now();
    let filter_loaded = t0.filter().is_some();
    let open_filter_s = a.elapsed().as_secs_f64();
    let open_filter_reads = reads(&t0) - open_reads;
    let sc_cold = scan_pass(&t0);
    let sc_warm = scan_pass(&t0);
    let (mut scan_bad, _) = verify_scan(&t0, w);
    if sc_cold.count != w.entries.len() as u64 || sc_warm.count != w.entries.len() as u64 {
        scan_bad += 1;
    }
    errors += scan_bad;
    drop(t0);

    // -------- point lookups (fresh table, empty block cache) --------
    let t1 = open_table(&c.table, cache_bytes);
    let hit_cold = hit_pass(&t1, &w.hits);
    let hit_warm = hit_pass(&t1, &w.hits);
    let miss_cold = miss_pass(&t1, &w.misses);
    let miss_warm = miss_pass(&t1, &w.misses);
    let shit = seek_hit_pass(&t1, &w.hits);
    let smiss = seek_miss_pass(&t1, &w.misses);
    errors += hit_cold.bad + hit_warm.bad + miss_cold.bad + miss_warm.bad + shit.bad + smiss.bad;
    drop(t1);

    // -------- data blocks read by misses: table without block cache --------
    let t2 = open_table(&c.table, 0);
    // Load the filter first (one read) so that only data-block reads are counted.
    let _ = t2.filter();
    let miss_nc = miss_pass(&t2, &w.misses);
    errors += miss_nc.bad;
    drop(t2);

    j.num("open_s", open_s);
    j.u64("open_file_reads", open_reads);
    j.num("open_filter_s", open_filter_s);
    j.num("open_with_filter_s", open_s + open_filter_s);
    j.u64("open_filter_file_reads", open_filter_reads);
    j.boolean("filter_loaded", filter_loaded);
    j.num("scan_cold_s", sc_cold.s);
    j.num("scan_s", sc_warm.s);
    j.num("scan_mb_s", mb / sc_warm.s);
    j.u64("scan_file_reads", sc_warm.reads);
    j.num("get_hit_cold_s_per_op", hit_cold.s / nh);
    j.num("get_hit_s_per_op", hit_warm.s / nh);
    j.u64("get_hit_file_reads", hit_warm.reads);
    j.num("get_miss_cold_s_per_op", miss_cold.s / nm);
    j.num("get_miss_s_per_op", miss_warm.s / nm);
    j.u64("miss_blocks_read", miss_nc.reads);
    j.num("miss_blocks_read_per_op", miss_nc.reads as f64 / nm);
    j.num("seek_hit_s_per_op", shit.s / nh);
    j.num("seek_miss_s_per_op", smiss.s / nm);
    j.str(
        "get_api",
        "TableReader::get_into (filter-consulting, value copied into a reused Vec)",
    );
    j.str(
        "read_file",
        if *PREAD.get().unwrap_or(&false) {
            "std::fs::File pread (--read pread), CRC32C verified on every block read"
        } else {
            "leveldb_table::raw::map_file (mmap, as LevelDB's Env), CRC32C verified on every block read"
        },
    );
    if !c.db.is_empty() {
        errors += db_fields(&mut j, c, w);
    }
    j.u64("peak_rss_bytes", proc_status_bytes("VmHWM"));
    j.u64("errors", errors);
    j.boolean("ok", errors == 0);
    println!("{}", j.done());
    i32::from(errors != 0)
}

// ----------------------------- database level --------------------------------

/// Warm filter-first gets through `Db::get_into`: (hit s/op, miss s/op, wrong answers),
/// after one untimed pass of each (as the C++ peer's `DB::Get` numbers).
fn db_gets(db: &Db, w: &Workload) -> (f64, f64, u64) {
    let mut bad = 0u64;
    let mut v = Vec::new();
    let read = ReadOptions::default().snapshot(Some(db.last_sequence()));
    let mut pass = |timed: bool| -> (f64, f64) {
        let a = Instant::now();
        for &(k, want) in &w.hits {
            match db.get_into(k, &read, &mut v) {
                Ok(Lookup::Found { .. }) if v.as_slice() == want => {}
                _ => bad += u64::from(timed),
            }
        }
        let hit = a.elapsed().as_secs_f64();
        let a = Instant::now();
        for &k in &w.misses {
            if !matches!(db.get_into(k, &read, &mut v), Ok(Lookup::NotFound)) {
                bad += u64::from(timed);
            }
        }
        (hit, a.elapsed().as_secs_f64())
    };
    let _ = pass(false);
    let (hit, miss) = pass(true);
    (
        hit / w.hits.len().max(1) as f64,
        miss / w.misses.len().max(1) as f64,
        bad,
    )
}

/// `--db DIR`: bulk-builds the workload into a LevelDB directory at DIR (complete and needing
/// no compaction when the build returns: `db_load_compact_s`), opens it read-only and times
/// warm gets through it. When the C++ peer's directory (`peer_cpp_db`, written by LevelDB
/// with WriteBatch + CompactRange) is beside DIR, the same gets are timed on it too
/// (`db_leveldb_layout_*`): LevelDB's own layout, read by this crate.
fn db_fields(j: &mut Json, c: &Config, w: &Workload) -> u64 {
    let _ = std::fs::remove_dir_all(&c.db);
    let cache = Arc::new(new_cache(c.cache_mb << 20));
    let a = Instant::now();
    let opts = BulkOptions::default().table(build_options(c).parallel_compression(false));
    let mut b =
        BulkBuilder::create(&c.db, opts).unwrap_or_else(|e| die(&format!("bulk {}: {e}", c.db)));
    for &(k, v) in &w.entries {
        b.add(k, v)
            .unwrap_or_else(|e| die(&format!("bulk add: {e}")));
    }
    let stats = b
        .finish()
        .unwrap_or_else(|e| die(&format!("bulk finish: {e}")));
    j.num("db_load_compact_s", a.elapsed().as_secs_f64());
    j.u64("db_tables", stats.files.len() as u64);
    let open = |dir: &str| {
        let a = Instant::now();
        let opts = DbOptions::default().block_cache(Some(cache.clone()));
        // Tables memory-mapped, as LevelDB's Env reads them (the table-level peer maps its
        // table too); `--db-pread` reads them with pread instead.
        let db = if c.db_pread {
            Db::open(dir, opts)
        } else {
            // SAFETY: the directory is this benchmark's own; nothing rewrites its tables
            // while the Db is open.
            #[allow(unsafe_code)]
            unsafe {
                Db::open_mmap(dir, opts)
            }
        }
        .unwrap_or_else(|e| die(&format!("open db {dir}: {e}")));
        (db, a.elapsed().as_secs_f64())
    };
    let (db, open_s) = open(&c.db);
    let (hit, miss, mut bad) = db_gets(&db, w);
    j.num("db_open_s", open_s);
    j.num("db_get_hit_s_per_op", hit);
    j.num("db_get_miss_s_per_op", miss);
    drop(db);
    let theirs = std::path::Path::new(&c.db).with_file_name("peer_cpp_db");
    if theirs.join("CURRENT").exists() {
        let (db, open_s) = open(&theirs.to_string_lossy());
        let tables: usize = (0..7).map(|l| db.level_files(l).len()).sum();
        let (hit, miss, b2) = db_gets(&db, w);
        bad += b2;
        j.u64("db_leveldb_layout_tables", tables as u64);
        j.num("db_leveldb_layout_open_s", open_s);
        j.num("db_leveldb_layout_get_hit_s_per_op", hit);
        j.num("db_leveldb_layout_get_miss_s_per_op", miss);
    }
    j.str(
        "db_get_api",
        if c.db_pread {
            "leveldb_table::db::reader::Db::get_into (read-only reader, pread, shared block cache)"
        } else {
            "leveldb_table::db::reader::Db::get_into (read-only reader, tables memory-mapped as LevelDB's Env does, shared block cache)"
        },
    );
    bad
}

// ----------------------------- profiling mode -------------------------------

/// `--only build|open|scan|get-hit|get-miss|seek-hit --repeat R`: one phase, R times, on one table
/// (the table is built first unless the phase is `build`), for `perf record` / callgrind.
fn run_phase(c: &Config, w: &Workload, phase: &str) -> i32 {
    let build = || {
        let f = File::create(&c.table).unwrap_or_else(|e| die(&format!("create {}: {e}", c.table)));
        let mut tb = TableBuilder::new(BufWriter::with_capacity(65536, f), &build_options(c))
            .unwrap_or_else(|e| die(&format!("TableBuilder::new: {e}")));
        for &(k, v) in &w.entries {
            tb.add(k, v).unwrap_or_else(|e| die(&format!("add: {e}")));
        }
        tb.finish().unwrap_or_else(|e| die(&format!("finish: {e}")));
    };
    if phase.starts_with("db-") {
        return run_db_phase(c, w, phase);
    }
    // Profiling the read phases alone: build once, then pass --reuse-table.
    if phase != "build" && !c.reuse_table {
        build();
    }
    let t = (phase != "build").then(|| open_table(&c.table, c.cache_mb << 20));
    let mut bad = 0;
    let a = Instant::now();
    for _ in 0..c.repeat {
        match (phase, &t) {
            ("build", _) => build(),
            ("open", _) => {
                bad += u64::from(open_table(&c.table, c.cache_mb << 20).file_size() == 0)
            }
            ("scan", Some(t)) => bad += u64::from(scan_pass(t).count != w.entries.len() as u64),
            ("get-hit", Some(t)) => bad += hit_pass(t, &w.hits).bad,
            ("get-miss", Some(t)) => bad += miss_pass(t, &w.misses).bad,
            ("seek-hit", Some(t)) => bad += seek_hit_pass(t, &w.hits).bad,
            _ => usage(),
        }
    }
    let s = a.elapsed().as_secs_f64();
    let mut j = Json::new();
    j.str("mode", "only");
    j.str("phase", phase);
    j.u64("repeat", u64::from(c.repeat));
    j.num("s_per_repeat", s / f64::from(c.repeat.max(1)));
    j.u64("file_reads", t.as_ref().map_or(0, reads));
    j.u64("errors", bad);
    println!("{}", j.done());
    i32::from(bad != 0)
}

/// `--only db-get-hit|db-get-miss --db DIR --repeat R`: warm `Db::get_into` passes over an
/// existing database directory (LevelDB's own or a bulk-built one), tables mapped.
fn run_db_phase(c: &Config, w: &Workload, phase: &str) -> i32 {
    let cache = Arc::new(new_cache(c.cache_mb << 20));
    let opts = DbOptions::default().block_cache(Some(cache));
    // SAFETY: a benchmark directory nothing rewrites while it is open.
    #[allow(unsafe_code)]
    let db = unsafe { Db::open_mmap(&c.db, opts) }
        .unwrap_or_else(|e| die(&format!("open db {}: {e}", c.db)));
    let read = ReadOptions::default().snapshot(Some(db.last_sequence()));
    let mut v = Vec::new();
    let mut bad = 0u64;
    let mut pass = |hits: bool| {
        if hits {
            for &(k, want) in &w.hits {
                if !matches!(db.get_into(k, &read, &mut v), Ok(Lookup::Found { .. }) if v.as_slice() == want)
                {
                    bad += 1;
                }
            }
        } else {
            for &k in &w.misses {
                if !matches!(db.get_into(k, &read, &mut v), Ok(Lookup::NotFound)) {
                    bad += 1;
                }
            }
        }
    };
    let hits = match phase {
        "db-get-hit" => true,
        "db-get-miss" => false,
        _ => usage(),
    };
    pass(hits);
    let a = Instant::now();
    for _ in 0..c.repeat {
        pass(hits);
    }
    let s = a.elapsed().as_secs_f64();
    let n = if hits { w.hits.len() } else { w.misses.len() };
    let mut j = Json::new();
    j.str("mode", "only");
    j.str("phase", phase);
    j.u64("repeat", u64::from(c.repeat));
    j.num(
        "s_per_op",
        s / (f64::from(c.repeat.max(1)) * n.max(1) as f64),
    );
    j.u64("errors", bad);
    println!("{}", j.done());
    i32::from(bad != 0)
}

// ----------------------------- compat mode ---------------------------------

fn run_verify(c: &Config, w: &Workload) -> i32 {
    let mut j = Json::new();
    j.str("impl", IMPL);
    j.str("mode", "verify-table");
    let size = std::fs::metadata(&c.verify_table)
        .unwrap_or_else(|e| die(&format!("{}: {e}", c.verify_table)))
        .len();
    j.u64("file_bytes", size);
    // No block cache, as the C++ peer: every data block read is counted.
    let t = open_table(&c.verify_table, 0);
    let (scan_bad, count) = verify_scan(&t, w);
    j.u64("scan_entries", count);
    j.u64("scan_mismatches", scan_bad);
    // Filter-consulting get of every entry.
    let mut val = Vec::with_capacity(256);
    let mut get_bad = 0u64;
    for &(k, v) in &w.entries {
        let ok = match t
            .get_into(k, &ReadOptions::default(), &mut val)
            .map(|l| l.is_found())
        {
            Ok(found) => found && val.as_slice() == v,
            Err(e) => {
                eprintln!("get {}: {e}", String::from_utf8_lossy(k));
                false
            }
        };
        if !ok {
            if get_bad < 3 {
                eprintln!("get failed for {}", String::from_utf8_lossy(k));
            }
            get_bad += 1;
        }
    }
    j.u64("get_all_failures", get_bad);
    // Iterator seek of every entry.
    let mut seek_bad = 0u64;
    {
        let mut it = t.iter(&ReadOptions::default());
        for &(k, v) in &w.entries {
            if !iter_get(&mut it, k, &mut val) || val.as_slice() != v {
                seek_bad += 1;
            }
        }
    }
    j.u64("seek_all_failures", seek_bad);
    let _ = t.filter(); // loaded on first use: keep its read out of the count
    let r0 = reads(&t);
    let mut miss_bad = 0u64;
    for &k in &w.misses {
        match t
            .get_into(k, &ReadOptions::default(), &mut val)
            .map(|l| l.is_found())
        {
            Ok(false) => {}
            Ok(true) => miss_bad += 1,
            Err(e) => {
                eprintln!("get {}: {e}", String::from_utf8_lossy(k));
                miss_bad += 1;
            }
        }
    }
    let miss_reads = reads(&t) - r0;
    j.u64("miss_false_found", miss_bad);
    j.u64("miss_blocks_read", miss_reads);
    j.boolean("filter_used", (miss_reads as usize) < w.misses.len() / 2);
    j.str(
        "filter_status",
        match t.filter_status() {
            FilterStatus::Used => "used",
            FilterStatus::Absent => "absent",
            FilterStatus::UnknownPolicy(_) => "unknown-policy",
            FilterStatus::Disabled => "disabled",
            FilterStatus::Unreadable(_) => "unreadable",
        },
    );
    let errors = scan_bad + get_bad + seek_bad + miss_bad;
    j.u64("errors", errors);
    j.boolean("ok", errors == 0);
    println!("{}", j.done());
    i32::from(errors != 0)
}

fn usage() -> ! {
    eprintln!(
        "usage: peer_bench --workload W (--table T | --verify-table T) \
         [--compression snappy|none] [--cache-mb 64] [--read mmap|pread] [--build-only] \
         [--parallel-compression] [--local-bloom] [--cache-policy clock|quick] [--no-record-links] [--db DIR] [--only build|open|scan|get-hit|get-miss|seek-hit --repeat R [--reuse-table]]"
    );
    exit(2)
}

fn main() {
    let mut c = Config {
        workload: String::new(),
        table: String::new(),
        verify_table: String::new(),
        snappy: true,
        cache_mb: 64,
        build_only: false,
        only: None,
        repeat: 1,
        reuse_table: false,
        parallel_compression: false,
        db: String::new(),
        local_bloom: false,
        db_pread: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut next = || args.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--workload" => c.workload = next(),
            "--table" => c.table = next(),
            "--verify-table" => c.verify_table = next(),
            "--compression" => {
                c.snappy = match next().as_str() {
                    "snappy" => true,
                    "none" => false,
                    _ => usage(),
                }
            }
            "--cache-mb" => c.cache_mb = next().parse().unwrap_or_else(|_| usage()),
            "--build-only" => c.build_only = true,
            "--only" => c.only = Some(next()),
            "--repeat" => c.repeat = next().parse().unwrap_or_else(|_| usage()),
            "--reuse-table" => c.reuse_table = true,
            "--parallel-compression" => c.parallel_compression = true,
            "--db" => c.db = next(),
            "--local-bloom" => c.local_bloom = true,
            "--db-pread" => c.db_pread = true,
            "--cache-policy" => {
                let policy = match next().as_str() {
                    "clock" => CachePolicy::ClockTinyLfu,
                    #[cfg(feature = "quick-cache")]
                    "quick" => CachePolicy::QuickCache,
                    _ => usage(),
                };
                POLICY.set(policy).unwrap_or_else(|_| usage());
            }
            "--no-record-links" => NO_LINKS.set(true).unwrap_or_else(|_| usage()),
            "--read" => {
                let pread = match next().as_str() {
                    "pread" => true,
                    "mmap" => false,
                    _ => usage(),
                };
                PREAD.set(pread).unwrap_or_else(|_| usage());
            }
            _ => usage(),
        }
    }
    if c.workload.is_empty() || c.table.is_empty() == c.verify_table.is_empty() {
        usage();
    }
    let w = load_workload(&c.workload);
    let rc = if let Some(phase) = &c.only {
        run_phase(&c, &w, phase)
    } else if c.verify_table.is_empty() {
        run_bench(&c, &w)
    } else {
        run_verify(&c, &w)
    };
    exit(rc)
}
