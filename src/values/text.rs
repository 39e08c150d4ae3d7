//! Text rules: paragraph rendering (common.md §9.12), HTML sanitizing (§9.13), the cleaning of
//! plain fields and term names (venues-organizers.md §1.4, terms.md §5.1), the `json_ld`
//! description (venues-organizers.md §3.4), and the tag and character-reference helpers that
//! search analysis shares (§9.11 step 1).

/// Tags that open a block which paragraph rendering keeps as it is (§9.12 step 3).
const BLOCK_TAGS: [&str; 26] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "div",
    "dl",
    "fieldset",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
];

/// Elements removed with their content (§9.13), whose content is raw text in HTML: it ends at
/// the first matching end tag, whatever it looks like.
const REMOVED_RAW_TEXT: [&str; 3] = ["script", "style", "iframe"];

/// Elements removed with their content (§9.13) whose content is ordinary markup, so that the
/// same element may nest inside.
const REMOVED_NESTING: [&str; 2] = ["object", "form"];

/// The removed element that is void in HTML (no content, no end tag): only its tag goes.
const REMOVED_VOID: &str = "embed";

/// Kept elements whose content browsers read as raw text up to the matching end tag. An
/// attribute value inside them can therefore hold their end tag followed by live markup
/// (`<noscript><p title="</noscript><img onerror=…>">`), so their end is found the way a
/// browser finds it.
const KEPT_RAW_TEXT: [&str; 6] = [
    "noembed", "noframes", "noscript", "textarea", "title", "xmp",
];

/// The words of a `json_ld` description (venues-organizers.md §3.4).
const JSON_LD_WORDS: usize = 55;

/// Renders a stored `description` or `excerpt` as paragraphs (§9.12).
pub fn render_paragraphs(stored: &str) -> String {
    let text = stored.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(text.len() + 16);
    let mut block: Vec<&str> = Vec::new();
    // The sentinel empty line closes the last block.
    for line in text.split('\n').chain([""]) {
        if !line.trim().is_empty() {
            block.push(line);
            continue;
        }
        if block.is_empty() {
            continue;
        }
        let joined = block.join("\n");
        block.clear();
        let trimmed = joined.trim();
        if !out.is_empty() {
            out.push('\n');
        }
        if starts_with_block_tag(trimmed) {
            out.push_str(trimmed);
        } else {
            out.push_str("<p>");
            out.push_str(&trimmed.replace('\n', "<br />\n"));
            out.push_str("</p>");
        }
    }
    out
}

/// Whether a block opens with a start or end tag of [`BLOCK_TAGS`] (any letter case).
fn starts_with_block_tag(block: &str) -> bool {
    let Some(rest) = block.strip_prefix('<') else {
        return false;
    };
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    let name_len = rest
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_len);
    // `<p>`, `<p class…` and `<hr/>` are tags; `<param>` and a bare `<p` are not.
    let name_ends = after.starts_with(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/');
    name_ends && BLOCK_TAGS.iter().any(|tag| tag.eq_ignore_ascii_case(name))
}

/// Removes the dangerous constructs of §9.13 from the text of a caller without
/// `unfiltered_html`: `script`, `style`, `iframe`, `object`, `embed` and `form` elements with
/// their content, `on…` event attributes, and attributes holding a `javascript:` URL.
/// Everything else is kept byte for byte, with the one exception said last.
///
/// Markup is read as a browser reads it (quoted attribute values, comments, raw-text
/// elements). Where that reading is uncertain the rule errs on the side of removing: an
/// element left open is removed up to the end of the text, and a tag that the text ends inside
/// of is dropped, as browsers drop it. A plain `<` that a removal would join to the following
/// text into new markup is written as `&lt;` (see [`push_text`]).
pub fn sanitize_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    sanitize_into(&mut out, text, true);
    out
}

/// The work of [`sanitize_html`]. The content of a kept raw-text element is sanitized too (a
/// consumer that parses it as markup then finds nothing dangerous either), with
/// `raw_text_aware` false so that the nesting depth stays at one.
fn sanitize_into(out: &mut String, text: &str, raw_text_aware: bool) {
    let mut rest = text;
    while let Some(i) = rest.find('<') {
        push_text(out, &rest[..i]);
        let tail = &rest[i..];
        rest = match markup(tail) {
            None => {
                out.push('<');
                &tail[1..]
            }
            Some(Markup::Unterminated) => "",
            Some(Markup::Comment(len)) => {
                out.push_str(&tail[..len]);
                &tail[len..]
            }
            Some(Markup::Tag(tag)) => {
                let after = &tail[tag.len..];
                if is_removed(tag.name) {
                    // A stray end tag of a removed element goes too.
                    if tag.end {
                        after
                    } else {
                        skip_element(tag.name, after)
                    }
                } else {
                    write_safe_tag(out, &tag);
                    match find_name(&KEPT_RAW_TEXT, tag.name) {
                        Some(name) if raw_text_aware && !tag.end => {
                            let end = raw_text_end(after, name);
                            sanitize_into(out, &after[..end], false);
                            &after[end..]
                        }
                        _ => after,
                    }
                }
            }
        };
    }
    push_text(out, rest);
}

