//! The database as of its last commit, assembled in memory from the main file and its WAL
//! (SQLite's own files are never opened by SQLite, so nothing is written beside them: no
//! `-shm`, no checkpoint, no journal).
//!
//! ```text
//! main file: page 1 (100-byte header first) .. page N, each `page size` bytes
//!   16 page size u16 BE (1 = 65536)   18/19 write/read version (2 = WAL)
//!   24 change counter   28 size in pages (valid when 92 "version-valid-for" = 24's)
//!   32 first freelist trunk page   36 free pages
//! image = main pages, then every committed WAL frame's page in log order (a later frame of
//!         a page replaces an earlier one), cut to the last commit's size in pages;
//!         bytes 18/19 set to 1 in the copy, so that SQLite reads it as a plain file
//! freelist trunk page: next trunk u32, n u32, n leaf page numbers u32 (all BE)
//! ```

use super::wal::Wal;

/// SQLite's magic string.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Why an image cannot be assembled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageError {
    /// Offset in the main file (or 0).
    pub offset: u64,
    /// What is wrong.
    pub what: String,
}

/// The database as of the last commit, in memory.
#[derive(Debug, Clone)]
pub struct Image {
    /// Page size in bytes.
    pub page_size: u32,
    /// The pages, `page_size` bytes each (page 1 first).
    pub bytes: Vec<u8>,
    /// How many pages came from WAL frames.
    pub pages_from_wal: u32,
    /// The pages of the main file a committed WAL frame replaces (their older versions).
    pub replaced_main_pages: Vec<u32>,
}

impl Image {
    /// The number of pages.
    pub fn pages(&self) -> u32 {
        (self.bytes.len() / self.page_size as usize) as u32
    }

    /// Page `n` (1-based), if the image has it.
    pub fn page(&self, n: u32) -> Option<&[u8]> {
        let size = self.page_size as usize;
        let start = (n as usize).checked_sub(1)? * size;
        self.bytes.get(start..start + size)
    }

    /// The free pages (trunk and leaf pages of the freelist), as the header lists them;
    /// a list that loops or leaves the file stops there.
    pub fn free_pages(&self) -> Vec<u32> {
        let be = |b: &[u8], at: usize| -> u32 {
            b.get(at..at + 4)
                .map_or(0, |w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
        };
        let mut out = Vec::new();
        let mut trunk = be(&self.bytes, 32);
        while trunk != 0 && out.len() <= self.pages() as usize {
            let Some(p) = self.page(trunk) else { break };
            if out.contains(&trunk) {
                break;
            }
            out.push(trunk);
            let n = be(p, 4) as usize;
            for i in 0..n.min((p.len() - 8) / 4) {
                let leaf = be(p, 8 + 4 * i);
                if leaf != 0 && leaf <= self.pages() {
                    out.push(leaf);
                }
            }
            trunk = be(p, 0);
        }
        out
    }
}

fn be16(b: &[u8], at: usize) -> u32 {
    u32::from(u16::from_be_bytes([b[at], b[at + 1]]))
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Assembles the database as of the last commit from the main file's bytes and its WAL
/// (`wal` read from `wal_bytes`; an empty [`Wal`] when there is no log).
///
/// # Errors
/// A main file that is not SQLite, a page size the main file and the log disagree on, a
/// database with no pages.
pub fn build_image(main: &[u8], wal: &Wal, wal_bytes: &[u8]) -> Result<Image, ImageError> {
    let err = |offset: u64, what: String| Err(ImageError { offset, what });
    let main_size = if main.is_empty() {
        None
    } else if main.len() < 100 || &main[..16] != SQLITE_MAGIC {
        return err(0, "not a SQLite 3 database (no SQLite header)".into());
    } else {
        Some(match be16(main, 16) {
            1 => 65536,
            n => n,
        })
    };
    let has_frames = wal.committed().next().is_some();
    let page_size = match (main_size, has_frames) {
        (Some(m), true) if m != wal.page_size => {
            return err(
                16,
                format!(
                    "the main file's page size ({m}) is not the log's ({})",
                    wal.page_size
                ),
            )
        }
        (Some(m), _) => m,
        (None, true) => wal.page_size,
        (None, false) => return err(0, "an empty database file and no committed log".into()),
    };
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return err(
            16,
            format!("page size {page_size} is not one SQLite writes"),
        );
    }
    let size = page_size as usize;
    let main_pages = (main.len() / size) as u32;
    let header_pages = if main.len() >= 100 && be32(main, 24) == be32(main, 92) {
        be32(main, 28)
    } else {
        0
    };
    let pages = match wal.committed().filter_map(|f| f.commit_size).last() {
        Some(n) => n,
        None if header_pages > 0 => header_pages.min(main_pages),
        None => main_pages,
    };
    let mut bytes = vec![0u8; pages as usize * size];
    let from_main = (main_pages.min(pages) as usize) * size;
    bytes[..from_main].copy_from_slice(&main[..from_main]);
    let mut from_wal = vec![false; pages as usize];
    for f in wal.committed() {
        if f.page == 0 || f.page > pages {
            continue;
        }
        let at = (f.page as usize - 1) * size;
        bytes[at..at + size].copy_from_slice(wal.page(wal_bytes, f));
        from_wal[f.page as usize - 1] = true;
    }
    if bytes.len() < 100 || &bytes[..16] != SQLITE_MAGIC {
        return err(0, "page 1 of the database has no SQLite header".into());
    }
    // The copy is read as a plain (rollback-journal) database: SQLite looks for no log.
    bytes[18] = 1;
    bytes[19] = 1;
    let replaced_main_pages = (1..=main_pages.min(pages))
        .filter(|p| from_wal[*p as usize - 1])
        .collect();
    Ok(Image {
        page_size,
        bytes,
        pages_from_wal: from_wal.iter().filter(|x| **x).count() as u32,
        replaced_main_pages,
    })
}
