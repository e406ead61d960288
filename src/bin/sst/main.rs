//! `sst`: inspect, verify, query and build LevelDB tables.
fn main() {}
