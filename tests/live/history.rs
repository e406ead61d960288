//! The history of a LevelDB directory recorded while its owner wrote it
//! (`tools/record_history.py`): every state the directory was in at the instants
//! the owner was stopped and the directory read, to replay under a reader.
//!
//! ```text
//! file (zstd): one JSON line {"dir", "blobs": [[name, len]...], "states": [[[name, blob, size]...]...]}
//!              then the blobs back to back; a state's file is the first `size` bytes of its blob
//! ```
//!
//! Shared by the tests that replay a history (included with `#[path]`).
#![allow(dead_code)]

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

/// A file of a state: (name, blob, size).
pub type File = (String, usize, usize);

/// A recorded history.
pub struct History {
    /// The directory's name (e.g. `http_127.0.0.1_40349.indexeddb.leveldb`).
    pub dir: String,
    /// The longest content each file had (a log or a MANIFEST only grows).
    pub blobs: Vec<Vec<u8>>,
    /// The directory's states, in order.
    pub states: Vec<Vec<File>>,
}

impl History {
    /// Reads the history in `path` (zstd).
    pub fn load(path: &Path) -> History {
        let raw = zstd::decode_all(fs::File::open(path).unwrap()).unwrap();
        let nl = raw.iter().position(|&b| b == b'\n').unwrap();
        let header: serde_json::Value = serde_json::from_slice(&raw[..nl]).unwrap();
        let mut at = nl + 1;
        let mut blobs = Vec::new();
        for b in header["blobs"].as_array().unwrap() {
            let len = b[1].as_u64().unwrap() as usize;
            blobs.push(raw[at..at + len].to_vec());
            at += len;
        }
        assert_eq!(at, raw.len(), "{}: trailing bytes", path.display());
        let states = header["states"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s.as_array()
                    .unwrap()
                    .iter()
                    .map(|f| {
                        (
                            f[0].as_str().unwrap().to_string(),
                            f[1].as_u64().unwrap() as usize,
                            f[2].as_u64().unwrap() as usize,
                        )
                    })
                    .collect()
            })
            .collect();
        History {
            dir: header["dir"].as_str().unwrap().to_string(),
            blobs,
            states,
        }
    }

    /// The bytes of `f`.
    pub fn bytes(&self, f: &File) -> &[u8] {
        &self.blobs[f.1][..f.2]
    }

    /// Writes state `i` into the empty (or missing) directory `dir`.
    pub fn materialize(&self, dir: &Path, i: usize) {
        fs::create_dir_all(dir).unwrap();
        for f in &self.states[i] {
            fs::write(dir.join(&f.0), self.bytes(f)).unwrap();
        }
    }

    /// Moves `dir` from state `from` to state `to` as the owner did: files new since
    /// written, a log or MANIFEST appended to in place (the same file), a file rewritten
    /// (CURRENT) replaced by a rename, files gone since deleted. Returns the names deleted.
    pub fn advance(&self, dir: &Path, from: usize, to: usize) -> Vec<String> {
        let old = &self.states[from];
        let new = &self.states[to];
        for f in new {
            match old.iter().find(|o| o.0 == f.0) {
                Some(o) if o.1 == f.1 && o.2 == f.2 => {}
                Some(o) if o.1 == f.1 && o.2 < f.2 => {
                    let mut w = OpenOptions::new()
                        .append(true)
                        .open(dir.join(&f.0))
                        .unwrap();
                    w.write_all(&self.bytes(f)[o.2..]).unwrap();
                }
                Some(_) => {
                    let tmp = dir.join(format!("{}.replay-tmp", f.0));
                    fs::write(&tmp, self.bytes(f)).unwrap();
                    fs::rename(&tmp, dir.join(&f.0)).unwrap();
                }
                None => fs::write(dir.join(&f.0), self.bytes(f)).unwrap(),
            }
        }
        let mut gone = Vec::new();
        for o in old {
            if !new.iter().any(|f| f.0 == o.0) {
                fs::remove_file(dir.join(&o.0)).unwrap();
                gone.push(o.0.clone());
            }
        }
        gone
    }
}
