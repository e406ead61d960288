//! `sst stats`: what a table holds, block by block, and how well its filter works.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use leveldb_table::raw::format::COMPRESSION_ID2_ZSTD_OR_ZLIB;
use leveldb_table::raw::internal_key::{self, ValueType};
use leveldb_table::raw::{compress, Block, FilterBlockReader};
use leveldb_table::{
    error::BlockKind, filter::BloomFilterPolicy, raw::format::BlockHandle, BytewiseComparator,
    Error, Lookup, RandomAccess, TableReader,
};
use serde_json::{json, Value};

use leveldb_table::Cursor;

use crate::exit::{self, CmdResult, Failure, EXIT_OK};
use crate::input::flags::Global;
use crate::input::keys;
use crate::render::output::OutFormat;
use crate::render::{output, text};

const EXAMPLES: &str = "\
Examples:
  sst stats 000005.ldb
  sst stats 000005.ldb --format json
  sst stats 000005.ldb --format json --probe 100000    also measure the filter's
                                                        false-positive rate

--probe N makes N keys that are not in the table (each a table key followed by
\"\\xffsst-probe-<i>\", checked absent by a real lookup), routes each through the index and
counts how many the filter of their data block lets through. fp_rate = passed / routed.
The JSON fields are listed in docs/cli.md.";

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The table file.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// Measure the filter's false-positive rate on N absent keys.
    #[arg(long, value_name = "N")]
    pub probe: Option<u64>,
}

#[derive(Default)]
struct CompressionStats {
    blocks: u64,
    stored_bytes: u64,
    raw_bytes: u64,
}

/// LevelDB's k for a bits-per-key setting (the library's formula).
fn k_for(bits_per_key: u64) -> u8 {
    leveldb_table::raw::bloom::k_for_bits_per_key(
        usize::try_from(bits_per_key).unwrap_or(usize::MAX),
    )
}

/// The bits-per-key setting that produces every filter's size and k, if exactly one does.
fn infer_bits_per_key(filters: &[(u64, usize, u8)]) -> Option<u64> {
    let fits = |b: u64| {
        filters.iter().all(|&(keys, bytes, k)| {
            let bits = (keys * b).max(64);
            bits.div_ceil(8) == bytes as u64 && k_for(b) == k
        })
    };
    let mut found = (1..=200u64).filter(|&b| fits(b));
    let first = found.next()?;
    match found.next() {
        None => Some(first),
        Some(_) => None,
    }
}

fn handle_json(h: BlockHandle) -> Value {
    json!({"offset": h.offset, "size": h.size})
}

fn compression_name(table: &TableReader<File>, h: BlockHandle, id: u8) -> &'static str {
    let stored = if id == COMPRESSION_ID2_ZSTD_OR_ZLIB {
        table
            .source()
            .read_at(h.offset, h.size as usize)
            .unwrap_or_default()
    } else {
        Default::default()
    };
    compress::name(id, &stored, table.compression_profile())
}

