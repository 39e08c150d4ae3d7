//! Text rules (docs/api.md, "Text fields and HTML"): paragraph rendering, the HTML cleaning of
//! rich fields, the cleaning of plain fields and term names, the `json_ld` description, and the
//! tag and character-reference helpers that search analysis shares.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Tags that open a block which paragraph rendering keeps as it is.
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

/// The elements [`sanitize_html`] keeps: ordinary content markup (text formatting, headings,
/// lists, tables, links, images, figures, quotations, code), about what WordPress lets authors
/// use in posts. Any other element is unwrapped (its tags go, its content stays) unless it is
/// one of [`REMOVED_WITH_CONTENT`]. No element that loads or runs something other than an
/// image (`script`, `iframe`, `object`, media, forms, `meta`, `link`, `base`) and none whose
/// content is not HTML (`svg`, `math`) is kept.
const ALLOWED_TAGS: &[&str] = &[
    "a",
    "abbr",
    "acronym",
    "address",
    "article",
    "aside",
    "b",
    "bdi",
    "bdo",
    "big",
    "blockquote",
    "br",
    "caption",
    "cite",
    "code",
    "col",
    "colgroup",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "i",
    "img",
    "ins",
    "kbd",
    "li",
    "mark",
    "nav",
    "ol",
    "p",
    "pre",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "section",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "wbr",
];

/// Elements removed together with their content: code (`script`), styles that could restyle
/// the embedding page (`style`), embedded documents and plug-ins, forms (which could post
/// elsewhere or imitate a log-in), fallback and inert content (`noscript`, `noembed`,
/// `noframes`, `template`), and foreign markup (`svg`, `math`), whose content is drawing or
/// formula markup rather than prose and which is where SVG animation of attributes lives.
const REMOVED_WITH_CONTENT: &[&str] = &[
    "applet", "embed", "form", "frame", "frameset", "iframe", "math", "noembed", "noframes",
    "noscript", "object", "script", "style", "svg", "template",
];

/// Attributes kept on every allowed element. `id` is kept, as WordPress keeps it, for in-page
/// anchors (`href="#programme"`), at the price WordPress pays too: an `id` can shadow a global
/// name of the embedding page's scripts. `style` is not: CSS can lay content over the
/// embedding page (a fake log-in, hidden links) and load remote images that track readers,
/// and nothing in an event text needs it; `class` asks the embedding page for a look.
const GENERIC_ATTRIBUTES: &[&str] = &["class", "dir", "id", "lang", "title"];

/// Attributes kept on particular elements. `href` and `src` are URLs checked against
/// [`URL_SCHEMES`]; `cite` is a URL that browsers do not follow, checked by
/// [`holds_script_url`] like every value. `rel` and `target` are kept as the author wrote them.
const TAG_ATTRIBUTES: &[(&str, &[&str])] = &[
    ("a", &["href", "hreflang", "rel", "target"]),
    ("blockquote", &["cite"]),
    ("col", &["span", "width"]),
    ("colgroup", &["span", "width"]),
    ("del", &["cite", "datetime"]),
    ("details", &["open"]),
    ("img", &["alt", "height", "src", "width"]),
    ("ins", &["cite", "datetime"]),
    ("li", &["value"]),
    ("ol", &["reversed", "start", "type"]),
    ("q", &["cite"]),
    ("table", &["summary", "width"]),
    ("td", &["colspan", "headers", "height", "rowspan", "width"]),
    (
        "th",
        &["colspan", "headers", "height", "rowspan", "scope", "width"],
    ),
    ("time", &["datetime"]),
];

/// The schemes a URL attribute (`href`, `src`) may have; relative URLs (`/x`, `page.html`,
/// `#anchor`) are kept too. Everything else goes, `javascript:`, `vbscript:` and `data:`
/// first among them.
const URL_SCHEMES: &[&str] = &["http", "https", "mailto", "tel"];

/// URL schemes that run code or carry a document of their own.
const SCRIPT_SCHEMES: [&str; 3] = ["javascript:", "vbscript:", "data:"];

