//! The metadata hash of a [`RedisBloomFilter`](super::RedisBloomFilter):
//! the Lua scripts (sent with `EVAL`, so a node that never saw them, such as a promoted
//! replica, runs them too) that create it and hand out room in the newest layer, key naming,
//! field parsing. The whole layout is drawn at the top of `redis/mod.rs`.
//!
//! ```text
//! bloom:{NAME}:meta  hash: version capacity fp_rate growth ratio seed bitmap_bits layers
//!                          count:I set:I      (one slot: the {NAME} hash tag)
//! ```

use crate::error::{Error, Result};

/// Creates the metadata when it is missing; returns the stored fields either way.
pub(super) const INIT_LUA: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'version', ARGV[1], 'capacity', ARGV[2], 'fp_rate', ARGV[3],
    'growth', ARGV[4], 'ratio', ARGV[5], 'seed', ARGV[6], 'bitmap_bits', ARGV[7],
    'layers', 1, 'count:0', 0, 'set:0', 0)
end
return redis.call('HMGET', KEYS[1], 'version', 'capacity', 'fp_rate', 'growth', 'ratio',
  'seed', 'bitmap_bits', 'layers')
";

/// ARGV: newest layer as the caller knows it, its capacity, its most set bits, keys wanted,
/// most layers. Returns {layers, granted}: granted > 0 reserves room in layer layers-1;
/// granted = 0 means the layer count changed (opened here or by another writer): look again.
pub(super) const RESERVE_LUA: &str = r"
local layers = tonumber(redis.call('HGET', KEYS[1], 'layers'))
if layers == nil then return redis.error_reply('bloom metadata is missing') end
local top = layers - 1
if top ~= tonumber(ARGV[1]) then return {layers, 0} end
local count = tonumber(redis.call('HGET', KEYS[1], 'count:' .. top) or '0')
local set = tonumber(redis.call('HGET', KEYS[1], 'set:' .. top) or '0')
local cap = tonumber(ARGV[2])
if count >= cap or set > tonumber(ARGV[3]) then
  if layers >= tonumber(ARGV[5]) then return redis.error_reply('bloom filter is full') end
  redis.call('HSET', KEYS[1], 'layers', layers + 1, 'count:' .. layers, 0, 'set:' .. layers, 0)
  return {layers + 1, 0}
end
local grant = math.min(tonumber(ARGV[4]), cap - count)
redis.call('HINCRBY', KEYS[1], 'count:' .. top, grant)
return {layers, grant}
";

pub(super) fn meta_key(name: &str) -> String {
    format!("bloom:{{{name}}}:meta")
}

/// Parses one stored metadata field.
pub(super) fn field<T: std::str::FromStr>(
    v: &Option<String>,
    what: &'static str,
    name: &str,
) -> Result<T> {
    v.as_deref()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Error::Redis {
            command: "HMGET".into(),
            node: None,
            detail: format!("bloom filter '{name}': metadata field {what} is missing or bad"),
        })
}
