//! `sst filter`: a lookup through the index and the bloom filter, probe by probe.

use serde_json::Value;

mod common;

use common::corpus::*;

/// LevelDB's Hash, for checking `sst filter`'s probes independently.
fn leveldb_hash(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0xc6a4a793;
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        h = h
            .wrapping_add(u32::from_le_bytes(c.try_into().unwrap()))
            .wrapping_mul(M);
        h ^= h >> 16;
    }
    let t = chunks.remainder();
    if !t.is_empty() {
        if t.len() == 3 {
            h = h.wrapping_add(u32::from(t[2]) << 16);
        }
        if t.len() >= 2 {
            h = h.wrapping_add(u32::from(t[1]) << 8);
        }
        h = h.wrapping_add(u32::from(t[0])).wrapping_mul(M);
        h ^= h >> 24;
    }
    h
}

#[test]
fn filter_explains_lookups() {
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "small_snappy")
        .unwrap();
    let file = p(&t.path);
    let blocks = t.meta["data_blocks"].as_array().unwrap();
    let run = |key_hex: &str| -> Value {
        let o = sst(&["filter", file, "--hex", key_hex, "--format", "json"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let mut absent_excluded = 0;
    for (k, row) in expected_gets(&t.entries).iter().step_by(7) {
        let v = run(k);
        assert_eq!(v["verdict"], "may match", "{k}");
        assert_eq!(v["present"]["state"], "found");
        assert_eq!(v["present"]["seq"], row["seq"]);
        assert_eq!(v["library_filter_excludes"], false);
        assert_eq!(
            v["seek_key"].as_str().unwrap(),
            format!("{k}01ffffffffffffff")
        );
        // The block the key is in.
        let n = v["block"]["number"].as_u64().unwrap() as usize;
        assert_eq!(v["block"]["offset"], blocks[n][0]);
        assert_eq!(
            v["filter"]["index"].as_u64().unwrap(),
            blocks[n][0].as_u64().unwrap() >> 11
        );
        // Probes recomputed here.
        let key = hex::decode(k).unwrap();
        let mut h = leveldb_hash(&key, 0xbc9f1d34);
        assert_eq!(v["filter"]["hash"], h);
        let delta = h.rotate_right(17);
        let bits = v["filter"]["bits"].as_u64().unwrap() as u32;
        let probes = v["filter"]["probes"].as_array().unwrap();
        assert_eq!(probes.len() as u64, v["filter"]["k"].as_u64().unwrap());
        for pr in probes {
            assert_eq!(pr["bit"], h % bits);
            assert_eq!(pr["set"], true);
            h = h.wrapping_add(delta);
        }
        // An absent neighbour: the verdict agrees with the library.
        let absent = format!("{k}7e7e");
        let v = run(&absent);
        assert_eq!(v["present"]["state"], "not found");
        let excluded = v["verdict"] == "definitely absent";
        assert_eq!(v["library_filter_excludes"], excluded, "{absent}: {v}");
        if excluded {
            absent_excluded += 1;
            assert!(v["filter"]["probes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["set"] == false));
        }
    }
    assert!(absent_excluded > 0);
    // Text output.
    let o = sst(&["filter", file, "key-0001"]);
    let text = stdout(&o);
    for needle in [
        "block:      data block 0 at offset 0",
        "probe 0:",
        "verdict:    may match",
        "in table:   found (seq 2)",
    ] {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
    // No filter.
    let nf = case_dir("no_filter").join("000005.ldb");
    let o = sst(&["filter", p(&nf), "k/00001/", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["filter"].is_null());
    assert_eq!(v["verdict"], "may match");
}
