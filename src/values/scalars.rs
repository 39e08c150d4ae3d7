//! Coercion and checking of one parameter value.
//!
//! Every function takes the raw value as a JSON value: query-string and form parameters arrive as
//! JSON strings (or arrays/objects for bracket keys, see [`super::form`]), JSON bodies carry typed
//! values. A refusal is an [`Invalid`] whose reason completes a sentence that starts with the
//! parameter name.

use serde_json::Value;

use crate::values::{Invalid, SubCode, MAX_STRING_BYTES};

/// URL values are limited in characters, not bytes.
const MAX_URL_CHARS: usize = 2048;

/// The longest rendering of a bad list item quoted in a reason; items can be 64 KiB strings.
const MAX_QUOTED_ITEM_CHARS: usize = 40;

/// -2^63 as a float (exact); the i64 range as floats is `I64_START..-I64_START`.
const I64_START: f64 = i64::MIN as f64;

const INTEGER: &str = "must be an integer.";
const INTEGER_RANGE: &str =
    "must be an integer between -9223372036854775808 and 9223372036854775807.";
const POSITIVE_INTEGER: &str = "must be an integer of at least 1.";

/// An integer: a JSON integer, a JSON number with an integral value, or a string in
/// decimal number syntax whose value is integral (`"+5"`, `"007"`, `"5.0"`, `"1e2"`).
/// Surrounding whitespace, hexadecimal, the empty string, booleans and lists are refused.
pub fn integer(v: &Value) -> Result<i64, Invalid> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i)
            } else if n.is_u64() {
                Err(Invalid::new(SubCode::OutOfBounds, INTEGER_RANGE))
            } else {
                // A float (serde_json only produces finite ones): `-2^63 <= f < 2^63` is exactly
                // the i64 range, and an integral float in it converts without loss.
                match n.as_f64() {
                    Some(f) if f.fract() != 0.0 => Err(Invalid::new(SubCode::InvalidType, INTEGER)),
                    Some(f) if (I64_START..-I64_START).contains(&f) => Ok(f as i64),
                    _ => Err(Invalid::new(SubCode::OutOfBounds, INTEGER_RANGE)),
                }
            }
        }
        Value::String(s) => Decimal::parse(s)
            .ok_or_else(|| Invalid::new(SubCode::InvalidType, INTEGER))?
            .to_i64(),
        _ => Err(Invalid::new(SubCode::InvalidType, INTEGER)),
    }
}

/// An integer of at least 1 (`page`, `per_page`, IDs in lists).
pub fn positive_integer(v: &Value) -> Result<i64, Invalid> {
    match integer(v) {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err(Invalid::new(SubCode::OutOfBounds, POSITIVE_INTEGER)),
        // Keep the code, but tell the caller the full requirement when the type is wrong.
        Err(e) if e.code == SubCode::InvalidType => {
            Err(Invalid::new(SubCode::InvalidType, POSITIVE_INTEGER))
        }
        Err(e) => Err(e),
    }
}

/// A boolean by WordPress's strict rule: JSON `true`/`false`, JSON `1`/`0` (integers
/// only, as PHP's `is_int`), or the strings `true`/`false`/`1`/`0` in any ASCII case.
pub fn boolean(v: &Value) -> Result<bool, Invalid> {
    let refused = || Invalid::new(SubCode::InvalidType, "must be a boolean.");
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => match n.as_i64() {
            Some(1) => Ok(true),
            Some(0) => Ok(false),
            _ => Err(refused()),
        },
        Value::String(s) => {
            if s.eq_ignore_ascii_case("true") || s == "1" {
                Ok(true)
            } else if s.eq_ignore_ascii_case("false") || s == "0" {
                Ok(false)
            } else {
                Err(refused())
            }
        }
        _ => Err(refused()),
    }
}

/// The plugin's loose "truthy" test (venue `show_map`/`show_map_link`): any string, JSON
/// boolean or JSON number is accepted; only a few spellings mean true.
pub fn truthy(v: &Value) -> Result<bool, Invalid> {
    const TRUE_WORDS: [&str; 7] = ["1", "true", "yes", "y", "on", "enable", "enabled"];
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => Ok(n.as_f64().is_some_and(|f| f != 0.0)),
        Value::String(s) => Ok(TRUE_WORDS.iter().any(|w| s.eq_ignore_ascii_case(w))),
        _ => Err(Invalid::new(
            SubCode::InvalidType,
            "must be a string, a boolean or a number.",
        )),
    }
}

