//! Blink's platform objects in `"data"`: Blob, File and FileList resolved through the
//! record's blob list (size, type, name, modification time, the file holding the bytes),
//! the others by interface name and fields.

use std::path::Path;

use sst_chrome::idb::{
    blob_file_path, decode_handle_token, ExternalKind, ExternalObject, HandleLocation,
};
use sst_chrome::v8value::{FileInfo, HostField, HostObject};

use super::json_text::{push_number, push_plain, push_str};
use crate::render::text;

/// Where a record's Blobs and Files are: its blob list and the folder of blob files.
pub struct Blobs<'a> {
    /// The record's blob entry, decoded.
    pub list: Option<&'a [ExternalObject]>,
    /// `<origin>.indexeddb.blob`, when known.
    pub dir: Option<&'a Path>,
    /// The record's database id (the first folder under the blob folder).
    pub database: i64,
    /// A SQLite database's record: for each entry of `list`, the legacy file holding its
    /// bytes, or `None` where they are in the database (`blobs.bytes`, shown as
    /// `"blob_row_id"`).
    pub sqlite_files: Option<&'a [Option<std::path::PathBuf>]>,
}

/// Blob, File, FileList (resolved through the record's blob list) and other platform
/// objects.
pub fn host(out: &mut Vec<u8>, h: &HostObject<'_>, blobs: &Blobs<'_>) {
    match h {
        HostObject::BlobIndex(i) => external(out, "blob", *i, blobs),
        HostObject::FileIndex(i) => external(out, "file", *i, blobs),
        HostObject::FileListIndex(files) => {
            out.extend_from_slice(b"{\"$type\":\"filelist\",\"files\":[");
            for (n, i) in files.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                external(out, "file", *i, blobs);
            }
            out.extend_from_slice(b"]}");
        }
        HostObject::Blob { uuid, mime, size } => {
            out.extend_from_slice(
                format!("{{\"$type\":\"blob\",\"size\":{size},\"mime\":").as_bytes(),
            );
            push_str(out, mime);
            out.extend_from_slice(b",\"uuid\":");
            push_str(out, uuid);
            out.push(b'}');
        }
        HostObject::File(f) => inline_file(out, f),
        HostObject::FileList(files) => {
            out.extend_from_slice(b"{\"$type\":\"filelist\",\"files\":[");
            for (n, f) in files.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                inline_file(out, f);
            }
            out.extend_from_slice(b"]}");
        }
        HostObject::Other { name, fields } => {
            out.extend_from_slice(b"{\"$type\":");
            push_plain(out, name);
            for (k, v) in fields {
                out.push(b',');
                push_plain(out, k);
                out.push(b':');
                field(out, v);
            }
            if let Some((directory, i)) = h.handle_token() {
                handle(out, directory, i, blobs);
            }
            out.push(b'}');
        }
    }
}

fn field(out: &mut Vec<u8>, v: &HostField<'_>) {
    match v {
        HostField::Number(x) => push_number(out, *x),
        HostField::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
        HostField::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        HostField::Name(s) => push_plain(out, s),
        HostField::Names(list) => {
            out.push(b'[');
            for (n, s) in list.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                push_plain(out, s);
            }
            out.push(b']');
        }
        HostField::Text(s) => push_str(out, s),
        HostField::Bytes(b) => {
            out.push(b'"');
            text::push_hex(out, b);
            out.push(b'"');
        }
        HostField::Numbers(xs) => {
            out.push(b'[');
            for (n, x) in xs.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                push_number(out, *x);
            }
            out.push(b']');
        }
    }
}

