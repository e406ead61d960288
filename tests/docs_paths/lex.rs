//! A small Rust lexer for the item index: identifiers, string literals (whose contents
//! `#[path = "..."]` needs) and punctuation; comments, characters and lifetimes dropped.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
}

impl Tok {
    pub fn is(&self, c: char) -> bool {
        *self == Tok::Punct(c)
    }

    pub fn ident(&self) -> Option<&str> {
        match self {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_kw(&self, kw: &str) -> bool {
        self.ident() == Some(kw)
    }
}

/// The tokens of `src`.
pub fn lex(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if src[i..].starts_with("//") {
            i += src[i..].find('\n').unwrap_or(src.len() - i);
        } else if src[i..].starts_with("/*") {
            // Block comments nest.
            let mut depth = 0;
            while i < b.len() {
                if src[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if src[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r'
            && (src[i + 1..].starts_with('"')
                || src[i + 1..].starts_with("#\"")
                || src[i + 1..].starts_with("##\""))
        {
            let hashes = src[i + 1..].chars().take_while(|&h| h == '#').count();
            let open = i + 1 + hashes + 1;
            let close = format!("\"{}", "#".repeat(hashes));
            let end = src[open..].find(&close).map_or(src.len(), |e| open + e);
            out.push(Tok::Str(src[open..end].to_string()));
            i = (end + close.len()).min(src.len());
        } else if c == '"' || (c == 'b' && src[i + 1..].starts_with('"')) {
            let open = if c == 'b' { i + 2 } else { i + 1 };
            let mut j = open;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push(Tok::Str(src[open..j.min(src.len())].to_string()));
            i = j + 1;
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{1F}') or a lifetime ('a, 'static).
            let rest = &src[i + 1..];
            if let Some(esc) = rest.strip_prefix('\\') {
                i += 3 + esc.find('\'').unwrap_or(esc.len());
            } else {
                let mut it = rest.char_indices();
                match (it.next(), it.next()) {
                    (Some(_), Some((e, '\''))) => i += e + 2,
                    _ => {
                        i += 1;
                        while i < b.len()
                            && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_')
                        {
                            i += 1;
                        }
                    }
                }
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(src[start..i].to_string()));
        } else if c.is_ascii_digit() {
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else {
            let ch = src[i..].chars().next().unwrap_or(' ');
            out.push(Tok::Punct(ch));
            i += ch.len_utf8();
        }
    }
    out
}

/// The index just past the group that opens at `i` (`(`, `[` or `{`), or the end.
pub fn skip_group(t: &[Tok], i: usize) -> usize {
    let mut depth = 0i32;
    let mut j = i;
    while j < t.len() {
        match &t[j] {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth <= 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    t.len()
}
