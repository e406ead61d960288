//! `sst bloom add|check|remove|info`: a scalable bloom filter shared through Redis or a Redis
//! Cluster (`--redis URL[,URL...] [--cluster] --name NAME`) or kept in a local file
//! (`--file PATH`), or a counting filter in a file (`--counting --file PATH`), fed keys one
//! per line on stdin.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use sst_bloom::{
    Durability, Error, LayerInfo, RedisBloomFilter, RedisOptions, ScalableBloomFilter,
    ScalableParams, Servers,
};

use crate::bloom_io::{self, for_each_batch, push_row, write_rows};
use crate::common::{CmdResult, Failure, LinesFormat, EXIT_FAIL, EXIT_OK};
use crate::output::RowsOut;

const EXAMPLES: &str = "\
Examples:
  seq 1 100000 | sst bloom add --redis redis://127.0.0.1:6379/ --name seen --capacity 100000
  printf 'a\\nb\\n' | sst bloom check --redis redis://127.0.0.1:6379/ --name seen --format jsonl
  seq 1 9 | sst bloom add --cluster --redis redis://127.0.0.1:7000,redis://127.0.0.1:7001 \\
      --name seen --wait-replicas 1
  sst bloom info --file seen.bloom
  printf 'a\\n' | sst bloom remove --counting --file seen.counting

Keys are the raw bytes of each stdin line (without its \\n; with --hex, each line is hex).
The filter is created by the first `add` with --capacity (default 1000000) and --fp-rate
(default 0.01), growth 2 and tightening ratio 0.5; later runs may repeat those flags, and
get an error when they differ from the stored ones. --redis takes one URL, or with --cluster
a comma-separated list of seed nodes of a Redis Cluster. A --file is rewritten atomically
(temporary file, fsync, rename) at the end of `add` and `remove`.
Exit codes: 0 success (check: every key may be present), 1 check: some key is definitely
absent, remove: some key was not in the filter (nothing removed for it), 2 usage, Redis or
file errors.";

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(clap::Subcommand, Debug)]
pub enum Action {
    /// Add the keys on stdin; prints a JSON summary.
    Add(KeyArgs),
    /// Check the keys on stdin, in input order.
    Check(CheckArgs),
    /// Remove the keys on stdin from a counting filter (--counting --file); prints a JSON
    /// summary. A key that is not in the filter is reported and changes nothing.
    Remove(KeyArgs),
    /// Print the filter's parameters, fill and estimated false-positive rate as JSON.
    Info(Target),
}

/// Where the filter is and how it is sized.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("store").required(true).args(["redis", "file"])))]
pub struct Target {
    /// Redis server URL (redis://host:port/db), or with --cluster a comma-separated list of
    /// seed nodes of a Redis Cluster.
    #[arg(long, value_name = "URL[,URL...]", requires = "name")]
    pub redis: Option<String>,
    /// The --redis servers form a Redis Cluster.
    #[arg(long, requires = "redis")]
    pub cluster: bool,
    /// The filter's name in Redis.
    #[arg(long, value_name = "NAME", conflicts_with = "file")]
    pub name: Option<String>,
    /// A local filter file instead of Redis.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// The --file is a counting filter (fixed size; keys can be removed).
    #[arg(long, requires = "file")]
    pub counting: bool,
    /// Keys the first layer holds (when creating; checked against an existing filter).
    #[arg(long, value_name = "N")]
    pub capacity: Option<u64>,
    /// Target false-positive rate (when creating; checked against an existing filter).
    #[arg(long, value_name = "P")]
    pub fp_rate: Option<f64>,
    /// Redis: report a batch added only once this many replicas of every written master
    /// acknowledged it (WAIT); fewer in time is an error and the batch is not counted.
    #[arg(long, value_name = "N", requires = "redis")]
    pub wait_replicas: Option<u32>,
    /// Redis: longest WAIT per master, in milliseconds (with --wait-replicas).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 1000,
        requires = "wait_replicas"
    )]
    pub wait_timeout_ms: u64,
    /// Redis: largest bitmap of a new filter, in bits (a multiple of 8; default 1048576).
    /// Smaller bitmaps spread a small filter over more cluster slots.
    #[arg(long, value_name = "BITS", requires = "redis")]
    pub bitmap_bits: Option<u64>,
}

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct KeyArgs {
    #[command(flatten)]
    pub target: Target,
    /// Each stdin line is a key in hex.
    #[arg(long)]
    pub hex: bool,
}

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct CheckArgs {
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Output format: text (`maybe`/`absent`, a tab, the key) or jsonl
    /// (`{"key": ..., "maybe": bool}`).
    #[arg(long, value_enum, default_value_t = LinesFormat::Text)]
    pub format: LinesFormat,
}

