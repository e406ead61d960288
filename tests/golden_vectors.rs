//! Golden vectors from LevelDB's own tests (`[U]` in the format reference) and values
//! obtained by running LevelDB (`[D]`): coding, hash, CRC32C, bloom filter, filter block.
//! Each number here is LevelDB's, not ours.

use std::sync::Arc;

use leveldb_table::raw::coding::*;
use leveldb_table::raw::crc32c;
use leveldb_table::raw::format::block_trailer;
use leveldb_table::raw::hash::{hash, hash_signed_tail};
use leveldb_table::raw::{FilterBlockBuilder, FilterBlockReader};
use leveldb_table::{filter::BloomFilterPolicy, FilterPolicy};

#[path = "golden_vectors/helpers.rs"]
mod helpers;

use helpers::*;

// ---- section 0: coding ----

#[test]
fn varint32_overflow_fails() {
    assert_eq!(decode_varint32(&[0x81, 0x82, 0x83, 0x84, 0x85, 0x11]), None);
}

#[test]
fn varint64_overflow_fails() {
    let input = [
        0x81, 0x82, 0x83, 0x84, 0x85, 0x81, 0x82, 0x83, 0x84, 0x85, 0x11,
    ];
    assert_eq!(decode_varint64(&input), None);
}

#[test]
fn varint_truncation_every_strict_prefix_fails() {
    let large32 = (1u32 << 31) + 100;
    let mut b = Vec::new();
    put_varint32(&mut b, large32);
    for len in 0..b.len() {
        assert_eq!(decode_varint32(&b[..len]), None, "prefix of {len}");
    }
    assert_eq!(decode_varint32(&b), Some((large32, b.len())));

    let large64 = (1u64 << 63) + 100;
    let mut b = Vec::new();
    put_varint64(&mut b, large64);
    for len in 0..b.len() {
        let mut input = &b[..len];
        assert_eq!(get_varint64(&mut input), None, "prefix of {len}");
        assert_eq!(input.len(), len, "a failed get consumes nothing");
    }
    assert_eq!(decode_varint64(&b), Some((large64, b.len())));
}

#[test]
fn varint_decoders_are_lenient_like_leveldb() {
    // Non-minimal encodings decode.
    assert_eq!(decode_varint32(&[0x80, 0x00]), Some((0, 2)));
    // Bits past 32 in the 5th byte are dropped.
    assert_eq!(
        decode_varint32(&[0xff, 0xff, 0xff, 0xff, 0x7f]),
        Some((u32::MAX, 5))
    );
}

#[test]
fn fixed_and_handle_examples() {
    let mut v = Vec::new();
    put_fixed32(&mut v, 0x0403_0201);
    assert_eq!(v, [1, 2, 3, 4]);
    for (off, size, enc) in [(0u64, 48u64, "0030"), (53, 18, "3512"), (128, 22, "800116")] {
        let mut b = Vec::new();
        leveldb_table::raw::format::BlockHandle::new(off, size).encode_to(&mut b);
        assert_eq!(hex::encode(&b), enc);
    }
}

// ---- section 6: hash ----

#[test]
fn hash_upstream_vectors() {
    let seed = 0xbc9f_1d34;
    assert_eq!(hash(&[], seed), 0xbc9f_1d34);
    assert_eq!(hash(&[0x62], seed), 0xef13_45c4);
    assert_eq!(hash(&[0xc3, 0x97], seed), 0x5b66_3814);
    assert_eq!(hash(&[0xe2, 0x99, 0xa5], seed), 0x323c_078f);
    assert_eq!(hash(&[0xe1, 0x80, 0xb9, 0x32], seed), 0xed21_633a);
    assert_eq!(hash(&iscsi(), 0x1234_5678), 0xf333_dabb);
}

#[test]
fn hash_signed_tail_vectors() {
    let seed = 0xbc9f_1d34;
    assert_eq!(hash_signed_tail(&[0xc3, 0x97], seed), 0x0f2b_a540);
    assert_eq!(hash_signed_tail(&[0xe2, 0x99, 0xa5], seed), 0x5301_74ee);
    // Unchanged where no tail byte has its high bit set.
    assert_eq!(hash_signed_tail(&[0x62], seed), 0xef13_45c4);
    assert_eq!(
        hash_signed_tail(&[0xe1, 0x80, 0xb9, 0x32], seed),
        0xed21_633a
    );
}

