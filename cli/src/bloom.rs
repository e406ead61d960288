//! `sst bloom add|check|info`: a scalable bloom filter shared through Redis (`--redis URL
//! --name NAME`) or kept in a local file (`--file PATH`), fed keys one per line on stdin.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sst_bloom::{Error, LayerInfo, RedisBloomFilter, ScalableBloomFilter, ScalableParams};

use crate::common::{self, CmdResult, Failure, LineReader, LinesFormat, EXIT_FAIL, EXIT_OK};

const EXAMPLES: &str = "\
Examples:
  seq 1 100000 | sst bloom add --redis redis://127.0.0.1:6379/ --name seen --capacity 100000
  printf 'a\\nb\\n' | sst bloom check --redis redis://127.0.0.1:6379/ --name seen --format jsonl
  sst bloom info --file seen.bloom

Keys are the raw bytes of each stdin line (without its \\n; with --hex, each line is hex).
The filter is created by the first `add` with --capacity (default 1000000) and --fp-rate
(default 0.01), growth 2 and tightening ratio 0.5; later runs may repeat those flags, and
get an error when they differ from the stored ones. A --file is rewritten atomically
(temporary file, fsync, rename) at the end of `add`.
Exit codes: 0 success (check: every key may be present), 1 check: some key is definitely
absent, 2 usage, Redis or file errors.";

/// Keys sent to Redis per batch (a few round trips each).
const BATCH: usize = 1000;

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
    /// Print the layers, their fill and the estimated false-positive rate as JSON.
    Info(Target),
}

/// Where the filter is and how it is sized.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("store").required(true).args(["redis", "file"])))]
pub struct Target {
    /// Redis server URL (redis://host:port/db) holding the filter.
    #[arg(long, value_name = "URL", requires = "name")]
    pub redis: Option<String>,
    /// The filter's name in Redis.
    #[arg(long, value_name = "NAME", conflicts_with = "file")]
    pub name: Option<String>,
    /// A local filter file instead of Redis.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// Keys the first layer holds (when creating; checked against an existing filter).
    #[arg(long, value_name = "N")]
    pub capacity: Option<u64>,
    /// Target false-positive rate (when creating; checked against an existing filter).
    #[arg(long, value_name = "P")]
    pub fp_rate: Option<f64>,
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

/// An opened filter.
enum Store {
    Redis(RedisBloomFilter),
    File {
        path: PathBuf,
        filter: ScalableBloomFilter,
    },
}

impl Target {
    fn describe(&self, err: &Error) -> Failure {
        match (&self.file, &self.redis, &self.name) {
            // An I/O error names the file itself.
            (Some(_), _, _) if matches!(err, Error::Io { .. }) => Failure::error(err.to_string()),
            (Some(path), _, _) => Failure::error(format!("{}: {err}", path.display())),
            (_, Some(url), Some(name)) => Failure::error(format!("bloom '{name}' at {url}: {err}")),
            _ => Failure::error(err.to_string()),
        }
    }

    /// The parameters to create with: the flags, defaults for the rest.
    fn params(&self) -> ScalableParams {
        let d = ScalableParams::default();
        ScalableParams {
            capacity: self.capacity.unwrap_or(d.capacity),
            fp_rate: self.fp_rate.unwrap_or(d.fp_rate),
            ..d
        }
    }