/// The cleaner of [`sanitize_html`], built once.
///
/// `link_rel` is `None`: links keep the `rel` their author gave and get none added. Browsers
/// already open `target="_blank"` links without `window.opener`, and text written by editors
/// (which is not cleaned) gets no `rel` added either, so adding one here would only make the
/// two kinds of text differ. Comments are removed: nothing shows them, and they can hide
/// conditional markup for old browsers.
static CLEANER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let set = |names: &[&'static str]| names.iter().copied().collect::<HashSet<_>>();
    let tag_attributes: HashMap<_, _> = TAG_ATTRIBUTES
        .iter()
        .map(|&(tag, attributes)| (tag, set(attributes)))
        .collect();
    let mut builder = ammonia::Builder::empty();
    builder
        .tags(set(ALLOWED_TAGS))
        .clean_content_tags(set(REMOVED_WITH_CONTENT))
        .generic_attributes(set(GENERIC_ATTRIBUTES))
        .tag_attributes(tag_attributes)
        .url_schemes(set(URL_SCHEMES))
        .url_relative(ammonia::UrlRelative::PassThrough)
        .link_rel(None)
        .strip_comments(true)
        .attribute_filter(keep_attribute);
    builder
});

/// The words of a `json_ld` description.
const JSON_LD_WORDS: usize = 55;

/// Renders a stored `description` or `excerpt` as paragraphs.
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

/// Cleans the HTML of a rich field written by a caller without `unfiltered_html`, with the
/// allow-list of [`CLEANER`]: the text is parsed as a browser parses it (unclosed tags,
/// misnesting, character references and all) and written back holding only the allowed
/// elements and attributes, URLs of the allowed schemes, and no attribute value holding a
/// script URL ([`holds_script_url`]).
///
/// The result is normalized HTML (`<P>` becomes `<p>`, attribute values are quoted, `&` is
/// written `&amp;`, comments go), except that a text with no `<` and no `&` holds no markup
/// and comes back unchanged.
pub fn sanitize_html(text: &str) -> String {
    if !text.contains(['<', '&']) {
        return text.to_owned();
    }
    CLEANER.clean(text).to_string()
}

/// The attribute filter of [`CLEANER`]: drops an attribute whose value holds a script URL.
/// The URL attributes are already limited to [`URL_SCHEMES`]; this covers every other value
/// too, should anything read it as a URL or a list of URLs.
fn keep_attribute<'v>(_element: &str, _attribute: &str, value: &'v str) -> Option<Cow<'v, str>> {
    (!holds_script_url(value)).then_some(Cow::Borrowed(value))
}

/// Whether an attribute value (character references already decoded) holds one of
/// [`SCRIPT_SCHEMES`] where a URL could start: at the start of the value or after a character
/// that is not an ASCII letter or digit (`0;javascript:…` in a list, `url=javascript:…`).
/// Control characters are ignored, since browsers drop tabs and line breaks inside a URL
/// (`java&#x09;script:`); the comparison ignores ASCII case. `metadata:` is a word, not a
/// `data:` URL.
fn holds_script_url(value: &str) -> bool {
    let compact: String = value
        .chars()
        .filter(|c| !c.is_control())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    SCRIPT_SCHEMES.iter().any(|scheme| {
        compact.match_indices(scheme).any(|(i, _)| {
            !compact[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric())
        })
    })
}

/// Removes HTML tags (`<name …>`, `</name …>`), comments and `<!…>`/`<?…>`/`</…>`
/// declarations, for fields that are plain text. Markup the text ends inside of
/// (`<img src=x onerror=…`) runs to the end of the text and goes with it: a browser that met
/// the text followed by more markup would read it as a tag. A `<` that starts no markup
/// (`1 < 2`, `<3`) is a plain character and stays, unless a removal brings it next to text
/// with which it would start markup (`<<b>script>` would become `<script>`): then it goes too,
/// so that the result holds no markup.
pub fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut removed = false;
    while let Some(i) = rest.find('<') {
        push_stripped(&mut out, &rest[..i], removed);
        let tail = &rest[i..];
        (rest, removed) = match markup_len(tail) {
            Some(len) => (&tail[len..], true),
            None => {
                out.push('<');
                (&tail[1..], false)
            }
        };
    }
    push_stripped(&mut out, rest, removed);
    out
}

/// Appends text for [`strip_tags`]: when a removal has just brought `text` next to plain `<`
/// characters at the end of the output with which it would start markup, they go.
fn push_stripped(out: &mut String, text: &str, after_removal: bool) {
    if after_removal {
        while out.ends_with('<') && opens_markup(text) {
            out.pop();
        }
    }
    out.push_str(text);
}