/// Everything `stats` gathers.
fn gather(
    table: &TableReader<File>,
    path: &Path,
    probe: Option<u64>,
) -> Result<Value, (String, Error)> {
    let fail = |e: Error| (exit::describe(path, &e), e);
    let internal = table.is_internal();
    let footer = table.footer();

    // Filter block first: base_lg decides which filter each data block's keys go to.
    let filter_handle = table.filter_handle();
    let filter_name = table
        .metaindex()
        .iter()
        .find(|(k, _)| k.starts_with(b"filter."))
        .map(|(k, _)| String::from_utf8_lossy(&k[b"filter.".len()..]).into_owned());
    let filter_block = match filter_handle {
        Some(h) => Some(
            table
                .read_block(h, BlockKind::Filter)
                .map(|c| FilterBlockReader::new(Arc::new(BloomFilterPolicy::new(10)), c.data))
                .map_err(fail)?,
        ),
        None => None,
    };
    let nfilters = filter_block.as_ref().map_or(0, |f| f.num_filters());
    let mut keys_per_filter = vec![0u64; nfilters];

    let handles = table.data_block_handles().map_err(fail)?;
    let mut compression: BTreeMap<&'static str, CompressionStats> = BTreeMap::new();
    let (mut entries, mut key_bytes, mut value_bytes) = (0u64, 0u64, 0u64);
    let (mut seq_min, mut seq_max, mut deletions, mut user_keys) = (u64::MAX, 0u64, 0u64, 0u64);
    let mut smallest: Option<Vec<u8>> = None;
    let mut largest: Vec<u8> = Vec::new();
    let mut prev_user: Option<Vec<u8>> = None;
    let mut sample: Vec<Vec<u8>> = Vec::new();
    let want_sample = probe.is_some_and(|n| n > 0) && table.filter().is_some();
    for (_, h) in &handles {
        let c = table.read_block(*h, BlockKind::Data).map_err(fail)?;
        let name = compression_name(table, *h, c.compression);
        let cs = compression.entry(name).or_default();
        cs.blocks += 1;
        cs.stored_bytes += h.size;
        cs.raw_bytes += c.data.len() as u64;
        let block = Block::new(c.data, BlockKind::Data, *h).map_err(fail)?;
        let mut it = block.iter(&BytewiseComparator);
        it.seek_to_first();
        let mut n = 0u64;
        while it.valid() {
            let k = it.key();
            n += 1;
            key_bytes += k.len() as u64;
            value_bytes += it.value().len() as u64;
            if smallest.is_none() {
                smallest = Some(k.to_vec());
            }
            largest.clear();
            largest.extend_from_slice(k);
            let uk = if internal {
                internal_key::user_key(k)
            } else {
                k
            };
            if let Some(p) = internal
                .then(|| internal_key::parse_internal_key(k))
                .flatten()
            {
                seq_min = seq_min.min(p.sequence);
                seq_max = seq_max.max(p.sequence);
                if p.value_type == ValueType::Deletion {
                    deletions += 1;
                }
            }
            if prev_user.as_deref() != Some(uk) {
                user_keys += 1;
                if want_sample {
                    sample.push(uk.to_vec());
                }
                prev_user = Some(uk.to_vec());
            }
            it.next();
        }
        if let Err(e) = it.status() {
            return Err(fail(e));
        }
        entries += n;
        if let Some(i) = filter_block.as_ref().and_then(|f| f.filter_index(h.offset)) {
            keys_per_filter[i] += n;
        }
    }

    let filter_json = match (&filter_block, filter_handle) {
        (Some(fb), Some(fh)) => {
            let mut empty = 0u64;
            let mut malformed = 0u64;
            let mut sizes = Vec::new(); // (keys, bytes without k, k) of non-empty filters
            let mut bpk = Vec::new();
            let mut k_values = BTreeMap::<u8, u64>::new();
            for (i, &keys) in keys_per_filter.iter().enumerate() {
                match fb.filter(i) {
                    None => malformed += 1,
                    Some([]) => empty += 1,
                    Some(f) => {
                        let (&k, bits) = f.split_last().unwrap_or((&0, &[]));
                        *k_values.entry(k).or_default() += 1;
                        if keys > 0 {
                            bpk.push(bits.len() as f64 * 8.0 / keys as f64);
                            sizes.push((keys, bits.len(), k));
                        }
                    }
                }
            }
            let kpf: Vec<u64> = sizes.iter().map(|s| s.0).collect();
            let mean = |v: &[f64]| {
                if v.is_empty() {
                    None
                } else {
                    Some(v.iter().sum::<f64>() / v.len() as f64)
                }
            };
            let kpf_f: Vec<f64> = kpf.iter().map(|&x| x as f64).collect();
            let k_main = k_values.iter().max_by_key(|(_, n)| **n).map(|(k, _)| *k);
            let mut fj = json!({
                "policy": filter_name,
                "used_for_lookups": table.filter().is_some(),
                "offset": fh.offset,
                "bytes": fh.size,
                "base_lg": fb.base_lg(),
                "filters": nfilters,
                "empty_filters": empty,
                "malformed_filters": malformed,
                "keys_per_filter": {
                    "min": kpf.iter().min(),
                    "mean": mean(&kpf_f),
                    "max": kpf.iter().max(),
                },
                "bits_per_key": mean(&bpk),
                "bits_per_key_setting": infer_bits_per_key(&sizes),
                "k": k_main,
                "k_values": k_values.keys().collect::<Vec<_>>(),
            });
            if let Some(n) = probe {
                fj["probe"] = if table.filter().is_some() {
                    probe_fp(table, &sample, n).map_err(fail)?
                } else {
                    json!({"error": "the filter is not used for lookups (unknown policy or unreadable)"})
                };
            }
            fj
        }
        _ => Value::Null,
    };

    let index_c = table
        .read_block(footer.index, BlockKind::Index)
        .map_err(fail)?;
    let meta_keys: Vec<String> = table
        .metaindex()
        .iter()
        .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
        .collect();
    let mut compression_json = serde_json::Map::new();
    for (name, c) in &compression {
        compression_json.insert(
            (*name).to_string(),
            json!({"blocks": c.blocks, "stored_bytes": c.stored_bytes, "raw_bytes": c.raw_bytes}),
        );
    }
    let (stored, raw) = compression
        .values()
        .fold((0, 0), |a, c| (a.0 + c.stored_bytes, a.1 + c.raw_bytes));
    Ok(json!({
        "file": path.display().to_string(),
        "file_bytes": table.file_size(),
        "internal_keys": internal,
        "entries": entries,
        "data_blocks": handles.len(),
        "raw_key_bytes": key_bytes,
        "raw_value_bytes": value_bytes,
        "data_stored_bytes": stored,
        "data_raw_bytes": raw,
        "compression": compression_json,
        "index": {
            "entries": handles.len(),
            "bytes": footer.index.size,
            "offset": footer.index.offset,
            "raw_bytes": index_c.data.len(),
            "compression": compression_name(table, footer.index, index_c.compression),
        },
        "metaindex": meta_keys,
        "footer": {"metaindex": handle_json(footer.metaindex), "index": handle_json(footer.index)},
        "filter": filter_json,
        "smallest_key": smallest.as_deref().map(text::hex),
        "largest_key": smallest.as_ref().map(|_| text::hex(&largest)),
        "smallest_key_text": smallest.as_deref().map(|k| text::key_text(k, internal)),
        "largest_key_text": smallest.as_ref().map(|_| text::key_text(&largest, internal)),
        "user_keys": user_keys,
        "seq_min": (internal && entries > 0).then_some(seq_min),
        "seq_max": (internal && entries > 0).then_some(seq_max),
        "deletions": internal.then_some(deletions),
    }))
}

