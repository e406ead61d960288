//! The JSON contract of IndexedDB rows (docs/indexeddb.md), checked against what a real
//! Chromium wrote and read back: testdata/idb/contract (tools/gen_idb_contract_fixture.sh,
//! page tools/idb_fixture/contract.html) and the page's reading of it,
//! testdata/idb/contract.expected.json.
//!
//! Every record's key and value print exactly as the page mapped what it read back (plain
//! objects shaped like the contract's forms never print like the real types; Errors with
//! their causes and stacks; lone surrogates kept), `sst db get --database --store KEY`
//! answers every lookup as the page's `get()` did, every printed key looks its own record
//! up, and rows carry the origin.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

mod common;

use common::sst;

#[path = "idb_contract/helpers.rs"]
mod helpers;

use helpers::*;

#[test]
fn every_record_prints_as_chromium_read_it_back() {
    let exp = expected();
    let rows = record_rows();
    let mut ours: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        ours.entry(&r.store).or_default().push(r);
    }
    let mut theirs: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for r in exp["records"].as_array().unwrap() {
        theirs
            .entry(r["store"].as_str().unwrap())
            .or_default()
            .push(r);
    }
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    let (mut exact, mut subset) = (0, 0);
    for (store, want) in &theirs {
        let got = &ours[store];
        assert_eq!(got.len(), want.len(), "{store}");
        for (g, w) in got.iter().zip(want) {
            // Keys: the same text, in Chromium's order.
            assert_eq!(g.key, w["key"].as_str().unwrap(), "{store}");
            let wd = w["data"].as_str().unwrap();
            if !wd.contains("$subset") {
                assert_eq!(g.data, wd, "{store} {}", g.key);
                exact += 1;
                continue;
            }
            // "$pixels": the pixels the page drew from the bitmap it read back (RGBA).
            let gv = parse(&g.data);
            let pixels = match gv.get("pixels") {
                Some(p) if rgba(&gv) == exp["extra"]["bitmap_pixels"] => p.as_str().unwrap(),
                _ => "",
            };
            assert!(
                matches(&gv, &parse(wd), pixels),
                "{store} {}:\n{}\n{wd}",
                g.key,
                g.data
            );
            subset += 1;
        }
    }
    assert_eq!((exact, subset), (73, 4));
    assert_eq!(
        exp["extra"]["bitmap_pixels"],
        "ff0000ff00ff00ff0000ffffffffffff"
    );
}

#[test]
fn plain_objects_never_print_like_the_real_types() {
    let rows = record_rows();
    let data = |k: &str| {
        let key = format!("\"{k}\"");
        let r = rows.iter().find(|r| r.store == "plain" && r.key == key);
        parse(&r.unwrap_or_else(|| panic!("no record {k}")).data)
    };
    let marker = |v: &Value| matches!(consume(v), Value::Array(a) if a[0] == "$");
    let (like, real) = (data("like a date"), data("a real date"));
    assert_ne!(like, real);
    assert!(!marker(&like) && marker(&real));
    for k in [
        "like a ref",
        "like undefined",
        "like NaN",
        "like a bigint",
        "like an error",
        "like a buffer",
        "like a map",
        "like an array",
        "like a blob",
    ] {
        let v = data(k);
        assert!(!marker(&v), "{k}: {v}");
        // Read back by the rule, it is the page's object, "$type" or "$ref" and all.
        let page = consume(&v);
        assert!(
            page.get("$type").is_some() || page.get("$ref").is_some(),
            "{k}"
        );
    }
    // The rule undoes the escaping exactly.
    let dollars = consume(&data("dollars"));
    let keys: Vec<&str> = dollars
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut want = vec!["$", "$$", "$$type", "$$$ref", "$x", "a$", "$type "];
    want.sort();
    assert_eq!(keys, want);
    // Nested ones too, in Maps and Sets and sparse arrays' properties; the real Map is ours.
    let nested = data("nested");
    assert!(marker(&nested["map"]) && !marker(&nested["outer"]) && !marker(&nested["list"][0]));
    assert_eq!(nested["map"]["entries"][1][0]["$$type"], "date");
    assert_eq!(nested["set"]["values"][0], serde_json::json!({"$$ref": 0}));
    let decorated = data("decorated array");
    assert_eq!(
        decorated["properties"],
        serde_json::json!({"$$type": "date", "$$ref": 0})
    );
    // The real types, beside them.
    let real = data("real types");
    for k in ["date", "undef", "nan", "big", "buf", "map", "set", "sparse"] {
        assert!(marker(&real[k]), "{k}");
    }
    assert_eq!(data("a real cycle")["self"], serde_json::json!({"$ref": 0}));
}

