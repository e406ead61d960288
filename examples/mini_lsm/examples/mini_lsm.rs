//! The `mini_lsm` command as an example target, so that
//! `cargo run --release --example mini_lsm -- DIR ...` from the repository root runs it
//! (target/release/examples/mini_lsm); the same program as `src/main.rs`.

fn main() -> std::process::ExitCode {
    mini_lsm::cli::main_from_env()
}