/// Measures the filter's false-positive rate on `n` keys made absent from `sample`.
fn probe_fp(table: &TableReader<File>, sample: &[Vec<u8>], n: u64) -> Result<Value, Error> {
    let internal = table.is_internal();
    let end = table.footer().metaindex.offset;
    let opts = leveldb_table::ReadOptions::default().fill_cache(false);
    let (mut tried, mut present, mut routed, mut passed) = (0u64, 0u64, 0u64, 0u64);
    let mut key = Vec::new();
    if !sample.is_empty() {
        for i in 0..n {
            // Spread the probes over the table: a stride coprime with most sizes.
            let base = &sample[((i.wrapping_mul(7919)) % sample.len() as u64) as usize];
            key.clear();
            key.extend_from_slice(base);
            key.extend_from_slice(b"\xffsst-probe-");
            key.extend_from_slice(i.to_string().as_bytes());
            tried += 1;
            if !matches!(table.get(&key, &opts)?, Lookup::NotFound) {
                present += 1;
                continue;
            }
            let seek = keys::seek_key(internal, &key);
            if table.approximate_offset_of(&seek) >= end {
                continue; // past the last block: no filter is consulted
            }
            routed += 1;
            if !table.filter_excludes(&key)? {
                passed += 1;
            }
        }
    }
    Ok(json!({
        "keys": tried,
        "present": present,
        "absent": tried - present,
        "routed": routed,
        "passed": passed,
        "fp_rate": if routed > 0 { Some(passed as f64 / routed as f64) } else { None },
    }))
}