/// Whether `<` followed by `after` starts markup for [`markup_len`]: a letter, `/`, `!` or
/// `?`.
fn opens_markup(after: &str) -> bool {
    after
        .as_bytes()
        .first()
        .is_some_and(|&c| c.is_ascii_alphabetic() || matches!(c, b'/' | b'!' | b'?'))
}

/// Cleans a "plain" venue or organizer field: tags removed, each whitespace run replaced by
/// one space, trimmed. Character references and `%XX` escapes stay.
pub fn clean_plain(text: &str) -> String {
    collapse_whitespace(&strip_tags(text))
}

/// Cleans a term name, which is the same rule as [`clean_plain`].
pub(crate) fn clean_term_name(text: &str) -> String {
    clean_plain(text)
}

/// The `description` of a `json_ld` object: the excerpt, or the description when the excerpt
/// has no text, as plain text — tags removed, character references decoded (the result is not
/// HTML), whitespace runs collapsed, trimmed — cut to its first 55 words with `…` appended
/// when cut.
///
/// An excerpt that holds only markup or whitespace counts as empty, as it does for rendering,
/// so that it does not hide the description.
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

/// Plain text of a rich field, for formats that cannot carry HTML (calendar feeds): line
/// breaks and the ends of blocks become line breaks, tags go, character references are
/// decoded, spaces within a line collapse, and paragraphs are separated by one empty line.
pub(crate) fn plain_text(html: &str) -> String {
    let mut broken = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        broken.push_str(&rest[..i]);
        let tag = &rest[i + 1..];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        if name == "br"
            || (tag.starts_with('/') && matches!(name.as_str(), "li" | "tr" | "dt" | "dd"))
        {
            broken.push('\n');
        } else if tag.starts_with('/') && BLOCK_TAGS.contains(&name.as_str()) {
            broken.push_str("\n\n");
        }
        broken.push('<');
        rest = tag;
    }
    broken.push_str(rest);
    let text = decode_entities(&strip_tags(&broken)).replace("\r\n", "\n");
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.split(['\n', '\r']) {
        let line = collapse_whitespace(line);
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        out.push_str(&line);
        blank = false;
    }
    out
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
/// the HTML5 names of URL punctuation and whitespace (`&colon;`, `&Tab;`, `&NewLine;`).
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

