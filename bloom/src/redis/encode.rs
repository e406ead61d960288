//! RESP encoding of commands straight into a reused buffer: `*N\r\n` then `$len\r\narg\r\n`
//! per argument (the Redis protocol spec), numbers through `itoa` (no allocation).

/// Starts a command of `n` arguments.
pub(super) fn array(out: &mut Vec<u8>, n: usize) {
    out.push(b'*');
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// One argument.
pub(super) fn bulk(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(itoa::Buffer::new().format(arg.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(arg);
    out.extend_from_slice(b"\r\n");
}

/// One argument: a number in decimal.
pub(super) fn bulk_u64(out: &mut Vec<u8>, v: u64) {
    bulk(out, itoa::Buffer::new().format(v).as_bytes());
}

/// A whole command.
pub(super) fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    array(out, args.len());
    for a in args {
        bulk(out, a);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_resp_arrays_of_bulk_strings() {
        let mut out = Vec::new();
        super::command(&mut out, &[b"GET", b"k"]);
        super::array(&mut out, 2);
        super::bulk(&mut out, b"");
        super::bulk_u64(&mut out, 1234);
        assert_eq!(
            out,
            b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*2\r\n$0\r\n\r\n$4\r\n1234\r\n"
        );
    }
}
