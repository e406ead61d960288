//! `sst bloom add|check|info` on a scalable bloom filter shared through Redis or a Redis
//! Cluster (`--redis URL[,URL...] [--cluster] --name NAME`) or kept in a local file
//! (`--file PATH`), fed keys one per line on stdin.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};
use sst_bloom::{
    Durability, Error, LayerInfo, RedisBloomFilter, RedisOptions, ScalableBloomFilter,
    ScalableParams, Servers,
};

use super::io::{self, for_each_batch, push_row, write_rows};
use super::rows::check_rows;
use super::target::{merge, print_json, where_json, CheckArgs, KeyArgs, Target};
use crate::exit::{CmdResult, Failure, EXIT_FAIL, EXIT_OK};
use crate::render::output::{OutFormat, RowsOut};

/// An opened scalable filter.
enum Store {
    Redis(Box<RedisBloomFilter>),
    File {
        path: PathBuf,
        filter: ScalableBloomFilter,
    },
}

impl Target {
    fn redis_options(&self) -> RedisOptions {
        let d = RedisOptions::default();
        RedisOptions {
            durability: match self.wait_replicas {
                Some(count) => Durability::Replicas {
                    count,
                    timeout: Duration::from_millis(self.wait_timeout_ms.max(1)),
                },
                None => Durability::Primary,
            },
            bitmap_bits: self.bitmap_bits.unwrap_or(d.bitmap_bits),
            io_timeout: Duration::from_millis(self.io_timeout_ms),
            retry_for: Duration::from_millis(self.retry_budget_ms),
        }
    }

    /// Opens the filter; `create` allows creating a missing one.
    fn open(&self, create: bool) -> Result<Store, Failure> {
        self.open_err(create).map_err(|e| self.describe(&e))
    }

    fn open_err(&self, create: bool) -> Result<Store, Error> {
        self.params().validate()?;
        if let Some(path) = &self.file {
            let name = path.display().to_string();
            let filter = match ScalableBloomFilter::load(path) {
                Ok(f) => {
                    let p = f.params();
                    self.compare(&name, p.capacity, p.fp_rate)?;
                    f
                }
                Err(Error::Io { source, .. })
                    if create && source.kind() == std::io::ErrorKind::NotFound =>
                {
                    ScalableBloomFilter::new(self.params())?
                }
                Err(e) => return Err(e),
            };
            return Ok(Store::File {
                path: path.clone(),
                filter,
            });
        }
        let (Some(list), Some(name)) = (&self.redis, &self.name) else {
            return Err(Error::InvalidArgument("--redis needs --name".into()));
        };
        let servers = Servers::parse(list, self.cluster)?;
        let opts = self.redis_options();
        let f = match RedisBloomFilter::open_on(&servers, name, &opts) {
            Ok(f) => {
                let p = f.params();
                self.compare(name, p.capacity, p.fp_rate)?;
                f
            }
            Err(Error::NotFound { .. }) if create => {
                RedisBloomFilter::create_or_open_on(&servers, name, self.params(), &opts)?
            }
            Err(e) => return Err(e),
        };
        Ok(Store::Redis(Box::new(f)))
    }
}

impl Store {
    /// Adds a batch: (added, already present).
    fn add(&mut self, keys: &[&[u8]]) -> Result<(u64, u64), Error> {
        match self {
            Store::Redis(f) => {
                let s = f.add(keys)?;
                Ok((s.added, s.present))
            }
            Store::File { filter, .. } => {
                let mut added = 0;
                for k in keys {
                    added += u64::from(filter.add(k)?);
                }
                Ok((added, keys.len() as u64 - added))
            }
        }
    }

    fn check(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) -> Result<(), Error> {
        match self {
            Store::Redis(f) => f.check_into(keys, out),
            Store::File { filter, .. } => {
                out.clear();
                out.extend(keys.iter().map(|k| filter.may_contain(k)));
                Ok(())
            }
        }
    }

    fn info(&mut self) -> Result<(ScalableParams, Vec<LayerInfo>), Error> {
        match self {
            Store::Redis(f) => Ok((f.params(), f.layers()?)),
            Store::File { filter, .. } => Ok((filter.params(), filter.layers())),
        }
    }

    fn save(&self) -> Result<(), Error> {
        match self {
            Store::Redis(_) => Ok(()),
            Store::File { path, filter } => filter.save(path),
        }
    }
}