    /// Errors when a flag given differs from the stored parameters.
    fn compare(&self, name: &str, stored: ScalableParams) -> Result<(), Error> {
        let mismatch = |field, s: String, r: String| Error::Mismatch {
            name: name.to_string(),
            field,
            stored: s,
            requested: r,
        };
        if let Some(c) = self.capacity.filter(|&c| c != stored.capacity) {
            return Err(mismatch(
                "capacity",
                stored.capacity.to_string(),
                c.to_string(),
            ));
        }
        if let Some(p) = self.fp_rate.filter(|&p| p != stored.fp_rate) {
            return Err(mismatch(
                "fp_rate",
                stored.fp_rate.to_string(),
                p.to_string(),
            ));
        }
        Ok(())
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
                    self.compare(&name, f.params())?;
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
        let (Some(url), Some(name)) = (&self.redis, &self.name) else {
            return Err(Error::InvalidArgument("--redis needs --name".into()));
        };
        match RedisBloomFilter::open(url, name) {
            Ok(f) => {
                self.compare(name, f.params())?;
                Ok(Store::Redis(f))
            }
            Err(Error::NotFound { .. }) if create => Ok(Store::Redis(
                RedisBloomFilter::create_or_open(url, name, self.params())?,
            )),
            Err(e) => Err(e),
        }
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

    fn check(&mut self, keys: &[&[u8]]) -> Result<Vec<bool>, Error> {
        match self {
            Store::Redis(f) => f.check(keys),
            Store::File { filter, .. } => Ok(keys.iter().map(|k| filter.may_contain(k)).collect()),
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

/// Reads stdin in batches of keys and hands each batch to `f`.
fn for_each_batch(
    hex: bool,
    mut f: impl FnMut(&[Vec<u8>]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut lines = LineReader::open(Path::new("-"))?;
    let mut batch: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
    let mut line = Vec::new();
    while lines.next_line(&mut line)? {
        let key = if hex {
            common::unhex(common::trim(&line))
                .map_err(|e| Failure::error(format!("<stdin>: line {}: {e}", lines.line_no)))?
        } else {
            line.clone()
        };
        batch.push(key);
        if batch.len() == BATCH {
            f(&batch)?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        f(&batch)?;
    }
    Ok(())
}

fn refs(batch: &[Vec<u8>]) -> Vec<&[u8]> {
    batch.iter().map(Vec::as_slice).collect()
}

fn where_json(t: &Target) -> Value {
    match (&t.file, &t.name) {
        (Some(p), _) => json!({"file": p.display().to_string()}),
        (_, Some(n)) => json!({"name": n}),
        _ => json!({}),
    }
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

fn print_json(v: &Value) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = common::stdout();
    writeln!(out, "{v}")?;
    out.flush()?;
    Ok(())
}

fn run_add(a: &KeyArgs) -> CmdResult {
    let t = &a.target;
    let mut store = t.open(true)?;
    let (mut keys, mut added, mut present) = (0u64, 0u64, 0u64);
    for_each_batch(a.hex, |batch| {
        let (ad, pr) = store.add(&refs(batch)).map_err(|e| t.describe(&e))?;
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
    use std::io::Write;
    let t = &a.keys.target;
    let mut store = t.open(false)?;
    let mut out = crate::output::RowsOut::new(common::stdout(), a.format);
    let mut all = true;
    for_each_batch(a.keys.hex, |batch| {
        let answers = store.check(&refs(batch)).map_err(|e| t.describe(&e))?;
        for (key, maybe) in batch.iter().zip(answers) {
            all &= maybe;
            match a.format {
                LinesFormat::Jsonl | LinesFormat::Json => {
                    let mut row = if a.keys.hex {
                        json!({"key": common::hex(key)})
                    } else {
                        match std::str::from_utf8(key) {
                            Ok(s) => json!({"key": s}),
                            // Not UTF-8: the text is escaped, the exact bytes are in key_hex.
                            Err(_) => {
                                json!({"key": common::escaped(key), "key_hex": common::hex(key)})
                            }
                        }
                    };
                    row["maybe"] = json!(maybe);
                    writeln!(out, "{row}")?;
                }
                LinesFormat::Text => {
                    let mut line = Vec::new();
                    line.extend_from_slice(if maybe { b"maybe\t" } else { b"absent\t" });
                    common::push_text(&mut line, key, a.keys.hex);
                    line.push(b'\n');
                    out.write_all(&line)?;
                }
            }
        }
        Ok(())
    })?;
    out.finish()?;
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
    match &a.action {
        Action::Add(k) => run_add(k),
        Action::Check(c) => run_check(c),
        Action::Info(t) => run_info(t),
    }
}