/// Appends text. If a removal has just brought `text` next to a plain `<` at the end of the
/// output and the two would now open markup (`<</script>img onerror=…>` would become
/// `<img onerror=…>`), that `<` is written as `&lt;`, the same character for a browser, so
/// that removing markup never creates any.
fn push_text(out: &mut String, text: &str) {
    if let Some(lt) = joining_lt(out, text) {
        out.replace_range(lt..=lt, "&lt;");
    }
    out.push_str(text);
}

/// The byte index of a plain `<` at the end of `out`, alone or followed by `/`, that `text`
/// would turn into the start of markup. Text holds no `<` and kept markup ends with `>`, so
/// an output that ends with `<` or `</` ends with a plain `<`. Outside removals this never
/// finds one: the text that follows a plain `<` in the input does not open markup with it.
fn joining_lt(out: &str, text: &str) -> Option<usize> {
    if out.ends_with('<') && opens_markup(text) {
        Some(out.len() - 1)
    } else if out.ends_with("</") && text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        Some(out.len() - 2)
    } else {
        None
    }
}

/// Whether `<` followed by `after` starts markup for [`markup`]: a letter, `!`, `?`, or `/`
/// and a letter.
fn opens_markup(after: &str) -> bool {
    let bytes = after.as_bytes();
    match bytes.first() {
        Some(b'!' | b'?') => true,
        Some(b'/') => bytes.get(1).is_some_and(u8::is_ascii_alphabetic),
        Some(c) => c.is_ascii_alphabetic(),
        None => false,
    }
}

fn is_removed(name: &str) -> bool {
    name.eq_ignore_ascii_case(REMOVED_VOID)
        || find_name(&REMOVED_RAW_TEXT, name).is_some()
        || find_name(&REMOVED_NESTING, name).is_some()
}

/// The entry of `names` equal to `name` ignoring ASCII case.
fn find_name(names: &[&'static str], name: &str) -> Option<&'static str> {
    names.iter().copied().find(|n| n.eq_ignore_ascii_case(name))
}

/// What follows a removed element whose start tag has just been read; `after` is the text
/// after that start tag.
fn skip_element<'a>(name: &str, after: &'a str) -> &'a str {
    if name.eq_ignore_ascii_case(REMOVED_VOID) {
        return after;
    }
    if let Some(name) = find_name(&REMOVED_RAW_TEXT, name) {
        let end = raw_text_end(after, name);
        return match markup(&after[end..]) {
            Some(Markup::Tag(tag)) => &after[end + tag.len..],
            // No end tag (or one the text ends inside of): the element runs to the end.
            _ => "",
        };
    }
    let mut depth = 1;
    let mut rest = after;
    while let Some(i) = rest.find('<') {
        let tail = &rest[i..];
        rest = match markup(tail) {
            None => &tail[1..],
            Some(Markup::Comment(len)) => &tail[len..],
            Some(Markup::Unterminated) => return "",
            Some(Markup::Tag(tag)) => {
                let rest = &tail[tag.len..];
                if tag.name.eq_ignore_ascii_case(name) {
                    if !tag.end {
                        depth += 1;
                    } else if depth == 1 {
                        return rest;
                    } else {
                        depth -= 1;
                    }
                }
                rest
            }
        };
    }
    ""
}

/// Where the raw-text content of element `name` ends in `text`: at the first `</name`
/// followed by whitespace, `/` or `>` (any letter case), as in the HTML tokenizer; the whole
/// text when there is none.
fn raw_text_end(text: &str, name: &str) -> usize {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find("</") {
        let start = from + i;
        let name_end = start + 2 + name.len();
        let same_name = bytes
            .get(start + 2..name_end)
            .is_some_and(|candidate| candidate.eq_ignore_ascii_case(name.as_bytes()));
        let delimited = matches!(bytes.get(name_end), Some(b'/' | b'>'))
            || bytes.get(name_end).is_some_and(u8::is_ascii_whitespace);
        if same_name && delimited {
            return start;
        }
        from = start + 2;
    }
    text.len()
}

/// Writes a kept tag without its event attributes and `javascript:` URLs.
fn write_safe_tag(out: &mut String, tag: &Tag<'_>) {
    out.push_str(tag.head);
    for attr in &tag.attrs {
        let is_event = attr
            .name
            .get(..2)
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case("on"));
        if !is_event && !attr.value.is_some_and(is_javascript_url) {
            out.push_str(attr.span);
        }
    }
    out.push_str(tag.tail);
}

/// Whether an attribute value is a `javascript:` URL as a browser reads it: character
/// references decoded (`&#106;avascript:`, `javascript&colon;`), and whitespace and control
/// characters ignored (browsers strip them around a URL and drop tabs and line breaks inside
/// it); the scheme is ASCII case-insensitive.
fn is_javascript_url(value: &str) -> bool {
    let compact: String = decode_entities(value)
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .take("javascript:".len())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    compact == "javascript:"
}