#[test]
fn hash_seed_one_and_bloom_seed_values() {
    for (k, h) in [
        ("foo", 0xfe77_35c4u32),
        ("bar", 0xd973_8c37),
        ("box", 0xc80f_9626),
        ("hello", 0x0e8b_27bf),
        ("missing", 0x2296_1f04),
        ("other", 0x9db7_2892),
        ("", 0x0000_0001),
    ] {
        assert_eq!(hash(k.as_bytes(), 1), h, "{k}");
    }
    for (k, h) in [
        ("hello", 0xf795_964eu32),
        ("world", 0x42c4_e8fc),
        ("foo", 0x9dfa_be14),
        ("x", 0x0139_abcc),
        ("", 0xbc9f_1d34),
    ] {
        assert_eq!(hash(k.as_bytes(), 0xbc9f_1d34), h, "{k}");
    }
}

// ---- section 7: crc32c ----

#[test]
fn crc32c_upstream_vectors() {
    assert_eq!(crc32c::value(&[0u8; 32]), 0x8a91_36aa);
    assert_eq!(crc32c::value(&[0xffu8; 32]), 0x62a8_ab43);
    let inc: Vec<u8> = (0..32).collect();
    assert_eq!(crc32c::value(&inc), 0x46dd_794e);
    let dec: Vec<u8> = (0..32).rev().collect();
    assert_eq!(crc32c::value(&dec), 0x113f_db5c);
    assert_eq!(crc32c::value(&iscsi()), 0xd996_3a56);
    assert_eq!(crc32c::value(b"123456789"), 0xe306_9283);
}

#[test]
fn crc32c_values_extend_and_mask() {
    assert_ne!(crc32c::value(b"a"), crc32c::value(b"foo"));
    assert_eq!(
        crc32c::value(b"hello world"),
        crc32c::extend(crc32c::value(b"hello "), b"world")
    );
    let c = crc32c::value(b"foo");
    assert_eq!(c, 0xcfc4_ae1d);
    assert_eq!(crc32c::value(b"a"), 0xc1d0_4330);
    assert_eq!(crc32c::value(b"hello world"), 0xc994_65aa);
    assert_ne!(crc32c::mask(c), c);
    assert_ne!(crc32c::mask(crc32c::mask(c)), c);
    assert_eq!(crc32c::mask(c), 0xfebe_8a61);
    assert_eq!(crc32c::mask(crc32c::mask(c)), 0xb746_e855);
    assert_eq!(crc32c::unmask(crc32c::mask(c)), c);
    assert_eq!(
        crc32c::unmask(crc32c::unmask(crc32c::mask(crc32c::mask(c)))),
        c
    );
    assert_eq!(crc32c::mask(0), 0xa282_ead8);
}

#[test]
fn empty_block_and_empty_filter_trailers() {
    assert_eq!(
        block_trailer(&unhex("0000000001000000"), 0),
        [0x00, 0xc0, 0xf2, 0xa1, 0xb0]
    );
    assert_eq!(
        block_trailer(&unhex("000000000b"), 0),
        [0x00, 0x8a, 0xe8, 0xda, 0xd1]
    );
}

// ---- section 5: bloom ----

#[test]
fn bloom_k_for_bits_per_key() {
    for (bits, k) in [
        (1, 1),
        (2, 1),
        (3, 2),
        (4, 2),
        (5, 3),
        (6, 4),
        (8, 5),
        (10, 6),
        (16, 11),
        (20, 13),
        (43, 29),
        (44, 30),
        (100, 30),
    ] {
        assert_eq!(BloomFilterPolicy::new(bits).k(), k, "bits_per_key {bits}");
    }
}

#[test]
fn bloom_empty_filter() {
    let p = BloomFilterPolicy::new(10);
    assert!(!p.key_may_match(b"hello", b""));
    assert!(!p.key_may_match(b"world", b""));
}

#[test]
fn bloom_small_exact_bytes() {
    let p = BloomFilterPolicy::new(10);
    let f = bloom_filter(&p, &[b"hello", b"world"]);
    assert_eq!(hex::encode(&f), "114000414410401006");
    assert!(p.key_may_match(b"hello", &f));
    assert!(p.key_may_match(b"world", &f));
    assert!(!p.key_may_match(b"x", &f));
    assert!(!p.key_may_match(b"foo", &f));
    assert_eq!(
        hex::encode(bloom_filter(&p, &[b"foo"])),
        "204912000000000006"
    );
    assert_eq!(hex::encode(bloom_filter(&p, &[])), "000000000000000006");
}

#[test]
fn bloom_create_filter_only_appends() {
    let p = BloomFilterPolicy::new(10);
    let mut dst = b"prefix".to_vec();
    p.create_filter(&[b"hello", b"world"], &mut dst);
    assert_eq!(&dst[..6], b"prefix");
    assert_eq!(hex::encode(&dst[6..]), "114000414410401006");
}

