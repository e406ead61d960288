//! The workload file, the command-line configuration, and opening tables for the passes.

use super::*;

// ----------------------------- workload -----------------------------------

/// The workload file (`shared/bench/WORKLOAD.md`), parsed by its length fields. The buffer is
/// leaked so that every key and value is a `&'static [u8]` into it (one process, one workload).
pub(crate) struct Workload {
    pub(crate) entries: Vec<(&'static [u8], &'static [u8])>,
    pub(crate) hits: Vec<(&'static [u8], &'static [u8])>,
    pub(crate) misses: Vec<&'static [u8]>,
    pub(crate) kv_bytes: u64,
    pub(crate) file_bytes: u64,
}

pub(crate) struct Cursor {
    pub(crate) buf: &'static [u8],
    pub(crate) pos: usize,
}

impl Cursor {
    pub(crate) fn u32(&mut self) -> u32 {
        let Some(b) = self.buf.get(self.pos..self.pos + 4) else {
            die("workload truncated")
        };
        self.pos += 4;
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    pub(crate) fn bytes(&mut self) -> &'static [u8] {
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

pub(crate) fn load_workload(path: &str) -> Workload {
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

pub(crate) struct Config {
    pub(crate) workload: String,
    pub(crate) table: String,
    pub(crate) verify_table: String,
    pub(crate) snappy: bool,
    pub(crate) cache_mb: u64,
    pub(crate) build_only: bool,
    /// Profiling aid (not part of the harness protocol): run one phase `repeat` times.
    pub(crate) only: Option<String>,
    pub(crate) repeat: u32,
    pub(crate) reuse_table: bool,
    /// Outside the protocol: compress data blocks on a helper thread while building.
    pub(crate) parallel_compression: bool,
    /// `--db DIR` (with the harness's `--peer-db`): the database level, see `db_fields`.
    pub(crate) db: String,
    /// Outside the protocol: build with the cache-local bloom filter (10 bits/key) instead
    /// of LevelDB's.
    pub(crate) local_bloom: bool,
    /// Outside the protocol: read the database's tables with pread instead of maps.
    pub(crate) db_pread: bool,
}

pub(crate) fn build_options(c: &Config) -> Options {
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
pub(crate) type Source = CountingReader<Box<dyn RandomAccess + Send + Sync>>;
pub(crate) type Table = TableReader<Source>;

/// `--read pread`: read with positioned reads instead of a memory map.
pub(crate) static PREAD: OnceLock<bool> = OnceLock::new();
/// `--cache-policy` (none: the library's default).
pub(crate) static POLICY: OnceLock<CachePolicy> = OnceLock::new();
/// `--no-record-links` given.
pub(crate) static NO_LINKS: OnceLock<bool> = OnceLock::new();

/// A block cache of `bytes` with the policy and record links the command line chose.
pub(crate) fn new_cache(bytes: u64) -> BlockCache {
    let policy = POLICY.get().copied().unwrap_or_default();
    BlockCache::with_policy(bytes, policy).record_links(!NO_LINKS.get().copied().unwrap_or(false))
}

/// Opens `path` for reading with a block cache of `cache_bytes` (none for 0), counting reads.
pub(crate) fn open_table(path: &str, cache_bytes: u64) -> Table {
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

pub(crate) fn reads(t: &Table) -> u64 {
    t.source().reads()
}
