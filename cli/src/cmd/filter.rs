//! `sst filter`: how one key goes through the index and the bloom filter.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use leveldb_table::raw::format::{BLOOM_HASH_SEED, BLOOM_MAX_K, LEGACY_BLOOM_POLICY_NAME};
use leveldb_table::raw::hash::{hash, hash_signed_tail};
use leveldb_table::raw::FilterBlockReader;
use leveldb_table::{error::BlockKind, filter::BloomFilterPolicy, Lookup};
use serde_json::{json, Value};

use crate::exit::{self, CmdResult, Failure, EXIT_OK};
use crate::input::flags::Global;
use crate::input::keys;
use crate::render::output::OutFormat;
use crate::render::{output, text};

const EXAMPLES: &str = "\
Examples:
  sst filter 000005.ldb user:0000042:name
  sst filter 000005.ldb --hex 757365723a30 --format json

Shows the data block the index routes KEY to (for tables of a LevelDB database the index
is searched with user_key + tag(MAX_SEQUENCE, value), as a lookup does), the filter that
covers that block (index = block offset >> base_lg), its bytes (hex up to 64 bytes, else
only the length), k, each probe's bit and whether it is set (h = Hash(key, 0xbc9f1d34),
delta = h rotated right by 17, probe i tests bit (h + i*delta) mod bits), the verdict
(\"may match\" / \"definitely absent\") and whether the key is actually in the table.";

/// Filters longer than this are shown by length only.
const MAX_SHOWN_FILTER_BYTES: usize = 64;

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The table file.
    pub file: PathBuf,
    /// The key (a user key for internal-key tables).
    pub key: OsString,
    /// KEY is given in hex.
    #[arg(long)]
    pub hex: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
}

/// The probes of hash `h` against `filter` (bit array + k byte): (bit, set) pairs, from the
/// library (`raw::bloom::probes`); none for an empty filter or a reserved k.
fn probes(filter: &[u8], h: u32) -> Vec<(u32, bool)> {
    leveldb_table::raw::bloom::probes(filter, h)
        .map(Iterator::collect)
        .unwrap_or_default()
}