#[test]
fn an_own_proto_property_is_shown_as_chromium_keeps_it() {
    let exp = expected();
    let rows = record_rows();
    let r = rows
        .iter()
        .find(|r| r.key == "\"own __proto__ number\"")
        .unwrap();
    assert_eq!(r.data, r#"{"before":1,"__proto__":7,"after":2}"#);
    // Chromium's read-back has it as an own property (not the prototype).
    let extra = &exp["extra"]["own __proto__ number"];
    assert_eq!(
        extra["own_keys"],
        serde_json::json!(["before", "__proto__", "after"])
    );
    assert_eq!(extra["proto_is_object_prototype"], true);
}

#[test]
fn errors_carry_their_cause_and_stack() {
    let rows = record_rows();
    let data = |k: &str| {
        let key = format!("\"{k}\"");
        parse(
            &rows
                .iter()
                .find(|r| r.store == "errors" && r.key == key)
                .unwrap()
                .data,
        )
    };
    let e = data("nested causes");
    let chain = [&e, &e["cause"], &e["cause"]["cause"]];
    let names: Vec<&str> = chain.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Error", "TypeError", "RangeError"]);
    for x in chain {
        assert_eq!(x["$type"], "error");
        // The stack names the script that made the error, and its line.
        let stack = x["stack"].as_str().unwrap();
        assert!(stack.contains("/contract.html:"), "{stack}");
    }
    assert!(e["cause"]["cause"].get("cause").is_none());
    let plain = data("plain object cause");
    assert_eq!(plain["cause"]["code"], 42);
    assert_eq!(plain["cause"]["$$type"], "date");
    assert_eq!(
        plain["cause"]["when"],
        serde_json::json!({"$type": "date", "value": 9})
    );
    assert_eq!(data("string cause")["cause"], "just text");
    assert_eq!(
        data("undefined cause")["cause"],
        serde_json::json!({"$type": "undefined"})
    );
    assert_eq!(data("null cause")["cause"], Value::Null);
    assert_eq!(
        data("cycle through cause")["err"]["cause"],
        serde_json::json!({"$ref": 0})
    );
    assert_eq!(
        data("stack replaced")["stack"],
        "custom stack\n    at nowhere (x.js:1:1)"
    );
    assert!(data("stack not a string").get("stack").is_none());
    assert!(data("no message").get("cause").is_none());
}

#[test]
fn lookups_by_indexeddb_key_answer_as_chromium_get_did() {
    let exp = expected();
    let mut by_store: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for l in exp["lookups"].as_array().unwrap() {
        by_store
            .entry(l["store"].as_str().unwrap())
            .or_default()
            .push(l);
    }
    let d = dir();
    let mut answered = 0;
    for (store, lookups) in &by_store {
        let keys: Vec<&str> = lookups.iter().map(|l| l["key"].as_str().unwrap()).collect();
        let mut args = vec!["db", "get", &d, "--database", "contract", "--store", store];
        // `--`: keys such as -1e+21 after it (clap reads them as options otherwise).
        args.extend(["--format", "jsonl", "--"]);
        args.extend(&keys);
        let (code, out, err) = sst(&args);
        let all_found = lookups.iter().all(|l| l["found"] == true);
        assert_eq!(code, if all_found { 0 } else { 1 }, "{store}: {err}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), lookups.len(), "{store}: one row per key");
        for (line, l) in lines.iter().zip(lookups) {
            let row = parse(line);
            assert_eq!(row["found"], l["found"], "{store} {}", l["key"]);
            assert_eq!(row["idb"]["store_name"], *store);
            if l["found"] == true {
                assert_eq!(
                    raw(line, "data", None),
                    l["data"].as_str(),
                    "{store} {}",
                    l["key"]
                );
            } else {
                assert!(raw(line, "data", None).is_none());
            }
            answered += 1;
        }
    }
    assert_eq!(answered, 56);
    // Text rows: found, absent, deleted; negative numbers need no `--`, nor --database
    // when one database has the store.
    let (code, out, _) = sst(&[
        "db",
        "get",
        &d,
        "--database",
        "contract",
        "--store",
        "keys",
        "7",
    ]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "contract / keys / 7 @ 238 => v4 | {\"i\":2,\"note\":\"key 2\"}\n"
        )
    );
    let (code, out, _) = sst(&[
        "db",
        "get",
        &d,
        "--store",
        "keys",
        "\"deleted\"",
        "2",
        "-1.5",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("contract / keys / -1.5 @ "), "{out}");
    assert!(
        out.contains("contract / keys / \"deleted\": deleted @"),
        "{out}"
    );
    assert!(out.contains("contract / keys / 2: not found"), "{out}");
}

#[test]
fn every_printed_key_looks_its_own_record_up() {
    let d = dir();
    let rows = record_rows();
    let mut by_store: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        by_store.entry(&r.store).or_default().push(r);
    }
    for (store, rs) in by_store {
        let mut args = vec!["db", "get", &d, "--database", "contract", "--store", store];
        args.extend(["--format", "jsonl", "--"]);
        args.extend(rs.iter().map(|r| r.key.as_str()));
        let (code, out, err) = sst(&args);
        assert_eq!(code, 0, "{store}: {err}");
        for (line, r) in out.lines().zip(&rs) {
            assert_eq!(raw(line, "key", Some("kind")), Some(r.key.as_str()));
            assert_eq!(parse(line)["seq"], r.seq, "{store} {}", r.key);
            assert_eq!(raw(line, "data", None), Some(r.data.as_str()));
        }
    }
}

#[test]
fn lone_surrogates_are_kept_in_keys_values_and_text_rows() {
    let d = dir();
    let (code, out, _) = sst(&[
        "db",
        "scan",
        &d,
        "--database",
        "contract",
        "--store",
        "surrogates",
    ]);
    assert_eq!(code, 0);
    assert!(!out.contains('\u{fffd}'), "{out}");
    for want in [
        r#"contract / surrogates / "a\ud800b" @ "#,
        r#"contract / surrogates / "\udc00" @ "#,
        r#"contract / surrogates / "\udfff\ud800" @ "#,
        r#"contract / surrogates / ["k\ud800",1] @ "#,
        r#""text":"v\udc010","p\ud801":"lone in a property name","map":{"$type":"map","entries":[["\ud802","\ud803"]]}"#,
    ] {
        assert!(out.contains(want), "{want} not in\n{out}");
    }
    // A surrogate pair is one character, not two escapes.
    assert!(
        out.contains("contract / surrogates / \"x\u{10ffff}\" @ "),
        "{out}"
    );
}

#[test]
fn rows_carry_the_origin_as_local_storage_writes_it() {
    let exp = expected();
    let origin = exp["origin"].as_str().unwrap();
    assert!(origin.starts_with("http://127.0.0.1:"));
    let (code, out, _) = sst(&["db", "scan", &dir(), "--format", "jsonl"]);
    assert_eq!(code, 0);
    let mut n = 0;
    for line in out.lines() {
        let row = parse(line);
        if row["idb"]["db"] == 1 {
            assert_eq!(row["idb"]["origin"], origin, "{line}");
            n += 1;
        }
    }
    assert!(n > 200, "{n}");
}

#[test]
fn image_bitmaps_and_file_system_handles() {
    let exp = expected();
    assert_eq!(exp["opfs"], "ok");
    let rows = record_rows();
    let data = |k: &str| {
        let key = format!("\"{k}\"");
        parse(
            &rows
                .iter()
                .find(|r| r.store == "media" && r.key == key)
                .unwrap()
                .data,
        )
    };
    let b = data("bitmap");
    assert_eq!(
        (b["width"].as_u64(), b["height"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(rgba(&b), exp["extra"]["bitmap_pixels"].as_str().unwrap());
    assert_eq!(b["color_space_params"].as_array().unwrap().len(), 16);
    let f = data("file handle");
    assert_eq!(f["$type"], "FileSystemFileHandle");
    assert_eq!(
        (
            f["name"].as_str(),
            f["file_system"].as_str(),
            f["virtual_path"].as_str()
        ),
        (Some("notes.txt"), Some("sandboxed"), Some("notes.txt"))
    );
    let h = data("handles");
    assert_eq!(h["dir"]["virtual_path"], "sub dir");
    assert_eq!(h["root"]["virtual_path"], "");
    assert_eq!(h["root"]["$type"], "FileSystemDirectoryHandle");
    assert_eq!(h["again"], h["file"]);
}