/// Removes HTML tags (`<name …>`, `</name …>`), comments and `<!…>`/`<?…>` declarations. A
/// `<` that starts none of these (`1 < 2`, `<3`, or a tag the text ends inside of) is a plain
/// character and stays, unless a removal brings it next to text with which it would open a
/// tag again (`<<b>script>` would become `<script>`): then it goes too, so that the result
/// holds no tag.
pub fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut removed = false;
    while let Some(i) = rest.find('<') {
        push_stripped(&mut out, &rest[..i], removed);
        let tail = &rest[i..];
        (rest, removed) = match markup(tail) {
            Some(Markup::Comment(len)) => (&tail[len..], true),
            Some(Markup::Tag(tag)) => (&tail[tag.len..], true),
            Some(Markup::Unterminated) | None => {
                out.push('<');
                (&tail[1..], false)
            }
        };
    }
    push_stripped(&mut out, rest, removed);
    out
}

/// Appends text for [`strip_tags`]: when a removal has just brought `text` next to plain `<`
/// characters at the end of the output with which it would open a tag again, they go.
fn push_stripped(out: &mut String, text: &str, after_removal: bool) {
    if after_removal {
        while let Some(lt) = joining_lt(out, text) {
            out.remove(lt);
        }
    }
    out.push_str(text);
}

/// Cleans a "plain" venue or organizer field (venues-organizers.md §1.4): tags removed, each
/// whitespace run replaced by one space, trimmed. Character references and `%XX` escapes stay.
pub fn clean_plain(text: &str) -> String {
    collapse_whitespace(&strip_tags(text))
}

/// Cleans a term name (terms.md §5.1), which is the same rule as [`clean_plain`].
pub fn clean_term_name(text: &str) -> String {
    clean_plain(text)
}

/// The `description` of a `json_ld` object (venues-organizers.md §3.4, events.md): the excerpt,
/// or the description when the excerpt has no text, as plain text — tags removed, character
/// references decoded (the result is not HTML), whitespace runs collapsed, trimmed — cut to its
/// first 55 words with `…` appended when cut.
///
/// An excerpt that holds only markup or whitespace counts as empty, as it does for rendering
/// (§9.12), so that it does not hide the description.
pub fn json_ld_description(excerpt: &str, description: &str) -> String {
    let plain = |text: &str| collapse_whitespace(&decode_entities(&strip_tags(text)));
    let mut text = plain(excerpt);
    if text.is_empty() {
        text = plain(description);
    }
    // Words are separated by exactly one space after collapsing.
    if let Some((cut, _)) = text.match_indices(' ').nth(JSON_LD_WORDS - 1) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// Each whitespace run replaced by one space, trimmed.
fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Decodes HTML character references: the named ones of [`NAMED_REFERENCES`] (terminated by
/// `;`, case-sensitive as in HTML), decimal `&#8211;` and hexadecimal `&#x2013;`. As in HTML,
/// the `;` of a numeric reference may be missing. A reference that names nothing (unknown
/// name, code point 0, a surrogate, beyond U+10FFFF) stays as written.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        rest = match reference(tail) {
            Some((c, len)) => {
                out.push(c);
                &tail[len..]
            }
            None => {
                out.push('&');
                &tail[1..]
            }
        };
    }
    out.push_str(rest);
    out
}

