//! The resumable snappy decoder (`raw::compress::SnappyPrefix`), which point lookups past
//! the block cache use to decode a block only up to their key, against the `snap` crate.
//!
//! Input: `step: u16 LE | mode: u8 | rest`. Mode even: `rest` as a snappy stream. Mode odd:
//! `rest` compressed by `snap`, then its bytes overwritten by pairs (offset, byte) taken from
//! the end of `rest`. Each stream is decoded in fills of `step` bytes. Checked properties:
//! - nothing panics; each fill decodes at least what it asked for (up to the stated length)
//!   and never more than the stated length;
//! - the stream decodes whole and complete exactly when `snap` decodes it, to the same bytes;
//! - for a stream `snap` decodes, every prefix decoded on the way is the start of its output.
#![no_main]

use leveldb_table::raw::compress::SnappyPrefix;
use libfuzzer_sys::fuzz_target;

/// Decodes `input` in fills of `step` bytes: the output if it decodes whole and complete,
/// and the prefixes seen on the way (their lengths).
fn decode(input: &[u8], step: usize, theirs: Option<&[u8]>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut d = SnappyPrefix::new(input, &mut out, 1 << 20).ok()?;
    let mut want = 0;
    while d.decoded() < d.stated_len() {
        want += step;
        d.fill(&mut out, want).ok()?;
        assert!(d.decoded() >= want.min(d.stated_len()));
        assert!(d.decoded() <= d.stated_len());
        if let Some(t) = theirs {
            assert_eq!(&out[..d.decoded()], &t[..d.decoded()], "a prefix differs");
        }
    }
    out.truncate(d.stated_len());
    d.is_complete().then_some(out)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let step = usize::from(u16::from_le_bytes([data[0], data[1]])).max(1);
    let (mode, rest) = (data[2], &data[3..]);
    let stream = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let split = rest.len() - rest.len() / 4;
        let mut s = snap::raw::Encoder::new()
            .compress_vec(&rest[..split])
            .unwrap();
        for pair in rest[split..].chunks_exact(3) {
            let at = usize::from(u16::from_le_bytes([pair[0], pair[1]]));
            if let Some(b) = s.get_mut(at) {
                *b = pair[2];
            }
        }
        s
    };
    let theirs = snap::raw::Decoder::new().decompress_vec(&stream).ok();
    let ours = decode(&stream, step, theirs.as_deref());
    assert_eq!(ours, theirs, "snap and the prefix decoder disagree");
});
