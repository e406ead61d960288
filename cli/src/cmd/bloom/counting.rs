//! `sst bloom add|remove|check|info --counting --file F`: a counting bloom filter (4-bit
//! counters, so keys can be removed) kept in a file, rewritten atomically after `add` and
//! `remove`. Removing a key that is not in the filter is reported and changes nothing.

use serde_json::json;
use sst_bloom::{CountingBloomFilter, Error};

use super::io::{self, for_each_batch, push_row, write_rows};
use super::target::{merge, print_json, where_json, KeyArgs, Target};
use crate::exit::{self, CmdResult, Failure, EXIT_FAIL, EXIT_OK};
use crate::render::output::{OutFormat, RowsOut};
use crate::render::text;

/// Refused removals named on stderr before the rest are only counted.
const NAMED_REFUSALS: u64 = 10;

/// Opens the file; `create` allows creating a missing one from the flags.
fn open(t: &Target, create: bool) -> Result<CountingBloomFilter, Failure> {
    let Some(path) = &t.file else {
        return Err(Failure::error("--counting needs --file PATH"));
    };
    let p = t.params();
    p.validate().map_err(|e| t.describe(&e))?;
    match CountingBloomFilter::load(path) {
        Ok(f) => {
            t.compare(&path.display().to_string(), f.capacity(), f.fp_rate())
                .map_err(|e| t.describe(&e))?;
            Ok(f)
        }
        Err(Error::Io { source, .. })
            if create && source.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok(CountingBloomFilter::for_capacity(p.capacity, p.fp_rate))
        }
        Err(e) => Err(t.describe(&e)),
    }
}

fn save(t: &Target, f: &CountingBloomFilter) -> Result<(), Failure> {
    match &t.file {
        Some(path) => f.save(path).map_err(|e| t.describe(&e)),
        None => Ok(()),
    }
}

pub fn run_add(a: &KeyArgs) -> CmdResult {
    let t = &a.target;
    let mut f = open(t, true)?;
    let mut keys = 0u64;
    for_each_batch(a.hex, |batch| {
        for k in batch {
            f.add(k);
        }
        keys += batch.len() as u64;
        Ok(())
    })?;
    save(t, &f)?;
    print_json(&merge(
        where_json(t),
        json!({"keys": keys, "added": keys, "saturated": f.saturated()}),
    ))?;
    Ok(EXIT_OK)
}

pub fn run_remove(a: &KeyArgs) -> CmdResult {
    let t = &a.target;
    let mut f = open(t, false)?;
    let (mut keys, mut removed, mut absent) = (0u64, 0u64, 0u64);
    let mut text = Vec::new();
    for_each_batch(a.hex, |batch| {
        for k in batch {
            keys += 1;
            if f.remove(k) {
                removed += 1;
                continue;
            }
            absent += 1;
            if absent <= NAMED_REFUSALS {
                text.clear();
                text::push_text(&mut text, k, a.hex);
                exit::warn(&format!(
                    "bloom remove: line {keys}: key {} is not in the filter (nothing removed)",
                    String::from_utf8_lossy(&text)
                ));
            }
        }
        Ok(())
    })?;
    if absent > NAMED_REFUSALS {
        exit::warn(&format!(
            "bloom remove: {} more keys were not in the filter",
            absent - NAMED_REFUSALS
        ));
    }
    save(t, &f)?;
    print_json(&merge(
        where_json(t),
        json!({"keys": keys, "removed": removed, "absent": absent}),
    ))?;
    Ok(if absent == 0 { EXIT_OK } else { EXIT_FAIL })
}

pub fn run_check(a: &KeyArgs, format: OutFormat) -> CmdResult {
    let t = &a.target;
    let f = open(t, false)?;
    let json = matches!(format, OutFormat::Jsonl | OutFormat::Json);
    let mut out = RowsOut::new(io::out(), format);
    let mut all = true;
    let mut rows = Vec::with_capacity(1 << 20);
    let r = for_each_batch(a.hex, |batch| {
        for key in batch {
            let maybe = f.may_contain(key);
            all &= maybe;
            push_row(&mut rows, key, a.hex, json, "maybe", maybe);
        }
        write_rows(&mut out, &mut rows)
    });
    out.finish()?;
    r?;
    Ok(if all { EXIT_OK } else { EXIT_FAIL })
}

pub fn run_info(t: &Target) -> CmdResult {
    let f = open(t, false)?;
    let fill = f.nonzero() as f64 / f.counters().max(1) as f64;
    print_json(&merge(
        where_json(t),
        json!({
            "store": "file",
            "kind": "counting",
            "capacity": f.capacity(),
            "fp_rate": f.fp_rate(),
            "counters": f.counters(),
            "k": f.k(),
            "nonzero": f.nonzero(),
            "saturated": f.saturated(),
            "fill": fill,
            "estimated_fp_rate": f.estimated_fp_rate(),
        }),
    ))?;
    Ok(EXIT_OK)
}
