//! Slugs: the one sanitizing rule used for derived slugs, sent slugs and
//! `by-slug` path values, and the `-2`, `-3`, … suffixes that make a slug unique.

use percent_encoding::percent_decode_str;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// The longest slug, in bytes of UTF-8.
pub const MAX_SLUG_BYTES: usize = 200;

/// Slugs that WordPress reserves for its own URLs; as candidates they always get a suffix.
const RESERVED: [&str; 6] = ["feed", "rdf", "rss", "rss2", "atom", "embed"];

/// Sanitizes a title, name or sent slug: (1) escapes decoded and markup removed, (2) accents
/// removed, (3) lower-cased, (4) characters other than letters, digits, `_` and separators
/// removed, (5) separators turned into single dashes, (6) cut to [`MAX_SLUG_BYTES`]. The result
/// may be empty; see [`or_id`].
pub fn sanitize(input: &str) -> String {
    let text = fold(&strip_markup(&decode_percent_escapes(input)));

    // Steps 4 and 5 in one pass: separators and dashes become one `-` between kept characters,
    // while removed characters vanish without separating anything (`Don't` → `dont`).
    let mut slug = String::with_capacity(text.len());
    let mut pending_dash = false;
    for c in text.chars() {
        if c.is_whitespace() || matches!(c, '.' | '/' | '–' | '—' | '-') {
            pending_dash = !slug.is_empty();
        } else if c.is_alphanumeric() || c == '_' {
            if pending_dash {
                slug.push('-');
                pending_dash = false;
            }
            slug.push(c);
        }
    }

    let cut = truncate(&slug, MAX_SLUG_BYTES).trim_end_matches('-');
    cut.to_owned()
}

/// Whether a candidate is one of the names WordPress reserves (`feed`, `rdf`, `rss`, `rss2`,
/// `atom`, `embed`).
pub(crate) fn is_reserved(candidate: &str) -> bool {
    RESERVED.contains(&candidate)
}

/// The candidate with the suffix `-n`, the candidate being cut first (at a character boundary,
/// without leaving a dangling `-`) so that the whole stays within [`MAX_SLUG_BYTES`].
pub fn with_suffix(base: &str, n: u32) -> String {
    let suffix = format!("-{n}");
    let room = MAX_SLUG_BYTES.saturating_sub(suffix.len());
    let base = truncate(base, room).trim_end_matches('-');
    format!("{base}{suffix}")
}

/// The slug of a post kind (events, venues, organizers): the candidate itself when it is free
/// and not reserved, else the candidate with the first free suffix `-2`, `-3`, …. The candidate
/// must be non-empty (see [`or_id`]); `is_taken` says whether a slug is already used by another
/// record of the kind and language, trashed records included.
pub fn make_unique(candidate: &str, mut is_taken: impl FnMut(&str) -> bool) -> String {
    if !is_reserved(candidate) && !is_taken(candidate) {
        return candidate.to_owned();
    }
    let mut n = 2;
    loop {
        let slug = with_suffix(candidate, n);
        if !is_taken(&slug) {
            return slug;
        }
        n += 1;
    }
}

/// A sanitized slug, or the record's ID in decimal when sanitizing left nothing.
pub(crate) fn or_id(sanitized: String, id: u64) -> String {
    if sanitized.is_empty() {
        id.to_string()
    } else {
        sanitized
    }
}

/// Step 1a: `%XX` escapes are decoded where they form valid UTF-8; bytes that do not are put
/// back as the escapes they were. The input is a `str`, so literal characters are complete on
/// their own and every invalid byte of the decoded text came from an escape.
fn decode_percent_escapes(input: &str) -> String {
    let decoded: Vec<u8> = percent_decode_str(input).collect();
    let mut text = String::with_capacity(decoded.len());
    for chunk in decoded.utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    text
}

