//! Helpers shared by the `sst` integration tests: running the binary and reading JSON lines.
#![allow(dead_code)]

pub mod corpus;

use std::process::Command;

use serde_json::Value;

/// The `sst` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_sst");

/// Runs `cmd` to its end: (exit code, stdout, stderr).
pub fn output(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs `sst ARGS`: (exit code, stdout, stderr).
pub fn sst(args: &[&str]) -> (i32, String, String) {
    output(Command::new(BIN).args(args))
}

/// The JSON value of each line of `s`.
pub fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
