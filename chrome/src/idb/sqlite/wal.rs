//! SQLite's write-ahead log (`<db>-wal`), read as SQLite's recovery reads it: the frames
//! whose salts match the header and whose cumulative checksums hold, up to the last commit.
//!
//! ```text
//! header (32 bytes, big-endian):
//!   0 magic 377F0682 (checksums over little-endian words) or 377F0683 (big-endian)
//!   4 format 3007000    8 page size    12 checkpoint sequence
//!  16 salt-1   20 salt-2   24 checksum-1   28 checksum-2 (over bytes 0..24)
//! frame = 24-byte header + one page:
//!   0 page number   4 for a commit frame: the database's size in pages after it, else 0
//!   8 salt-1  12 salt-2 (the header's, else the frame is left over from an earlier log)
//!  16 checksum-1  20 checksum-2: cumulative over the header's checksum, then each frame's
//!     first 8 bytes and its page
//! checksum of words x: s0 += x[i] + s1; s1 += x[i+1] + s0 (wrapping u32), pairs in order
//! ```
//! A frame is committed when a commit frame at or after it is valid; frames after the last
//! valid commit were written by a transaction that never committed (SQLite ignores them).
//! (sqlite.org/fileformat2.html, section "The Write-Ahead Log".)

use std::path::{Path, PathBuf};

/// The `-wal` file of the database at `path`.
pub fn wal_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

/// The WAL header's size.
pub const WAL_HEADER: usize = 32;
/// A frame header's size.
pub const FRAME_HEADER: usize = 24;
const MAGIC_LE: u32 = 0x377f_0682;
const MAGIC_BE: u32 = 0x377f_0683;
const FORMAT: u32 = 3_007_000;

/// One valid frame of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// 1-based position in the log.
    pub index: u32,
    /// The page it holds.
    pub page: u32,
    /// For a commit frame, the database's size in pages after the commit.
    pub commit_size: Option<u32>,
    /// Offset of the frame's header in the file; its page follows it.
    pub offset: u64,
    /// Whether a valid commit frame at or after it makes it part of the database.
    pub committed: bool,
}

/// What a WAL file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wal {
    /// The page size the header states (0 when the header is not valid).
    pub page_size: u32,
    /// The checkpoint sequence number.
    pub checkpoint_seq: u32,
    /// The valid frames, in order (committed ones first).
    pub frames: Vec<Frame>,
    /// Why reading stopped before the end of the file, and where: a frame of an earlier
    /// log (other salts), a checksum that does not hold, a partial frame; or why the
    /// whole file is ignored (a header that is not valid).
    pub stop: Option<(u64, &'static str)>,
}

impl Wal {
    /// Frames that are part of the database.
    pub fn committed(&self) -> impl Iterator<Item = &Frame> {
        self.frames.iter().filter(|f| f.committed)
    }

    /// The number of commits in the log.
    pub fn commits(&self) -> usize {
        self.frames
            .iter()
            .filter(|f| f.commit_size.is_some())
            .count()
    }

