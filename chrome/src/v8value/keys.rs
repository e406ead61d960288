//! Property keys: turning the value read as a key into the key JavaScript sees, and telling
//! when an object gets the same key twice (V8 refuses such data).

use std::collections::HashMap;

use super::number::js_number_to_string;
use super::strings::JsStr;
use super::value::{PropertyKey, Value};

/// The key a value read in key position names; `None` if it is not a string or number
/// (V8's `IsValidObjectKey`).
pub(crate) fn to_key<'a>(v: &Value<'a>) -> Option<PropertyKey<'a>> {
    match v {
        Value::String(s) => Some(match s.as_array_index() {
            Some(i) => PropertyKey::Index(i),
            None => PropertyKey::String(*s),
        }),
        Value::Number(x) => Some(number_key(*x)),
        _ => None,
    }
}

fn number_key<'a>(x: f64) -> PropertyKey<'a> {
    if x >= 0.0 && x <= f64::from(u32::MAX - 1) && x.fract() == 0.0 {
        PropertyKey::Index(x as u32)
    } else {
        PropertyKey::Number(x)
    }
}

/// Whether two keys name the same property.
pub(crate) fn same_key(a: &PropertyKey<'_>, b: &PropertyKey<'_>) -> bool {
    match (a, b) {
        (PropertyKey::Index(x), PropertyKey::Index(y)) => x == y,
        (PropertyKey::String(x), PropertyKey::String(y)) => x.same_units(y),
        (PropertyKey::Number(x), PropertyKey::Number(y)) => x == y || (x.is_nan() && y.is_nan()),
        (PropertyKey::Number(x), PropertyKey::String(s))
        | (PropertyKey::String(s), PropertyKey::Number(x)) => {
            let name = js_number_to_string(*x);
            JsStr::Latin1(name.as_bytes()).same_units(s)
        }
        _ => false,
    }
}

/// FNV-1a over the key's name as code units (an index and a number hash as their decimal
/// names, so keys that are the same property hash alike).
fn key_hash(k: &PropertyKey<'_>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |u: u16| {
        h ^= u64::from(u);
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    match k {
        PropertyKey::Index(i) => i.to_string().bytes().for_each(|b| feed(u16::from(b))),
        PropertyKey::Number(x) => js_number_to_string(*x)
            .bytes()
            .for_each(|b| feed(u16::from(b))),
        PropertyKey::String(s) => s.units().for_each(feed),
    }
    h
}

/// Objects with more properties than this keep a hash of their keys.
const LINEAR_LIMIT: usize = 16;

/// The keys of one object seen so far, for the duplicate check.
#[derive(Debug, Default)]
pub(crate) struct KeySet {
    /// Key hash -> position of the first property with that hash (built past
    /// `LINEAR_LIMIT` properties).
    by_hash: Option<HashMap<u64, Vec<usize>>>,
}

impl KeySet {
    /// Whether `key` is among `props` (whose keys this set has seen, in order); records it
    /// as the next property otherwise.
    pub(crate) fn insert_is_new(
        &mut self,
        props: &[(PropertyKey<'_>, Value<'_>)],
        key: &PropertyKey<'_>,
    ) -> bool {
        if props.len() < LINEAR_LIMIT && self.by_hash.is_none() {
            return !props.iter().any(|(k, _)| same_key(k, key));
        }
        let map = self.by_hash.get_or_insert_with(|| {
            let mut m: HashMap<u64, Vec<usize>> = HashMap::new();
            for (i, (k, _)) in props.iter().enumerate() {
                m.entry(key_hash(k)).or_default().push(i);
            }
            m
        });
        let slot = map.entry(key_hash(key)).or_default();
        if slot
            .iter()
            .any(|&i| props.get(i).is_some_and(|(k, _)| same_key(k, key)))
        {
            return false;
        }
        slot.push(props.len());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_named_as_javascript_names_them() {
        let s = |t: &'static str| Value::String(JsStr::Latin1(t.as_bytes()));
        assert_eq!(to_key(&s("7")), Some(PropertyKey::Index(7)));
        assert_eq!(to_key(&Value::Number(7.0)), Some(PropertyKey::Index(7)));
        assert_eq!(
            to_key(&Value::Number(-1.0)),
            Some(PropertyKey::Number(-1.0))
        );
        assert!(matches!(to_key(&s("07")), Some(PropertyKey::String(_))));
        assert_eq!(to_key(&Value::Null), None);
        // 1.5 and "1.5" are one property; so are NaN and "NaN".
        let a = to_key(&Value::Number(1.5)).unwrap();
        let b = to_key(&s("1.5")).unwrap();
        assert!(same_key(&a, &b));
        assert!(same_key(
            &to_key(&Value::Number(f64::NAN)).unwrap(),
            &to_key(&s("NaN")).unwrap()
        ));
        assert!(!same_key(&a, &to_key(&s("1.50")).unwrap()));
    }

    #[test]
    fn duplicates_are_found_small_and_large() {
        for n in [3usize, 40] {
            let names: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
            let mut props: Vec<(PropertyKey<'_>, Value<'_>)> = Vec::new();
            let mut set = KeySet::default();
            for name in &names {
                let k = PropertyKey::String(JsStr::Latin1(name.as_bytes()));
                assert!(set.insert_is_new(&props, &k));
                props.push((k, Value::Null));
            }
            // The same names in the other encoding are duplicates.
            for name in &names {
                let wide: Vec<u8> = name.bytes().flat_map(|b| [b, 0]).collect();
                let k = PropertyKey::String(JsStr::Utf16Le(&wide));
                assert!(!set.insert_is_new(&props, &k), "{name} twice ({n} keys)");
            }
            let fresh = PropertyKey::Index(5);
            assert!(set.insert_is_new(&props, &fresh));
        }
    }
}
