//! C number conventions libvmaf relies on: `%g` formatting and the normalisation its option
//! dictionaries apply to numeric values (`strtof`, then `%g`).

/// C's `printf("%g", v)`: 6 significant digits, trailing zeros removed, exponent form when the
/// decimal exponent is below -4 or at least 6; `inf`, `-inf`, `nan`, `-nan` as glibc prints them.
pub fn c_fmt_g(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    const P: i32 = 6;
    // Rounded to P significant digits, exactly as printf's %e would (round half to even on the
    // exact binary value); its exponent decides the style.
    let e_form = format!("{:.*e}", (P - 1) as usize, v);
    let (mant, exp) = e_form.split_once('e').expect("{:e} has an exponent");
    let x: i32 = exp.parse().expect("{:e} exponent is an integer");
    if !(-4..P).contains(&x) {
        let mant = strip_zeros(mant);
        format!(
            "{mant}e{}{:02}",
            if x < 0 { '-' } else { '+' },
            x.unsigned_abs()
        )
    } else {
        let fixed = format!("{:.*}", (P - 1 - x) as usize, v);
        strip_zeros(&fixed).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Length of the longest prefix of `s` that C's `strtod` reads as a decimal number (optional sign,
/// digits with optional point, optional exponent), or `inf`/`infinity`/`nan` in any case; 0 if none.
fn c_float_prefix(s: &[u8]) -> usize {
    let mut i = 0;
    if matches!(s.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let rest = &s[i..];
    let lower: Vec<u8> = rest
        .iter()
        .take(8)
        .map(|b| b.to_ascii_lowercase())
        .collect();
    if lower.starts_with(b"infinity") {
        return i + 8;
    }
    if lower.starts_with(b"inf") || lower.starts_with(b"nan") {
        return i + 3;
    }
    let mut digits = 0;
    while s.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
        digits += 1;
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return 0;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(s.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if s.get(j).is_some_and(u8::is_ascii_digit) {
            while s.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            i = j;
        }
    }
    i
}

/// libvmaf's `vmaf_feature_dictionary_set` normalisation of an option value: a value that is
/// entirely a number (`sscanf(val, "%f %c") == 1`: optional surrounding whitespace) is replaced by
/// `%g` of its single-precision (`strtof`) value, so `1.0` becomes `1` and `0.12345678` becomes
/// `0.123457`; anything else is returned unchanged. (Hexadecimal floats, which C also accepts, are
/// left unchanged here.)
pub fn normalize_numeric(val: &str) -> String {
    let b = val.as_bytes();
    let lead = b.iter().take_while(|&&c| is_c_space(c)).count();
    let n = c_float_prefix(&b[lead..]);
    if n == 0 || !b[lead + n..].iter().all(|&c| is_c_space(c)) {
        return val.to_string();
    }
    let text = &val[lead..lead + n];
    c_fmt_g(strtof(text) as f64)
}

/// `strtof` of a string accepted by [`c_float_prefix`] in full.
fn strtof(text: &str) -> f32 {
    let (neg, body) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.to_ascii_lowercase();
    let mag = if lower.starts_with("inf") {
        f32::INFINITY
    } else if lower.starts_with("nan") {
        f32::NAN
    } else {
        // Correctly rounded straight to f32, as strtof (not via f64: no double rounding).
        body.parse::<f32>().unwrap_or(0.0)
    };
    if neg {
        -mag
    } else {
        mag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_matches_c() {
        // Expected strings as glibc's printf("%g") prints them.
        let cases: &[(f64, &str)] = &[
            (1.0, "1"),
            (100.0, "100"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (999999.5, "1e+06"),
            (999999.4, "999999"),
            (0.000099999995, "0.0001"),
            (-2.5, "-2.5"),
            (1e100, "1e+100"),
            (1.25e-300, "1.25e-300"),
            (0.0, "0"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (0.1f32 as f64, "0.1"),
            (3.0000005, "3"),
            (2.5e-5, "2.5e-05"),
        ];
        for &(v, s) in cases {
            assert_eq!(c_fmt_g(v), s, "{v:e}");
        }
    }

    #[test]
    fn normalisation_follows_libvmaf() {
        assert_eq!(normalize_numeric("1.0"), "1");
        assert_eq!(normalize_numeric("1"), "1");
        assert_eq!(normalize_numeric(" 100.00 "), "100");
        assert_eq!(normalize_numeric("0.12345678"), "0.123457");
        assert_eq!(normalize_numeric("1e-5"), "1e-05");
        // Through single precision: 1.1f is 1.10000002384..., %g shows 1.1.
        assert_eq!(normalize_numeric("1.1"), "1.1");
        assert_eq!(normalize_numeric("16777217"), "1.67772e+07");
        assert_eq!(normalize_numeric("-3"), "-3");
        assert_eq!(normalize_numeric("inf"), "inf");
        assert_eq!(normalize_numeric("true"), "true");
        assert_eq!(normalize_numeric("1.0x"), "1.0x");
        assert_eq!(normalize_numeric("abc"), "abc");
        assert_eq!(normalize_numeric(""), "");
        assert_eq!(normalize_numeric("."), ".");
    }
}
