//! What a stored File System Access handle points at: the token of its entry in the
//! record's blob list (type 2), Chromium's `FileSystemAccessHandleData` protobuf.
//!
//! ```text
//! field 1 varint   handle type: 0 file, 1 directory
//! one of:
//! field 2 message  sandboxed (the origin private file system, OPFS):
//!                    1 bytes virtual path (from the origin's root), 2 varint bucket id
//! field 3 message  local (a file or folder the user picked):
//!                    1 bytes root path (what was picked), 2 bytes relative path (below it)
//! field 4 message  external (a virtual path of an external file system): as local
//! protobuf: each field a varint key (number << 3 | wire type) and its value;
//!           wire types 0 varint, 1 8 bytes, 2 varint length + bytes, 5 4 bytes
//! ```
//! (Chromium's `content/browser/file_system_access/file_system_access.proto`.) Paths are
//! a `base::FilePath`'s bytes: UTF-8 where the writer's platform uses 8-bit paths (Linux,
//! macOS), UTF-16 in its byte order on Windows.

use crate::v8value::{ValueError, ValueErrorKind};

/// Where a handle's file or folder is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandleLocation<'a> {
    /// In the origin private file system.
    Sandboxed {
        /// The path from the origin's root (empty for the root itself).
        virtual_path: &'a [u8],
        /// The storage bucket, when not the default one.
        bucket_id: Option<i64>,
    },
    /// On the device's own file system, below what the user picked.
    Local {
        /// What the user picked.
        root_path: &'a [u8],
        /// The path below it (empty: the root itself).
        relative_path: &'a [u8],
    },
    /// In an external file system (virtual paths).
    External {
        /// The root.
        root_path: &'a [u8],
        /// The path below it.
        relative_path: &'a [u8],
    },
}

/// A decoded handle token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandleToken<'a> {
    /// A directory (else a file).
    pub directory: bool,
    /// Where it is.
    pub location: HandleLocation<'a>,
}

/// Decodes a handle's token (the `token` of a blob-list entry of type 2).
///
/// # Errors
/// Bytes that are not the protobuf above (cut short, without a handle type or a location),
/// with the offset in the token.
pub fn decode_handle_token(token: &[u8]) -> Result<HandleToken<'_>, ValueError> {
    let mut directory = None;
    let mut location = None;
    for field in Fields::new(token) {
        let (number, value, at) = field?;
        match (number, value) {
            (1, Field::Varint(v)) => directory = Some(v == 1),
            (2, Field::Bytes(b)) => {
                let (mut path, mut bucket_id) = (None, None);
                for f in Fields::new(b) {
                    match f.map_err(|e| shift(e, at))? {
                        (1, Field::Bytes(p), _) => path = Some(p),
                        (2, Field::Varint(v), _) => bucket_id = Some(v as i64),
                        _ => {}
                    }
                }
                location = Some(HandleLocation::Sandboxed {
                    virtual_path: path
                        .ok_or_else(|| bad(at, "a sandboxed handle without its path"))?,
                    bucket_id,
                });
            }
            (3 | 4, Field::Bytes(b)) => {
                let (mut root, mut relative) = (None, None);
                for f in Fields::new(b) {
                    match f.map_err(|e| shift(e, at))? {
                        (1, Field::Bytes(p), _) => root = Some(p),
                        (2, Field::Bytes(p), _) => relative = Some(p),
                        _ => {}
                    }
                }
                let root_path = root.ok_or_else(|| bad(at, "a handle without its root path"))?;
                let relative_path = relative.unwrap_or_default();
                location = Some(if number == 3 {
                    HandleLocation::Local {
                        root_path,
                        relative_path,
                    }
                } else {
                    HandleLocation::External {
                        root_path,
                        relative_path,
                    }
                });
            }
            _ => {}
        }
    }
    Ok(HandleToken {
        directory: directory.ok_or_else(|| bad(0, "a handle token without its type"))?,
        location: location.ok_or_else(|| bad(0, "a handle token without its location"))?,
    })
}