/// The event list's `strict_dates`: PHP's boolean filter, which the plugin uses there.
/// Any non-empty string is accepted; it is true when, trimmed, it is `1`, `true`, `on` or `yes`
/// in any ASCII case (unlike [`truthy`], `y` and `enable` are false here).
pub fn strict_dates(v: &Value) -> Result<bool, Invalid> {
    const TRUE_WORDS: [&str; 4] = ["1", "true", "on", "yes"];
    // The characters PHP's filter trims (its default trim set, minus NUL, which `string` refuses).
    let trimmed = non_empty_string(v)?.trim_matches([' ', '\t', '\n', '\r', '\x0B']);
    Ok(TRUE_WORDS.iter().any(|w| trimmed.eq_ignore_ascii_case(w)))
}

/// A string: a JSON string without NUL, at most [`MAX_STRING_BYTES`] bytes of UTF-8.
pub fn string(v: &Value) -> Result<&str, Invalid> {
    let Value::String(s) = v else {
        return Err(Invalid::new(SubCode::InvalidType, "must be a string."));
    };
    if s.contains('\0') {
        return Err(Invalid::new(
            SubCode::InvalidCharacters,
            "must not contain the NUL character.",
        ));
    }
    if s.len() > MAX_STRING_BYTES {
        return Err(Invalid::new(
            SubCode::TooLong,
            format!("must be at most {MAX_STRING_BYTES} bytes long."),
        ));
    }
    Ok(s)
}

/// A [`string`] of at most `max_chars` characters (category/tag names: 200, event passwords: 255).
pub(crate) fn string_max_chars(v: &Value, max_chars: usize) -> Result<&str, Invalid> {
    let s = string(v)?;
    if s.chars().count() > max_chars {
        return Err(Invalid::new(
            SubCode::TooLong,
            format!("must be at most {max_chars} characters long."),
        ));
    }
    Ok(s)
}

/// A [`string`] of at least one character; `"0"` and `" "` count as non-empty.
pub(crate) fn non_empty_string(v: &Value) -> Result<&str, Invalid> {
    let s = string(v)?;
    if s.is_empty() {
        return Err(Invalid::new(SubCode::Empty, "must not be empty."));
    }
    Ok(s)
}

/// One of a fixed set of strings, compared exactly (case-sensitive).
pub fn one_of<'a>(v: &'a Value, allowed: &[&str]) -> Result<&'a str, Invalid> {
    let Value::String(s) = v else {
        return Err(Invalid::new(SubCode::InvalidType, "must be a string."));
    };
    if allowed.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(Invalid::new(
            SubCode::NotInEnum,
            format!("must be one of: {}.", allowed.join(", ")),
        ))
    }
}

/// A web address. Returns the value with surrounding whitespace removed, otherwise as given
/// (URLs are stored and returned verbatim, not in the parser's normalized form).
pub fn url(v: &Value) -> Result<String, Invalid> {
    let invalid = || {
        Invalid::new(
            SubCode::InvalidFormat,
            "must be an absolute http:// or https:// URL.",
        )
    };
    let s = string(v)?.trim();
    if s.chars().count() > MAX_URL_CHARS {
        return Err(Invalid::new(
            SubCode::TooLong,
            format!("must be at most {MAX_URL_CHARS} characters long."),
        ));
    }
    // `http://` or `https://`. Checked on the raw text because the parser also accepts
    // `http:example.org` and backslashes in place of the slashes.
    let bytes = s.as_bytes();
    let authority = if bytes.len() >= 7 && bytes[..7].eq_ignore_ascii_case(b"http://") {
        &s[7..]
    } else if bytes.len() >= 8 && bytes[..8].eq_ignore_ascii_case(b"https://") {
        &s[8..]
    } else {
        return Err(invalid());
    };
    // WHATWG skips any further slashes before the host of an http(s) URL, so it reads
    // `https:///path` as host `path`; almanac refuses that.
    if authority.starts_with(['/', '\\']) {
        return Err(invalid());
    }
    // No whitespace or control characters. The parser would silently strip tabs and newlines, so
    // check before parsing.
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid());
    }
    // A valid URL with a host. The scheme is special, so a successful parse implies a non-empty
    // domain, IPv4 or bracketed IPv6 host and a port of at most 65535; port 0 is the one WHATWG
    // value left over.
    match url::Url::parse(s) {
        Ok(parsed) if parsed.port() != Some(0) => Ok(s.to_owned()),
        _ => Err(invalid()),
    }
}