fn text(v: &Value, out: &mut impl Write) -> std::io::Result<()> {
    let s = |v: &Value| match v {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if !n.is_u64() && !n.is_i64() => format!("{f:.3}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    };
    writeln!(out, "file:             {}", s(&v["file"]))?;
    writeln!(out, "file bytes:       {}", s(&v["file_bytes"]))?;
    writeln!(
        out,
        "keys:             {}",
        if v["internal_keys"] == true {
            "internal (LevelDB database table)"
        } else {
            "plain"
        }
    )?;
    writeln!(out, "entries:          {}", s(&v["entries"]))?;
    writeln!(out, "data blocks:      {}", s(&v["data_blocks"]))?;
    writeln!(out, "raw key bytes:    {}", s(&v["raw_key_bytes"]))?;
    writeln!(out, "raw value bytes:  {}", s(&v["raw_value_bytes"]))?;
    writeln!(
        out,
        "data bytes:       {} stored, {} uncompressed",
        s(&v["data_stored_bytes"]),
        s(&v["data_raw_bytes"])
    )?;
    if let Some(m) = v["compression"].as_object() {
        for (name, c) in m {
            writeln!(
                out,
                "  {name:<12}    {} blocks, {} stored, {} uncompressed",
                s(&c["blocks"]),
                s(&c["stored_bytes"]),
                s(&c["raw_bytes"])
            )?;
        }
    }
    let i = &v["index"];
    writeln!(
        out,
        "index:            {} entries, {} bytes at {} ({})",
        s(&i["entries"]),
        s(&i["bytes"]),
        s(&i["offset"]),
        s(&i["compression"])
    )?;
    let f = &v["footer"];
    writeln!(
        out,
        "footer:           metaindex {}+{}, index {}+{}",
        s(&f["metaindex"]["offset"]),
        s(&f["metaindex"]["size"]),
        s(&f["index"]["offset"]),
        s(&f["index"]["size"])
    )?;
    let mk: Vec<String> = v["metaindex"]
        .as_array()
        .map(|a| a.iter().map(s).collect())
        .unwrap_or_default();
    writeln!(
        out,
        "metaindex keys:   {}",
        if mk.is_empty() {
            "-".into()
        } else {
            mk.join(", ")
        }
    )?;
    for (label, which) in [
        ("smallest key:     ", "smallest"),
        ("largest key:      ", "largest"),
    ] {
        match v[format!("{which}_key_text")].as_str() {
            Some(text) => writeln!(out, "{label}{text} ({})", s(&v[format!("{which}_key")]))?,
            None => writeln!(out, "{label}-")?,
        }
    }
    writeln!(out, "user keys:        {}", s(&v["user_keys"]))?;
    if v["internal_keys"] == true {
        writeln!(
            out,
            "sequence range:   {} .. {}",
            s(&v["seq_min"]),
            s(&v["seq_max"])
        )?;
        writeln!(out, "deletions:        {}", s(&v["deletions"]))?;
    }
    let f = &v["filter"];
    if f.is_null() {
        writeln!(out, "filter:           none")?;
    } else {
        writeln!(
            out,
            "filter:           {} ({} bytes at {})",
            s(&f["policy"]),
            s(&f["bytes"]),
            s(&f["offset"])
        )?;
        writeln!(
            out,
            "  filters:        {} ({} empty, {} malformed), base_lg {}",
            s(&f["filters"]),
            s(&f["empty_filters"]),
            s(&f["malformed_filters"]),
            s(&f["base_lg"])
        )?;
        let kpf = &f["keys_per_filter"];
        writeln!(
            out,
            "  keys/filter:    min {} mean {} max {}",
            s(&kpf["min"]),
            s(&kpf["mean"]),
            s(&kpf["max"])
        )?;
        writeln!(
            out,
            "  bits per key:   {} (setting {})",
            s(&f["bits_per_key"]),
            s(&f["bits_per_key_setting"])
        )?;
        writeln!(out, "  k:              {}", s(&f["k"]))?;
        let p = &f["probe"];
        if !p.is_null() {
            writeln!(
                out,
                "  false positives: {} of {} routed absent keys ({} probes, {} present): rate {}",
                s(&p["passed"]),
                s(&p["routed"]),
                s(&p["keys"]),
                s(&p["present"]),
                s(&p["fp_rate"])
            )?;
        }
    }
    Ok(())
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    let table = crate::input::table_open::open_table(&a.file, g)?;
    let v = match gather(&table, &a.file, a.probe) {
        Ok(v) => v,
        Err((msg, e)) => return Err(Failure::Exit(exit::code_for(&e), msg)),
    };
    let mut out = output::stdout();
    match a.format {
        OutFormat::Json | OutFormat::Jsonl => {
            crate::render::output::write_document(&mut out, &v, a.format)?
        }
        OutFormat::Text => text(&v, &mut out)?,
    }
    out.flush()?;
    Ok(EXIT_OK)
}
