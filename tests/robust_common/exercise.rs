//! A read-checking source and the bounded "use a table every way" routine.

use super::*;

// ---------------------------------------------------------------------------------------
// A source that checks and counts the reader's reads.

/// Counts reads, and records any read that asks for bytes past the end of the source.
pub struct Checked {
    pub inner: Bytes,
    pub bad_reads: AtomicU64,
    pub max_len: AtomicU64,
    /// Reported to the reader as a zero-copy source (its reads are slices of `inner`, as a
    /// memory map's are).
    pub zero_copy: bool,
}

impl Checked {
    pub fn new(b: &[u8]) -> Self {
        Checked {
            inner: Bytes::copy_from_slice(b),
            bad_reads: AtomicU64::new(0),
            max_len: AtomicU64::new(0),
            zero_copy: false,
        }
    }
}

impl RandomAccess for Checked {
    fn size(&self) -> io::Result<u64> {
        Ok(self.inner.len() as u64)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        if offset
            .checked_add(len as u64)
            .is_none_or(|e| e > self.inner.len() as u64)
        {
            self.bad_reads.fetch_add(1, Ordering::Relaxed);
        }
        self.max_len.fetch_max(len as u64, Ordering::Relaxed);
        self.inner.read_at(offset, len)
    }
    fn is_zero_copy(&self) -> bool {
        self.zero_copy
    }
    fn as_slice(&self) -> Option<&[u8]> {
        self.zero_copy.then_some(&self.inner[..])
    }
}

// ---------------------------------------------------------------------------------------
// Using a table every way, with bounds on work.

/// Reader settings a mutant is opened with.
#[derive(Clone)]
pub struct Mode {
    pub name: &'static str,
    pub opts: OpenOptions,
    pub read: ReadOptions,
    /// Read from a zero-copy source (blocks used in place, cached ones with directories).
    pub zero_copy: bool,
}

pub fn modes() -> Vec<Mode> {
    vec![
        Mode {
            name: "default",
            opts: OpenOptions::default(),
            read: ReadOptions::default(),
            zero_copy: false,
        },
        Mode {
            name: "no-checksums/internal",
            opts: OpenOptions::default()
                .verify_checksums(false)
                .keys(KeyFormat::Internal),
            read: ReadOptions::default().fill_cache(false),
            zero_copy: false,
        },
        Mode {
            name: "no-checksums/plain",
            opts: OpenOptions::default()
                .verify_checksums(false)
                .keys(KeyFormat::Plain),
            read: ReadOptions::default().fill_cache(false),
            zero_copy: false,
        },
        Mode {
            name: "zero-copy/cached",
            opts: OpenOptions::default().block_cache(Some(std::sync::Arc::new(
                leveldb_table::BlockCache::new(1 << 20),
            ))),
            read: ReadOptions::default(),
            zero_copy: true,
        },
    ]
}

/// What using a table found.
#[derive(Default, Debug)]
pub struct Outcome {
    /// Errors returned (open, scans, gets, verify problems).
    pub errors: Vec<Error>,
    /// Work-bound violations.
    pub violations: Vec<String>,
    /// Whether open succeeded.
    pub opened: bool,
}

/// Opens `bytes` through a counting source and uses everything: forward and backward scans,
/// gets of `keys`, seeks, verify. Checks per operation: no read past the end of the file,
/// at most `5` reads to open, at most `index entries + 2` to scan, at most 2 per get (a data
/// block, and the filter on its first use) and `index entries + 4` to verify; scans take at
/// most one step per entry a cursor can reach.
pub fn exercise(bytes: &[u8], mode: &Mode, keys: &[Vec<u8>]) -> Outcome {
    let mut out = Outcome::default();
    let mut checked = Checked::new(bytes);
    checked.zero_copy = mode.zero_copy;
    let src = leveldb_table::raw::CountingReader::new(checked);
    let file_size = bytes.len() as u64;
    let t = match TableReader::open(&src, mode.opts.clone()) {
        Ok(t) => t,
        Err(e) => {
            out.errors.push(e);
            check_reads(&src, "open", 5, file_size, &mut out);
            return out;
        }
    };
    out.opened = true;
    check_reads(&src, "open", 5, file_size, &mut out);

    // Index entries a cursor can reach, and an upper bound on the entries a scan can visit:
    // a scan moves over index entries in strictly monotonic offset order, so it visits each
    // reachable index entry at most once, and within each block each reachable entry at
    // most once.
    let index_entries = reachable_entries(t.index_block().data());
    let n_idx = index_entries.len() as u64;
    let mut max_entries = 0u64;
    let mut sizes: HashMap<BlockHandle, u64> = HashMap::new();
    for (_, value) in &index_entries {
        let mut v = &value[..];
        if let Some(h) = BlockHandle::decode_from(&mut v) {
            let n = *sizes.entry(h).or_insert_with(|| {
                t.read_block(h, BlockKind::Data)
                    .map_or(0, |c| reachable_entries(&c.data).len() as u64)
            });
            max_entries += n;
        }
    }
    src.reset();

    let step_cap = max_entries + 1;
    let mut it = t.iter(&mode.read);
    it.seek_to_first();
    let mut steps = 0u64;
    let mut seen = Vec::new();
    while it.valid() && steps <= step_cap {
        if seen.len() < 4 {
            seen.push(it.key().to_vec());
        }
        it.next();
        steps += 1;
    }
    if steps > max_entries {
        out.violations
            .push(format!("forward scan took more than {max_entries} steps"));
    }
    if let Err(e) = it.status() {
        out.errors.push(e);
    }
    drop(it);
    check_reads(&src, "forward scan", n_idx + 2, file_size, &mut out);

    let mut it = t.iter(&mode.read);
    it.seek_to_last();
    steps = 0;
    while it.valid() && steps <= step_cap {
        it.prev();
        steps += 1;
    }
    if steps > max_entries {
        out.violations
            .push(format!("backward scan took more than {max_entries} steps"));
    }
    if let Err(e) = it.status() {
        out.errors.push(e);
    }
    drop(it);
    check_reads(&src, "backward scan", n_idx + 2, file_size, &mut out);

    let mut buf = Vec::new();
    for k in keys.iter().chain(seen.iter()) {
        if let Err(e) = t.get_into(k, &mode.read, &mut buf).map(|l| l.is_found()) {
            out.errors.push(e);
        }
        // One data block, plus the filter block the first time it is used.
        check_reads(&src, "get", 2, file_size, &mut out);
        let mut it = t.iter(&mode.read);
        it.seek(k);
        it.next();
        it.prev();
        if let Err(e) = it.status() {
            out.errors.push(e);
        }
        drop(it);
        // seek, next and prev each may step over empty blocks (as LevelDB does).
        check_reads(&src, "seek", 2 * n_idx + 1, file_size, &mut out);
    }

    let report = t.verify();
    if report.problems.len() as u64 > report.problem_count {
        out.violations
            .push("verify kept more problems than it counted".into());
    }
    out.errors.extend(report.problems);
    // Metaindex, index, filter (and the filter again if this is its first use), then each
    // data block.
    check_reads(&src, "verify", n_idx + 4, file_size, &mut out);
    out
}

