//! The origin whose IndexedDB a directory holds, from Chromium's name for it
//! (`storage::DatabaseIdentifier`): `scheme_host_port`, port 0 for the scheme's default,
//! an IPv6 host's colons as `_`. Chromium writes it in every `global / database name` key
//! with `@1` appended, and names the directory `<identifier>.indexeddb.leveldb`.
//!
//! ```text
//! https_example.com_0@1        https://example.com
//! http_127.0.0.1_8080          http://127.0.0.1:8080
//! http_[__1]_8080              http://[::1]:8080
//! file__0                      file://
//! ```
//! The origin is written as localStorage's keys write it (`http://host:port`, no port for
//! the default, no trailing slash).

/// The origin an identifier names (`https_example.com_0@1` -> `https://example.com`);
/// `None` for what is not one (an opaque origin's `__0`, anything else).
pub fn origin_from_identifier(id: &str) -> Option<String> {
    let id = match id.rsplit_once('@') {
        Some((head, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => id,
    };
    let (scheme, rest) = id.split_once('_')?;
    let (host, port) = rest.rsplit_once('_')?;
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-.".contains(&b));
    let port: u16 = port.parse().ok()?;
    if !scheme_ok || (host.is_empty() && scheme != "file") {
        return None;
    }
    let host = if host.starts_with('[') && host.ends_with(']') {
        host.replace('_', ":")
    } else if host.contains(['_', '/', ':', '@']) {
        return None;
    } else {
        host.to_string()
    };
    Some(if port == 0 {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}:{port}")
    })
}

/// The origin of an IndexedDB directory named `<identifier>.indexeddb.leveldb`.
pub fn origin_of_directory(dir_name: &str) -> Option<String> {
    origin_from_identifier(dir_name.strip_suffix(".indexeddb.leveldb")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_chromium_writes() {
        let cases = [
            ("https_example.com_0@1", Some("https://example.com")),
            ("https_example.com_0", Some("https://example.com")),
            ("http_127.0.0.1_55229@1", Some("http://127.0.0.1:55229")),
            ("http_[__1]_8080", Some("http://[::1]:8080")),
            ("file__0", Some("file://")),
            (
                "chrome-extension_abcdefgh_0@1",
                Some("chrome-extension://abcdefgh"),
            ),
            ("__0", None),
            ("https_example.com", None),
            ("https__0", None),
            ("HTTPS_x_0", None),
            ("https_a_b_0", None),
            ("https_x_99999", None),
        ];
        for (id, want) in cases {
            assert_eq!(origin_from_identifier(id).as_deref(), want, "{id}");
        }
        assert_eq!(
            origin_of_directory("https_web.whatsapp.com_0.indexeddb.leveldb").as_deref(),
            Some("https://web.whatsapp.com")
        );
        assert_eq!(origin_of_directory("https_x_0.leveldb"), None);
    }
}
