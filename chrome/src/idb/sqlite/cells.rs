//! The rows of a SQLite table b-tree leaf page, read from its bytes (for page images SQLite
//! no longer shows: earlier WAL frames, free pages).
//!
//! ```text
//! leaf page (header at byte 100 on page 1, else 0):
//!   0 type (0x0D table leaf)  3 cells u16 BE  8.. cell pointers u16 BE (offsets in page)
//! cell: varint P (payload bytes), varint rowid, the payload's first L bytes,
//!       [u32 BE first overflow page when L < P]
//!   U = page size - reserved (header byte 20); X = U - 35
//!   L = P if P <= X, else K = M + (P - M) % (U - 4) with M = (U - 12) * 32 / 255 - 23,
//!       L = K if K <= X else M
//! overflow page: u32 BE next page (0 = last), then U - 4 payload bytes
//! record (the payload): varint header size, one varint serial type per column, values:
//!   0 NULL, 1-6 integers of 1,2,3,4,6,8 bytes BE, 7 f64 BE, 8 zero, 9 one,
//!   N >= 12 even: blob of (N - 12) / 2 bytes, N >= 13 odd: text of (N - 13) / 2 bytes
//! varint: 1-9 bytes, 7 bits each (high bit: more), the 9th byte all 8 bits
//! ```
//! (sqlite.org/fileformat2.html, "B-tree Pages" and "Record Format".)

/// A column's value in a record.
#[derive(Debug, Clone, PartialEq)]
pub enum Column<'a> {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A blob.
    Blob(&'a [u8]),
    /// Text (UTF-8 as SQLite stores it).
    Text(&'a [u8]),
}

const TABLE_LEAF: u8 = 0x0d;

/// Reads a SQLite varint from the front of `s`.
pub fn varint(s: &mut &[u8]) -> Option<i64> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let (&b, rest) = s.split_first()?;
        *s = rest;
        if i == 8 {
            return Some(((v << 8) | u64::from(b)) as i64);
        }
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some(v as i64);
        }
    }
    None
}

fn take<'a>(body: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (a, b) = (body.get(..n)?, body.get(n..)?);
    *body = b;
    Some(a)
}

/// The columns of a record (a row's payload); `None` if the bytes are not a record.
pub fn record(payload: &[u8]) -> Option<Vec<Column<'_>>> {
    let mut h = payload;
    let header_len = usize::try_from(varint(&mut h)?).ok()?;
    let mut types = payload.get(payload.len() - h.len()..header_len)?;
    let mut body = payload.get(header_len..)?;
    let mut out = Vec::new();
    while !types.is_empty() {
        let t = varint(&mut types)?;
        let int = |b: &[u8]| {
            let mut v: i64 = if b.first().is_some_and(|x| x & 0x80 != 0) {
                -1
            } else {
                0
            };
            for &x in b {
                v = (v << 8) | i64::from(x);
            }
            v
        };
        out.push(match t {
            0 => Column::Null,
            1..=4 => Column::Int(int(take(&mut body, t as usize)?)),
            5 => Column::Int(int(take(&mut body, 6)?)),
            6 => Column::Int(int(take(&mut body, 8)?)),
            7 => {
                let b = take(&mut body, 8)?;
                Column::Float(f64::from_bits(int(b) as u64))
            }
            8 => Column::Int(0),
            9 => Column::Int(1),
            n if n >= 12 && n % 2 == 0 => Column::Blob(take(&mut body, ((n - 12) / 2) as usize)?),
            n if n >= 13 => Column::Text(take(&mut body, ((n - 13) / 2) as usize)?),
            _ => return None,
        });
    }
    Some(out)
}

/// A row of a table leaf page: its rowid and its whole payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafRow {
    /// The rowid.
    pub rowid: i64,
    /// The payload, overflow pages followed.
    pub payload: Vec<u8>,
}

/// The rows of a table leaf page (`page_no` 1 has the database header first); `usable` is
/// the page size less the reserved bytes; `page_at` gives the overflow pages as they were
/// when this page was written. Cells that do not read (pointers out of the page, an
/// overflow chain that breaks or loops) are left out; a page of another type has none.
pub fn leaf_rows<'p>(
    page: &[u8],
    page_no: u32,
    usable: usize,
    page_at: &dyn Fn(u32) -> Option<&'p [u8]>,
) -> Vec<LeafRow> {
    let base = if page_no == 1 { 100 } else { 0 };
    let mut out = Vec::new();
    if page.get(base) != Some(&TABLE_LEAF) || usable < 480 || usable > page.len() {
        return out;
    }
    let be16 = |at: usize| {
        page.get(at..at + 2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    };
    let Some(cells) = be16(base + 3) else {
        return out;
    };
    let x = usable - 35;
    let m = (usable - 12) * 32 / 255 - 23;
    for i in 0..cells {
        let Some(ptr) = be16(base + 8 + 2 * i) else {
            break;
        };
        let Some(mut s) = page.get(ptr..usable) else {
            continue;
        };
        let (Some(p), Some(rowid)) = (varint(&mut s), varint(&mut s)) else {
            continue;
        };
        let Ok(p) = usize::try_from(p) else { continue };
        if p > 1 << 31 {
            continue;
        }
        let local = if p <= x {
            p
        } else {
            let k = m + (p - m) % (usable - 4);
            if k <= x {
                k
            } else {
                m
            }
        };
        let Some(head) = s.get(..local) else { continue };
        let mut payload = head.to_vec();
        if local < p {
            let Some(first) = s.get(local..local + 4) else {
                continue;
            };
            let mut next = u32::from_be_bytes([first[0], first[1], first[2], first[3]]);
            let mut hops = 0;
            while payload.len() < p && next != 0 && hops <= p / (usable - 4) + 1 {
                let Some(o) = page_at(next).and_then(|o| o.get(..usable)) else {
                    break;
                };
                let want = (p - payload.len()).min(usable - 4);
                payload.extend_from_slice(&o[4..4 + want]);
                next = u32::from_be_bytes([o[0], o[1], o[2], o[3]]);
                hops += 1;
            }
            if payload.len() < p {
                continue;
            }
        }
        out.push(LeafRow { rowid, payload });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_records() {
        assert_eq!(varint(&mut &[0x05][..]), Some(5));
        assert_eq!(varint(&mut &[0x81, 0x00][..]), Some(128));
        assert_eq!(varint(&mut &[0xff; 9][..]), Some(-1));
        assert_eq!(varint(&mut &[0x81][..]), None);
        // NULL, int 3, 1 (type 9), blob "ab", text "c"
        let rec = [6, 0, 1, 9, 16, 15, 3, b'a', b'b', b'c'];
        assert_eq!(
            record(&rec).unwrap(),
            [
                Column::Null,
                Column::Int(3),
                Column::Int(1),
                Column::Blob(b"ab"),
                Column::Text(b"c")
            ]
        );
        assert_eq!(record(&rec[..8]), None);
        assert_eq!(record(&[0x7f]), None);
        let neg = [2, 1, 0xfe];
        assert_eq!(record(&neg).unwrap(), [Column::Int(-2)]);
    }
}