/// The character and length of the reference at the start of `s` (which starts with `&`).
fn reference(s: &str) -> Option<(char, usize)> {
    let bytes = s.as_bytes();
    if bytes.get(1) != Some(&b'#') {
        let len = bytes[1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if bytes.get(1 + len) != Some(&b';') {
            return None;
        }
        let name = &s[1..1 + len];
        let c = NAMED_REFERENCES
            .iter()
            .find_map(|&(n, c)| (n == name).then_some(c))?;
        return Some((c, len + 2));
    }
    let (start, radix) = match bytes.get(2) {
        Some(b'x' | b'X') => (3, 16),
        _ => (2, 10),
    };
    let len = bytes[start..]
        .iter()
        .take_while(|b| (**b as char).is_digit(radix))
        .count();
    // More than 8 digits cannot name a code point, unless they are leading zeros.
    let digits = s[start..start + len].trim_start_matches('0');
    if len == 0 || digits.len() > 8 {
        return None;
    }
    // Only zeros (`&#0;`) leave no digits: code point 0, refused below.
    let code = u32::from_str_radix(digits, radix).unwrap_or(0);
    let c = char::from_u32(code).filter(|&c| c != '\0')?;
    let end = start + len;
    Some((
        c,
        if bytes.get(end) == Some(&b';') {
            end + 1
        } else {
            end
        },
    ))
}

/// The named references [`decode_entities`] knows: the Latin-1 set, common typography, and
/// the HTML5 names that hide URL characters (`&colon;`, `&Tab;`, `&NewLine;`), which matter for
/// recognising `javascript:` URLs.
const NAMED_REFERENCES: &[(&str, char)] = &[
    ("amp", '&'),
    ("AMP", '&'),
    ("lt", '<'),
    ("LT", '<'),
    ("gt", '>'),
    ("GT", '>'),
    ("quot", '"'),
    ("QUOT", '"'),
    ("apos", '\''),
    ("nbsp", '\u{a0}'),
    ("ndash", '–'),
    ("mdash", '—'),
    ("hellip", '…'),
    ("lsquo", '‘'),
    ("rsquo", '’'),
    ("sbquo", '‚'),
    ("ldquo", '“'),
    ("rdquo", '”'),
    ("bdquo", '„'),
    ("laquo", '«'),
    ("raquo", '»'),
    ("lsaquo", '‹'),
    ("rsaquo", '›'),
    ("bull", '•'),
    ("middot", '·'),
    ("prime", '′'),
    ("Prime", '″'),
    ("dagger", '†'),
    ("Dagger", '‡'),
    ("permil", '‰'),
    ("trade", '™'),
    ("TRADE", '™'),
    ("copy", '©'),
    ("COPY", '©'),
    ("reg", '®'),
    ("REG", '®'),
    ("euro", '€'),
    ("pound", '£'),
    ("yen", '¥'),
    ("cent", '¢'),
    ("curren", '¤'),
    ("sect", '§'),
    ("para", '¶'),
    ("deg", '°'),
    ("plusmn", '±'),
    ("times", '×'),
    ("divide", '÷'),
    ("micro", 'µ'),
    ("iexcl", '¡'),
    ("iquest", '¿'),
    ("brvbar", '¦'),
    ("shy", '\u{ad}'),
    ("not", '¬'),
    ("macr", '¯'),
    ("acute", '´'),
    ("uml", '¨'),
    ("cedil", '¸'),
    ("ordf", 'ª'),
    ("ordm", 'º'),
    ("sup1", '¹'),
    ("sup2", '²'),
    ("sup3", '³'),
    ("frac14", '¼'),
    ("frac12", '½'),
    ("frac34", '¾'),
    ("ensp", '\u{2002}'),
    ("emsp", '\u{2003}'),
    ("thinsp", '\u{2009}'),
    ("zwnj", '\u{200c}'),
    ("zwj", '\u{200d}'),
    ("colon", ':'),
    ("Tab", '\t'),
    ("NewLine", '\n'),
    ("Agrave", 'À'),
    ("Aacute", 'Á'),
    ("Acirc", 'Â'),
    ("Atilde", 'Ã'),
    ("Auml", 'Ä'),
    ("Aring", 'Å'),
    ("AElig", 'Æ'),
    ("Ccedil", 'Ç'),
    ("Egrave", 'È'),
    ("Eacute", 'É'),
    ("Ecirc", 'Ê'),
    ("Euml", 'Ë'),
    ("Igrave", 'Ì'),
    ("Iacute", 'Í'),
    ("Icirc", 'Î'),
    ("Iuml", 'Ï'),
    ("ETH", 'Ð'),
    ("Ntilde", 'Ñ'),
    ("Ograve", 'Ò'),
    ("Oacute", 'Ó'),
    ("Ocirc", 'Ô'),
    ("Otilde", 'Õ'),
    ("Ouml", 'Ö'),
    ("Oslash", 'Ø'),
    ("Ugrave", 'Ù'),
    ("Uacute", 'Ú'),
    ("Ucirc", 'Û'),
    ("Uuml", 'Ü'),
    ("Yacute", 'Ý'),
    ("THORN", 'Þ'),
    ("szlig", 'ß'),
    ("agrave", 'à'),
    ("aacute", 'á'),
    ("acirc", 'â'),
    ("atilde", 'ã'),
    ("auml", 'ä'),
    ("aring", 'å'),
    ("aelig", 'æ'),
    ("ccedil", 'ç'),
    ("egrave", 'è'),
    ("eacute", 'é'),
    ("ecirc", 'ê'),
    ("euml", 'ë'),
    ("igrave", 'ì'),
    ("iacute", 'í'),
    ("icirc", 'î'),
    ("iuml", 'ï'),
    ("eth", 'ð'),
    ("ntilde", 'ñ'),
    ("ograve", 'ò'),
    ("oacute", 'ó'),
    ("ocirc", 'ô'),
    ("otilde", 'õ'),
    ("ouml", 'ö'),
    ("oslash", 'ø'),
    ("ugrave", 'ù'),
    ("uacute", 'ú'),
    ("ucirc", 'û'),
    ("uuml", 'ü'),
    ("yacute", 'ý'),
    ("thorn", 'þ'),
    ("yuml", 'ÿ'),
];

/// A piece of markup starting at a `<`.
enum Markup<'a> {
    /// A comment or a `<!…>`/`<?…>` declaration of this many bytes; inert.
    Comment(usize),
    Tag(Tag<'a>),
    /// A tag that the text ends inside of.
    Unterminated,
}

/// A start or end tag, cut into pieces whose concatenation is the tag as written, so that a
/// tag can be written back without some attributes.
struct Tag<'a> {
    /// `<name` or `</name`.
    head: &'a str,
    name: &'a str,
    end: bool,
    attrs: Vec<Attr<'a>>,
    /// What follows the last attribute, up to and including the `>`.
    tail: &'a str,
    /// The length of the whole tag.
    len: usize,
}

