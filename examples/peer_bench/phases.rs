//! Profiling mode (`--only PHASE --repeat R`) and compat mode (`--verify-table`).

use super::*;

// ----------------------------- profiling mode -------------------------------

/// `--only build|open|scan|get-hit|get-miss|seek-hit --repeat R`: one phase, R times, on one table
/// (the table is built first unless the phase is `build`), for `perf record` / callgrind.
pub(crate) fn run_phase(c: &Config, w: &Workload, phase: &str) -> i32 {
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
pub(crate) fn run_db_phase(c: &Config, w: &Workload, phase: &str) -> i32 {
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

pub(crate) fn run_verify(c: &Config, w: &Workload) -> i32 {
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
