//! `sst stats` on the corpus: the statistics equal the corpus's, the false-positive probe.

use std::collections::BTreeMap;

use serde_json::Value;

mod common;

use common::corpus::*;

#[test]
fn stats_equal_tables_jsonl() {
    for t in corpus() {
        let m = &t.meta;
        let o = sst(&["stats", p(&t.path), "--format", "json"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let s: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let what = t.path.display().to_string();
        assert_eq!(s["entries"], m["num_entries"], "{what}");
        assert_eq!(s["data_blocks"], m["num_data_blocks"], "{what}");
        assert_eq!(s["file_bytes"], m["size"], "{what}");
        assert_eq!(s["internal_keys"], true);
        let comp: BTreeMap<String, u64> = s["compression"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v["blocks"].as_u64().unwrap()))
            .collect();
        let want: BTreeMap<String, u64> = m["data_block_compression"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (comp_name(k).to_string(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(comp, want, "{what}: compression");
        let stored: u64 = m["data_blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[1].as_u64().unwrap())
            .sum();
        assert_eq!(s["data_stored_bytes"], stored, "{what}");
        assert_eq!(s["index"]["entries"], m["index_entries"], "{what}");
        assert_eq!(
            s["index"]["compression"],
            comp_name(m["index_block_compression"].as_str().unwrap())
        );
        assert_eq!(s["metaindex"], m["metaindex_keys"], "{what}");
        assert_eq!(s["footer"]["metaindex"]["offset"], m["metaindex_handle"][0]);
        assert_eq!(s["footer"]["metaindex"]["size"], m["metaindex_handle"][1]);
        assert_eq!(s["footer"]["index"]["offset"], m["index_handle"][0]);
        assert_eq!(s["footer"]["index"]["size"], m["index_handle"][1]);
        assert_eq!(s["smallest_key"], m["smallest_ikey"], "{what}");
        assert_eq!(s["largest_key"], m["largest_ikey"], "{what}");
        assert_eq!(s["deletions"], m["num_deletions"], "{what}");
        assert_eq!(s["user_keys"], m["num_distinct_user_keys"], "{what}");
        assert_eq!(s["seq_min"], m["seq_range"][0], "{what}");
        assert_eq!(s["seq_max"], m["seq_range"][1], "{what}");
        let key_bytes: u64 = t
            .entries
            .iter()
            .map(|e| e["ikey"].as_str().unwrap().len() as u64 / 2)
            .sum();
        let value_bytes: u64 = t
            .entries
            .iter()
            .map(|e| {
                e["value"]
                    .as_str()
                    .map_or_else(|| e["value_len"].as_u64().unwrap(), |v| v.len() as u64 / 2)
            })
            .sum();
        assert_eq!(s["raw_key_bytes"], key_bytes, "{what}");
        assert_eq!(s["raw_value_bytes"], value_bytes, "{what}");
        let f = &s["filter"];
        if m["filter"].is_null() {
            assert!(f.is_null(), "{what}: filter {f}");
            continue;
        }
        let mf = &m["filter"];
        assert_eq!(f["policy"], mf["policy"], "{what}");
        assert_eq!(f["filters"], mf["num_filters"], "{what}");
        assert_eq!(
            f["filters"].as_u64().unwrap() - f["empty_filters"].as_u64().unwrap(),
            mf["num_nonempty_filters"].as_u64().unwrap(),
            "{what}: non-empty filters"
        );
        assert_eq!(f["k_values"], mf["probes_k"], "{what}");
        assert_eq!(f["k"], mf["probes_k"][0], "{what}");
        assert_eq!(f["base_lg"], mf["base_lg"], "{what}");
        assert_eq!(f["bits_per_key_setting"], mf["bits_per_key"], "{what}");
        // Measured bits per key: at least the setting; under setting + 1 unless some filter
        // is so small that LevelDB's 64-bit minimum applies.
        let bpk = f["bits_per_key"].as_f64().unwrap();
        let set = mf["bits_per_key"].as_f64().unwrap();
        assert!(bpk >= set, "{what}: measured bits/key {bpk} vs {set}");
        if f["keys_per_filter"]["min"].as_f64().unwrap() * set >= 64.0 {
            assert!(bpk < set + 1.0, "{what}: measured bits/key {bpk} vs {set}");
        }
        assert_eq!(f["malformed_filters"], 0);
        assert_eq!(f["offset"], m["filter_handle"][0]);
        assert_eq!(f["bytes"], m["filter_handle"][1]);
        let kpf = &f["keys_per_filter"];
        let (min, max) = (kpf["min"].as_u64().unwrap(), kpf["max"].as_u64().unwrap());
        let mean = kpf["mean"].as_f64().unwrap();
        assert!(min as f64 <= mean && mean <= max as f64 && min >= 1);
        let n_nonempty = mf["num_nonempty_filters"].as_f64().unwrap();
        assert!(
            (mean * n_nonempty - m["num_entries"].as_f64().unwrap()).abs() < 1e-6,
            "{what}: keys per filter add up"
        );
    }
}

#[test]
fn stats_probe_measures_false_positives() {
    let rate = |case: &str| -> (Value, f64) {
        let f = case_dir(case).join("000005.ldb");
        let o = sst(&["stats", p(&f), "--format", "json", "--probe", "20000"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let s: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let pr = s["filter"]["probe"].clone();
        assert_eq!(pr["keys"], 20000);
        assert_eq!(pr["present"], 0);
        assert!(pr["routed"].as_u64().unwrap() > 10000, "{pr}");
        (pr.clone(), pr["fp_rate"].as_f64().unwrap())
    };
    let (_, r20) = rate("bloom_bits_20");
    let (_, r10) = rate("nocompress_bloom");
    let (_, r4) = rate("bloom_bits_4");
    assert!(r20 < 0.005, "bits 20: {r20}");
    assert!(r10 > 0.001 && r10 < 0.03, "bits 10: {r10}");
    assert!(r4 > 0.08 && r4 < 0.3, "bits 4: {r4}");
    // Deterministic.
    let (a, _) = rate("bloom_bits_4");
    let (b, _) = rate("bloom_bits_4");
    assert_eq!(a, b);
    // Text output and a table without a filter.
    let f = case_dir("no_filter").join("000005.ldb");
    let o = sst(&["stats", p(&f), "--probe", "100"]);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("filter:           none"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("entries:          3000"));
}
