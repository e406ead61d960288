//! `sst blocks` on the corpus: one row per block, equal to the corpus's; bad blocks.

use serde_json::Value;

mod common;

use common::corpus::*;

#[test]
fn blocks_equal_tables_jsonl() {
    for t in corpus() {
        let m = &t.meta;
        let o = sst(&["blocks", p(&t.path), "--format", "jsonl"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let rows = jsonl(&stdout(&o));
        let what = t.path.display().to_string();
        let data: Vec<&Value> = rows.iter().filter(|r| r["type"] == "data").collect();
        let want = m["data_blocks"].as_array().unwrap();
        assert_eq!(data.len(), want.len(), "{what}");
        for (g, w) in data.iter().zip(want) {
            assert_eq!(g["offset"], w[0], "{what}");
            assert_eq!(g["size"], w[1], "{what}");
            assert_eq!(
                g["compression"],
                comp_name(w[2].as_str().unwrap()),
                "{what}"
            );
            assert_eq!(g["entries"], w[3], "{what}");
            assert_eq!(g["checksum_ok"], true);
            assert!(g.get("error").is_none());
            assert!(g["first_key"].is_string() && g["last_key"].is_string());
        }
        // First and last keys of the table.
        assert_eq!(data[0]["first_key"], m["smallest_ikey"]);
        assert_eq!(data[data.len() - 1]["last_key"], m["largest_ikey"]);
        // Data blocks first, in index order; then filter, metaindex, index.
        let types: Vec<&str> = rows.iter().map(|r| r["type"].as_str().unwrap()).collect();
        let mut want_types = vec!["data"; want.len()];
        if !m["filter_handle"].is_null() {
            want_types.push("filter");
        }
        want_types.extend(["metaindex", "index"]);
        assert_eq!(types, want_types, "{what}");
        let by_type = |ty: &str| rows.iter().find(|r| r["type"] == ty).unwrap();
        let (meta, index) = (by_type("metaindex"), by_type("index"));
        assert_eq!(
            (&meta["offset"], &meta["size"]),
            (&m["metaindex_handle"][0], &m["metaindex_handle"][1])
        );
        assert_eq!(
            (&index["offset"], &index["size"]),
            (&m["index_handle"][0], &m["index_handle"][1])
        );
        assert_eq!(index["entries"], m["index_entries"]);
        assert_eq!(
            meta["entries"].as_u64().unwrap() as usize,
            m["metaindex_keys"].as_array().unwrap().len()
        );
        if !m["filter_handle"].is_null() {
            let f = by_type("filter");
            assert_eq!(
                (&f["offset"], &f["size"]),
                (&m["filter_handle"][0], &m["filter_handle"][1])
            );
            assert_eq!(f["entries"], m["filter"]["num_filters"]);
            assert!(f["first_key"].is_null() && f["last_key"].is_null());
            assert_eq!(f["compression"], "none");
        }
        // Text format: one line per block plus a header.
        let o = sst(&["blocks", p(&t.path)]);
        assert_eq!(stdout(&o).lines().count(), rows.len() + 1);
    }
}

#[test]
fn blocks_go_on_past_bad_blocks() {
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "nocompress_bloom")
        .unwrap();
    let blocks = t.meta["data_blocks"].as_array().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut b = std::fs::read(&t.path).unwrap();
    for i in [2usize, 7, 100] {
        b[blocks[i][0].as_u64().unwrap() as usize + 10] ^= 1;
    }
    // And the index block itself.
    let index_at = t.meta["index_handle"][0].as_u64().unwrap() as usize;
    b[index_at + 20] ^= 0x01;
    let bad = dir.path().join("bad.ldb");
    std::fs::write(&bad, &b).unwrap();
    let o = sst(&["blocks", p(&bad), "--format", "jsonl"]);
    assert_eq!(code(&o), 1);
    let rows = jsonl(&stdout(&o));
    let data: Vec<&Value> = rows.iter().filter(|r| r["type"] == "data").collect();
    assert_eq!(data.len(), blocks.len(), "every data block is still listed");
    for (i, r) in data.iter().enumerate() {
        let bad_block = [2, 7, 100].contains(&i);
        assert_eq!(r["checksum_ok"], !bad_block, "block {i}");
        assert_eq!(r.get("error").is_some(), bad_block, "block {i}");
        if bad_block {
            let e = r["error"].as_str().unwrap();
            assert!(
                e.contains(p(&bad)) && e.contains(&format!("offset {}", r["offset"])),
                "{e}"
            );
        }
    }
    let index = rows.iter().find(|r| r["type"] == "index").unwrap();
    assert_eq!(index["checksum_ok"], false);
    // With --no-verify nothing is checked.
    let o = sst(&["blocks", p(&bad), "--format", "jsonl", "--no-verify"]);
    assert_eq!(code(&o), 0);
    assert!(jsonl(&stdout(&o))
        .iter()
        .all(|r| r["checksum_ok"].is_null()));
}
