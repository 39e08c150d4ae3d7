//! Raw request parameters before validation (docs/api.md, "Parameters"): parsing of query strings,
//! `application/x-www-form-urlencoded` bodies (with PHP's bracket keys) and JSON bodies, and the
//! two ways a validator reads a parameter: as a scalar (last occurrence wins) or as a list (all
//! occurrences concatenated).

use std::collections::HashMap;

use percent_encoding::percent_decode;
use serde_json::{Map, Value};

use crate::values::{Invalid, SubCode, MAX_LIST_ITEMS};

/// Bracket levels allowed in a form key (`a[1][2]` has two).
const MAX_BRACKET_DEPTH: usize = 8;

/// Nesting levels allowed in a JSON body; the top-level object is level 1.
const MAX_JSON_DEPTH: usize = 64;

/// Parameters as received: name -> ordered "segments". A plain `k=v` occurrence is one segment
/// (a JSON string value); consecutive bracketed occurrences (`k[]=a&k[]=b`, `k[x][y]=v`) merge
/// PHP-style into one segment (a JSON array, or an object; an object whose keys are all
/// non-negative decimal integers becomes an array ordered by those integers). A later plain
/// occurrence starts a new segment, and so does a bracketed one after a plain one.
///
/// Keeping every occurrence lets one parse serve both readers: scalars take the last segment
/// (PHP's "last wins"), lists concatenate them all.
#[derive(Debug, Clone, Default)]
pub struct RawParams {
    params: OrderedMap<Param<Value>>,
}

/// One parameter name's occurrences, or the refusal recorded for it while parsing. `S` is the
/// segment type: [`Node`] while a form is being merged, [`Value`] once it is finished.
#[derive(Debug, Clone)]
enum Param<S> {
    /// Never empty.
    Segments(Vec<S>),
    Malformed(Invalid),
}

impl RawParams {
    pub(crate) fn new() -> RawParams {
        RawParams::default()
    }

    /// Parses a query string or an `application/x-www-form-urlencoded` body: `&`
    /// separates, `;` does not, `+` is a space, `%XX` decodes as UTF-8, a key without `=` has
    /// the value `""`. A name whose key nests brackets deeper than 8 levels, or whose key or
    /// value is not valid UTF-8, reads as an error; keys whose name itself is not valid UTF-8
    /// (or is empty) are dropped, as there is no name to report.
    pub fn from_form(bytes: &[u8]) -> RawParams {
        let mut params: OrderedMap<Param<Node>> = OrderedMap::default();
        for pair in bytes.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
            let (raw_key, raw_value) = match pair.iter().position(|&b| b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &[][..]),
            };
            let key_bytes = form_decode(raw_key);
            let Ok(key) = std::str::from_utf8(&key_bytes) else {
                // Report under the name before the brackets when that part is readable.
                let name_end = key_bytes
                    .iter()
                    .position(|&b| b == b'[')
                    .unwrap_or(key_bytes.len());
                if let Ok(name) = std::str::from_utf8(&key_bytes[..name_end]) {
                    if !name.is_empty() {
                        record_malformed(&mut params, name, bad_utf8());
                    }
                }
                continue;
            };
            let key = FormKey::parse(key);
            let name = key.name();
            if name.is_empty() {
                continue; // PHP drops `=v` and `[a]=v`.
            }
            let value = match String::from_utf8(form_decode(raw_value)) {
                Ok(value) => value,
                Err(_) => {
                    record_malformed(&mut params, name, bad_utf8());
                    continue;
                }
            };
            match key {
                FormKey::Plain(name) => add_plain(&mut params, name, value),
                FormKey::Bracketed { name, path } => add_bracketed(&mut params, name, &path, value),
                FormKey::TooDeep(name) => record_malformed(
                    &mut params,
                    name,
                    Invalid::new(
                        SubCode::InvalidFormat,
                        format!(
                            "must not nest brackets more than {MAX_BRACKET_DEPTH} levels deep."
                        ),
                    ),
                ),
            }
        }
        let mut finished = OrderedMap::default();
        for (name, param) in params.entries {
            let param = match param {
                Param::Segments(nodes) => {
                    Param::Segments(nodes.into_iter().map(Node::into_value).collect())
                }
                Param::Malformed(e) => Param::Malformed(e),
            };
            finished.insert(name, param);
        }
        RawParams { params: finished }
    }

    /// A JSON object body: each key is one segment; JSON `null` values are dropped, because
    /// `null` is the same as absent.
    pub fn from_json_object(map: Map<String, Value>) -> RawParams {
        let mut params = OrderedMap::default();
        for (name, value) in map {
            if !value.is_null() {
                params.insert(name, Param::Segments(vec![value]));
            }
        }
        RawParams { params }
    }

    /// Adds body parameters; a body name replaces the query parameter of the same name with all
    /// its occurrences.
    pub(crate) fn overlay(&mut self, body: RawParams) {
        for (name, param) in body.params.entries {
            self.params.insert(name, param);
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.params.get(name).is_some()
    }

    /// The names in order of first appearance.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.params.entries.iter().map(|(name, _)| name.as_str())
    }

    /// The value of a scalar parameter: its last occurrence (PHP: last wins). An array or object
    /// is returned as is, for the scalar validator to refuse. Err if the name was malformed.
    pub fn scalar(&self, name: &str) -> Option<Result<&Value, Invalid>> {
        match self.params.get(name)? {
            Param::Segments(segments) => segments.last().map(Ok),
            Param::Malformed(e) => Some(Err(e.clone())),
        }
    }

    /// The items of a list parameter: the items of all occurrences, in order. A string is
    /// split on commas with whitespace around items trimmed and empty items dropped; an array
    /// contributes its elements; an object whose keys are all integers contributes its members
    /// in key order; any other scalar is one item. Err for an object with other keys, for more
    /// than [`MAX_LIST_ITEMS`] items, or if the name was malformed.
    pub fn list(&self, name: &str) -> Option<Result<Vec<Value>, Invalid>> {
        match self.params.get(name)? {
            Param::Segments(segments) => Some(list_items(segments)),
            Param::Malformed(e) => Some(Err(e.clone())),
        }
    }
}

