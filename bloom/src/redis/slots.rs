//! Redis Cluster's hash slots: which slot a key is in, and the slot map as `CLUSTER SLOTS`
//! returns it.
//!
//! ```text
//! slot(key) = CRC16-XMODEM(tag or key) mod 16384, tag = the bytes between the first '{'
//!             and the next '}' when that is not empty (Redis Cluster's hash tags)
//! CLUSTER SLOTS reply: an array of ranges, each
//!             [start, end, [master host, master port, id, ...], [replica ...] ...]
//!             (an empty host: the node asked)
//! ```

use redis::Value;

/// Hash slots of a Redis Cluster.
pub(super) const SLOTS: usize = 16384;

/// The slot of a Redis key (Redis Cluster's key-to-slot rule, hash tags included).
pub(super) fn key_slot(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        rest.iter()
            .position(|&b| b == b'}')
            .filter(|&close| close > 0)
            .map(|close| &rest[..close])
    });
    let hashed = tagged.unwrap_or(key);
    crc16::State::<crc16::XMODEM>::calculate(hashed) % SLOTS as u16
}

/// One range of a `CLUSTER SLOTS` reply: slots `start..=end` served by the master at
/// `host:port` (`host` `None`: the node asked).
pub(super) struct SlotRange {
    pub start: u16,
    pub end: u16,
    pub host: Option<String>,
    pub port: u16,
}

/// The ranges of a `CLUSTER SLOTS` reply; an error says what is malformed. At least one
/// slot must be served.
pub(super) fn slot_ranges(v: &Value) -> Result<Vec<SlotRange>, &'static str> {
    let Value::Array(ranges) = v else {
        return Err("the reply is not an array");
    };
    let mut out = Vec::with_capacity(ranges.len());
    for range in ranges {
        let Value::Array(fields) = range else {
            return Err("a slot range is not an array");
        };
        let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(master))) =
            (fields.first(), fields.get(1), fields.get(2))
        else {
            return Err("a slot range without start, end and master");
        };
        let host = match master.first() {
            Some(Value::BulkString(h)) if !h.is_empty() => {
                Some(String::from_utf8_lossy(h).into_owned())
            }
            _ => None,
        };
        let Some(Value::Int(port)) = master.get(1) else {
            return Err("a master without a port");
        };
        let port = u16::try_from(*port).map_err(|_| "a port out of range")?;
        let (start, end) = (*start, *end);
        if !(0 <= start && start <= end && end < SLOTS as i64) {
            return Err("a slot range out of 0..16384");
        }
        out.push(SlotRange {
            start: start as u16,
            end: end as u16,
            host,
            port,
        });
    }
    if out.is_empty() {
        return Err("no slot is served");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_redis_cluster() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(key_slot(b"123456789"), 0x31c3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"));
        assert_ne!(key_slot(b"foo{}{bar}"), key_slot(b"bar"));
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
    }

    #[test]
    fn cluster_slots_replies_are_read_or_refused() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let range = |a: i64, b: i64, host: &str, port: i64| {
            Value::Array(vec![
                Value::Int(a),
                Value::Int(b),
                Value::Array(vec![bulk(host), Value::Int(port), bulk("id")]),
            ])
        };
        let ok = Value::Array(vec![
            range(0, 8191, "10.0.0.1", 7000),
            range(8192, 16383, "", 7001),
        ]);
        let r = slot_ranges(&ok).expect("a good reply");
        assert_eq!((r[0].start, r[0].end, r[0].port), (0, 8191, 7000));
        assert_eq!(r[0].host.as_deref(), Some("10.0.0.1"));
        assert_eq!(
            (r[1].start, r[1].end, r[1].host.as_deref()),
            (8192, 16383, None)
        );
        for bad in [
            Value::Nil,
            Value::Array(vec![]),
            Value::Array(vec![Value::Int(3)]),
            Value::Array(vec![range(5, 4, "h", 1)]),
            Value::Array(vec![range(0, 16384, "h", 1)]),
            Value::Array(vec![range(0, 1, "h", 70_000)]),
        ] {
            assert!(slot_ranges(&bad).is_err(), "{bad:?}");
        }
    }
}