fn check_reads(
    src: &leveldb_table::raw::CountingReader<Checked>,
    op: &str,
    max_reads: u64,
    file_size: u64,
    out: &mut Outcome,
) {
    let reads = src.reads();
    if reads > max_reads {
        out.violations
            .push(format!("{op} made {reads} reads (bound {max_reads})"));
    }
    if src.bytes() > reads.max(1) * file_size {
        out.violations.push(format!(
            "{op} asked for {} bytes in {reads} reads of a {file_size}-byte file",
            src.bytes()
        ));
    }
    let bad = src.get_ref().bad_reads.swap(0, Ordering::Relaxed);
    if bad > 0 {
        out.violations
            .push(format!("{op} made {bad} reads past the end of the file"));
    }
    src.reset();
}

/// Every entry of a block that a cursor can reach, as (offset, value): parsing forward from
/// offset 0 and from every restart point, decoding entries as the library does (but without
/// checking `shared`, so this is a superset).
pub fn reachable_entries(block: &[u8]) -> Vec<(usize, Vec<u8>)> {
    let len = block.len();
    if len < 4 {
        return Vec::new();
    }
    let num = coding::decode_fixed32(&block[len - 4..]) as usize;
    if num > (len - 4) / 4 {
        return Vec::new();
    }
    let restarts = len - 4 - 4 * num;
    let mut starts: Vec<usize> = (0..num)
        .map(|i| coding::decode_fixed32(&block[restarts + 4 * i..]) as usize)
        .collect();
    starts.push(0);
    let mut seen: std::collections::BTreeMap<usize, Vec<u8>> = Default::default();
    for s in starts {
        let mut p = s;
        while p < restarts && !seen.contains_key(&p) {
            let d = &block[p..restarts];
            let Some((_, n1)) = coding::decode_varint32(d) else {
                break;
            };
            let Some((ns, n2)) = coding::decode_varint32(&d[n1..]) else {
                break;
            };
            let Some((vl, n3)) = coding::decode_varint32(&d[n1 + n2..]) else {
                break;
            };
            let h = n1 + n2 + n3;
            let (ns, vl) = (ns as usize, vl as usize);
            if d.len() - h < ns.saturating_add(vl) {
                break;
            }
            seen.insert(p, d[h + ns..h + ns + vl].to_vec());
            p += h + ns + vl;
        }
    }
    seen.into_iter().collect()
}

/// Keys to probe a table with: its first keys (user keys for internal tables) and neighbours.
pub fn probe_keys(table: &[u8], n: usize) -> Vec<Vec<u8>> {
    let t = TableReader::open(table, OpenOptions::default()).expect("valid table");
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut keys = Vec::new();
    let mut i = 0;
    while it.valid() {
        if i % 37 == 0 && keys.len() < n {
            let k = if t.is_internal() {
                it.key()[..it.key().len() - 8].to_vec()
            } else {
                it.key().to_vec()
            };
            keys.push(k);
        }
        i += 1;
        it.next();
    }
    keys.push(b"zzzz-not-present".to_vec());
    keys.push(Vec::new());
    keys
}

pub fn shared_cache() -> Arc<leveldb_table::BlockCache> {
    Arc::new(leveldb_table::BlockCache::new(1 << 20))
}