fn list_items(segments: &[Value]) -> Result<Vec<Value>, Invalid> {
    let mut items = Vec::new();
    for segment in segments {
        match segment {
            Value::String(s) => items.extend(split_list(s).map(|i| Value::String(i.to_owned()))),
            Value::Array(elements) => items.extend(elements.iter().cloned()),
            Value::Object(members) => {
                items.extend(ordered_by_index(members.clone()).map_err(|_| {
                    Invalid::new(SubCode::InvalidType, "must be a list, not an object.")
                })?)
            }
            scalar => items.push(scalar.clone()),
        }
        // Checked per segment so that a huge request stops growing the list early.
        if items.len() > MAX_LIST_ITEMS {
            return Err(Invalid::new(
                SubCode::TooManyItems,
                format!("must have at most {MAX_LIST_ITEMS} items."),
            ));
        }
    }
    Ok(items)
}

/// The items of a comma-separated list value (`" 3 , ,7"` -> `3`, `7`; `""` -> none).
fn split_list(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|item| !item.is_empty())
}

/// PHP reads an array whose keys are all integers as a list; returns the members ordered by key,
/// or the object unchanged if some key is not a list index.
fn ordered_by_index(members: Map<String, Value>) -> Result<Vec<Value>, Map<String, Value>> {
    let Some(indices) = members
        .keys()
        .map(|k| list_index(k))
        .collect::<Option<Vec<u64>>>()
    else {
        return Err(members);
    };
    let mut indexed: Vec<(u64, Value)> = indices.into_iter().zip(members.into_values()).collect();
    indexed.sort_unstable_by_key(|(i, _)| *i);
    Ok(indexed.into_iter().map(|(_, v)| v).collect())
}

/// A key that PHP stores as a non-negative integer: decimal digits in canonical form (`"0"`,
/// `"12"`, not `"012"` or `"+1"`, which PHP keeps as strings). Requiring the canonical form also
/// means no two keys of one object can name the same position.
fn list_index(key: &str) -> Option<u64> {
    let canonical = key == "0"
        || (key.starts_with(|c: char| matches!(c, '1'..='9'))
            && key.bytes().all(|b| b.is_ascii_digit()));
    if canonical {
        key.parse().ok()
    } else {
        None
    }
}

/// Form decoding of a key or value: `+` is a space, then `%XX` escapes (malformed escapes stay
/// as they are, as in PHP).
fn form_decode(raw: &[u8]) -> Vec<u8> {
    let spaced: Vec<u8> = raw
        .iter()
        .map(|&b| if b == b'+' { b' ' } else { b })
        .collect();
    percent_decode(&spaced).collect()
}

