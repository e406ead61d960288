//! Older versions of `records` rows, where the bytes still hold them: page images SQLite no
//! longer shows.
//!
//! ```text
//! where                      what it holds
//! WAL frame, superseded      a page as an earlier commit left it (a later committed frame
//!                            holds the same page)
//! WAL frame, uncommitted     a page of a transaction that never committed
//! main-file page             the page before the log's committed frames replaced it
//! free page                  a page the database no longer uses (on its freelist); its old
//!                            cells stay until the page is reused
//! ```
//! Each such page that is a table leaf is read for rows shaped like `records` (rowid;
//! NULL, integer store id, compression type 0-2, key blob, value blob), overflow pages
//! taken as they were at the frame's time. A row equal to a live row (same row id, store,
//! key, compression and value) is the live row's old copy and is left out; the others are
//! `shadowed` (the key is live with another value), `deleted` (the key is not live) or
//! `uncommitted`. Each distinct row is listed once, where it was first found (main file,
//! then log order, then free pages), with how many other copies there are.

use std::collections::{HashMap, HashSet};

use super::cells::{leaf_rows, record, Column};
use super::database::SqliteDatabase;
use super::wal::Frame;
use crate::error::Result;

/// What became of an older row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowStatus {
    /// Its key is live with another value (or under another row id).
    Shadowed,
    /// Its key is not live.
    Deleted,
    /// It is in a transaction that never committed.
    Uncommitted,
}

impl RowStatus {
    /// `shadowed`, `deleted`, `uncommitted`.
    pub fn as_str(self) -> &'static str {
        match self {
            RowStatus::Shadowed => "shadowed",
            RowStatus::Deleted => "deleted",
            RowStatus::Uncommitted => "uncommitted",
        }
    }
}

/// Where an older row was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowPlace {
    /// In the `-wal` file: frame `frame` (1-based), whose header is at `offset`, holding
    /// page `page`.
    WalFrame {
        /// The frame.
        frame: u32,
        /// Offset of its header in the `-wal` file.
        offset: u64,
        /// The page it holds.
        page: u32,
    },
    /// In the main file at `offset`: page `page`, which the log replaces.
    MainPage {
        /// The page.
        page: u32,
        /// Its offset in the main file.
        offset: u64,
    },
    /// A free page of the database (its content at `offset` in the image: the main file's
    /// or a frame's).
    FreePage {
        /// The page.
        page: u32,
    },
}

/// A `records` row that is not live, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OlderRecord {
    /// `row_id`.
    pub row_id: i64,
    /// `object_store_id`.
    pub store: i64,
    /// `key` as stored.
    pub key: Vec<u8>,
    /// `compression_type`.
    pub compression: i64,
    /// `value` as stored.
    pub value: Vec<u8>,
    /// What became of it.
    pub status: RowStatus,
    /// Where it was first found.
    pub place: RowPlace,
    /// How many other page images hold the same row.
    pub copies: usize,
}

/// A `records` row read from page bytes: (row id, store, compression, key, value).
type Row = (i64, i64, i64, Vec<u8>, Vec<u8>);

/// Live rows by (store, key): (row id, compression, value).
type Live = HashMap<(i64, Vec<u8>), (i64, i64, Vec<u8>)>;

fn records_row(rowid: i64, payload: &[u8]) -> Option<Row> {
    match record(payload)?.as_slice() {
        [Column::Null, Column::Int(store), Column::Int(c @ 0..=2), Column::Blob(k), Column::Blob(v)] => {
            Some((rowid, *store, *c, k.to_vec(), v.to_vec()))
        }
        _ => None,
    }
}