/// Checks every item of a list parameter; the first bad item makes the whole list
/// invalid, with a reason that names the item by position and value.
pub(crate) fn items<T>(
    items: Vec<Value>,
    item: impl Fn(&Value) -> Result<T, Invalid>,
) -> Result<Vec<T>, Invalid> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            item(v).map_err(|e| {
                Invalid::new(
                    e.code,
                    format!("item {} ({}) {}", i + 1, quote_item(v), e.reason),
                )
            })
        })
        .collect()
}

/// A finite number (latitudes, longitudes, ...): a JSON number or a string in decimal number
/// syntax (the same syntax as for [`integer`], without surrounding whitespace).
pub fn number(v: &Value) -> Result<f64, Invalid> {
    let refused = || Invalid::new(SubCode::InvalidType, "must be a number.");
    match v {
        // serde_json only produces finite numbers.
        Value::Number(n) => n.as_f64().ok_or_else(refused),
        Value::String(s) => {
            Decimal::parse(s).ok_or_else(refused)?;
            // The syntax check above is stricter than Rust's float parser (no `inf`, `NaN`,
            // whitespace), so this parse cannot fail; it can only overflow to infinity.
            let f: f64 = s.parse().map_err(|_| refused())?;
            if f.is_finite() {
                Ok(f)
            } else {
                Err(Invalid::new(
                    SubCode::OutOfBounds,
                    "must be a finite number.",
                ))
            }
        }
        _ => Err(refused()),
    }
}

/// A compact rendering of a list item for a reason, cut to a readable length.
fn quote_item(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= MAX_QUOTED_ITEM_CHARS {
        text
    } else {
        let cut: String = text.chars().take(MAX_QUOTED_ITEM_CHARS).collect();
        format!("{cut}…")
    }
}

/// A string in decimal number syntax: optional sign, digits with an optional fraction (either
/// side of the point may be empty, not both, as in PHP's numeric strings), optional exponent.
struct Decimal<'a> {
    negative: bool,
    int_digits: &'a str,
    frac_digits: &'a str,
    /// The exponent's digits; kept as text because it may not fit any integer type.
    exp_negative: bool,
    exp_digits: &'a str,
}