fn bad_utf8() -> Invalid {
    Invalid::new(
        SubCode::InvalidCharacters,
        "must be valid UTF-8 after URL decoding.",
    )
}

/// The first refusal recorded for a name sticks: a bad occurrence makes the whole request's
/// value for that name invalid, whatever follows.
fn record_malformed(params: &mut OrderedMap<Param<Node>>, name: &str, invalid: Invalid) {
    if !matches!(params.get(name), Some(Param::Malformed(_))) {
        params.insert(name.to_owned(), Param::Malformed(invalid));
    }
}

fn add_plain(params: &mut OrderedMap<Param<Node>>, name: &str, value: String) {
    match params.get_or_insert_with(name, || Param::Segments(Vec::new())) {
        Param::Segments(segments) => segments.push(Node::Leaf(value)),
        Param::Malformed(_) => {}
    }
}

/// Merges a bracketed occurrence into the name's last segment when that one is bracketed too,
/// else starts a new segment.
fn add_bracketed(
    params: &mut OrderedMap<Param<Node>>,
    name: &str,
    path: &[Option<&str>],
    value: String,
) {
    let Param::Segments(segments) = params.get_or_insert_with(name, || Param::Segments(Vec::new()))
    else {
        return;
    };
    if !matches!(segments.last(), Some(Node::Branch(_))) {
        segments.push(Node::Branch(PhpArray::default()));
    }
    if let Some(Node::Branch(array)) = segments.last_mut() {
        array.set(path, value);
    }
}

/// A form key split the way PHP splits it: the name before the first `[`, then one path step
/// per `[...]` group (an empty group appends). After a `]` that is not followed by `[` the rest
/// of the key is ignored; a first `[` without its `]` makes the whole key a plain name.
#[derive(Debug, PartialEq)]
enum FormKey<'a> {
    Plain(&'a str),
    Bracketed {
        name: &'a str,
        path: Vec<Option<&'a str>>,
    },
    TooDeep(&'a str),
}

impl<'a> FormKey<'a> {
    fn parse(key: &'a str) -> FormKey<'a> {
        let Some(open) = key.find('[') else {
            return FormKey::Plain(key);
        };
        let name = &key[..open];
        let mut rest = &key[open..];
        let mut path = Vec::new();
        // `rest` starts with `[` at the top of every iteration.
        while let Some(close) = rest.find(']') {
            if path.len() == MAX_BRACKET_DEPTH {
                return FormKey::TooDeep(name);
            }
            let index = &rest[1..close];
            path.push((!index.is_empty()).then_some(index));
            rest = &rest[close + 1..];
            if !rest.starts_with('[') {
                break;
            }
        }
        if path.is_empty() {
            FormKey::Plain(key)
        } else {
            FormKey::Bracketed { name, path }
        }
    }

    fn name(&self) -> &'a str {
        match self {
            FormKey::Plain(name) | FormKey::Bracketed { name, .. } | FormKey::TooDeep(name) => name,
        }
    }
}

/// A form value while bracketed occurrences are merged into it.
#[derive(Debug, Clone)]
enum Node {
    Leaf(String),
    Branch(PhpArray),
}

impl Node {
    fn into_value(self) -> Value {
        match self {
            Node::Leaf(s) => Value::String(s),
            Node::Branch(array) => {
                let members: Map<String, Value> = array
                    .members
                    .entries
                    .into_iter()
                    .map(|(k, node)| (k, node.into_value()))
                    .collect();
                match ordered_by_index(members) {
                    Ok(items) => Value::Array(items),
                    Err(members) => Value::Object(members),
                }
            }
        }
    }
}

/// A PHP array as PHP's form parser builds it: ordered members, and the position `[]` appends
/// at (one past the largest integer key so far).
#[derive(Debug, Clone, Default)]
struct PhpArray {
    members: OrderedMap<Node>,
    next_index: u64,
}

impl PhpArray {
    /// Sets the member at `path` (non-empty, at most 8 steps, so the recursion is shallow). A leaf
    /// met on the way is replaced by an array and an array at the end by the leaf, as PHP does.
    fn set(&mut self, path: &[Option<&str>], value: String) {
        let Some((step, rest)) = path.split_first() else {
            return;
        };
        let key = match step {
            Some(key) => (*key).to_owned(),
            None => self.next_index.to_string(),
        };
        if let Some(index) = list_index(&key) {
            self.next_index = self.next_index.max(index.saturating_add(1));
        }
        if rest.is_empty() {
            self.members.insert(key, Node::Leaf(value));
            return;
        }
        let child = self
            .members
            .get_or_insert_with(&key, || Node::Branch(PhpArray::default()));
        if let Node::Leaf(_) = child {
            *child = Node::Branch(PhpArray::default());
        }
        if let Node::Branch(array) = child {
            array.set(rest, value);
        }
    }
}

/// An insertion-ordered map with hashed lookup. Both PHP arrays and the parameter set need "the
/// first insertion fixes the position, later writes replace in place", and a 1 MiB form body can
/// hold enough pairs that a linear search per pair would be quadratic.
#[derive(Debug, Clone)]
struct OrderedMap<V> {
    entries: Vec<(String, V)>,
    positions: HashMap<String, usize>,
}

// Not derived: the derive would needlessly require `V: Default`.
impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap {
            entries: Vec::new(),
            positions: HashMap::new(),
        }
    }
}

