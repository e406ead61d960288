//! Tables the adapter writes (group `writes`). Each `write-X` case checks that the file reads
//! back as the input (this project's reader, and the reference's when there is one) and
//! passes `verify`; each `write-X-bytes` case (no compression, so LevelDB's output is fully
//! determined) that it is byte for byte the table the reference writes.

use std::sync::Arc;

use super::data;
use super::{Case, Group, Input};
use crate::protocol::{Entry, WriteCompression, WriteParams};

fn params(
    c: WriteCompression,
    block_size: usize,
    restart_interval: usize,
    bloom_bits: Option<u32>,
) -> WriteParams {
    WriteParams {
        block_size,
        restart_interval,
        compression: c,
        bloom_bits,
    }
}

/// The write cases: for each spec a read-back case, and with no compression a byte-for-byte
/// one.
pub(super) fn cases() -> Vec<Case> {
    use WriteCompression::{None as Raw, Snappy};
    let specs: Vec<(&str, &str, Vec<Entry>, WriteParams)> = vec![
        (
            "write-defaults",
            "2000 entries, LevelDB's defaults (4 KiB blocks, restart 16, snappy), bloom 10",
            data::words(2000, 40),
            params(Snappy, 4096, 16, Some(10)),
        ),
        (
            "write-none",
            "2000 entries, no compression, no filter",
            data::words(2000, 41),
            params(Raw, 4096, 16, None),
        ),
        (
            "write-none-bloom10",
            "2000 entries, no compression, bloom 10",
            data::words(2000, 42),
            params(Raw, 4096, 16, Some(10)),
        ),
        (
            "write-bloom-20",
            "2000 entries, bloom 20 (k = 13)",
            data::words(2000, 43),
            params(Raw, 4096, 16, Some(20)),
        ),
        (
            "write-restart-1",
            "restart interval 1",
            data::words(1500, 44),
            params(Raw, 4096, 1, Some(10)),
        ),
        (
            "write-restart-1024",
            "restart interval 1024",
            data::words(1500, 45),
            params(Raw, 4096, 1024, Some(10)),
        ),
        (
            "write-block-1",
            "block size 1 (a block per entry)",
            data::words(800, 46),
            params(Raw, 1, 16, Some(10)),
        ),
        (
            "write-block-65536",
            "block size 64 KiB",
            data::words(5000, 47),
            params(Raw, 65536, 16, Some(10)),
        ),
        (
            "write-long-shared-prefix",
            "800 keys sharing a 3000-byte prefix",
            data::shared_prefix(800, 3000, 48),
            params(Raw, 4096, 16, Some(10)),
        ),
        (
            "write-empty-keys-values",
            "the empty key, empty values",
            data::empty_keys_values(),
            params(Raw, 4096, 16, Some(10)),
        ),
        (
            "write-binary-keys",
            "keys and values of 0x00, 0xff and neighbours",
            data::binary(1500, 49),
            params(Raw, 512, 16, Some(10)),
        ),
        (
            "write-1mib-values",
            "values of 1 MiB, no compression",
            data::big_values(50),
            params(Raw, 4096, 16, None),
        ),
        (
            "write-1mib-values-snappy",
            "values of 1 MiB, snappy",
            data::big_values(50),
            params(Snappy, 4096, 16, Some(10)),
        ),
        (
            "write-zero-entries",
            "no entries, no filter",
            Vec::new(),
            params(Raw, 4096, 16, None),
        ),
        (
            "write-zero-entries-bloom",
            "no entries, bloom 10",
            Vec::new(),
            params(Raw, 4096, 16, Some(10)),
        ),
        (
            "write-one-entry",
            "one entry",
            vec![(b"only".to_vec(), b"one".to_vec())],
            params(Raw, 4096, 16, Some(10)),
        ),
        (
            "write-many-entries",
            "60000 entries, snappy, bloom 10",
            data::words(60_000, 51),
            params(Snappy, 4096, 16, Some(10)),
        ),
    ];
    let mut out = Vec::new();
    for (name, about, entries, p) in specs {
        let entries = Arc::new(entries);
        let mut variants = vec![(
            name.to_string(),
            format!("write {about}: read back, verify"),
            false,
        )];
        if p.compression == Raw {
            variants.push((
                format!("{name}-bytes"),
                format!("write {about}: byte for byte LevelDB's table"),
                true,
            ));
        }
        for (n, a, identical) in variants {
            let mut c = Case::new(
                n,
                Group::Writes,
                a,
                Input::Write {
                    entries: entries.clone(),
                    params: p,
                    identical,
                },
            );
            if p.compression == Snappy {
                c.compressions = vec!["snappy"];
            }
            out.push(c);
        }
    }
    out
}
