//! The flags every `sst bloom` subcommand shares (where the filter is, how it is sized, the
//! Redis options) and the JSON summary lines they print.

use std::path::PathBuf;

use serde_json::{json, Value};
use sst_bloom::{Error, ScalableParams};

use super::io;
use crate::exit::Failure;
use crate::render::output::OutFormat;

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
Redis: a failed or silent server is retried for --retry-budget-ms (default 60000) per step,
each reply waited for at most --io-timeout-ms (default 10000); on a cluster a hung master is
given up as soon as its replica takes over. An add that stops prints, on stderr and in its
JSON line (\"complete\": false), how many keys were acknowledged before it stopped.
Exit codes: 0 success (check: every key may be present), 1 check: some key is definitely
absent, remove: some key was not in the filter (nothing removed for it), 2 usage, Redis or
file errors.";

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
    /// Redis: the I/O timeout, in milliseconds: a server silent this long (no reply, or a
    /// command it does not take) is given up and the commands are sent again; also the
    /// connect timeout. On a cluster a silent master is given up sooner, once another node
    /// serves its slots (a failover).
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "redis")]
    pub io_timeout_ms: u64,
    /// Redis: the retry budget, in milliseconds: how long each step of a batch retries
    /// through failovers, resharding and lost connections before the command fails (exit 2).
    #[arg(long, value_name = "MS", default_value_t = 60_000, requires = "redis")]
    pub retry_budget_ms: u64,
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
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
}

impl Target {
    pub fn describe(&self, err: &Error) -> Failure {
        if let (Error::ClusterNode { node, evidence }, Some(url), Some(name)) =
            (err.root_cause(), &self.redis, &self.name)
        {
            return Failure::error(format!(
                "bloom '{name}' at {url}: {node} is a Redis Cluster node ({evidence}): add \
                 --cluster (and list the cluster's nodes in --redis as seeds)"
            ));
        }
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
    let mut out = io::out();
    writeln!(out, "{v}")?;
    out.flush()?;
    Ok(())
}