impl<V> OrderedMap<V> {
    fn get(&self, key: &str) -> Option<&V> {
        self.positions.get(key).map(|&i| &self.entries[i].1)
    }

    fn insert(&mut self, key: String, value: V) {
        match self.positions.get(&key) {
            Some(&i) => self.entries[i].1 = value,
            None => {
                self.positions.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    fn get_or_insert_with(&mut self, key: &str, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.positions.get(key) {
            Some(&i) => i,
            None => {
                self.positions.insert(key.to_owned(), self.entries.len());
                self.entries.push((key.to_owned(), make()));
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }
}

/// Why a JSON body was refused: 400 `rest_invalid_json` with `data.json_error_code` and
/// `data.json_error_message`. The codes and messages are PHP's `json_last_error()` ones:
/// 1 = nesting deeper than 64 levels, 4 = syntax error or a top level that is not an object,
/// 5 = not valid UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonBodyError {
    pub json_error_code: u8,
    pub message: String,
}

impl JsonBodyError {
    fn depth() -> JsonBodyError {
        JsonBodyError {
            json_error_code: 1,
            message: "Maximum stack depth exceeded".to_owned(),
        }
    }

    fn syntax() -> JsonBodyError {
        JsonBodyError {
            json_error_code: 4,
            message: "Syntax error".to_owned(),
        }
    }

    fn utf8() -> JsonBodyError {
        JsonBodyError {
            json_error_code: 5,
            message: "Malformed UTF-8 characters, possibly incorrectly encoded".to_owned(),
        }
    }
}

/// Parses a JSON request body: UTF-8 (a leading byte-order mark is skipped), valid JSON,
/// an object at the top, at most 64 levels of nesting; duplicate keys: the last one wins (in the
/// position of the first, as in PHP).
pub fn parse_json_body(bytes: &[u8]) -> Result<Map<String, Value>, JsonBodyError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|_| JsonBodyError::utf8())?;
    // serde_json stops at 128 levels itself, but the limit here is 64 and must hold for any
    // depth, so the depth is found by a flat scan before parsing. Like PHP's parser, report
    // whichever problem comes first: the text before the level-65 bracket is at most 64 levels
    // deep, so parsing it can only end early (depth error) or find a syntax error first.
    if let Some(at) = too_deep_at(text) {
        return Err(match serde_json::from_str::<Value>(&text[..at]) {
            Err(e) if !e.is_eof() => JsonBodyError::syntax(),
            _ => JsonBodyError::depth(),
        });
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(JsonBodyError::syntax()),
    }
}

/// The byte offset of the bracket that opens nesting level 65, counting brackets outside JSON
/// strings; exact for valid JSON.
fn too_deep_at(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(query: &str) -> RawParams {
        RawParams::from_form(query.as_bytes())
    }

    fn scalar(params: &RawParams, name: &str) -> Option<Value> {
        params
            .scalar(name)
            .map(|r| r.expect("not malformed").clone())
    }

    fn list(params: &RawParams, name: &str) -> Option<Vec<Value>> {
        params.list(name).map(|r| r.expect("a valid list"))
    }

    fn list_err(params: &RawParams, name: &str) -> SubCode {
        params
            .list(name)
            .expect("present")
            .expect_err("an invalid list")
            .code
    }

    fn scalar_err(params: &RawParams, name: &str) -> SubCode {
        params
            .scalar(name)
            .expect("present")
            .expect_err("malformed")
            .code
    }

    fn strings(items: &[&str]) -> Vec<Value> {
        items.iter().map(|s| json!(s)).collect()
    }

    // Query string basics

    #[test]
    fn pairs_are_separated_by_ampersand_only() {
        let p = form("a=1&b=2;c=3&&d");
        assert_eq!(scalar(&p, "a"), Some(json!("1")));
        assert_eq!(scalar(&p, "b"), Some(json!("2;c=3")));
        assert!(!p.contains("c"));
        assert_eq!(p.names().collect::<Vec<_>>(), ["a", "b", "d"]);
    }

    #[test]
    fn key_without_equals_is_empty_string() {
        let p = form("featured&x=");
        assert_eq!(scalar(&p, "featured"), Some(json!("")));
        assert_eq!(scalar(&p, "x"), Some(json!("")));
    }

    #[test]
    fn decoding_of_plus_and_percent() {
        let p = form("search=caf%C3%A9+bar%2B1&a%5Bb%5D=x&k=%zz%4&eq=a=b");
        assert_eq!(scalar(&p, "search"), Some(json!("café bar+1")));
        // Encoded brackets are brackets, as PHP decodes the key before splitting it.
        assert_eq!(scalar(&p, "a"), Some(json!({"b": "x"})));
        assert_eq!(scalar(&p, "k"), Some(json!("%zz%4")));
        assert_eq!(scalar(&p, "eq"), Some(json!("a=b")));
    }

    #[test]
    fn names_are_case_sensitive() {
        let p = form("Page=2");
        assert!(p.contains("Page"));
        assert!(!p.contains("page"));
        assert!(p.scalar("page").is_none());
        assert!(p.list("page").is_none());
    }

    #[test]
    fn empty_names_are_dropped() {
        let p = form("=1&[a]=2&%5B%5D=3");
        assert_eq!(p.names().count(), 0);
    }

    #[test]
    fn last_scalar_occurrence_wins() {
        let p = form("page=1&page=2");
        assert_eq!(scalar(&p, "page"), Some(json!("2")));
    }

    #[test]
    fn later_shape_replaces_earlier_for_scalars() {
        assert_eq!(scalar(&form("a=1&a[]=2"), "a"), Some(json!(["2"])));
        assert_eq!(scalar(&form("a[]=1&a=2"), "a"), Some(json!("2")));
    }

    #[test]
    fn bracketed_values_for_scalars_are_returned_as_is() {
        assert_eq!(scalar(&form("search[]=x"), "search"), Some(json!(["x"])));
        assert_eq!(scalar(&form("page[a]=1"), "page"), Some(json!({"a": "1"})));
    }

    // Bracket syntax

    #[test]
    fn brackets_append_and_set_members() {
        let p = form("a[]=x&a[]=y&o[k]=1&o[j]=2&n[1][phone]=5&n[1][email]=e&n[0][name]=z");
        assert_eq!(scalar(&p, "a"), Some(json!(["x", "y"])));
        assert_eq!(scalar(&p, "o"), Some(json!({"k": "1", "j": "2"})));
        assert_eq!(
            scalar(&p, "n"),
            Some(json!([{"name": "z"}, {"phone": "5", "email": "e"}]))
        );
    }

    #[test]
    fn integer_keys_become_a_list_ordered_by_key() {
        let p = form("a[2]=c&a[0]=a&a[10]=d&a[1]=b");
        assert_eq!(scalar(&p, "a"), Some(json!(["a", "b", "c", "d"])));
        // Non-canonical integers are string keys, as in PHP.
        assert_eq!(
            scalar(&form("a[01]=x&a[1]=y"), "a"),
            Some(json!({"01": "x", "1": "y"}))
        );
        assert_eq!(scalar(&form("a[-1]=x"), "a"), Some(json!({"-1": "x"})));
    }

    #[test]
    fn append_continues_after_the_largest_integer_key() {
        let p = form("a[5]=x&a[]=y&a[k]=z&a[]=w");
        assert_eq!(
            scalar(&p, "a"),
            Some(json!({"5": "x", "6": "y", "k": "z", "7": "w"}))
        );
    }

    #[test]
    fn repeated_bracket_key_replaces_in_place() {
        assert_eq!(
            scalar(&form("a[0]=x&a[1]=y&a[0]=z"), "a"),
            Some(json!(["z", "y"]))
        );
    }

    #[test]
    fn leaf_and_branch_replace_each_other_like_php() {
        assert_eq!(
            scalar(&form("a[x]=1&a[x][y]=2"), "a"),
            Some(json!({"x": {"y": "2"}}))
        );
        assert_eq!(
            scalar(&form("a[x][y]=2&a[x]=1"), "a"),
            Some(json!({"x": "1"}))
        );
    }

    #[test]
    fn malformed_brackets_follow_php() {
        // Text after a closing bracket that is not another group is ignored.
        assert_eq!(scalar(&form("a[x]y[z]=1"), "a"), Some(json!({"x": "1"})));
        // An unclosed later group is ignored too.
        assert_eq!(scalar(&form("a[x][y=1"), "a"), Some(json!({"x": "1"})));
        // An unclosed first group makes the whole key a (different, unknown) name.
        let p = form("a[x=1");
        assert!(!p.contains("a"));
        assert_eq!(scalar(&p, "a[x"), Some(json!("1")));
        assert_eq!(scalar(&form("a]=1"), "a]"), Some(json!("1")));
    }

    #[test]
    fn form_key_parsing() {
        assert_eq!(FormKey::parse("a"), FormKey::Plain("a"));
        assert_eq!(
            FormKey::parse("a[][x]"),
            FormKey::Bracketed {
                name: "a",
                path: vec![None, Some("x")]
            }
        );
        assert_eq!(FormKey::parse("a[x"), FormKey::Plain("a[x"));
    }

    #[test]
    fn bracket_nesting_is_limited_to_eight_levels() {
        let p = form("a[b][c][d][e][f][g][h][i]=v");
        let mut want = json!("v");
        for key in ["b", "c", "d", "e", "f", "g", "h", "i"].into_iter().rev() {
            want = json!({ key: want });
        }
        assert_eq!(scalar(&p, "a"), Some(want));

        let nine = form("ok=1&a[1][2][3][4][5][6][7][8][9]=v");
        assert_eq!(scalar_err(&nine, "a"), SubCode::InvalidFormat);
        assert_eq!(list_err(&nine, "a"), SubCode::InvalidFormat);
        assert_eq!(scalar(&nine, "ok"), Some(json!("1")));
        let appends = form(&format!("a{}=v", "[]".repeat(10_000)));
        assert_eq!(scalar_err(&appends, "a"), SubCode::InvalidFormat);
    }

    #[test]
    fn malformed_names_stay_malformed() {
        let p = form("a=1&a[1][2][3][4][5][6][7][8][9]=v&a=2");
        assert_eq!(scalar_err(&p, "a"), SubCode::InvalidFormat);
        assert!(p.contains("a"));
    }

    // Invalid UTF-8

    #[test]
    fn invalid_utf8_value_is_recorded() {
        let p = form("search=%FF%FE&title=ok&t[]=%C3");
        assert_eq!(scalar_err(&p, "search"), SubCode::InvalidCharacters);
        assert_eq!(list_err(&p, "search"), SubCode::InvalidCharacters);
        assert_eq!(scalar_err(&p, "t"), SubCode::InvalidCharacters);
        assert_eq!(scalar(&p, "title"), Some(json!("ok")));
        // Raw (unescaped) bytes are checked the same way.
        let raw = RawParams::from_form(b"search=\xff");
        assert_eq!(scalar_err(&raw, "search"), SubCode::InvalidCharacters);
    }

    #[test]
    fn invalid_utf8_keys() {
        let p = form("%FF=1&a[%FF]=2&b=3");
        assert_eq!(p.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(scalar_err(&p, "a"), SubCode::InvalidCharacters);
    }

    #[test]
    fn nul_passes_through_for_the_string_validator() {
        assert_eq!(scalar(&form("a=x%00y"), "a"), Some(json!("x\u{0}y")));
    }

    // List spellings

    #[test]
    fn list_spellings_table() {
        let want = strings(&["3", "7"]);
        for query in [
            "categories=3,7",
            "categories[]=3&categories[]=7",
            "categories[0]=3&categories[1]=7",
            "categories[1]=7&categories[0]=3",
            "categories=3&categories=7",
        ] {
            assert_eq!(
                list(&form(query), "categories"),
                Some(want.clone()),
                "{query}"
            );
        }
        assert_eq!(
            list(&form("categories=3,7&categories[]=9"), "categories"),
            Some(strings(&["3", "7", "9"]))
        );
        assert_eq!(
            list(&form("c[]=1&c=2,3&c[]=4&c[]=5&c=6"), "c"),
            Some(strings(&["1", "2", "3", "4", "5", "6"]))
        );
    }

    #[test]
    fn list_whitespace_and_empty_items() {
        assert_eq!(
            list(&form("categories=+3+,+,7"), "categories"),
            Some(strings(&["3", "7"]))
        );
        assert_eq!(list(&form("categories="), "categories"), Some(Vec::new()));
        assert_eq!(list(&form("categories"), "categories"), Some(Vec::new()));
        assert_eq!(
            list(&form("categories=,+,"), "categories"),
            Some(Vec::new())
        );
    }

    #[test]
    fn list_items_in_brackets_are_not_split() {
        assert_eq!(list(&form("c[]=3,7"), "c"), Some(strings(&["3,7"])));
    }

    #[test]
    fn list_of_objects() {
        let p = form("organizer[0][name]=A&organizer[1][name]=B");
        assert_eq!(
            list(&p, "organizer"),
            Some(vec![json!({"name": "A"}), json!({"name": "B"})])
        );
    }

    #[test]
    fn list_refuses_objects_with_other_keys() {
        assert_eq!(list_err(&form("c[a]=3"), "c"), SubCode::InvalidType);
        assert_eq!(list_err(&form("c[0]=3&c[a]=4"), "c"), SubCode::InvalidType);
    }

    #[test]
    fn list_item_limit() {
        let at_limit = vec!["1"; MAX_LIST_ITEMS].join(",");
        assert_eq!(
            list(&form(&format!("c={at_limit}")), "c").map(|l| l.len()),
            Some(MAX_LIST_ITEMS)
        );
        assert_eq!(
            list_err(&form(&format!("c={at_limit},1")), "c"),
            SubCode::TooManyItems
        );
        assert_eq!(
            list_err(&form(&format!("c={at_limit}&c[]=1")), "c"),
            SubCode::TooManyItems
        );
    }

    #[test]
    fn many_pairs_parse_quickly() {
        // Quadratic lookups would make this take minutes.
        let query: String = (0..100_000).map(|i| format!("a[{i}]=1&b[]=2&")).collect();
        let p = form(&query);
        assert_eq!(
            scalar(&p, "a").map(|a| a.as_array().map(Vec::len)),
            Some(Some(100_000))
        );
        assert_eq!(list_err(&p, "b"), SubCode::TooManyItems);
    }

    // JSON objects as parameters

    #[test]
    fn json_object_params() {
        let body = parse_json_body(
            br#"{"title":"T","venue":null,"categories":[3,"7"],"tags":"a, b","featured":true,"n":5,"o":{"1":"b","0":"a"},"x":{"k":1}}"#,
        )
        .unwrap();
        let p = RawParams::from_json_object(body);
        assert!(!p.contains("venue"));
        assert!(p.scalar("venue").is_none());
        assert_eq!(scalar(&p, "title"), Some(json!("T")));
        assert_eq!(scalar(&p, "featured"), Some(json!(true)));
        assert_eq!(list(&p, "categories"), Some(vec![json!(3), json!("7")]));
        assert_eq!(list(&p, "tags"), Some(strings(&["a", "b"])));
        assert_eq!(list(&p, "featured"), Some(vec![json!(true)]));
        assert_eq!(list(&p, "n"), Some(vec![json!(5)]));
        assert_eq!(list(&p, "o"), Some(strings(&["a", "b"])));
        assert_eq!(list_err(&p, "x"), SubCode::InvalidType);
        assert_eq!(
            p.names().collect::<Vec<_>>(),
            ["title", "categories", "tags", "featured", "n", "o", "x"]
        );
    }

    #[test]
    fn json_array_items_limit() {
        let items: Vec<Value> = (0..=MAX_LIST_ITEMS).map(|i| json!(i)).collect();
        let mut map = Map::new();
        map.insert("include".to_owned(), Value::Array(items));
        let p = RawParams::from_json_object(map);
        assert_eq!(list_err(&p, "include"), SubCode::TooManyItems);
    }

    // Body over query

    #[test]
    fn body_replaces_query_names_whole() {
        let mut p = form("categories=1&categories=2&page=3&bad=%FF&keep=k");
        let mut body = Map::new();
        body.insert("categories".to_owned(), json!([9]));
        body.insert("bad".to_owned(), json!("fixed"));
        body.insert("title".to_owned(), json!("T"));
        body.insert("page".to_owned(), Value::Null);
        p.overlay(RawParams::from_json_object(body));
        assert_eq!(list(&p, "categories"), Some(vec![json!(9)]));
        assert_eq!(scalar(&p, "bad"), Some(json!("fixed")));
        // A JSON null in the body is absent, so the query value stays.
        assert_eq!(scalar(&p, "page"), Some(json!("3")));
        assert_eq!(
            p.names().collect::<Vec<_>>(),
            ["categories", "page", "bad", "keep", "title"]
        );

        let mut q = form("a=1");
        q.overlay(form("a=%FF"));
        assert_eq!(scalar_err(&q, "a"), SubCode::InvalidCharacters);
    }

    #[test]
    fn new_is_empty() {
        let p = RawParams::new();
        assert_eq!(p.names().count(), 0);
        assert!(!p.contains("a"));
    }

    // JSON bodies

    fn json_err(body: &[u8]) -> u8 {
        parse_json_body(body).expect_err("refused").json_error_code
    }

    #[test]
    fn json_body_object_and_order() {
        let map = parse_json_body(br#" {"b":1,"a":{"x":[1,{"y":null}]},"b":2} "#).unwrap();
        // Duplicate keys: the last value wins.
        assert_eq!(map.get("b"), Some(&json!(2)));
        assert_eq!(map.keys().collect::<Vec<_>>(), ["b", "a"]);
    }

    #[test]
    fn json_body_skips_a_bom() {
        let map = parse_json_body(b"\xEF\xBB\xBF{\"a\":1}").unwrap();
        assert_eq!(map.get("a"), Some(&json!(1)));
    }

    #[test]
    fn json_body_must_be_an_object() {
        for body in ["[]", "[1]", "\"s\"", "1", "true", "false", "null"] {
            assert_eq!(json_err(body.as_bytes()), 4, "{body}");
        }
    }

    #[test]
    fn json_body_syntax_errors() {
        for body in [
            "",
            "{",
            "{\"a\":}",
            "{'a':1}",
            "{\"a\":1,}",
            "{\"a\":1} x",
            "{\"a\":1}{}",
        ] {
            let e = parse_json_body(body.as_bytes()).unwrap_err();
            assert_eq!(e.json_error_code, 4, "{body:?}");
            assert_eq!(e.message, "Syntax error");
        }
        assert_eq!(json_err(b"\xEF\xBB\xBF"), 4);
    }

    #[test]
    fn json_body_must_be_utf8() {
        let e = parse_json_body(b"{\"a\":\"\xff\"}").unwrap_err();
        assert_eq!(e.json_error_code, 5);
        assert_eq!(json_err(b"\xEF\xBB{}"), 5);
    }

    fn nested(levels: usize) -> String {
        // The top-level object is level 1; each array adds one.
        let inner = levels - 1;
        format!("{{\"a\":{}1{}}}", "[".repeat(inner), "]".repeat(inner))
    }

    #[test]
    fn json_body_depth_limit() {
        assert!(parse_json_body(nested(64).as_bytes()).is_ok());
        let e = parse_json_body(nested(65).as_bytes()).unwrap_err();
        assert_eq!(e.json_error_code, 1);
        assert_eq!(e.message, "Maximum stack depth exceeded");
        assert_eq!(json_err(nested(200).as_bytes()), 1);
        // Far beyond serde_json's own limit, and unterminated: still a depth error, no overflow.
        assert_eq!(json_err("[".repeat(1_000_000).as_bytes()), 1);
        assert_eq!(
            json_err(format!("{{\"a\":{}", "{\"b\":".repeat(500_000)).as_bytes()),
            1
        );
    }

    #[test]
    fn json_body_depth_ignores_brackets_in_strings() {
        let body = format!(r#"{{"a":"{}\"[{{","b":[]}}"#, "[{".repeat(100));
        assert!(parse_json_body(body.as_bytes()).is_ok());
    }

    #[test]
    fn json_body_first_problem_wins() {
        // A syntax error before the 65th level is a syntax error...
        assert_eq!(
            json_err(format!("{{\"a\":x,{}", "[".repeat(100)).as_bytes()),
            4
        );
        assert_eq!(json_err(format!("[1]{}", "[".repeat(100)).as_bytes()), 4);
        // ...and one after it is a depth error.
        assert_eq!(json_err(format!("{}x", "[".repeat(100)).as_bytes()), 1);
    }
}