/// Every older `records` row the files of `db` still hold (see the module's notes).
///
/// # Errors
/// SQLite cannot read the live rows.
pub fn older_records(db: &SqliteDatabase) -> Result<Vec<OlderRecord>> {
    let mut live: Live = HashMap::new();
    for &store in db.info.stores.keys() {
        db.for_each_record(store, |r| {
            live.insert(
                (r.store, r.key.to_vec()),
                (r.row_id, r.compression, r.value.to_vec()),
            );
            Ok(true)
        })?;
    }
    let size = db.files.page_size as usize;
    let reserved = db.image.bytes.get(20).copied().unwrap_or(0) as usize;
    let usable = size.saturating_sub(reserved);
    let wal = &db.files.wal;
    let main_page = |p: u32| -> Option<&[u8]> {
        let at = (p as usize).checked_sub(1)? * size;
        db.main.get(at..at + size)
    };
    // Frames of each page, in log order, for "the page as of frame i".
    let mut by_page: HashMap<u32, Vec<&Frame>> = HashMap::new();
    for f in &wal.frames {
        by_page.entry(f.page).or_default().push(f);
    }
    let page_as_of = |limit: u32, p: u32| -> Option<&[u8]> {
        let frames = by_page.get(&p);
        match frames.and_then(|v| v.iter().rev().find(|f| f.index <= limit)) {
            Some(f) => Some(wal.page(&db.wal_bytes, f)),
            None => main_page(p),
        }
    };
    let live_pages: HashSet<u32> = wal
        .committed()
        .filter(|f| f.page <= db.files.pages)
        .map(|f| {
            by_page[&f.page]
                .iter()
                .rev()
                .find(|g| g.committed)
                .map_or(0, |g| g.index)
        })
        .collect();
    let mut out: Vec<OlderRecord> = Vec::new();
    let mut seen: HashMap<Row, usize> = HashMap::new();
    let mut take = |rows: Vec<super::cells::LeafRow>, place: RowPlace, uncommitted: bool| {
        for r in rows {
            let Some(row) = records_row(r.rowid, &r.payload) else {
                continue;
            };
            if let Some(&i) = seen.get(&row) {
                out[i].copies += 1;
                continue;
            }
            let (row_id, store, compression, key, value) = row.clone();
            let status = match live.get(&(store, key.clone())) {
                Some(l) if *l == (row_id, compression, value.clone()) => continue,
                _ if uncommitted => RowStatus::Uncommitted,
                Some(_) => RowStatus::Shadowed,
                None => RowStatus::Deleted,
            };
            seen.insert(row, out.len());
            out.push(OlderRecord {
                row_id,
                store,
                key,
                compression,
                value,
                status,
                place,
                copies: 0,
            });
        }
    };
    let main_pages = (db.main.len() / size.max(1)) as u32;
    for &p in &db.image.replaced_main_pages {
        if let Some(bytes) = main_page(p) {
            let rows = leaf_rows(bytes, p, usable, &|q| page_as_of(0, q));
            take(
                rows,
                RowPlace::MainPage {
                    page: p,
                    offset: (p as u64 - 1) * size as u64,
                },
                false,
            );
        }
    }
    // Main-file pages past the database's size (a log that shrank it).
    for p in db.files.pages + 1..=main_pages {
        if let Some(bytes) = main_page(p) {
            let rows = leaf_rows(bytes, p, usable, &|q| page_as_of(0, q));
            take(
                rows,
                RowPlace::MainPage {
                    page: p,
                    offset: (p as u64 - 1) * size as u64,
                },
                false,
            );
        }
    }
    for f in &wal.frames {
        if f.committed && live_pages.contains(&f.index) {
            continue;
        }
        let rows = leaf_rows(wal.page(&db.wal_bytes, f), f.page, usable, &|q| {
            page_as_of(f.index, q)
        });
        let place = RowPlace::WalFrame {
            frame: f.index,
            offset: f.offset,
            page: f.page,
        };
        take(rows, place, !f.committed);
    }
    let live_image = |p: u32| db.image.page(p);
    for p in db.image.free_pages() {
        if let Some(bytes) = db.image.page(p) {
            take(
                leaf_rows(bytes, p, usable, &live_image),
                RowPlace::FreePage { page: p },
                false,
            );
        }
    }
    Ok(out)
}
