//! `ScalableBloomFilter`: the compound false-positive rate stays within target as it grows,
//! layers open as specified, and the file form round-trips, is written atomically with a
//! normal mode, and rejects damage.

use sst_bloom::{Error, ScalableBloomFilter, ScalableParams};

fn params(capacity: u64, fp_rate: f64) -> ScalableParams {
    ScalableParams {
        capacity,
        fp_rate,
        ..ScalableParams::default()
    }
}

fn filled(p: ScalableParams, n: u32) -> ScalableBloomFilter {
    let mut f = ScalableBloomFilter::new(p).unwrap();
    for i in 0..n {
        f.add(format!("in:{i}").as_bytes()).unwrap();
    }
    f
}

fn fp_rate(f: &ScalableBloomFilter, absent: u32) -> f64 {
    let hits = (0..absent)
        .filter(|i| f.may_contain(format!("out:{i}").as_bytes()))
        .count();
    hits as f64 / f64::from(absent)
}

#[test]
fn fp_within_target_after_growing_to_4x_and_32x() {
    for fp in [0.01, 0.001] {
        for times in [4u32, 32] {
            let f = filled(params(10_000, fp), 10_000 * times);
            for i in 0..10_000 * times {
                assert!(
                    f.may_contain(format!("in:{i}").as_bytes()),
                    "false negative"
                );
            }
            let rate = fp_rate(&f, 100_000);
            assert!(rate <= fp * 1.25, "{times}x at {fp}: measured {rate}");
            let est = f.estimated_fp_rate();
            assert!(est <= fp, "{times}x at {fp}: estimated {est}");
        }
    }
}

#[test]
fn layers_grow_by_the_growth_factor_and_tighten_by_the_ratio() {
    let f = filled(params(1000, 0.01), 20_000);
    let layers = f.layers();
    // 1000 + 2000 + 4000 + 8000 = 15000 < 20000 <= 31000: five layers.
    assert_eq!(layers.len(), 5, "{layers:?}");
    for (i, l) in layers.iter().enumerate() {
        assert_eq!(l.capacity, 1000 << i);
        assert!((l.fp_rate - 0.01 * 0.5 * 0.5f64.powi(i as i32)).abs() < 1e-15);
        // A layer is closed at its capacity or when half its bits are set.
        assert!(l.items <= l.capacity);
        assert!(l.fill() <= 0.5 + 1.0 / l.bits as f64 * f64::from(l.k));
    }
    // Keys that were false positives are not added: at most about 1% of them.
    assert!(f.items() <= 20_000 && f.items() > 19_800, "{}", f.items());
}

#[test]
fn a_key_maybe_present_is_not_added_again() {
    let mut f = ScalableBloomFilter::new(params(100, 0.01)).unwrap();
    assert!(f.add(b"k").unwrap());
    assert!(!f.add(b"k").unwrap());
    assert_eq!(f.items(), 1);
}

#[test]
fn invalid_parameters_are_errors() {
    for p in [
        params(0, 0.01),
        params(10, 0.0),
        params(10, 0.7),
        params(10, f64::NAN),
        ScalableParams {
            growth: 0,
            ..params(10, 0.01)
        },
        ScalableParams {
            ratio: 1.0,
            ..params(10, 0.01)
        },
    ] {
        assert!(
            matches!(ScalableBloomFilter::new(p), Err(Error::InvalidArgument(_))),
            "{p:?}"
        );
    }
}

#[test]
fn file_round_trip_atomic_with_a_normal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bloom");
    let f = filled(params(500, 0.01), 3000);
    f.save(&path).unwrap();
    let g = ScalableBloomFilter::load(&path).unwrap();
    assert_eq!(f, g);
    // Saved again over the old file; no temporary file is left behind.
    let mut g = g;
    g.add(b"one more").unwrap();
    g.save(&path).unwrap();
    assert!(ScalableBloomFilter::load(&path)
        .unwrap()
        .may_contain(b"one more"));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        // 0666 less the umask (tempfile would have made it 0600).
        let umask = {
            let probe = dir.path().join("probe");
            std::fs::write(&probe, b"").unwrap();
            let m = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
            std::fs::remove_file(&probe).unwrap();
            m
        };
        assert_eq!(mode, umask);
        assert_ne!(mode, 0o600);
    }
}

#[test]
fn damaged_files_are_errors_with_an_offset() {
    let bytes = filled(params(200, 0.01), 500).to_bytes();
    for at in [0usize, 9, 40, bytes.len() / 2, bytes.len() - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x40;
        let e = ScalableBloomFilter::from_bytes(&bad).unwrap_err();
        assert!(matches!(e, Error::BadFile { .. }), "flip at {at}: {e}");
    }
    for len in [0usize, 3, 8, 20, bytes.len() - 1] {
        let e = ScalableBloomFilter::from_bytes(&bytes[..len]).unwrap_err();
        assert!(matches!(e, Error::BadFile { .. }), "cut at {len}: {e}");
    }
    let e = ScalableBloomFilter::from_bytes(b"not a bloom filter at all").unwrap_err();
    assert!(e.to_string().contains("bad magic"), "{e}");
}
