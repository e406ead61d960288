//! The key format and the filter policy are one validated choice: `keys(KeyFormat::Internal)` may come
//! before or after `bloom(..)` (or twice) and the table is the same, with every key found
//! through its filter. (Before, `.keys(KeyFormat::Internal).bloom(10)` built the filter over whole
//! internal keys and lookups by user key missed 995 of 1,000 keys.)

use leveldb_table::raw::internal_key::internal_key;
use leveldb_table::{
    raw::internal_key::ValueType, table::KeyFormat, Lookup, OpenOptions, Options, ReadOptions,
    TableBuilder, TableReader,
};

fn build(opts: &Options) -> Vec<u8> {
    let mut b = TableBuilder::new(Vec::new(), opts).unwrap();
    for i in 0..1000u64 {
        let k = internal_key(format!("user{i:05}").as_bytes(), i + 1, ValueType::Value);
        b.add(&k, format!("v{i}").as_bytes()).unwrap();
    }
    b.finish().unwrap().0
}

#[test]
fn internal_keys_and_bloom_in_either_order_give_the_same_table() {
    let a = build(&Options::default().bloom(10).keys(KeyFormat::Internal));
    let b = build(&Options::default().keys(KeyFormat::Internal).bloom(10));
    let c = build(
        &Options::default()
            .keys(KeyFormat::Internal)
            .bloom(10)
            .keys(KeyFormat::Internal),
    );
    assert!(a == b && b == c, "the same bytes whatever the order");
    let t = TableReader::open(b, OpenOptions::default().keys(KeyFormat::Internal)).unwrap();
    assert!(t.filter().is_some());
    let mut found = 0;
    for i in 0..1000u64 {
        let user = format!("user{i:05}");
        // Filter first: a present key is never excluded.
        assert!(!t.filter_excludes(user.as_bytes()).unwrap(), "{user}");
        if let Lookup::Found { value, sequence } = t
            .get(
                user.as_bytes(),
                &ReadOptions::default().snapshot(Some(u64::MAX >> 8)),
            )
            .unwrap()
        {
            assert_eq!(
                (value, sequence),
                (format!("v{i}").into_bytes(), Some(i + 1))
            );
            found += 1;
        }
    }
    assert_eq!(found, 1000);
    // And the filter is built over user keys: most absent user keys are excluded.
    let excluded = (0..1000)
        .filter(|i| t.filter_excludes(format!("absent{i}").as_bytes()).unwrap())
        .count();
    assert!(excluded > 950, "{excluded}");
}
