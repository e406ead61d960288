//! Damaged directories (group `damaged`): each a fresh copy of the generated many-level
//! directory (`dirs::levels`) with one thing broken. The right answer is an error, or the
//! undamaged directory's live view exactly; a reader that drops a damaged log record or a
//! missing table and answers with exit 0 shows other data than was written.

use std::path::Path;

use leveldb_table::{Compression, Options};

use super::dirs::{dir_case, levels, DirFiles};
use super::{Case, Group};
use crate::error::{Error, Result};

fn flip(path: &Path, at: u64) -> Result<()> {
    let mut bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let i = (at as usize).min(bytes.len().saturating_sub(1));
    if let Some(b) = bytes.get_mut(i) {
        *b ^= 0x40;
    }
    std::fs::write(path, &bytes).map_err(|e| Error::io(path, e))
}

fn table_at(files: &DirFiles, level: u32) -> Result<&Path> {
    files
        .tables
        .iter()
        .find(|(l, _)| *l == level)
        .map(|(_, p)| p.as_path())
        .ok_or_else(|| Error::SelfCheck {
            case: "db-levels".into(),
            reason: format!("no table at level {level}"),
        })
}

/// The damaged directory cases.
pub(super) fn cases(root: &Path) -> Result<Vec<Case>> {
    type Damage = fn(&DirFiles, &Path) -> Result<()>;
    let recipes: [(&str, &str, Damage); 7] = [
        (
            "damaged-db-log-record-flip",
            "a byte flipped in the first record of the live log (checksum stale)",
            |f, _| flip(&f.log, 100),
        ),
        (
            "damaged-db-log-fragment-flip",
            "a byte flipped in the middle fragment of the log's 100 KB record",
            |f, _| flip(&f.log, 50_000),
        ),
        (
            "damaged-db-table-flip",
            "a byte flipped in the first data block of the level-2 table",
            |f, _| flip(table_at(f, 2)?, 10),
        ),
        (
            "damaged-db-table-truncated",
            "the first level-6 table cut to half its length",
            |f, _| {
                let t = table_at(f, 6)?;
                let len = std::fs::metadata(t).map_err(|e| Error::io(t, e))?.len();
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(t)
                    .map_err(|e| Error::io(t, e))?;
                file.set_len(len / 2).map_err(|e| Error::io(t, e))
            },
        ),
        (
            "damaged-db-missing-table",
            "the first level-1 table deleted",
            |f, _| {
                let t = table_at(f, 1)?;
                std::fs::remove_file(t).map_err(|e| Error::io(t, e))
            },
        ),
        (
            "damaged-db-manifest-flip",
            "a byte flipped in the MANIFEST's record",
            |f, _| flip(&f.manifest, 20),
        ),
        ("damaged-db-no-current", "CURRENT deleted", |_, dir| {
            let c = dir.join("CURRENT");
            std::fs::remove_file(&c).map_err(|e| Error::io(&c, e))
        }),
    ];
    let mut out = Vec::new();
    for (name, about, damage) in recipes {
        let dir = root.join(name);
        let opts = Options::default()
            .compression(Compression::None)
            .bloom(10)
            .block_size(1024);
        let (view, files) = levels(&dir, opts)?;
        damage(&files, &dir)?;
        out.push(dir_case(
            name,
            Group::Damaged,
            about,
            &dir,
            view,
            Vec::new(),
        )?);
    }
    Ok(out)
}
