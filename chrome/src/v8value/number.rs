//! Numbers and BigInts as JavaScript prints them.

use std::fmt::Write;

/// `String(x)` in JavaScript (ECMAScript's Number::toString, radix 10): `1e+21`, `0.000001`,
/// `1e-7`, `-0` as `0`, `NaN`, `Infinity`.
pub fn js_number_to_string(x: f64) -> String {
    let mut out = String::new();
    write_js_number(&mut out, x);
    out
}

/// Appends `String(x)` to `out` (see [`js_number_to_string`]).
pub fn write_js_number(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        // An integer below 2^53: its digits (k <= n <= 21 below).
        let _ = write!(out, "{}", x as i64);
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    // Rust prints the shortest digits that read back as the same double, as the
    // specification asks; `{:e}` gives them with the exponent: d[.ddd]e[-]n.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().unwrap_or(0) + 1; // the decimal point's place
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
}

/// A BigInt's magnitude (little-endian bytes) in decimal, with a `-` when negative and not
/// zero.
pub fn bigint_to_decimal(negative: bool, magnitude: &[u8]) -> String {
    // Little-endian 32-bit limbs, divided by 10^9 repeatedly (schoolbook; BigInts stored in
    // pages are small).
    let mut limbs: Vec<u32> = magnitude
        .chunks(4)
        .map(|c| {
            c.iter()
                .rev()
                .fold(0u32, |acc, &b| (acc << 8) | u32::from(b))
        })
        .collect();
    while limbs.last() == Some(&0) {
        limbs.pop();
    }
    if limbs.is_empty() {
        return "0".to_string();
    }
    let mut chunks = Vec::new(); // base 10^9 digits, least significant first
    while !limbs.is_empty() {
        let mut rem = 0u64;
        for limb in limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        chunks.push(rem as u32);
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let mut it = chunks.iter().rev();
    if let Some(first) = it.next() {
        let _ = write!(out, "{first}");
    }
    for c in it {
        let _ = write!(out, "{c:09}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        // Each pair checked against `String(x)` in V8.
        let cases: [(f64, &str); 19] = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-7.0, "-7"),
            (3.25, "3.25"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (2f64.powi(53), "9007199254740992"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (0.000123, "0.000123"),
        ];
        for (x, want) in cases {
            assert_eq!(js_number_to_string(x), want, "{x:e}");
        }
    }

    #[test]
    fn bigints_in_decimal() {
        assert_eq!(bigint_to_decimal(false, &[]), "0");
        assert_eq!(bigint_to_decimal(true, &[0; 8]), "0");
        assert_eq!(bigint_to_decimal(false, &[42, 0, 0, 0, 0, 0, 0, 0]), "42");
        assert_eq!(bigint_to_decimal(true, &[42, 0, 0, 0, 0, 0, 0, 0]), "-42");
        // 2^64 = 18446744073709551616: digits 0,1 (two 64-bit digits).
        let mut two64 = [0u8; 16];
        two64[8] = 1;
        assert_eq!(bigint_to_decimal(false, &two64), "18446744073709551616");
        // 10^18 + 1 exercises a zero-padded middle chunk.
        let x = 1_000_000_000_000_000_001u64.to_le_bytes();
        assert_eq!(bigint_to_decimal(false, &x), "1000000000000000001");
    }
}