struct Attr<'a> {
    /// The attribute as written, with the separators before it.
    span: &'a str,
    name: &'a str,
    /// The value without its quotes; `None` when there is no `=`.
    value: Option<&'a str>,
}

/// Reads the markup at the start of `s` (which starts with `<`) the way the HTML tokenizer
/// does; `None` when this `<` is a plain character.
fn markup(s: &str) -> Option<Markup<'_>> {
    let bytes = s.as_bytes();
    if s.starts_with("<!--") {
        return Some(Markup::Comment(comment_len(s)));
    }
    match bytes.get(1) {
        Some(b'!' | b'?') => Some(Markup::Comment(s.find('>').map_or(s.len(), |i| i + 1))),
        Some(b'/') if bytes.get(2).is_some_and(u8::is_ascii_alphabetic) => Some(tag(s, 2)),
        Some(c) if c.is_ascii_alphabetic() => Some(tag(s, 1)),
        _ => None,
    }
}

/// The length of the comment at the start of `s` (`<!--…`), ended where HTML ends it: at the
/// first `-->` or `--!>` (`<!-->` and `<!--->` being empty comments); an open comment runs to
/// the end of the text.
fn comment_len(s: &str) -> usize {
    if let Some(abrupt) = ["<!-->", "<!--->"].into_iter().find(|a| s.starts_with(a)) {
        return abrupt.len();
    }
    let body = &s[4..];
    let end = [
        body.find("-->").map(|i| i + 3),
        body.find("--!>").map(|i| i + 4),
    ]
    .into_iter()
    .flatten()
    .min();
    4 + end.unwrap_or(body.len())
}