fn probes_json(p: &[(u32, bool)]) -> Value {
    Value::Array(
        p.iter()
            .map(|(bit, set)| json!({"bit": bit, "set": set}))
            .collect(),
    )
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    let key = keys::key_arg(&a.key, a.hex, "KEY")?;
    let table = crate::input::table_open::open_table(&a.file, g)?;
    crate::input::order::require_order(&table, &a.file, g, "to route the key to a block")?;
    let internal = table.is_internal();
    let seek = keys::seek_key(internal, &key);
    let fail =
        |e: leveldb_table::Error| Failure::Exit(exit::code_for(&e), exit::describe(&a.file, &e));

    // Index: the first separator >= the seek key names the block.
    let handles = table.data_block_handles().map_err(fail)?;
    let cmp = table.comparator();
    let routed = handles
        .iter()
        .enumerate()
        .find(|(_, (sep, _))| cmp.compare(sep, &seek) != std::cmp::Ordering::Less);
    let block_json = match routed {
        Some((i, (sep, h))) => json!({
            "number": i,
            "offset": h.offset,
            "size": h.size,
            "separator": text::hex(sep),
        }),
        None => Value::Null,
    };

    // Filter.
    let policy_name = table
        .metaindex()
        .iter()
        .find(|(k, _)| k.starts_with(b"filter."))
        .map(|(k, _)| String::from_utf8_lossy(&k[b"filter.".len()..]).into_owned());
    let legacy = policy_name.as_deref() == Some(LEGACY_BLOOM_POLICY_NAME);
    let h = hash(&key, BLOOM_HASH_SEED);
    let mut verdict = "may match";
    let reason: String;
    let filter_json = match (table.filter_handle(), routed) {
        (None, _) => {
            reason = "the table has no filter".into();
            Value::Null
        }
        (Some(_), None) => {
            verdict = "definitely absent";
            reason = "the key is past the last data block: no block is read".into();
            json!({"policy": policy_name})
        }
        (Some(fh), Some((_, (_, bh)))) => {
            let contents = table.read_block(fh, BlockKind::Filter).map_err(fail)?;
            let fb = FilterBlockReader::new(Arc::new(BloomFilterPolicy::new(10)), contents.data);
            let index = (bh.offset >> fb.base_lg().min(63)) as usize;
            let mut fj = json!({
                "policy": policy_name,
                "base_lg": fb.base_lg(),
                "filters": fb.num_filters(),
                "index": index,
                "hash": h,
                "delta": h.rotate_right(17),
            });
            match fb.filter_index(bh.offset).map(|i| (i, fb.filter(i))) {
                None => {
                    reason =
                        format!("no filter {index} in the block: LevelDB treats that as a match")
                }
                Some((_, None)) => {
                    reason = "the filter's offsets are malformed: treated as a match".into()
                }
                Some((_, Some([]))) => {
                    verdict = "definitely absent";
                    reason = "the filter is empty (its range holds no keys)".into();
                    fj["bytes"] = json!(0);
                }
                Some((_, Some(f))) => {
                    let (&k, bits) = f.split_last().unwrap_or((&0, &[]));
                    fj["bytes"] = json!(f.len());
                    fj["hex"] = if f.len() <= MAX_SHOWN_FILTER_BYTES {
                        Value::String(text::hex(f))
                    } else {
                        Value::Null
                    };
                    fj["bits"] = json!(bits.len() * 8);
                    fj["k"] = json!(k);
                    if bits.is_empty() {
                        verdict = "definitely absent";
                        reason = "the filter has no bits".into();
                    } else if k > BLOOM_MAX_K {
                        reason =
                            format!("k = {k} is reserved for other encodings: treated as a match");
                    } else {
                        let p = probes(f, h);
                        let all = p.iter().all(|(_, s)| *s);
                        fj["probes"] = probes_json(&p);
                        let mut pass = all;
                        if legacy {
                            // Pre-1.18 writers hashed tail bytes as signed chars.
                            let hs = hash_signed_tail(&key, BLOOM_HASH_SEED);
                            if hs != h {
                                let ps = probes(f, hs);
                                let alls = ps.iter().all(|(_, s)| *s);
                                fj["signed_tail_hash"] = json!(hs);
                                fj["signed_tail_probes"] = probes_json(&ps);
                                pass |= alls;
                            }
                        }
                        if !pass {
                            verdict = "definitely absent";
                            reason = "a probed bit is clear".into();
                        } else {
                            reason = "every probed bit is set".into();
                        }
                    }
                }
            }
            fj
        }
    };
    let library_excludes = match table.filter() {
        Some(_) => Some(table.filter_excludes(&key).map_err(fail)?),
        None => None,
    };
    let present = match table.get(&key, &g.read_options()).map_err(fail)? {
        Lookup::Found { sequence, .. } => json!({"state": "found", "seq": sequence}),
        Lookup::Deleted { sequence } => json!({"state": "deleted", "seq": sequence}),
        Lookup::NotFound => json!({"state": "not found"}),
    };
    let v = json!({
        "file": a.file.display().to_string(),
        "key": text::hex(&key),
        "internal_keys": internal,
        "seek_key": text::hex(&seek),
        "block": block_json,
        "filter": filter_json,
        "verdict": verdict,
        "reason": reason,
        "library_filter_excludes": library_excludes,
        "present": present,
    });
    let mut out = output::stdout();
    match a.format {
        OutFormat::Json | OutFormat::Jsonl => {
            crate::render::output::write_document(&mut out, &v, a.format)?
        }
        OutFormat::Text => {
            writeln!(
                out,
                "key:        '{}' ({})",
                text::escaped(&key),
                text::hex(&key)
            )?;
            if internal {
                writeln!(
                    out,
                    "seek key:   {} (user key + tag(MAX_SEQUENCE, value))",
                    text::hex(&seek)
                )?;
            }
            match routed {
                Some((i, (sep, h))) => writeln!(
                    out,
                    "block:      data block {i} at offset {} (size {}), index separator '{}'",
                    h.offset,
                    h.size,
                    text::escaped(sep)
                )?,
                None => writeln!(
                    out,
                    "block:      none (the key is past the last data block)"
                )?,
            }
            let f = &v["filter"];
            if f.is_null() {
                writeln!(out, "filter:     none")?;
            } else if !f["index"].is_null() {
                writeln!(
                    out,
                    "filter:     {} filter {} of {} (block offset {} >> base_lg {})",
                    f["policy"].as_str().unwrap_or("?"),
                    f["index"],
                    f["filters"],
                    routed.map_or(0, |(_, (_, h))| h.offset),
                    f["base_lg"]
                )?;
                if !f["bytes"].is_null() {
                    match f["hex"].as_str() {
                        Some(hx) => writeln!(out, "bytes:      {} ({})", f["bytes"], hx)?,
                        None => writeln!(out, "bytes:      {} (not shown)", f["bytes"])?,
                    }
                }
                if !f["k"].is_null() {
                    writeln!(out, "bits:       {}, k = {}", f["bits"], f["k"])?;
                    writeln!(
                        out,
                        "hash:       {:#010x}, delta {:#010x}",
                        h,
                        h.rotate_right(17)
                    )?;
                }
                for (name, field) in [
                    ("probe", "probes"),
                    ("signed-tail probe", "signed_tail_probes"),
                ] {
                    if let Some(ps) = f[field].as_array() {
                        for (i, p) in ps.iter().enumerate() {
                            writeln!(
                                out,
                                "{name} {i}:    bit {:>8} {}",
                                p["bit"],
                                if p["set"] == true { "set" } else { "clear" }
                            )?;
                        }
                    }
                }
            }
            writeln!(out, "verdict:    {verdict} ({reason})")?;
            if let Some(x) = library_excludes {
                writeln!(out, "library:    filter_excludes = {x}")?;
            }
            let st = present["state"].as_str().unwrap_or("?");
            match present["seq"].as_u64() {
                Some(s) => writeln!(out, "in table:   {st} (seq {s})")?,
                None => writeln!(out, "in table:   {st}")?,
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}