fn bad(at: usize, what: &'static str) -> ValueError {
    ValueError::new(at, ValueErrorKind::Invalid(what)).in_context("handle token")
}

/// An error inside a nested message, its offset made the token's.
fn shift(mut e: ValueError, by: usize) -> ValueError {
    e.offset += by;
    e
}

/// A protobuf field's value.
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// The fields of a protobuf message: (number, value, offset of the value).
struct Fields<'a> {
    s: &'a [u8],
    at: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    fn new(s: &'a [u8]) -> Self {
        Fields {
            s,
            at: 0,
            failed: false,
        }
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.s.get(self.at)?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn field(&mut self) -> Result<(u64, Field<'a>, usize), ValueError> {
        let cut = |at| ValueError::new(at, ValueErrorKind::Truncated("a handle token field"));
        let start = self.at;
        let key = self.varint().ok_or_else(|| cut(start))?;
        let at = self.at;
        let value = match key & 7 {
            0 => Field::Varint(self.varint().ok_or_else(|| cut(at))?),
            2 => {
                let n = self.varint().ok_or_else(|| cut(at))?;
                let from = self.at;
                let end = usize::try_from(n)
                    .ok()
                    .and_then(|n| from.checked_add(n))
                    .filter(|&e| e <= self.s.len())
                    .ok_or_else(|| cut(from))?;
                self.at = end;
                return Ok((key >> 3, Field::Bytes(&self.s[from..end]), from));
            }
            1 | 5 => {
                let n = if key & 7 == 1 { 8 } else { 4 };
                if self.s.len() - self.at < n {
                    return Err(cut(at));
                }
                self.at += n;
                Field::Fixed
            }
            _ => return Err(bad(start, "an unknown protobuf wire type")),
        };
        Ok((key >> 3, value, at))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Field<'a>, usize), ValueError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.s.len() {
            return None;
        }
        let f = self.field();
        self.failed = f.is_err();
        Some(f.map_err(|e| e.in_context("handle token")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_chromium_wrote() {
        // From testdata/idb/contract: an OPFS file, a folder, and the OPFS root.
        let file = decode_handle_token(b"\x08\x00\x12\x0b\x0a\x09notes.txt").unwrap();
        assert!(!file.directory);
        assert_eq!(
            file.location,
            HandleLocation::Sandboxed {
                virtual_path: b"notes.txt",
                bucket_id: None
            }
        );
        let root = decode_handle_token(b"\x08\x01\x12\x02\x0a\x00").unwrap();
        assert!(root.directory);
        assert_eq!(
            root.location,
            HandleLocation::Sandboxed {
                virtual_path: b"",
                bucket_id: None
            }
        );
        // A picked file: root and relative path, and a bucket id on a sandboxed one.
        let local = decode_handle_token(b"\x08\x00\x1a\x0c\x0a\x04/tmp\x12\x04a.md").unwrap();
        assert_eq!(
            local.location,
            HandleLocation::Local {
                root_path: b"/tmp",
                relative_path: b"a.md"
            }
        );
        let bucket = decode_handle_token(b"\x08\x00\x12\x05\x0a\x01x\x10\x07").unwrap();
        assert_eq!(
            bucket.location,
            HandleLocation::Sandboxed {
                virtual_path: b"x",
                bucket_id: Some(7)
            }
        );
    }

    #[test]
    fn damaged_tokens_are_errors_with_offsets() {
        for (bytes, at) in [
            (&b""[..], 0),
            (b"\x08", 1),
            (b"\x08\x00", 0),
            (b"\x08\x00\x12\x09\x0a\x07sub", 4),
            (b"\x08\x00\x12\x03\x0a\x05x", 6),
            (b"\x08\x00\x12\x00", 4),
            (b"\x0f", 0),
        ] {
            let e = decode_handle_token(bytes).unwrap_err();
            assert_eq!(e.offset, at, "{bytes:?}: {e}");
        }
    }
}