impl<'a> Decimal<'a> {
    fn parse(s: &'a str) -> Option<Decimal<'a>> {
        let (negative, rest) = match s.as_bytes().first()? {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let (int_digits, frac_digits) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        if (int_digits.is_empty() && frac_digits.is_empty())
            || !all_digits(int_digits)
            || !all_digits(frac_digits)
        {
            return None;
        }
        let (exp_negative, exp_digits) = match exponent {
            None => (false, ""),
            Some(e) => {
                let (neg, digits) = match e.as_bytes().first()? {
                    b'-' => (true, &e[1..]),
                    b'+' => (false, &e[1..]),
                    _ => (false, e),
                };
                if digits.is_empty() || !all_digits(digits) {
                    return None;
                }
                (neg, digits)
            }
        };
        Some(Decimal {
            negative,
            int_digits,
            frac_digits,
            exp_negative,
            exp_digits,
        })
    }

    /// The exact value as an `i64`, computed in decimal rather than through a float, so that
    /// `"9223372036854775807"` is accepted and `"1.0000000000000000001"` is not integral.
    fn to_i64(&self) -> Result<i64, Invalid> {
        // All significant digits, with the exponent adjusted for the fraction and for trailing
        // zeros, so that the value is `significand * 10^scale` with no trailing zero.
        let digits = format!("{}{}", self.int_digits, self.frac_digits);
        let significand = digits.trim_start_matches('0').trim_end_matches('0');
        if significand.is_empty() {
            return Ok(0); // Zero whatever the sign and exponent ("-0", "0e999").
        }
        let trailing_zeros = digits.len() - digits.trim_end_matches('0').len();
        // An exponent too large for i64 is far beyond any i64 value either way.
        let exponent = match self.exp_digits.parse::<i64>() {
            Ok(e) if self.exp_negative => -e,
            Ok(e) => e,
            Err(_) if self.exp_digits.is_empty() => 0,
            Err(_) if self.exp_negative => i64::MIN / 2,
            Err(_) => i64::MAX / 2,
        };
        let scale = exponent
            .saturating_sub(self.frac_digits.len() as i64)
            .saturating_add(trailing_zeros as i64);
        if scale < 0 {
            return Err(Invalid::new(SubCode::InvalidType, INTEGER));
        }
        let out_of_bounds = || Invalid::new(SubCode::OutOfBounds, INTEGER_RANGE);
        // 20 digits already exceed i64, so larger magnitudes need no arithmetic.
        if significand.len() as i64 + scale > 20 {
            return Err(out_of_bounds());
        }
        let magnitude = significand
            .parse::<i128>()
            .ok()
            .and_then(|m| m.checked_mul(10_i128.checked_pow(scale as u32)?))
            .ok_or_else(out_of_bounds)?;
        let value = if self.negative { -magnitude } else { magnitude };
        i64::try_from(value).map_err(|_| out_of_bounds())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn s(text: &str) -> Value {
        Value::String(text.to_owned())
    }

    fn code<T: std::fmt::Debug>(r: Result<T, Invalid>) -> SubCode {
        r.expect_err("expected a refusal").code
    }

    // Integers

    #[test]
    fn integer_accepts_the_table_examples() {
        assert_eq!(integer(&json!(5)), Ok(5));
        assert_eq!(integer(&json!(5.0)), Ok(5));
        for (text, want) in [
            ("5", 5),
            ("+5", 5),
            ("007", 7),
            ("5.0", 5),
            ("1e2", 100),
            ("-5", -5),
            ("-0", 0),
            ("0", 0),
            ("1E+2", 100),
            ("100e-2", 1),
            ("1.5e1", 15),
            ("5.", 5),
            (".0", 0),
            ("0e999999999999999999999", 0),
        ] {
            assert_eq!(integer(&s(text)), Ok(want), "{text:?}");
        }
    }

    #[test]
    fn integer_refuses_the_table_examples() {
        for v in [
            s("5.5"),
            s(" 5"),
            s("5 "),
            s("0x10"),
            s(""),
            s("five"),
            s("+"),
            s("."),
            s("1e"),
            s("1e+"),
            s("e5"),
            s("--5"),
            s("1e-2"),
            s("1.0000000000000000001"),
            s("1e-99999999999999999999"),
            s("inf"),
            s("NaN"),
            s("٣"),
            json!(true),
            json!(null),
            json!([5]),
            json!({"a": 5}),
            json!(5.5),
        ] {
            assert_eq!(code(integer(&v)), SubCode::InvalidType, "{v}");
        }
    }

    #[test]
    fn integer_range_is_signed_64_bit() {
        assert_eq!(integer(&s("9223372036854775807")), Ok(i64::MAX));
        assert_eq!(integer(&s("-9223372036854775808")), Ok(i64::MIN));
        assert_eq!(integer(&json!(i64::MIN)), Ok(i64::MIN));
        for v in [
            s("9223372036854775808"),
            s("-9223372036854775809"),
            s("1e19"),
            s("1e400"),
            s("123456789012345678901234567890"),
            s("1e99999999999999999999"),
            json!(9223372036854775808_u64),
            json!(1e19),
            json!(-1e19),
        ] {
            assert_eq!(code(integer(&v)), SubCode::OutOfBounds, "{v}");
        }
    }

    #[test]
    fn positive_integer_requires_at_least_one() {
        assert_eq!(positive_integer(&s("1")), Ok(1));
        assert_eq!(positive_integer(&json!(42)), Ok(42));
        for v in [s("0"), s("-3"), json!(0)] {
            let e = positive_integer(&v).unwrap_err();
            assert_eq!(e.code, SubCode::OutOfBounds);
            assert_eq!(e.reason, "must be an integer of at least 1.");
        }
        assert_eq!(code(positive_integer(&s("x"))), SubCode::InvalidType);
        assert_eq!(
            code(positive_integer(&s("99999999999999999999"))),
            SubCode::OutOfBounds
        );
    }

    // Booleans

    #[test]
    fn boolean_strict_rule() {
        for v in [
            json!(true),
            json!(1),
            s("true"),
            s("1"),
            s("TRUE"),
            s("True"),
        ] {
            assert_eq!(boolean(&v), Ok(true), "{v}");
        }
        for v in [json!(false), json!(0), s("false"), s("0"), s("FaLsE")] {
            assert_eq!(boolean(&v), Ok(false), "{v}");
        }
        for v in [
            s(""),
            s("yes"),
            s("no"),
            s("on"),
            s(" true"),
            s("01"),
            json!(2),
            json!(-1),
            json!(1.0),
            json!(null),
            json!([true]),
            json!({}),
        ] {
            assert_eq!(code(boolean(&v)), SubCode::InvalidType, "{v}");
        }
    }

    #[test]
    fn truthy_strings() {
        for v in [
            json!(true),
            json!(1),
            json!(-2),
            json!(0.5),
            s("1"),
            s("true"),
            s("yes"),
            s("Y"),
            s("ON"),
            s("enable"),
            s("Enabled"),
        ] {
            assert_eq!(truthy(&v), Ok(true), "{v}");
        }
        for v in [
            json!(false),
            json!(0),
            json!(0.0),
            s(""),
            s("0"),
            s("2"),
            s("no"),
            s("off"),
            s(" yes"),
            s("anything"),
        ] {
            assert_eq!(truthy(&v), Ok(false), "{v}");
        }
        for v in [json!(null), json!(["yes"]), json!({"a": 1})] {
            assert_eq!(code(truthy(&v)), SubCode::InvalidType, "{v}");
        }
    }

    #[test]
    fn strict_dates_rule() {
        for text in ["1", "true", "on", "yes", "TRUE", "Yes", " true ", "\ton\n"] {
            assert_eq!(strict_dates(&s(text)), Ok(true), "{text:?}");
        }
        for text in [
            "0", "false", "y", "enable", "enabled", "no", "anything", " ", "2",
        ] {
            assert_eq!(strict_dates(&s(text)), Ok(false), "{text:?}");
        }
        assert_eq!(code(strict_dates(&s(""))), SubCode::Empty);
        assert_eq!(code(strict_dates(&s("a\0"))), SubCode::InvalidCharacters);
        assert_eq!(code(strict_dates(&json!(["1"]))), SubCode::InvalidType);
        assert_eq!(code(strict_dates(&json!(true))), SubCode::InvalidType);
    }

    // Strings

    #[test]
    fn string_requires_a_json_string() {
        assert_eq!(string(&s("abc")), Ok("abc"));
        assert_eq!(string(&s("")), Ok(""));
        for v in [
            json!(5),
            json!(true),
            json!(["a"]),
            json!({"a": "b"}),
            json!(null),
        ] {
            assert_eq!(code(string(&v)), SubCode::InvalidType, "{v}");
        }
    }

    #[test]
    fn string_refuses_nul() {
        assert_eq!(code(string(&s("a\0b"))), SubCode::InvalidCharacters);
        assert_eq!(code(non_empty_string(&s("\0"))), SubCode::InvalidCharacters);
    }

    #[test]
    fn string_byte_limit() {
        let at_limit = "a".repeat(MAX_STRING_BYTES);
        assert!(string(&s(&at_limit)).is_ok());
        assert_eq!(code(string(&s(&format!("{at_limit}a")))), SubCode::TooLong);
        // The limit is in bytes of UTF-8: 32768 two-byte characters are 65536 bytes.
        assert_eq!(code(string(&s(&"é".repeat(32_768)))), SubCode::TooLong);
    }

    #[test]
    fn string_character_limit() {
        assert_eq!(
            string_max_chars(&s(&"é".repeat(200)), 200).map(str::len),
            Ok(400)
        );
        assert_eq!(
            code(string_max_chars(&s(&"é".repeat(201)), 200)),
            SubCode::TooLong
        );
        assert_eq!(
            code(string_max_chars(&s(&"a".repeat(256)), 255)),
            SubCode::TooLong
        );
        assert_eq!(code(string_max_chars(&json!(1), 255)), SubCode::InvalidType);
    }

    #[test]
    fn non_empty_string_counts_characters() {
        assert_eq!(non_empty_string(&s("0")), Ok("0"));
        assert_eq!(non_empty_string(&s(" ")), Ok(" "));
        assert_eq!(code(non_empty_string(&s(""))), SubCode::Empty);
        assert_eq!(code(non_empty_string(&json!(0))), SubCode::InvalidType);
    }

    #[test]
    fn one_of_is_exact() {
        let allowed = ["asc", "desc"];
        assert_eq!(one_of(&s("asc"), &allowed), Ok("asc"));
        for text in ["ASC", " asc", "", "up"] {
            assert_eq!(
                code(one_of(&s(text), &allowed)),
                SubCode::NotInEnum,
                "{text:?}"
            );
        }
        assert_eq!(code(one_of(&json!(1), &allowed)), SubCode::InvalidType);
        assert_eq!(
            code(one_of(&json!(["asc"]), &allowed)),
            SubCode::InvalidType
        );
    }

    // URLs

    #[test]
    fn url_accepts_http_and_https() {
        for text in [
            "http://example.org",
            "https://example.org/",
            "HTTPS://Example.org/a/b?c=d#e",
            "HtTp://example.org:8080/x",
            "http://127.0.0.1/",
            "http://[::1]:65535/",
            "https://bücher.example/straße?ü=1",
            "http://user:pw@example.org/",
            "http://example.org:80",
        ] {
            assert_eq!(url(&s(text)).as_deref(), Ok(text), "{text:?}");
        }
    }

    #[test]
    fn url_is_trimmed_and_otherwise_verbatim() {
        assert_eq!(
            url(&s("  https://Example.org/a%20b \n")),
            Ok("https://Example.org/a%20b".to_owned())
        );
        assert_eq!(
            url(&s("\u{3000}http://example.org/\u{2028}")),
            Ok("http://example.org/".to_owned())
        );
    }

    #[test]
    fn url_refuses_the_contract_examples() {
        for text in [
            "foo",
            "www.example.org",
            "mailto:a@example.org",
            "ftp://example.org/x",
            "javascript:alert(1)",
            "http://",
            "https:///path",
            "",
            "   ",
            "http:example.org",
            "http:/example.org",
            "http:\\\\example.org",
            "http://\\example.org",
            "http://exa mple.org",
            "http://example.org/a b",
            "http://example.org/a\tb",
            "http://example.org/a\u{7f}b",
            "http://example.org/a\u{85}b",
            "http://example.org/a\u{2028}b",
            "http://example.org:0/",
            "http://example.org:65536/",
            "http://:80/",
            "http://?x",
            "http://#x",
            "http://[::1/",
            "http://999.1.1.1/",
            "http://exa<mple.org/",
        ] {
            assert_eq!(code(url(&s(text))), SubCode::InvalidFormat, "{text:?}");
        }
    }

    #[test]
    fn url_other_refusals() {
        assert_eq!(code(url(&json!(1))), SubCode::InvalidType);
        assert_eq!(code(url(&s("http://a.org/\0"))), SubCode::InvalidCharacters);
        let prefix = "https://example.org/";
        let at_limit = format!("{prefix}{}", "é".repeat(MAX_URL_CHARS - prefix.len()));
        assert_eq!(url(&s(&at_limit)), Ok(at_limit.clone()));
        assert_eq!(code(url(&s(&format!("{at_limit}x")))), SubCode::TooLong);
    }

    // Lists

    #[test]
    fn items_checks_every_item() {
        assert_eq!(items(vec![s("3"), json!(7)], integer), Ok(vec![3, 7]));
        assert_eq!(items(Vec::new(), integer), Ok(Vec::new()));
    }

    #[test]
    fn items_first_bad_item_invalidates_the_list() {
        let e = items(vec![s("3"), s("five"), s("0")], positive_integer).unwrap_err();
        assert_eq!(e.code, SubCode::InvalidType);
        assert_eq!(
            e.reason,
            "item 2 (\"five\") must be an integer of at least 1."
        );
        let e = items(vec![s(&"x".repeat(100))], integer).unwrap_err();
        assert!(e.reason.starts_with("item 1 (\"xxx"), "{}", e.reason);
        assert!(e.reason.chars().count() < 100, "{}", e.reason);
    }

    // Numbers for coordinates.

    #[test]
    fn number_accepts_numbers_and_numeric_strings() {
        assert_eq!(number(&json!(45.5)), Ok(45.5));
        assert_eq!(number(&json!(-90)), Ok(-90.0));
        assert_eq!(number(&s("-33.8688")), Ok(-33.8688));
        assert_eq!(number(&s("+1e2")), Ok(100.0));
        assert_eq!(number(&s(".5")), Ok(0.5));
    }

    #[test]
    fn number_refusals() {
        for v in [
            s(""),
            s(" 1"),
            s("inf"),
            s("NaN"),
            s("infinity"),
            s("0x1"),
            s("1,5"),
            json!(true),
            json!(null),
            json!([1]),
        ] {
            assert_eq!(code(number(&v)), SubCode::InvalidType, "{v}");
        }
        assert_eq!(code(number(&s("1e400"))), SubCode::OutOfBounds);
    }
}