/// Step 1b: removes HTML tags (`<` to the next `>`) and character references (`&amp;`,
/// `&#8211;`, `&#x2013;`). A `<` without a closing `>` and a bare `&` are plain characters,
/// which step 4 removes anyway.
fn strip_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['<', '&']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let markup = if tail.starts_with('<') {
            tail.find('>').map(|end| end + 1)
        } else {
            reference_len(tail)
        };
        rest = match markup {
            Some(len) => &tail[len..],
            // An unmatched `<` or `&` is kept as a plain character.
            None => {
                out.push_str(&tail[..1]);
                &tail[1..]
            }
        };
    }
    out.push_str(rest);
    out
}

/// The length of the character reference at the start of `s` (which starts with `&`):
/// `&name;`, `&#digits;` or `&#xhex;`.
fn reference_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let (start, is_body): (usize, fn(&u8) -> bool) = match (bytes.get(1), bytes.get(2)) {
        (Some(b'#'), Some(b'x' | b'X')) => (3, u8::is_ascii_hexdigit),
        (Some(b'#'), _) => (2, u8::is_ascii_digit),
        (Some(c), _) if c.is_ascii_alphabetic() => (1, u8::is_ascii_alphanumeric),
        _ => return None,
    };
    let len = bytes[start..].iter().take_while(|b| is_body(b)).count();
    (len > 0 && bytes.get(start + len) == Some(&b';')).then_some(start + len + 1)
}

/// Steps 2 and 3: accents removed (NFKD without its combining marks, plus the letters that
/// have no decomposition), then lower-cased. Search analysis folds words with
/// this same function, so that a slug and a search see the same letters.
pub(crate) fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    fold_into(text, &mut out);
    out
}

/// [`fold`] into `out` (replacing what it held), reusing its allocation for ASCII words.
pub(crate) fn fold_into(text: &str, out: &mut String) {
    out.clear();
    // ASCII has nothing to decompose or map; most words take this path.
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
        return;
    }
    for c in text.nfkd().filter(|c| !is_combining_mark(*c)) {
        match c {
            'ß' | 'ẞ' => out.push_str("ss"),
            'æ' | 'Æ' => out.push_str("ae"),
            'œ' | 'Œ' => out.push_str("oe"),
            'ø' | 'Ø' => out.push('o'),
            'đ' | 'Đ' | 'ð' | 'Ð' => out.push('d'),
            'ł' | 'Ł' => out.push('l'),
            'þ' | 'Þ' => out.push_str("th"),
            c => out.push(c),
        }
    }
    // Lower-casing the whole string (not char by char) keeps Greek final-sigma handling.
    *out = out.to_lowercase();
}