/// Reads the tag at the start of `s` whose name starts at byte `name_start` (1 for a start
/// tag, 2 for an end tag). Attribute names run to whitespace, `/`, `>` or `=`; values are
/// quoted with `"` or `'`, or run to whitespace or `>`; a `/` between attributes separates
/// them, as in browsers (`<img/onerror=…>`).
///
/// The scan stops only at ASCII bytes, so every slice lies on a character boundary.
fn tag(s: &str, name_start: usize) -> Markup<'_> {
    let bytes = s.as_bytes();
    let is_space = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_whitespace);
    let name_end = s[name_start..]
        .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
        .map_or(s.len(), |i| name_start + i);
    let mut attrs = Vec::new();
    let mut span_start = name_end;
    let mut i = name_end;
    loop {
        while is_space(i) || bytes.get(i) == Some(&b'/') {
            i += 1;
        }
        match bytes.get(i) {
            None => return Markup::Unterminated,
            Some(b'>') => {
                return Markup::Tag(Tag {
                    head: &s[..name_end],
                    name: &s[name_start..name_end],
                    end: name_start == 2,
                    attrs,
                    tail: &s[span_start..=i],
                    len: i + 1,
                })
            }
            Some(_) => {}
        }
        let attr_name_start = i;
        // A leading `=` belongs to the name.
        i += 1;
        while i < bytes.len() && !is_space(i) && !matches!(bytes[i], b'/' | b'>' | b'=') {
            i += 1;
        }
        let name = &s[attr_name_start..i];
        let mut j = i;
        while is_space(j) {
            j += 1;
        }
        let mut value = None;
        if bytes.get(j) == Some(&b'=') {
            j += 1;
            while is_space(j) {
                j += 1;
            }
            match bytes.get(j) {
                Some(&quote @ (b'"' | b'\'')) => {
                    let Some(len) = s[j + 1..].find(quote as char) else {
                        return Markup::Unterminated;
                    };
                    value = Some(&s[j + 1..j + 1 + len]);
                    i = j + len + 2;
                }
                Some(_) => {
                    let start = j;
                    while j < bytes.len() && !is_space(j) && bytes[j] != b'>' {
                        j += 1;
                    }
                    value = Some(&s[start..j]);
                    i = j;
                }
                None => return Markup::Unterminated,
            }
        }
        attrs.push(Attr {
            span: &s[span_start..i],
            name,
            value,
        });
        span_start = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_specification_examples() {
        assert_eq!(
            render_paragraphs("Event 01 description"),
            "<p>Event 01 description</p>"
        );
        assert_eq!(
            render_paragraphs("Venue description"),
            "<p>Venue description</p>"
        );
        assert_eq!(render_paragraphs("a\n\nb"), "<p>a</p>\n<p>b</p>");
        assert_eq!(render_paragraphs("a\nb"), "<p>a<br />\nb</p>");
        assert_eq!(
            render_paragraphs("<p>Already wrapped.</p>"),
            "<p>Already wrapped.</p>"
        );
    }

    #[test]
    fn paragraphs_of_empty_text() {
        for text in ["", "   ", "\n\n", " \r\n \t\n", "\r"] {
            assert_eq!(render_paragraphs(text), "", "{text:?}");
        }
    }

    #[test]
    fn paragraph_line_endings_and_blank_lines() {
        assert_eq!(render_paragraphs("a\r\n\r\nb"), "<p>a</p>\n<p>b</p>");
        assert_eq!(render_paragraphs("a\rb"), "<p>a<br />\nb</p>");
        assert_eq!(render_paragraphs("a\r\nb"), "<p>a<br />\nb</p>");
        // A line of whitespace is an empty line; longer runs cut only once.
        assert_eq!(render_paragraphs("a\n  \t \nb"), "<p>a</p>\n<p>b</p>");
        assert_eq!(render_paragraphs("a\n\n\n\n b "), "<p>a</p>\n<p>b</p>");
        // The text and each block are trimmed.
        assert_eq!(render_paragraphs("\n\n  a  \n\n"), "<p>a</p>");
        assert_eq!(
            render_paragraphs("one\ntwo\nthree\n\nfour"),
            "<p>one<br />\ntwo<br />\nthree</p>\n<p>four</p>"
        );
    }

    #[test]
    fn paragraph_block_level_tags() {
        assert_eq!(
            render_paragraphs("<h2>Title</h2>\n\nText"),
            "<h2>Title</h2>\n<p>Text</p>"
        );
        assert_eq!(
            render_paragraphs("<ul>\n<li>a</li>\n</ul>"),
            "<ul>\n<li>a</li>\n</ul>"
        );
        assert_eq!(
            render_paragraphs("<DIV class=\"x\">a\nb</DIV>"),
            "<DIV class=\"x\">a\nb</DIV>"
        );
        assert_eq!(render_paragraphs("<hr/>"), "<hr/>");
        assert_eq!(render_paragraphs("<hr />\n\nx"), "<hr />\n<p>x</p>");
        assert_eq!(render_paragraphs("</div>\n\nx"), "</div>\n<p>x</p>");
        for tag in BLOCK_TAGS {
            let block = format!("<{tag}>x\ny</{tag}>");
            assert_eq!(render_paragraphs(&block), block);
        }
        // Inline tags and look-alike names are wrapped.
        assert_eq!(
            render_paragraphs("<b>bold</b> text"),
            "<p><b>bold</b> text</p>"
        );
        assert_eq!(render_paragraphs("<param>"), "<p><param></p>");
        assert_eq!(render_paragraphs("<p"), "<p><p</p>");
        assert_eq!(render_paragraphs("x <p>y</p>"), "<p>x <p>y</p></p>");
    }

    #[test]
    fn sanitizing_removes_dangerous_elements_with_their_content() {
        assert_eq!(sanitize_html("a<script>alert(1)</script>b"), "ab");
        assert_eq!(sanitize_html("a<SCRIPT type=x>alert(1)</ScRiPt >b"), "ab");
        assert_eq!(sanitize_html("<style>p{}</style>text"), "text");
        assert_eq!(sanitize_html("<iframe src=\"x\">fallback</iframe>ok"), "ok");
        assert_eq!(
            sanitize_html("<object data=x><param name=a></object>ok"),
            "ok"
        );
        assert_eq!(sanitize_html("<embed src=\"x.swf\">ok"), "ok");
        assert_eq!(sanitize_html("<embed src=x></embed>ok"), "ok");
        assert_eq!(
            sanitize_html("<p>a</p><form action=x><input name=q></form><p>b</p>"),
            "<p>a</p><p>b</p>"
        );
    }

    #[test]
    fn sanitizing_handles_nesting_raw_text_and_unclosed_elements() {
        // Script content is raw text: tags in it do not count.
        assert_eq!(
            sanitize_html("<script>if (a<b) x='<script>';</script>after"),
            "after"
        );
        // `</scripts>` does not end a script.
        assert_eq!(sanitize_html("<script>x</scripts>y</script>z"), "z");
        // Nested objects and forms end at their own end tag.
        assert_eq!(sanitize_html("<object><object>x</object>y</object>z"), "z");
        assert_eq!(sanitize_html("<form><FORM>x</form>y</form>z"), "z");
        // An element left open runs to the end of the text.
        assert_eq!(sanitize_html("a<script>alert(1)"), "a");
        assert_eq!(sanitize_html("a<form><p>b</p>"), "a");
        assert_eq!(sanitize_html("a<iframe>b</iframe"), "a");
        // Stray end tags go.
        assert_eq!(sanitize_html("a</script>b</form>c</embed>"), "abc");
        // A `>` in a quoted value does not end the tag.
        assert_eq!(sanitize_html("<script src=\"a>b\"></script>ok"), "ok");
    }

    #[test]
    fn sanitizing_removes_event_attributes() {
        assert_eq!(
            sanitize_html("<img src=\"a.png\" onerror=\"alert(1)\">"),
            "<img src=\"a.png\">"
        );
        assert_eq!(
            sanitize_html("<a href='/x' OnClick='go()' title=t>x</a>"),
            "<a href='/x' title=t>x</a>"
        );
        assert_eq!(sanitize_html("<img/onerror=alert(1) src=x>"), "<img src=x>");
        assert_eq!(sanitize_html("<body onload>"), "<body>");
        assert_eq!(
            sanitize_html("<p onmouseover = \"x\" class=\"c\">t</p>"),
            "<p class=\"c\">t</p>"
        );
        assert_eq!(sanitize_html("<div onclick=a>b</div>"), "<div>b</div>");
        // `>` inside a quoted value belongs to the value.
        assert_eq!(
            sanitize_html("<p title=\"a>b\" onclick=\"x\">t</p>"),
            "<p title=\"a>b\">t</p>"
        );
        assert_eq!(sanitize_html("<br onclick=x/>"), "<br>");
        assert_eq!(sanitize_html("<br onclick=\"x\"/>"), "<br/>");
    }

    #[test]
    fn sanitizing_removes_javascript_urls() {
        assert_eq!(
            sanitize_html("<a href=\"javascript:alert(1)\">x</a>"),
            "<a>x</a>"
        );
        assert_eq!(
            sanitize_html("<a href=\" JavaScript:alert(1)\" title=\"t\">x</a>"),
            "<a title=\"t\">x</a>"
        );
        assert_eq!(
            sanitize_html("<a href=\"jav&#x09;ascript:alert(1)\">x</a>"),
            "<a>x</a>"
        );
        assert_eq!(
            sanitize_html("<a href=\"&#106;avascript:alert(1)\">x</a>"),
            "<a>x</a>"
        );
        assert_eq!(
            sanitize_html("<a href=\"&#106avascript:alert(1)\">x</a>"),
            "<a>x</a>"
        );
        assert_eq!(
            sanitize_html("<a href=\"javascript&colon;alert(1)\">x</a>"),
            "<a>x</a>"
        );
        assert_eq!(
            sanitize_html("<a href=\"java\nscript:x\">x</a>"),
            "<a>x</a>"
        );
        // Unquoted, the value ends at the line break: `href=java` plus an attribute `script:x`.
        let kept = "<a href=java\nscript:x>x</a>";
        assert_eq!(sanitize_html(kept), kept);
        assert_eq!(
            sanitize_html("<button formaction=javascript:x>b</button>"),
            "<button>b</button>"
        );
        // Other URLs stay, including ones that merely mention JavaScript.
        let kept = "<a href=\"https://x.org/javascript:y\" title=\"javascript\">x</a>";
        assert_eq!(sanitize_html(kept), kept);
        let kept = "<a href=\"javascript-guide.html\">x</a>";
        assert_eq!(sanitize_html(kept), kept);
    }

    #[test]
    fn sanitizing_keeps_everything_else() {
        for text in [
            "",
            "plain text",
            "<p class=\"x\">Hello <b>world</b> &amp; <em>all</em></p>",
            "1 < 2 and 3 > 2",
            "<3",
            "<!-- a comment -->text",
            "<!DOCTYPE html>",
            "<a href=\"https://example.org/?a=1&b=2\">link</a>",
            "<img src=x alt='one two' />",
            "<P>Upper</P>",
            "Música <i>en</i> São Paulo",
            "<textarea>x</textarea>",
            "<online>x</online>",
        ] {
            assert_eq!(sanitize_html(text), text, "{text:?}");
        }
    }

    #[test]
    fn sanitizing_reads_comments_and_raw_text_like_a_browser() {
        // A comment ends at `--!>` too, so what follows is live markup.
        assert_eq!(
            sanitize_html("<!-- a --!><script>x</script>-->"),
            "<!-- a --!>-->"
        );
        assert_eq!(sanitize_html("<!--><script>x</script>"), "<!-->");
        // Inside a comment nothing is markup.
        assert_eq!(
            sanitize_html("<!-- <script>x</script> -->"),
            "<!-- <script>x</script> -->"
        );
        // `</noscript>` inside an attribute value ends a noscript element in a browser.
        assert_eq!(
            sanitize_html(
                "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>"
            ),
            "<noscript></noscript><img src=x>\"></noscript>"
        );
        // A tag the text ends inside of is dropped.
        assert_eq!(sanitize_html("ok<img src=x onerror=\"alert(1)"), "ok");
        assert_eq!(sanitize_html("ok<img"), "ok");
    }

    #[test]
    fn plain_fields() {
        assert_eq!(clean_plain("  221b   Baker\tStreet\n"), "221b Baker Street");
        assert_eq!(clean_plain("<b>London</b>"), "London");
        assert_eq!(clean_plain("a<br/>b"), "ab");
        assert_eq!(clean_plain("a <br/> b"), "a b");
        assert_eq!(clean_plain("Rua%20Augusta"), "Rua%20Augusta");
        assert_eq!(clean_plain("Fish &amp; Chips"), "Fish &amp; Chips");
        assert_eq!(clean_plain("\r\n \t"), "");
        assert_eq!(clean_plain("1 < 2"), "1 < 2");
        assert_eq!(clean_plain("x<!-- c -->y"), "xy");
        assert_eq!(clean_plain("+351 220 000 000"), "+351 220 000 000");
    }

    #[test]
    fn term_names() {
        assert_eq!(clean_term_name("  Music  "), "Music");
        assert_eq!(clean_term_name("<em>Jazz</em>\n\n Night"), "Jazz Night");
        assert_eq!(clean_term_name("Food & Drink"), "Food & Drink");
        assert_eq!(clean_term_name("   "), "");
        assert_eq!(clean_term_name("<b></b>"), "");
    }

    #[test]
    fn tags_are_stripped() {
        assert_eq!(strip_tags("<p>a</p>\n<p>b</p>"), "a\nb");
        assert_eq!(strip_tags("<a href=\"x\" title='a>b'>Link</a>"), "Link");
        assert_eq!(strip_tags("a<!DOCTYPE html>b<?php x ?>c"), "abc");
        assert_eq!(strip_tags("a<!-- x > y -->b"), "ab");
        assert_eq!(strip_tags("x < y > z"), "x < y > z");
        assert_eq!(strip_tags("a <b"), "a <b");
        assert_eq!(strip_tags("a </ b>"), "a </ b>");
        assert_eq!(strip_tags("<SCRIPT>x</SCRIPT>"), "x");
        assert_eq!(strip_tags("Música <b>ü</b>"), "Música ü");
        assert_eq!(strip_tags("<p data-ß=\"ü\">é</p>"), "é");
    }

    #[test]
    fn entities_are_decoded() {
        assert_eq!(decode_entities("Rock &amp; Roll"), "Rock & Roll");
        assert_eq!(
            decode_entities("&lt;b&gt; &quot;q&quot; &apos;a&apos;"),
            "<b> \"q\" 'a'"
        );
        assert_eq!(decode_entities("a&nbsp;b"), "a\u{a0}b");
        assert_eq!(
            decode_entities("&ndash;&mdash;&hellip;&lsquo;&rsquo;&ldquo;&rdquo;"),
            "–—…‘’“”"
        );
        assert_eq!(decode_entities("&copy; &reg; &euro;"), "© ® €");
        assert_eq!(decode_entities("caf&eacute; &Ntilde;"), "café Ñ");
        assert_eq!(
            decode_entities("&#8211; &#x2013; &#X2013; &#39;"),
            "– – – '"
        );
        assert_eq!(decode_entities("&AMP;"), "&");
        // A numeric reference may lack its `;`, as in HTML.
        assert_eq!(decode_entities("&#65B"), "AB");
        assert_eq!(decode_entities("&#x41;&#0000065;"), "AA");
    }

    #[test]
    fn non_references_stay() {
        for text in [
            "Fish & Chips",
            "a &b",
            "&unknown;",
            "&amp",
            "&Amp;",
            "&#;",
            "&#x;",
            "&#0;",
            "&#xD800;",
            "&#x110000;",
            "&#99999999999;",
            "&",
            "&#",
        ] {
            assert_eq!(decode_entities(text), text, "{text:?}");
        }
        assert_eq!(decode_entities("&&amp;"), "&&");
    }

    #[test]
    fn json_ld_description_prefers_the_excerpt() {
        assert_eq!(
            json_ld_description("", "Concert room by the water."),
            "Concert room by the water."
        );
        assert_eq!(json_ld_description("Short.", "Long description."), "Short.");
        assert_eq!(
            json_ld_description("<p>  Jazz\n\n<b>night</b> </p>", "x"),
            "Jazz night"
        );
        assert_eq!(json_ld_description(" <p></p> ", "<p>Desc</p>"), "Desc");
        assert_eq!(json_ld_description("", ""), "");
        assert_eq!(
            json_ld_description("Rock &amp; Roll&nbsp;&nbsp;night", ""),
            "Rock & Roll night"
        );
    }

    #[test]
    fn json_ld_description_is_cut_at_55_words() {
        let words: Vec<String> = (1..=60).map(|n| format!("w{n}")).collect();
        let long = words.join(" \n ");
        let expected = format!("{}…", words[..55].join(" "));
        assert_eq!(json_ld_description(&long, ""), expected);
        let exact = words[..55].join(" ");
        assert_eq!(json_ld_description("", &exact), exact);
        let one_more = words[..56].join("\t");
        assert_eq!(json_ld_description(&one_more, ""), expected);
    }
}