#[test]
fn bloom_varying_lengths_exact_sizes_and_false_positives() {
    // (length, filter size in bytes, false positives among 10000 probes), from LevelDB.
    let expected: [(u32, usize, u32); 37] = [
        (1, 9, 23),
        (2, 9, 44),
        (3, 9, 75),
        (4, 9, 108),
        (5, 9, 120),
        (6, 9, 159),
        (7, 10, 153),
        (8, 11, 181),
        (9, 13, 79),
        (10, 14, 163),
        (20, 26, 124),
        (30, 39, 84),
        (40, 51, 107),
        (50, 64, 109),
        (60, 76, 112),
        (70, 89, 93),
        (80, 101, 116),
        (90, 114, 107),
        (100, 126, 83),
        (200, 251, 96),
        (300, 376, 77),
        (400, 501, 81),
        (500, 626, 74),
        (600, 751, 78),
        (700, 876, 91),
        (800, 1001, 88),
        (900, 1126, 97),
        (1000, 1251, 90),
        (2000, 2501, 89),
        (3000, 3751, 95),
        (4000, 5001, 101),
        (5000, 6251, 89),
        (6000, 7501, 103),
        (7000, 8751, 78),
        (8000, 10001, 109),
        (9000, 11251, 109),
        (10000, 12501, 81),
    ];
    let p = BloomFilterPolicy::new(10);
    let (mut good, mut mediocre) = (0, 0);
    for (length, size, fps) in expected {
        let keys: Vec<[u8; 4]> = (0..length).map(|i| i.to_le_bytes()).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let f = bloom_filter(&p, &refs);
        assert_eq!(f.len(), size, "size at length {length}");
        assert!(f.len() <= (length as usize * 10 / 8) + 40);
        for k in &keys {
            assert!(
                p.key_may_match(k, &f),
                "inserted key must match at length {length}"
            );
        }
        let got = (0..10000u32)
            .filter(|i| p.key_may_match(&(i + 1_000_000_000).to_le_bytes(), &f))
            .count() as u32;
        assert_eq!(got, fps, "false positives at length {length}");
        let rate = f64::from(got) / 10000.0;
        assert!(rate <= 0.02);
        if rate > 0.0125 {
            mediocre += 1;
        } else {
            good += 1;
        }
    }
    assert_eq!((good, mediocre), (33, 4));
    assert!(mediocre <= good / 5);
}

#[test]
fn bloom_malformed_filters_answer_like_leveldb() {
    let p = BloomFilterPolicy::new(10);
    assert!(!p.key_may_match(b"a", &[]), "len 0: no match");
    assert!(
        !p.key_may_match(b"a", &[6]),
        "len 1 (a lone k byte): no match"
    );
    assert!(
        p.key_may_match(b"a", &[0, 0, 0, 0, 0, 0, 0, 0, 31]),
        "k > 30: match"
    );
    assert!(
        p.key_may_match(b"a", &[0, 0, 0, 0, 0, 0, 0, 0, 255]),
        "k > 30: match"
    );
    assert!(
        p.key_may_match(b"a", &[0, 0, 0, 0, 0, 0, 0, 0, 0]),
        "k = 0: match"
    );
    assert!(
        !p.key_may_match(b"a", &[0, 0, 0, 0, 0, 0, 0, 0, 30]),
        "k = 30 probes"
    );
    // A 2-byte filter (8 bits) still works.
    assert!(p.key_may_match(b"a", &[0xff, 6]));
}

// ---- section 4: filter block ----

#[test]
fn filter_block_empty_builder() {
    let block = FilterBlockBuilder::new(policy()).finish();
    assert_eq!(block, unhex("000000000b"));
    let r = FilterBlockReader::new(policy(), &block[..]);
    assert!(r.key_may_match(0, b"foo"));
    assert!(r.key_may_match(100_000, b"foo"));
}

#[test]
fn filter_block_single_chunk() {
    let mut b = FilterBlockBuilder::new(policy());
    b.start_block(100);
    b.add_key(b"foo");
    b.add_key(b"bar");
    b.add_key(b"box");
    b.start_block(200);
    b.add_key(b"box");
    b.start_block(300);
    b.add_key(b"hello");
    let block = b.finish();
    assert_eq!(
        hex::encode(&block),
        "c43577fe378c73d926960fc826960fc8bf278b0e00000000140000000b"
    );
    let r = FilterBlockReader::new(policy(), &block[..]);
    for k in ["foo", "bar", "box", "hello", "foo"] {
        assert!(r.key_may_match(100, k.as_bytes()), "{k}");
    }
    assert!(!r.key_may_match(100, b"missing"));
    assert!(!r.key_may_match(100, b"other"));
}

