//! The conformance kit's adapter for rusty-leveldb (docs/conformance.md): `read-db` only,
//! since the crate exports no table reader or writer (its table modules are private).
//!
//! ```text
//! adapter capabilities
//! adapter read-db DIR    DB::open (paranoid checks, no create) + DB iterator
//! ```

use std::io::Write;
use std::process::exit;

use rusty_leveldb::{LdbIterator, Options, DB};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn read_db(dir: &str) -> i32 {
    let opts = Options {
        create_if_missing: false,
        paranoid_checks: true,
        ..Options::default()
    };
    let mut db = match DB::open(dir, opts) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("{dir}: {e:?}");
            return 1;
        }
    };
    let mut it = match db.new_iter() {
        Ok(it) => it,
        Err(e) => {
            eprintln!("{dir}: {e:?}");
            return 1;
        }
    };
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let (mut k, mut v) = (Vec::new(), Vec::new());
    while it.advance() {
        if it.current(&mut k, &mut v) {
            let _ = writeln!(out, "{{\"key\":\"{}\",\"value\":\"{}\"}}", hex(&k), hex(&v));
        }
    }
    let _ = out.flush();
    0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let code = match (args.get(1).map(String::as_str), args.len()) {
        (Some("capabilities"), _) => {
            println!(
                "{{\"name\": \"rusty-leveldb 3.0.3\", \"verbs\": [\"read-db\"], \"compressions\": [\"none\", \"snappy\"]}}"
            );
            0
        }
        (Some("read-db"), 3) => read_db(&args[2]),
        (verb, _) => {
            eprintln!("unsupported: {verb:?}");
            3
        }
    };
    exit(code);
}