/// A handle's token (entry `i` of the record's blob list) decoded: where its file or
/// folder is (`"file_system"`: `sandboxed` with `virtual_path` and `bucket_id`, `local` or
/// `external` with `root_path` and `relative_path`), or `"token_error"`.
fn handle(out: &mut Vec<u8>, directory: bool, i: u64, blobs: &Blobs<'_>) {
    let entry = blobs
        .list
        .and_then(|l| l.get(usize::try_from(i).ok()?))
        .filter(|e| e.kind == ExternalKind::FileSystemAccessHandle);
    let Some(e) = entry else {
        out.extend_from_slice(b",\"token_error\":");
        push_plain(
            out,
            &format!("the record's blob entry lists no handle token {i}"),
        );
        return;
    };
    let t = match decode_handle_token(&e.token) {
        Ok(t) => t,
        Err(err) => {
            out.extend_from_slice(b",\"token_error\":");
            push_plain(out, &err.to_string());
            return;
        }
    };
    if t.directory != directory {
        out.extend_from_slice(b",\"token_kind\":");
        push_plain(out, if t.directory { "directory" } else { "file" });
    }
    let path = |out: &mut Vec<u8>, name: &str, p: &[u8]| match std::str::from_utf8(p) {
        Ok(s) if !s.contains('\0') => {
            out.extend_from_slice(format!(",\"{name}\":").as_bytes());
            push_plain(out, s);
        }
        _ => {
            out.extend_from_slice(format!(",\"{name}_hex\":\"").as_bytes());
            text::push_hex(out, p);
            out.push(b'"');
        }
    };
    match t.location {
        HandleLocation::Sandboxed {
            virtual_path,
            bucket_id,
        } => {
            out.extend_from_slice(b",\"file_system\":\"sandboxed\"");
            path(out, "virtual_path", virtual_path);
            if let Some(b) = bucket_id {
                out.extend_from_slice(format!(",\"bucket_id\":{b}").as_bytes());
            }
        }
        HandleLocation::Local {
            root_path,
            relative_path,
        }
        | HandleLocation::External {
            root_path,
            relative_path,
        } => {
            let local = matches!(t.location, HandleLocation::Local { .. });
            out.extend_from_slice(if local {
                b",\"file_system\":\"local\""
            } else {
                b",\"file_system\":\"external\""
            });
            path(out, "root_path", root_path);
            path(out, "relative_path", relative_path);
        }
    }
}

/// Entry `i` of the record's blob list as a blob or file.
fn external(out: &mut Vec<u8>, as_type: &str, i: u32, blobs: &Blobs<'_>) {
    let Some(e) = blobs.list.and_then(|l| l.get(i as usize)) else {
        out.extend_from_slice(
            format!("{{\"$type\":\"{as_type}\",\"index\":{i},\"error\":\"the record's blob entry lists no blob {i}\"}}")
                .as_bytes(),
        );
        return;
    };
    out.extend_from_slice(
        format!("{{\"$type\":\"{as_type}\",\"size\":{},\"mime\":", e.size).as_bytes(),
    );
    push_plain(out, &e.mime);
    // Blink reads a blob index as a Blob and a file index as a File, whatever the entry.
    if as_type == "file" {
        out.extend_from_slice(b",\"name\":");
        push_plain(out, e.file_name.as_deref().unwrap_or(""));
        if let Some(ms) = e.last_modified_ms() {
            out.extend_from_slice(format!(",\"last_modified\":{ms}").as_bytes());
        }
    }
    if let Some(files) = blobs.sqlite_files {
        match files.get(i as usize).and_then(|f| f.as_deref()) {
            Some(path) => {
                out.extend_from_slice(b",\"path\":");
                push_plain(out, &path.to_string_lossy());
            }
            None => out.extend_from_slice(format!(",\"blob_row_id\":{}", e.blob_number).as_bytes()),
        }
    } else if let Some(dir) = blobs
        .dir
        .filter(|_| e.kind != ExternalKind::FileSystemAccessHandle)
    {
        let path = dir.join(blob_file_path(blobs.database, e.blob_number));
        out.extend_from_slice(b",\"path\":");
        push_plain(out, &path.to_string_lossy());
    }
    out.push(b'}');
}

fn inline_file(out: &mut Vec<u8>, f: &FileInfo<'_>) {
    out.extend_from_slice(b"{\"$type\":\"file\"");
    if let Some(size) = f.size {
        out.extend_from_slice(format!(",\"size\":{size}").as_bytes());
    }
    out.extend_from_slice(b",\"mime\":");
    push_str(out, &f.mime);
    if let Some(name) = &f.name {
        out.extend_from_slice(b",\"name\":");
        push_str(out, name);
    }
    if let Some(ms) = f.last_modified_ms {
        out.extend_from_slice(b",\"last_modified\":");
        push_number(out, ms);
    }
    if !f.path.is_empty() {
        out.extend_from_slice(b",\"path\":");
        push_str(out, &f.path);
    }
    out.extend_from_slice(b",\"uuid\":");
    push_str(out, &f.uuid);
    out.push(b'}');
}