/// An opened scalable filter.
enum Store {
    Redis(Box<RedisBloomFilter>),
    File {
        path: PathBuf,
        filter: ScalableBloomFilter,
    },
}

impl Target {
    pub fn describe(&self, err: &Error) -> Failure {
        match (&self.file, &self.redis, &self.name) {
            // An I/O error names the file itself.
            (Some(_), _, _) if matches!(err, Error::Io { .. }) => Failure::error(err.to_string()),
            (Some(path), _, _) => Failure::error(format!("{}: {err}", path.display())),
            (_, Some(url), Some(name)) => Failure::error(format!("bloom '{name}' at {url}: {err}")),
            _ => Failure::error(err.to_string()),
        }
    }

    /// The parameters to create with: the flags, defaults for the rest.
    pub fn params(&self) -> ScalableParams {
        let d = ScalableParams::default();
        ScalableParams {
            capacity: self.capacity.unwrap_or(d.capacity),
            fp_rate: self.fp_rate.unwrap_or(d.fp_rate),
            ..d
        }
    }

    /// Errors when a flag given differs from the stored parameters.
    pub fn compare(&self, name: &str, capacity: u64, fp_rate: f64) -> Result<(), Error> {
        let mismatch = |field, s: String, r: String| Error::Mismatch {
            name: name.to_string(),
            field,
            stored: s,
            requested: r,
        };
        if let Some(c) = self.capacity.filter(|&c| c != capacity) {
            return Err(mismatch("capacity", capacity.to_string(), c.to_string()));
        }
        if let Some(p) = self.fp_rate.filter(|&p| p != fp_rate) {
            return Err(mismatch("fp_rate", fp_rate.to_string(), p.to_string()));
        }
        Ok(())
    }

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
            ..d
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

pub fn where_json(t: &Target) -> Value {
    match (&t.file, &t.name) {
        (Some(p), _) => json!({"file": p.display().to_string()}),
        (_, Some(n)) => json!({"name": n}),
        _ => json!({}),
    }
}

pub fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

pub fn print_json(v: &Value) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = bloom_io::out();
    writeln!(out, "{v}")?;
    out.flush()?;
    Ok(())
}

fn run_add(a: &KeyArgs) -> CmdResult {
    let t = &a.target;
    let mut store = t.open(true)?;
    let (mut keys, mut added, mut present) = (0u64, 0u64, 0u64);
    for_each_batch(a.hex, |batch| {
        let (ad, pr) = store.add(batch).map_err(|e| t.describe(&e))?;
        keys += batch.len() as u64;
        added += ad;
        present += pr;
        Ok(())
    })?;
    store.save().map_err(|e| t.describe(&e))?;
    let (_, layers) = store.info().map_err(|e| t.describe(&e))?;
    print_json(&merge(
        where_json(t),
        json!({"keys": keys, "added": added, "present": present, "layers": layers.len()}),
    ))?;
    Ok(EXIT_OK)
}

fn run_check(a: &CheckArgs) -> CmdResult {
    let t = &a.keys.target;
    let mut store = t.open(false)?;
    let json = matches!(a.format, LinesFormat::Jsonl | LinesFormat::Json);
    let mut out = RowsOut::new(bloom_io::out(), a.format);
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

fn run_info(t: &Target) -> CmdResult {
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

pub fn run(a: &Args) -> CmdResult {
    let target = match &a.action {
        Action::Add(k) | Action::Remove(k) => &k.target,
        Action::Check(c) => &c.keys.target,
        Action::Info(t) => t,
    };
    if target.counting {
        return crate::bloom_counting::run(a);
    }
    match &a.action {
        Action::Add(k) => run_add(k),
        Action::Check(c) => run_check(c),
        Action::Remove(_) => Err(Failure::error(
            "bloom remove needs a counting filter (--counting --file PATH): a scalable filter \
             cannot remove keys",
        )),
        Action::Info(t) => run_info(t),
    }
}
