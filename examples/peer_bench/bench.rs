//! Benchmark mode (the harness protocol) and its database-level rows.

use super::*;

// ----------------------------- benchmark mode --------------------------------

pub(crate) fn run_bench(c: &Config, w: &Workload) -> i32 {
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
pub(crate) fn db_gets(db: &Db, w: &Workload) -> (f64, f64, u64) {
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
pub(crate) fn db_fields(j: &mut Json, c: &Config, w: &Workload) -> u64 {
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