    /// The page a frame holds.
    pub fn page<'a>(&self, bytes: &'a [u8], f: &Frame) -> &'a [u8] {
        let start = f.offset as usize + FRAME_HEADER;
        &bytes[start..start + self.page_size as usize]
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// SQLite's WAL checksum of `data` (a multiple of 8 bytes), continuing from `s`.
fn checksum(data: &[u8], big_endian: bool, mut s: (u32, u32)) -> (u32, u32) {
    for pair in data.chunks_exact(8) {
        let word = |i: usize| {
            let w = [pair[i], pair[i + 1], pair[i + 2], pair[i + 3]];
            if big_endian {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        s.0 = s.0.wrapping_add(word(0)).wrapping_add(s.1);
        s.1 = s.1.wrapping_add(word(4)).wrapping_add(s.0);
    }
    s
}

/// Reads a WAL file's bytes. Never fails: a file SQLite would ignore (too short, a bad
/// header) has no frames, and [`Wal::stop`] says why.
pub fn read_wal(bytes: &[u8]) -> Wal {
    let mut wal = Wal::default();
    if bytes.is_empty() {
        return wal;
    }
    if bytes.len() < WAL_HEADER {
        wal.stop = Some((0, "the log is shorter than its header; SQLite ignores it"));
        return wal;
    }
    let magic = be32(bytes, 0);
    let big_endian = match magic {
        MAGIC_LE => false,
        MAGIC_BE => true,
        _ => {
            wal.stop = Some((0, "no WAL magic number; SQLite ignores the file"));
            return wal;
        }
    };
    let page_size = be32(bytes, 8);
    let valid_size = (512..=65536).contains(&page_size) && page_size.is_power_of_two();
    let sum = checksum(&bytes[..24], big_endian, (0, 0));
    if be32(bytes, 4) != FORMAT || !valid_size || sum != (be32(bytes, 24), be32(bytes, 28)) {
        wal.stop = Some((0, "the log's header is not valid; SQLite ignores the file"));
        return wal;
    }
    wal.page_size = page_size;
    wal.checkpoint_seq = be32(bytes, 12);
    let salts = (be32(bytes, 16), be32(bytes, 20));
    let frame_len = FRAME_HEADER + page_size as usize;
    let mut s = sum;
    let mut at = WAL_HEADER;
    let mut last_commit = None;
    while at < bytes.len() {
        let Some(frame) = bytes.get(at..at + frame_len) else {
            wal.stop = Some((at as u64, "a partial frame at the end of the log"));
            break;
        };
        if (be32(frame, 8), be32(frame, 12)) != salts {
            wal.stop = Some((at as u64, "a frame of an earlier log (its salts differ)"));
            break;
        }
        let next = checksum(
            &frame[FRAME_HEADER..],
            big_endian,
            checksum(&frame[..8], big_endian, s),
        );
        if next != (be32(frame, 16), be32(frame, 20)) || be32(frame, 0) == 0 {
            wal.stop = Some((at as u64, "a frame whose checksum does not hold"));
            break;
        }
        s = next;
        let commit = be32(frame, 4);
        wal.frames.push(Frame {
            index: wal.frames.len() as u32 + 1,
            page: be32(frame, 0),
            commit_size: (commit != 0).then_some(commit),
            offset: at as u64,
            committed: false,
        });
        if commit != 0 {
            last_commit = Some(wal.frames.len());
        }
        at += frame_len;
    }
    for f in wal.frames.iter_mut().take(last_commit.unwrap_or(0)) {
        f.committed = true;
    }
    wal
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of `pages` (page number, commit size) with 512-byte pages.
    pub(crate) fn make_wal(frames: &[(u32, u32, u8)]) -> Vec<u8> {
        let mut out = Vec::new();
        for w in [MAGIC_LE, FORMAT, 512, 7, 11, 22] {
            out.extend_from_slice(&w.to_be_bytes());
        }
        let s = checksum(&out, false, (0, 0));
        out.extend_from_slice(&s.0.to_be_bytes());
        out.extend_from_slice(&s.1.to_be_bytes());
        let mut sum = s;
        for &(page, commit, fill) in frames {
            let mut h = Vec::new();
            for w in [page, commit, 11, 22] {
                h.extend_from_slice(&w.to_be_bytes());
            }
            let data = vec![fill; 512];
            sum = checksum(&data, false, checksum(&h[..8], false, sum));
            h.extend_from_slice(&sum.0.to_be_bytes());
            h.extend_from_slice(&sum.1.to_be_bytes());
            out.extend_from_slice(&h);
            out.extend_from_slice(&data);
        }
        out
    }

    #[test]
    fn commits_checksums_and_tails() {
        let log = make_wal(&[(1, 0, 1), (2, 2, 2), (2, 0, 3)]);
        let wal = read_wal(&log);
        assert_eq!(wal.page_size, 512);
        assert_eq!(wal.frames.len(), 3);
        assert_eq!(wal.committed().count(), 2);
        assert_eq!(wal.commits(), 1);
        assert_eq!(wal.page(&log, &wal.frames[2])[0], 3);
        assert_eq!(wal.stop, None);
        // A torn last frame, then a flipped byte: reading stops there, saying why.
        let wal = read_wal(&log[..log.len() - 10]);
        assert_eq!(wal.frames.len(), 2);
        assert!(wal.stop.unwrap().1.contains("partial"));
        let mut bad = log.clone();
        bad[32 + 24 + 5] ^= 1;
        let wal = read_wal(&bad);
        assert_eq!((wal.frames.len(), wal.committed().count()), (0, 0));
        assert!(wal.stop.unwrap().1.contains("checksum"));
        let mut bad = log;
        bad[0] = 0;
        assert!(read_wal(&bad).frames.is_empty());
        assert!(read_wal(&[1, 2, 3]).stop.is_some());
    }
}