/// The longest prefix of `s` of at most `max` bytes that ends at a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specification_examples() {
        let cases = [
            ("Rock & Roll Night", "rock-roll-night"),
            ("Rock &amp; Roll 2.0", "rock-roll-2-0"),
            ("Rock & Roll 2.0", "rock-roll-2-0"),
            ("Música en São Paulo", "musica-en-sao-paulo"),
            ("Don't stop!", "dont-stop"),
            ("An Interesting Event!", "an-interesting-event"),
            ("Мир", "мир"),
            ("Spring-Concert", "spring-concert"),
        ];
        for (input, expected) in cases {
            assert_eq!(sanitize(input), expected, "{input:?}");
        }
    }

    #[test]
    fn percent_escapes_are_decoded_when_they_form_utf8() {
        assert_eq!(sanitize("m%C3%BAsica"), "musica");
        assert_eq!(sanitize("%D0%BC%D0%B8%D1%80"), "мир");
        assert_eq!(sanitize("rock%20roll"), "rock-roll");
        assert_eq!(sanitize("a%2Fb"), "a-b");
        // Lower-case hex digits are escapes too.
        assert_eq!(sanitize("caf%c3%a9"), "cafe");
        // Bytes that are not UTF-8 stay as their escapes, whose `%` step 4 removes.
        assert_eq!(sanitize("a%FFb"), "affb");
        assert_eq!(sanitize("a%C3b"), "ac3b");
        // Not escapes at all.
        assert_eq!(sanitize("100%"), "100");
        assert_eq!(sanitize("50%zz"), "50zz");
        // Decoded markup is markup.
        assert_eq!(sanitize("%3Cb%3Ebold%3C/b%3E text"), "bold-text");
    }

    #[test]
    fn html_tags_and_character_references_are_removed() {
        assert_eq!(sanitize("<b>Bold</b> move"), "bold-move");
        assert_eq!(sanitize("<a href=\"x\">Link</a>"), "link");
        assert_eq!(sanitize("Rock &#8211; Roll"), "rock-roll");
        assert_eq!(sanitize("Rock&#x2013;Roll"), "rockroll");
        assert_eq!(sanitize("Tom &AMP; Jerry"), "tom-jerry");
        assert_eq!(sanitize("caf&eacute;"), "caf");
        // Not references or tags: plain characters, removed by step 4.
        assert_eq!(sanitize("Fish & Chips; Peas"), "fish-chips-peas");
        assert_eq!(sanitize("a &# b"), "a-b");
        assert_eq!(sanitize("a &#x; b"), "a-x-b");
        assert_eq!(sanitize("1 < 2"), "1-2");
        assert_eq!(sanitize("a<b"), "ab");
    }

    #[test]
    fn accents_and_special_letters() {
        assert_eq!(sanitize("Straße"), "strasse");
        assert_eq!(sanitize("GROẞE"), "grosse");
        assert_eq!(sanitize("Æsir Œuvre"), "aesir-oeuvre");
        assert_eq!(sanitize("æ œ ø đ ð ł þ"), "ae-oe-o-d-d-l-th");
        assert_eq!(sanitize("Ø Đ Ð Ł Þ"), "o-d-d-l-th");
        assert_eq!(sanitize("Łódź"), "lodz");
        assert_eq!(sanitize("Þórsmörk"), "thorsmork");
        assert_eq!(sanitize("Crème Brûlée"), "creme-brulee");
        assert_eq!(sanitize("Ñandú"), "nandu");
        assert_eq!(sanitize("İstanbul"), "istanbul");
        // Compatibility forms decompose too.
        assert_eq!(sanitize("ﬁne Ｗｉｄｅ ²"), "fine-wide-2");
    }

    #[test]
    fn fold_lower_cases_and_removes_accents() {
        assert_eq!(fold("Música"), "musica");
        assert_eq!(fold("CONCERT"), "concert");
        assert_eq!(fold("Straße Œuvre"), "strasse oeuvre");
        assert_eq!(fold("São Paulo!"), "sao paulo!");
        assert_eq!(fold("ΟΔΟΣ"), "οδος");
    }

    #[test]
    fn non_latin_letters_and_digits_are_kept() {
        assert_eq!(sanitize("東京 コンサート"), "東京-コンサート");
        assert_eq!(sanitize("Ελληνικά"), "ελληνικα");
        assert_eq!(sanitize("عربي ٣"), "عربي-٣");
        // Step 2 applies to every script: marks that NFKD splits off are dropped there too
        // (Й = И + breve, ベ = ヘ + dakuten), as the rule says.
        assert_eq!(sanitize("Мой"), "мои");
        assert_eq!(sanitize("イベント"), "イヘント");
    }

    #[test]
    fn separators_become_single_dashes() {
        assert_eq!(sanitize("a.b/c–d—e f\tg\nh"), "a-b-c-d-e-f-g-h");
        assert_eq!(sanitize("a -- b"), "a-b");
        assert_eq!(sanitize("a - ! - b"), "a-b");
        assert_eq!(sanitize("--a--"), "a");
        assert_eq!(sanitize("  ...a...  "), "a");
        assert_eq!(sanitize("snake_case name"), "snake_case-name");
        assert_eq!(sanitize("a\u{a0}b"), "a-b");
        // Other dashes and punctuation are removed, not separators.
        assert_eq!(sanitize("a‐b a‒b"), "ab-ab");
        assert_eq!(sanitize("C++ & C#"), "c-c");
        assert_eq!(sanitize("Price: $5, 20€!"), "price-5-20");
    }

    #[test]
    fn sanitizing_may_leave_nothing() {
        for input in ["", "!!!", "---", "<p></p>", "&amp;", "  ", "🎉"] {
            assert_eq!(sanitize(input), "", "{input:?}");
        }
        assert_eq!(or_id(sanitize("!!!"), 42), "42");
        assert_eq!(or_id(sanitize("Hello"), 42), "hello");
    }

    #[test]
    fn sanitizing_is_idempotent() {
        for input in [
            "Rock & Roll Night",
            "Música en São Paulo",
            "東京 イベント",
            "a.b-c",
        ] {
            let once = sanitize(input);
            assert_eq!(sanitize(&once), once);
        }
    }

    #[test]
    fn slugs_are_cut_at_200_bytes_on_a_character_boundary() {
        assert_eq!(sanitize(&"a".repeat(250)), "a".repeat(200));
        // 199 bytes then a dash: the dangling dash goes.
        let input = format!("{} {}", "a".repeat(199), "b".repeat(10));
        assert_eq!(sanitize(&input), "a".repeat(199));
        // "м" is two bytes: 100 of them fill 200 bytes exactly, a 101st does not fit.
        assert_eq!(sanitize(&"м".repeat(101)), "м".repeat(100));
        // "東" is three bytes: 66 of them are 198 bytes.
        let cut = sanitize(&"東".repeat(70));
        assert_eq!(cut, "東".repeat(66));
        assert_eq!(sanitize(&format!("x{}", "м".repeat(100))).len(), 199);
    }

    #[test]
    fn reserved_candidates() {
        for reserved in ["feed", "rdf", "rss", "rss2", "atom", "embed"] {
            assert!(is_reserved(reserved));
            assert_eq!(make_unique(reserved, |_| false), format!("{reserved}-2"));
        }
        for other in ["feeds", "rss-2", "Feed", "atomic", ""] {
            assert!(!is_reserved(other), "{other}");
        }
    }

    #[test]
    fn suffixes() {
        assert_eq!(with_suffix("concert", 2), "concert-2");
        assert_eq!(with_suffix("concert", 10), "concert-10");
        let long = "a".repeat(200);
        assert_eq!(with_suffix(&long, 2), format!("{}-2", "a".repeat(198)));
        assert_eq!(with_suffix(&long, 10), format!("{}-10", "a".repeat(197)));
        // The cut does not leave a dash before the suffix.
        let dashed = format!("{}-b", "a".repeat(197));
        assert_eq!(with_suffix(&dashed, 2), format!("{}-2", "a".repeat(197)));
        // Nor split a character.
        let cyrillic = "м".repeat(100);
        let suffixed = with_suffix(&cyrillic, 2);
        assert_eq!(suffixed, format!("{}-2", "м".repeat(99)));
        assert!(suffixed.len() <= MAX_SLUG_BYTES);
        let suffixed = with_suffix(&"東".repeat(66), 123);
        assert_eq!(suffixed, format!("{}-123", "東".repeat(65)));
    }

    #[test]
    fn make_unique_takes_the_first_free_suffix() {
        let taken = ["concert", "concert-2", "concert-4"];
        assert_eq!(make_unique("concert", |s| taken.contains(&s)), "concert-3");
        assert_eq!(make_unique("recital", |s| taken.contains(&s)), "recital");
        assert_eq!(
            make_unique("concert-2", |s| taken.contains(&s)),
            "concert-2-2"
        );
        let taken = ["rss-2"];
        assert_eq!(make_unique("rss", |s| taken.contains(&s)), "rss-3");
        let long = "a".repeat(200);
        assert_eq!(
            make_unique(&long, |s| s == long),
            format!("{}-2", "a".repeat(198))
        );
    }
}
