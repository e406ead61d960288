//! A small LSM engine from the crate's public pieces (see `engine.rs`), writing a real
//! LevelDB directory.
//!
//! `cargo run --release --example mini_lsm -- DIR [N]`: N random puts and deletions into
//! DIR (created or reopened), then a count of the live keys through the read-only reader.

mod engine;

fn main() -> leveldb_table::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "mini-lsm-db".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let mut db = engine::MiniLsm::open(&dir)?;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = format!("key{:06}", x % 20_000);
        if x % 10 == 0 {
            db.delete(key.as_bytes())?;
        } else {
            db.put(key.as_bytes(), format!("value {i}").as_bytes())?;
        }
    }
    db.flush()?;
    let r = db.reader()?;
    let mut v = r.view()?;
    v.seek_to_first();
    let mut live = 0u64;
    while v.valid() {
        live += 1;
        v.next();
    }
    let (l0, l1) = db.table_counts();
    println!("{dir}: {n} writes, {live} live keys, {l0} level-0 and {l1} level-1 tables, last sequence {}", r.last_sequence());
    Ok(())
}