#[test]
fn filter_block_multi_chunk() {
    let mut b = FilterBlockBuilder::new(policy());
    b.start_block(0);
    b.add_key(b"foo");
    b.start_block(2000);
    b.add_key(b"bar");
    b.start_block(3100);
    b.add_key(b"box");
    b.start_block(9000);
    b.add_key(b"box");
    b.add_key(b"hello");
    let block = b.finish();
    assert_eq!(
        hex::encode(&block),
        "c43577fe378c73d926960fc826960fc8bf278b0e\
         00000000080000000c0000000c0000000c000000140000000b"
    );
    let r = FilterBlockReader::new(policy(), &block[..]);
    // First filter.
    for off in [0, 2000] {
        assert!(r.key_may_match(off, b"foo"));
        assert!(r.key_may_match(off, b"bar"));
        assert!(!r.key_may_match(off, b"box"));
        assert!(!r.key_may_match(off, b"hello"));
    }
    // Second filter.
    assert!(r.key_may_match(3100, b"box"));
    assert!(!r.key_may_match(3100, b"foo"));
    assert!(!r.key_may_match(3100, b"bar"));
    assert!(!r.key_may_match(3100, b"hello"));
    // Third filter (empty).
    for k in ["foo", "bar", "box", "hello"] {
        assert!(!r.key_may_match(4100, k.as_bytes()), "{k}");
    }
    // Last filter.
    assert!(r.key_may_match(9000, b"box"));
    assert!(r.key_may_match(9000, b"hello"));
    assert!(!r.key_may_match(9000, b"foo"));
    assert!(!r.key_may_match(9000, b"bar"));
    // [D] extras: 8192 is filter 4 too; 10240 is index 5 >= num 5.
    assert!(r.key_may_match(8192, b"box"));
    assert!(r.key_may_match(10240, b"anything"));
    assert_eq!(r.num_filters(), 5);
}

#[test]
fn filter_block_malformed_inputs_fail_open() {
    let bloom: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(10));
    // Length 0..=4: no usable data, everything matches.
    for n in 0..5 {
        let r = FilterBlockReader::new(bloom.clone(), vec![0u8; n]);
        assert!(r.key_may_match(0, b"k"), "length {n}");
        assert_eq!(r.num_filters(), 0);
    }
    // array_start past n - 5.
    let r = FilterBlockReader::new(bloom.clone(), unhex("0000000006000000 0b"));
    assert!(r.key_may_match(0, b"k"));
    // A real filter block over "k".
    let mut b = FilterBlockBuilder::new(bloom.clone());
    b.start_block(0);
    b.add_key(b"k");
    let good = b.finish();
    let r = FilterBlockReader::new(bloom.clone(), &good[..]);
    assert!(r.key_may_match(0, b"k"));
    assert!(!r.key_may_match(0, b"definitely-not-there-0"));
    // base_lg >= 64 (C++ would shift by it: undefined). Treated as malformed: match.
    for lg in [64u8, 200, 255] {
        let mut bad = good.clone();
        *bad.last_mut().unwrap() = lg;
        let r = FilterBlockReader::new(bloom.clone(), bad);
        assert!(
            r.key_may_match(0, b"definitely-not-there-0"),
            "base_lg {lg}"
        );
    }
    // base_lg 0 and 63 are honoured: offset 0 still maps to filter 0; others to index >= num.
    for lg in [0u8, 63] {
        let mut bad = good.clone();
        *bad.last_mut().unwrap() = lg;
        let r = FilterBlockReader::new(bloom.clone(), bad);
        assert!(
            !r.key_may_match(0, b"definitely-not-there-0"),
            "base_lg {lg}"
        );
        assert!(r.key_may_match(u64::MAX, b"definitely-not-there-0"));
    }
    // Offsets out of range: start > limit -> match; limit > array_start -> match unless equal.
    let array_start = decode_fixed32(&good[good.len() - 5..]) as usize;
    let mut bad = good.clone();
    bad[array_start..array_start + 4].copy_from_slice(&1000u32.to_le_bytes());
    assert!(FilterBlockReader::new(bloom.clone(), bad).key_may_match(0, b"definitely-not-there-0"));
    // A 1-byte filter (just a k byte): the bloom policy says no match.
    let one = unhex("06 00000000 01000000 0b");
    let r = FilterBlockReader::new(bloom.clone(), one);
    assert!(!r.key_may_match(0, b"k"));
    // k = 0 and k > 30 inside a filter block.
    for (k, want) in [(0u8, true), (31, true), (255, true)] {
        let mut bad = good.clone();
        bad[array_start - 1] = k;
        assert_eq!(
            FilterBlockReader::new(bloom.clone(), bad).key_may_match(0, b"definitely-not-there-0"),
            want,
            "k = {k}"
        );
    }
}