pub fn run_add(a: &KeyArgs) -> CmdResult {
    let t = &a.target;
    let mut store = t.open(true)?;
    let (mut keys, mut added, mut present) = (0u64, 0u64, 0u64);
    let r = for_each_batch(a.hex, |batch| match store.add(batch) {
        Ok((ad, pr)) => {
            keys += batch.len() as u64;
            added += ad;
            present += pr;
            Ok(())
        }
        Err(e) => Err(stopped(t, &e, keys, batch.len() as u64)),
    });
    r?;
    store.save().map_err(|e| t.describe(&e))?;
    let (_, layers) = store.info().map_err(|e| t.describe(&e))?;
    print_json(&merge(
        where_json(t),
        json!({"keys": keys, "added": added, "present": present, "layers": layers.len()}),
    ))?;
    Ok(EXIT_OK)
}

/// An add that stopped at a batch of `batch` keys after `done` keys in whole batches: what
/// was acknowledged goes to stdout (a JSON line with `"complete": false`) and into the
/// message (exit 2). Every key of the first `done` lines was acknowledged, and, of the
/// failed batch, as many as the error says.
fn stopped(t: &Target, e: &Error, done: u64, batch: u64) -> Failure {
    let in_batch = match e {
        Error::AddStopped { acknowledged, .. } => *acknowledged,
        _ => 0,
    };
    let acknowledged = done + in_batch;
    let line = merge(
        where_json(t),
        json!({
            "keys": done + batch,
            "acknowledged": acknowledged,
            "lines_acknowledged": done,
            "complete": false,
        }),
    );
    // Whether stdout takes it or not, the message says it too.
    let _ = print_json(&line);
    let Failure::Exit(_, msg) = t.describe(e) else {
        return t.describe(e);
    };
    Failure::error(format!(
        "{msg}\nsst bloom add: stopped with {acknowledged} keys acknowledged (every key of \
             the first {done} lines, and {in_batch} of the {batch} keys of the batch that \
             failed); adding the keys again is safe"
    ))
}

pub fn run_check(a: &CheckArgs) -> CmdResult {
    let t = &a.keys.target;
    if t.file.is_none() {
        // Stdin read from before the filter is opened, rows written on a thread of their
        // own during the next batch's round trips. The filter is opened once; the other
        // checkers take clones of it (connections of their own, no round trip: a seed
        // found hung by the first is not waited for again).
        let opened: Mutex<Option<RedisBloomFilter>> = Mutex::new(None);
        let all = check_rows(a.keys.hex, a.format, "maybe", || {
            let mut first = opened
                .lock()
                .map_err(|_| Failure::error("sst bloom check: a checker thread panicked"))?;
            let mut f = match first.as_ref() {
                Some(f) => f.clone(),
                None => match t.open(false)? {
                    Store::Redis(f) => {
                        // This one keeps the connections opened; the others start from a
                        // clone without any.
                        *first = Some((*f).clone());
                        *f
                    }
                    Store::File { .. } => return Err(Failure::error("--redis expected")),
                },
            };
            drop(first);
            Ok(move |batch: &[&[u8]], answers: &mut Vec<bool>| {
                f.check_into(batch, answers).map_err(|e| t.describe(&e))
            })
        })?;
        return Ok(if all { EXIT_OK } else { EXIT_FAIL });
    }
    let mut store = t.open(false)?;
    let json = matches!(a.format, OutFormat::Jsonl | OutFormat::Json);
    let mut out = RowsOut::new(io::out(), a.format);
    let mut all = true;
    let mut answers = Vec::new();
    let mut rows = Vec::with_capacity(1 << 20);
    let r = for_each_batch(a.keys.hex, |batch| {
        store
            .check(batch, &mut answers)
            .map_err(|e| t.describe(&e))?;
        for (key, &maybe) in batch.iter().zip(&answers) {
            all &= maybe;
            push_row(&mut rows, key, a.keys.hex, json, "maybe", maybe);
        }
        write_rows(&mut out, &mut rows)
    });
    out.finish()?;
    r?;
    Ok(if all { EXIT_OK } else { EXIT_FAIL })
}

pub fn run_info(t: &Target) -> CmdResult {
    let mut store = t.open(false)?;
    let (params, layers) = store.info().map_err(|e| t.describe(&e))?;
    let rows: Vec<Value> = layers
        .iter()
        .map(|l| {
            json!({
                "capacity": l.capacity,
                "fp_rate": l.fp_rate,
                "bits": l.bits,
                "k": l.k,
                "items": l.items,
                "bits_set": l.bits_set,
                "fill": l.fill(),
                "estimated_fp_rate": l.estimated_fp_rate(),
            })
        })
        .collect();
    let estimated = LayerInfo::compound_fp_rate(&layers);
    print_json(&merge(
        where_json(t),
        json!({
            "store": if t.file.is_some() { "file" } else { "redis" },
            "capacity": params.capacity,
            "fp_rate": params.fp_rate,
            "growth": params.growth,
            "ratio": params.ratio,
            "items": layers.iter().map(|l| l.items).sum::<u64>(),
            "layers": rows,
            "estimated_fp_rate": estimated,
        }),
    ))?;
    Ok(EXIT_OK)
}