/// The length of the markup at the start of `s` (which starts with `<`), read the way the HTML
/// tokenizer reads it; `None` when this `<` is a plain character. Markup that the text ends
/// inside of runs to the end of the text.
fn markup_len(s: &str) -> Option<usize> {
    if s.starts_with("<!--") {
        return Some(comment_len(s));
    }
    let bytes = s.as_bytes();
    match bytes.get(1)? {
        b'/' if bytes.get(2).is_some_and(u8::is_ascii_alphabetic) => Some(tag_len(s, 2)),
        // `<!…>`, `<?…>` and `</` not followed by a letter are bogus comments, ended by the
        // first `>`.
        b'!' | b'?' | b'/' => Some(s.find('>').map_or(s.len(), |i| i + 1)),
        c if c.is_ascii_alphabetic() => Some(tag_len(s, 1)),
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

/// The length of the tag at the start of `s` whose name starts at byte `name_start` (1 for a
/// start tag, 2 for an end tag), up to and including its `>`; the whole of `s` when the text
/// ends inside the tag. Attribute names run to whitespace, `/`, `>` or `=`; values are quoted
/// with `"` or `'`, or run to whitespace or `>`, so that a `>` inside a quoted value does not
/// end the tag.
fn tag_len(s: &str, name_start: usize) -> usize {
    let bytes = s.as_bytes();
    let is_space = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_whitespace);
    let mut i = s[name_start..]
        .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
        .map_or(s.len(), |i| name_start + i);
    loop {
        while is_space(i) || bytes.get(i) == Some(&b'/') {
            i += 1;
        }
        match bytes.get(i) {
            None => return s.len(),
            Some(b'>') => return i + 1,
            Some(_) => {}
        }
        // A leading `=` belongs to the name.
        i += 1;
        while i < bytes.len() && !is_space(i) && !matches!(bytes[i], b'/' | b'>' | b'=') {
            i += 1;
        }
        let mut j = i;
        while is_space(j) {
            j += 1;
        }
        if bytes.get(j) != Some(&b'=') {
            continue;
        }
        j += 1;
        while is_space(j) {
            j += 1;
        }
        i = match bytes.get(j) {
            Some(&quote @ (b'"' | b'\'')) => match s[j + 1..].find(quote as char) {
                Some(len) => j + len + 2,
                None => return s.len(),
            },
            Some(_) => {
                while j < bytes.len() && !is_space(j) && bytes[j] != b'>' {
                    j += 1;
                }
                j
            }
            None => return s.len(),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_keeps_paragraphs_and_lines() {
        assert_eq!(
            plain_text("<p>One &amp;  two</p><p>Three<br>four</p><ul><li>a</li><li>b</li></ul>"),
            "One & two\n\nThree\nfour\n\na\nb"
        );
        assert_eq!(
            plain_text("First\n\n\n\nSecond   line\nnext"),
            "First\n\nSecond line\nnext"
        );
    }
    use proptest::prelude::*;

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
        assert_eq!(sanitize_html("a<noscript><p>b</p></noscript>c"), "ac");
        assert_eq!(sanitize_html("a<template><p>b</p></template>c"), "ac");
        assert_eq!(sanitize_html("a<svg><text>b</text></svg>c"), "ac");
        assert_eq!(sanitize_html("a<math><mi>b</mi></math>c"), "ac");
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
        // Nested objects end at their own end tag.
        assert_eq!(sanitize_html("<object><object>x</object>y</object>z"), "z");
        // A form start tag inside a form is ignored by HTML parsing, so the first `</form>`
        // ends the form and `y` is outside it.
        assert_eq!(sanitize_html("<form><FORM>x</form>y</form>z"), "yz");
        // An element left open runs to the end of the text.
        assert_eq!(sanitize_html("a<script>alert(1)"), "a");
        assert_eq!(sanitize_html("a<form><p>b</p>"), "a");
        assert_eq!(sanitize_html("a<iframe>b</iframe"), "a");
        // Stray end tags go.
        assert_eq!(sanitize_html("a</script>b</form>c</embed>"), "abc");
        // A `>` in a quoted value does not end the tag.
        assert_eq!(sanitize_html("<script src=\"a>b\"></script>ok"), "ok");
        // A plain `<` that a removal brings next to tag-like text stays text.
        assert_eq!(
            sanitize_html("<</script>img src=x onerror=alert(1)>"),
            "&lt;img src=x onerror=alert(1)&gt;"
        );
    }

    #[test]
    fn sanitizing_removes_event_attributes() {
        // The output is written back by the HTML serializer: attribute values quoted with `"`,
        // names lower-cased.
        assert_eq!(
            sanitize_html("<img src=\"a.png\" onerror=\"alert(1)\">"),
            "<img src=\"a.png\">"
        );
        assert_eq!(
            sanitize_html("<a href='/x' OnClick='go()' title=t>x</a>"),
            "<a href=\"/x\" title=\"t\">x</a>"
        );
        assert_eq!(
            sanitize_html("<img/onerror=alert(1) src=x>"),
            "<img src=\"x\">"
        );
        assert_eq!(sanitize_html("<body onload>"), "");
        assert_eq!(
            sanitize_html("<p onmouseover = \"x\" class=\"c\">t</p>"),
            "<p class=\"c\">t</p>"
        );
        assert_eq!(sanitize_html("<div onclick=a>b</div>"), "<div>b</div>");
        // `>` inside a quoted value belongs to the value (and is written as a reference).
        assert_eq!(
            sanitize_html("<p title=\"a>b\" onclick=\"x\">t</p>"),
            "<p title=\"a&gt;b\">t</p>"
        );
        assert_eq!(sanitize_html("<br onclick=x/>"), "<br>");
        assert_eq!(sanitize_html("<br onclick=\"x\"/>"), "<br>");
    }

    #[test]
    fn sanitizing_removes_script_urls() {
        for text in [
            "<a href=\"javascript:alert(1)\">x</a>",
            "<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
            "<a href=\"java&#x09;script:alert(1)\">x</a>",
            "<a href=\"&#106;avascript:alert(1)\">x</a>",
            "<a href=\"&#106avascript:alert(1)\">x</a>",
            "<a href=\"javascript&colon;alert(1)\">x</a>",
            "<a href=\"java\nscript:x\">x</a>",
            "<a href=\"vbscript:msgbox(1)\">x</a>",
            "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
        ] {
            assert_eq!(sanitize_html(text), "<a>x</a>", "{text:?}");
        }
        assert_eq!(
            sanitize_html("<a href=\" JavaScript:alert(1)\" title=\"t\">x</a>"),
            "<a title=\"t\">x</a>"
        );
        assert_eq!(
            sanitize_html("<img src=\"data:image/svg+xml,<svg onload=alert(1)>\" alt=a>"),
            "<img alt=\"a\">"
        );
        assert_eq!(
            sanitize_html("<blockquote cite=\"javascript:alert(1)\">q</blockquote>"),
            "<blockquote>q</blockquote>"
        );
        // Unquoted, the value ends at the line break: `href=java` plus an attribute `script:x`,
        // which is not allowed.
        assert_eq!(
            sanitize_html("<a href=java\nscript:x>x</a>"),
            "<a href=\"java\">x</a>"
        );
        // A button is not allowed: its text stays, its `formaction` goes with it.
        assert_eq!(
            sanitize_html("<button formaction=javascript:x>b</button>"),
            "b"
        );
        // A value that names a script URL where a URL could start goes, whatever the attribute
        // (this errs on the side of removing: the path below is harmless but rare).
        assert_eq!(
            sanitize_html("<a href=\"https://x.org/javascript:y\" title=\"javascript\">x</a>"),
            "<a title=\"javascript\">x</a>"
        );
        assert_eq!(
            sanitize_html("<abbr title=\"Tip: javascript: is not a link\">x</abbr>"),
            "<abbr>x</abbr>"
        );
        // Words merely ending in a scheme name are not URLs.
        let kept = "<a href=\"javascript-guide.html\" title=\"Metadata: see notes\">x</a>";
        assert_eq!(sanitize_html(kept), kept);
    }

    /// The list-valued attribute of SVG animation, and a refresh to a script URL: neither
    /// element is allowed, so nothing of them survives.
    #[test]
    fn sanitizing_removes_animation_values_and_meta_refresh() {
        for text in [
            "<animate attributeName=\"href\" values=\"0;javascript:alert(1)\">",
            "<a href=\"#\"><animate attributeName=\"href\" values=\"0;javascript:alert(1)\"/>x</a>",
            "<svg><a><animate attributeName=href values=0;javascript:alert(1) /><text>x</text></a></svg>",
            "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
            "<META HTTP-EQUIV=refresh CONTENT=\"0; URL=data:text/html,x\">",
        ] {
            let out = sanitize_html(text);
            let lower = out.to_ascii_lowercase();
            for gone in ["javascript", "data:", "animate", "values", "meta", "refresh", "svg"] {
                assert!(!lower.contains(gone), "{text:?} -> {out:?}");
            }
        }
        // Outside `svg`, `<animate/>` is an HTML element left open (`/>` closes no HTML
        // element), and an HTML element with an SVG element's name goes with its content.
        assert_eq!(
            sanitize_html(
                "<a href=\"#\"><animate attributeName=\"href\" values=\"0;javascript:alert(1)\"/>x</a>"
            ),
            "<a href=\"#\"></a>"
        );
    }

    #[test]
    fn sanitizing_keeps_ordinary_content() {
        // No `<` and no `&`: nothing to parse, byte for byte.
        for text in [
            "",
            "plain text",
            "3 > 2",
            "Música en São Paulo",
            " a\n\n b\t",
        ] {
            assert_eq!(sanitize_html(text), text, "{text:?}");
        }
        // Already in the serializer's form: unchanged.
        for text in [
            "<p class=\"x\">Hello <b>world</b> &amp; <em>all</em></p>",
            "<a href=\"https://example.org/?a=1&amp;b=2\" target=\"_blank\" rel=\"nofollow\">l</a>",
            "<a href=\"mailto:a@example.org\">m</a> <a href=\"tel:+351220000000\">t</a>",
            "<a href=\"/events/\">r</a> <a href=\"#programme\">f</a> <a href=\"page.html\">p</a>",
            "<img src=\"https://example.org/a.png\" alt=\"A\" width=\"10\" height=\"20\">",
            "<figure><img src=\"a.png\"><figcaption>Cap</figcaption></figure>",
            "<h2 id=\"programme\" lang=\"pt\" dir=\"ltr\">Título</h2>",
            "<ul><li>a</li></ul><ol start=\"3\"><li>b</li></ol>",
            "<table><thead><tr><th scope=\"col\">h</th></tr></thead><tbody><tr><td colspan=\"2\" rowspan=\"1\">d</td></tr></tbody></table>",
            "<blockquote cite=\"https://example.org/\"><p>q</p></blockquote>",
            "<pre><code>x = 1;</code></pre>",
            "<p>a<br>b</p><hr>",
            "<p>Line one</p>\n\n<p>Line two</p>",
        ] {
            assert_eq!(sanitize_html(text), text, "{text:?}");
        }
        // Every allowed element survives (table parts inside a table, where HTML puts them).
        for tag in ALLOWED_TAGS {
            let out = sanitize_html(&format!("<table><{tag}>x"));
            assert!(out.contains(&format!("<{tag}>")), "{tag}: {out:?}");
        }
    }

    /// The serializer writes the same content in its own form: these are the intended results,
    /// and a second pass changes nothing.
    #[test]
    fn sanitizing_normalizes_markup() {
        for (text, normalized) in [
            ("1 < 2 and 3 > 2", "1 &lt; 2 and 3 &gt; 2"),
            ("<3", "&lt;3"),
            ("Fish & Chips", "Fish &amp; Chips"),
            ("caf&eacute;&nbsp;bar", "café&nbsp;bar"),
            ("<P>Upper</P>", "<p>Upper</p>"),
            (
                "<img src=x alt='one two' />",
                "<img src=\"x\" alt=\"one two\">",
            ),
            (
                "<a href=\"https://example.org/?a=1&b=2\">link</a>",
                "<a href=\"https://example.org/?a=1&amp;b=2\">link</a>",
            ),
            ("<p>a<p>b", "<p>a</p><p>b</p>"),
            ("<b>bold", "<b>bold</b>"),
            // Comments and doctypes go.
            ("<!-- a comment -->text", "text"),
            ("<!DOCTYPE html>x", "x"),
            // Elements not allowed are unwrapped.
            ("<textarea>x</textarea>", "x"),
            ("<online>x</online>", "x"),
            ("<font color=red>x</font>", "x"),
            // `style` is not allowed.
            ("<p style=\"position:fixed\">x</p>", "<p>x</p>"),
            // No `rel` is added to links.
            (
                "<a href=https://example.org target=_blank>x</a>",
                "<a href=\"https://example.org\" target=\"_blank\">x</a>",
            ),
        ] {
            assert_eq!(sanitize_html(text), normalized, "{text:?}");
            assert_eq!(sanitize_html(normalized), normalized, "{normalized:?}");
        }
    }

    #[test]
    fn sanitizing_reads_comments_and_raw_text_like_a_browser() {
        // A comment ends at `--!>` too, so what follows is live markup (and goes).
        assert_eq!(sanitize_html("<!-- a --!><script>x</script>-->"), "--&gt;");
        assert_eq!(sanitize_html("<!--><script>x</script>"), "");
        // Inside a comment nothing is markup; the comment goes.
        assert_eq!(sanitize_html("<!-- <script>x</script> -->"), "");
        // `</noscript>` inside an attribute value ends a noscript element in a browser: the
        // element goes with its content, the image after it loses its handler.
        assert_eq!(
            sanitize_html(
                "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>"
            ),
            "<img src=\"x\">\"&gt;"
        );
        // A tag the text ends inside of is dropped.
        assert_eq!(sanitize_html("ok<img src=x onerror=\"alert(1)"), "ok");
        assert_eq!(sanitize_html("ok<img src=x onerror=alert(1)"), "ok");
        assert_eq!(sanitize_html("ok<img"), "ok");
    }

    #[test]
    fn script_urls_are_recognized_where_a_url_could_start() {
        for value in [
            "javascript:alert(1)",
            " JavaScript:x",
            "java\tscript:x",
            "java\u{1}script:x",
            "0;javascript:alert(1)",
            "0; url=javascript:x",
            "x.png 1x, data:image/png,x 2x",
            "VBScript:x",
            "https://x.org/javascript:y",
        ] {
            assert!(holds_script_url(value), "{value:?}");
        }
        for value in [
            "",
            "https://example.org/",
            "javascript",
            "javascript-guide.html",
            "Metadata: x",
            "bigdata:lake",
        ] {
            assert!(!holds_script_url(value), "{value:?}");
        }
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
        assert_eq!(strip_tags("1 <2 <= 3 <"), "1 <2 <= 3 <");
        // `</` not followed by a letter is a bogus comment in HTML, which ends at `>`.
        assert_eq!(strip_tags("a </ b> c"), "a  c");
        assert_eq!(strip_tags("a </>b"), "a b");
        assert_eq!(strip_tags("<SCRIPT>x</SCRIPT>"), "x");
        assert_eq!(strip_tags("Música <b>ü</b>"), "Música ü");
        assert_eq!(strip_tags("<p data-ß=\"ü\">é</p>"), "é");
    }

    /// Markup the text ends inside of is removed up to the end of the text: a browser reading
    /// the text followed by more markup would take it for a tag.
    #[test]
    fn unclosed_markup_is_stripped_to_the_end() {
        assert_eq!(strip_tags("a <b"), "a ");
        assert_eq!(strip_tags("a </b"), "a ");
        assert_eq!(strip_tags("a </"), "a ");
        assert_eq!(strip_tags("a <!-- b"), "a ");
        assert_eq!(strip_tags("a <!b"), "a ");
        assert_eq!(strip_tags("a <?b"), "a ");
        assert_eq!(strip_tags("a <p title='>b"), "a ");
        let hostile = "<img src=x onerror=alert(1)";
        assert_eq!(strip_tags(&format!("Jazz {hostile}")), "Jazz ");
        assert_eq!(clean_term_name(&format!("Jazz {hostile}")), "Jazz");
        assert_eq!(
            clean_plain(&format!("221b Baker Street{hostile}")),
            "221b Baker Street"
        );
        assert_eq!(clean_plain(&format!("London {hostile}")), "London");
        assert_eq!(clean_plain("<b>Porto</b> <svg onload=alert(1)"), "Porto");
        assert_eq!(clean_plain("x <img src=\"a\" onerror=\"alert(1)"), "x");
        // A plain `<` that a removal would join to a tag goes with it.
        assert_eq!(
            strip_tags("<<b>img src=x onerror=alert(1)>"),
            "img src=x onerror=alert(1)>"
        );
        assert_eq!(strip_tags("a<<b>/x"), "a/x");
        assert_eq!(strip_tags("<<<!-- x -->iframe>"), "iframe>");
        assert_eq!(strip_tags("<<b><3"), "<<3");
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

    /// Pieces of hostile HTML: glued together at random they make tags, broken tags, event
    /// attributes and script URLs hidden behind references, tabs and case.
    const FRAGMENTS: &[&str] = &[
        "<",
        "</",
        "<!--",
        "-->",
        "<!",
        "<?",
        "a",
        "p",
        "img",
        "svg",
        "animate",
        "meta",
        "blockquote",
        "iframe",
        "script",
        "noscript",
        "x",
        " on",
        "onerror=",
        "onload=",
        "href=",
        "src=",
        "cite=",
        "title=",
        "values=",
        "content=",
        "http-equiv=refresh",
        "attributeName=href",
        "javascript:",
        "JaVaScRiPt:",
        "java&#x09;script:",
        "java\tscript:",
        "&#106;",
        "&#x6A;avascript:",
        "javascript&colon;",
        "vbscript:",
        "data:",
        "text/html,",
        "0;url=",
        "0;",
        "alert(1)",
        "\"",
        "'",
        "=",
        ">",
        "/",
        " ",
        "\t",
        "\n",
        "\u{0}",
        "&",
        "&amp;",
    ];

    /// Hostile HTML from [`FRAGMENTS`], or well-formed tags whose attributes hold script URLs.
    fn hostile_html() -> impl Strategy<Value = String> {
        let glued = prop::collection::vec(prop::sample::select(FRAGMENTS), 0..48)
            .prop_map(|parts| parts.concat());
        let attribute = (
            prop::sample::select(vec![
                "href", "src", "cite", "title", "alt", "values", "content", "onclick", "class",
            ]),
            prop::sample::select(vec![
                "javascript:alert(1)",
                " java&#x09;script:x",
                "&#106;avascript:x",
                "0;javascript:x",
                "0;url=javascript:x",
                "data:text/html,x",
                "VBScript:x",
                "https://example.org/",
                "#a",
            ]),
            prop::sample::select(vec!["\"", "'", ""]),
        )
            .prop_map(|(name, value, quote)| format!(" {name}={quote}{value}{quote}"));
        let tag = (
            prop::sample::select(vec![
                "a",
                "img",
                "blockquote",
                "q",
                "svg",
                "animate",
                "meta",
                "p",
                "iframe",
                "set",
            ]),
            prop::collection::vec(attribute, 0..4),
            prop::sample::select(vec![">", "/>", ""]),
        )
            .prop_map(|(name, attributes, end)| format!("<{name}{}{end}", attributes.concat()));
        let tags = prop::collection::vec(prop_oneof![tag, "[a-z <>]{0,4}".prop_map(|s| s)], 0..6)
            .prop_map(|parts| parts.concat());
        prop_oneof![glued, tags, any::<String>()]
    }

    /// A tag's name and its attributes as `(name, decoded value)`.
    type TagAttributes = (String, Vec<(String, String)>);

    /// Every start and end tag of `html` with its attributes, read by html5ever's tokenizer as
    /// a browser reads markup.
    fn tags_of(html: &str) -> Vec<TagAttributes> {
        use html5ever::tendril::StrTendril;
        use html5ever::tokenizer::{
            BufferQueue, Tag, Token, TokenSink, TokenSinkResult, Tokenizer,
        };
        use std::cell::RefCell;

        #[derive(Default)]
        struct Tags(RefCell<Vec<TagAttributes>>);
        impl TokenSink for Tags {
            type Handle = ();
            fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
                if let Token::TagToken(Tag { name, attrs, .. }) = token {
                    let attrs = attrs
                        .iter()
                        .map(|a| (a.name.local.to_string(), a.value.to_string()))
                        .collect();
                    self.0.borrow_mut().push((name.to_string(), attrs));
                }
                TokenSinkResult::Continue
            }
        }
        let input = BufferQueue::default();
        input.push_back(StrTendril::from_slice(html));
        let tokenizer = Tokenizer::new(Tags::default(), Default::default());
        let _ = tokenizer.feed(&input);
        tokenizer.end();
        tokenizer.sink.0.take()
    }

    /// The check of the property below, written apart from [`holds_script_url`]: a script
    /// scheme at the start of the value or after a character that cannot be part of a scheme
    /// name, control characters ignored.
    fn names_script_url(value: &str) -> bool {
        let compact: String = value
            .chars()
            .filter(|c| !c.is_control())
            .collect::<String>()
            .to_lowercase();
        ["javascript:", "vbscript:", "data:"].iter().any(|scheme| {
            let mut from = 0;
            while let Some(i) = compact[from..].find(scheme) {
                let at = from + i;
                let before = compact[..at].chars().last();
                if !before.is_some_and(|c| c.is_ascii_alphanumeric()) {
                    return true;
                }
                from = at + scheme.len();
            }
            false
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever the input, the cleaned HTML holds only allowed elements and attributes, no
        /// event attribute, no value naming a script URL, and no comment or raw-text element
        /// that could hide markup.
        #[test]
        fn sanitized_html_holds_nothing_executable(text in hostile_html()) {
            let out = sanitize_html(&text);
            for (tag, attributes) in tags_of(&out) {
                prop_assert!(ALLOWED_TAGS.contains(&tag.as_str()), "{:?} -> {:?}", text, out);
                for (name, value) in attributes {
                    prop_assert!(!name.starts_with("on"), "{:?} -> {:?}", text, out);
                    prop_assert!(!names_script_url(&value), "{:?} -> {:?}", text, out);
                    let allowed = GENERIC_ATTRIBUTES.contains(&name.as_str())
                        || TAG_ATTRIBUTES.iter().any(|(t, names)| {
                            *t == tag && names.contains(&name.as_str())
                        });
                    prop_assert!(allowed, "{} on {}: {:?} -> {:?}", name, tag, text, out);
                }
            }
            prop_assert!(!out.contains("<!"), "{:?} -> {:?}", text, out);
        }

        /// Whatever the input, plain text holds no markup: no `<` followed by a letter, `/`,
        /// `!` or `?`.
        #[test]
        fn stripped_text_holds_no_markup(text in hostile_html()) {
            for out in [strip_tags(&text), clean_plain(&text), clean_term_name(&text)] {
                let bytes = out.as_bytes();
                let opens = bytes.iter().enumerate().any(|(i, &b)| {
                    b == b'<'
                        && bytes.get(i + 1).is_some_and(|&c| {
                            c.is_ascii_alphabetic() || matches!(c, b'/' | b'!' | b'?')
                        })
                });
                prop_assert!(!opens, "{:?} -> {:?}", text, out);
            }
        }
    }
}
