//! Event cost: the stored list of cost strings with its currency symbol
//! and position, how a `cost` write value becomes one, and the three readings of it — the
//! formatted `cost`, the `cost_details` object and the `json_ld` offer price.

use std::collections::HashSet;
use std::ops::Range;

use serde_json::{json, Value};

use crate::values::slug::sanitize;
use crate::values::{Invalid, SubCode, MAX_LIST_ITEMS, MAX_STRING_BYTES};

const COST_TYPE: &str = "must be a string, a number or a list of strings and numbers.";

/// The symbol used when formatting a cost that has none stored.
const DEFAULT_SYMBOL: &str = "$";

/// The stored cost of an event.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cost {
    pub values: Vec<String>,
    pub currency_symbol: String,
    pub currency_position: String,
}

impl Cost {
    /// Parses a `cost` write value (JSON string, number, or array of strings/numbers;
    /// "" or [] clear → `Cost::default()`).
    pub fn from_write(value: &Value) -> Result<Cost, Invalid> {
        let values = match value {
            Value::Array(items) => {
                if items.len() > MAX_LIST_ITEMS {
                    return Err(Invalid::new(
                        SubCode::TooManyItems,
                        format!("must have at most {MAX_LIST_ITEMS} items."),
                    ));
                }
                items.iter().map(scalar).collect::<Result<Vec<_>, _>>()?
            }
            single => {
                let value = scalar(single)?;
                if value.is_empty() {
                    return Ok(Cost::default());
                }
                vec![value]
            }
        };
        // The elements of the symbol rule: each array item as it is, commas and all, but a
        // single string cut at commas, as the plugin does; so `1,000$` yields the elements `1`
        // and `000$`, whose candidates differ.
        let elements: Vec<&str> = match value {
            Value::Array(_) => values.iter().map(|v| v.trim()).collect(),
            _ => values
                .iter()
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .collect(),
        };
        let currency_symbol = currency_symbol(&elements);
        let currency_position = currency_position(&elements, &currency_symbol).to_owned();
        Ok(Cost {
            values,
            currency_symbol,
            currency_position,
        })
    }

    /// The formatted `cost` string ("" when none).
    pub fn formatted(&self) -> String {
        self.with_symbol("Free", |number| number.text.to_owned())
    }

    /// The cost for a reader: `free` for a zero amount and each other amount as `amount`
    /// writes its plain value (`1000.5` for `1,000.50`), with the stored currency symbol.
    pub fn formatted_with(&self, amount: impl Fn(&str) -> String, free: &str) -> String {
        let formatted = self.with_symbol(free, |number| amount(&number.value));
        // A cost written as the word alone means a zero amount (see `offer_price`).
        if formatted.eq_ignore_ascii_case("free") {
            return free.to_owned();
        }
        formatted
    }

    /// The formatting rules with the currency symbol placed around each amount that `amount`
    /// writes (`free` for a zero one); "" when there is no cost.
    fn with_symbol(&self, free: &str, amount: impl Fn(&Number) -> String) -> String {
        let (symbol, postfix) = match self.currency_symbol.as_str() {
            "" => (DEFAULT_SYMBOL, false),
            stored => (stored, self.currency_position == "postfix"),
        };
        self.format(|number| {
            if number.is_free() {
                free.to_owned()
            } else if postfix {
                format!("{}{symbol}", amount(number))
            } else {
                format!("{symbol}{}", amount(number))
            }
        })
        .unwrap_or_default()
    }

    /// The `cost_details` object, keys in the order currency_symbol, currency_code,
    /// currency_position, values.
    pub fn details(&self) -> Value {
        let values: Vec<String> = self
            .tokens()
            .into_iter()
            .map(|token| match token {
                Token::Number(number) => number.value,
                Token::Text(text) => sanitize(text),
            })
            .collect();
        json!({
            "currency_symbol": self.currency_symbol,
            "currency_code": "",
            "currency_position": self.currency_position,
            "values": values,
        })
    }

    /// The `json_ld` offers.price: formatted without currency symbol, "Free" → "0"; None when
    /// `formatted()` is "".
    pub fn offer_price(&self) -> Option<String> {
        let price = self.format(|number| {
            if number.is_free() {
                "0".to_owned()
            } else {
                number.text.to_owned()
            }
        })?;
        // A text cost spelled `free` in any case means the same as a zero amount, and
        // schema.org wants a number there.
        Some(if price.eq_ignore_ascii_case("free") {
            "0".to_owned()
        } else {
            price
        })
    }

    /// The formatting rules with `render` deciding how one amount is shown; `None` when
    /// there are no tokens.
    fn format(&self, render: impl Fn(&Number) -> String) -> Option<String> {
        let tokens = self.tokens();
        let mut numbers = tokens.iter().filter_map(|token| match token {
            Token::Number(number) => Some(number),
            Token::Text(_) => None,
        });
        let formatted = match (numbers.next(), numbers.next_back()) {
            (Some(low), high) => {
                let low = render(low);
                match high.map(&render) {
                    // Distinct amounts render alike only when both round to zero; a range
                    // `Free – Free` would say nothing more than `Free`.
                    Some(high) if high != low => format!("{low} – {high}"),
                    _ => low,
                }
            }
            // Text only: the first text token is shown (with several, the plugin's min/max over
            // strings ends up at `Free`).
            (None, _) => tokens.iter().find_map(|token| match token {
                Token::Text(text) => Some((*text).to_owned()),
                Token::Number(_) => None,
            })?,
        };
        Some(formatted)
    }

    /// All tokens of the stored strings, without duplicates, sorted by numeric value.
    fn tokens(&self) -> Vec<Token<'_>> {
        let mut seen_amounts = HashSet::new();
        let mut seen_slugs = HashSet::new();
        let mut tokens = Vec::new();
        for stored in &self.values {
            let trimmed = stored.trim();
            let mut matches = numeric_matches(trimmed).peekable();
            if matches.peek().is_none() {
                // A blank string (e.g. an array item `""`) is no cost at all, not a text token
                // with an empty name and an empty slug. Text tokens are told apart by their
                // slug: they share the value 0, yet `Free` and `Donation` are not duplicates,
                // and neither is `Free` a duplicate of the amount `0`.
                if !trimmed.is_empty() && seen_slugs.insert(sanitize(trimmed)) {
                    tokens.push(Token::Text(trimmed));
                }
                continue;
            }
            for range in matches {
                let number = Number::new(&trimmed[range]);
                // Amounts are never negative (the pattern has no sign), so the bits of equal
                // values are equal; `-0.0` cannot occur.
                if seen_amounts.insert(number.amount.to_bits()) {
                    tokens.push(Token::Number(number));
                }
            }
        }
        // Stable, so text tokens (all 0) and a zero amount keep their order of occurrence.
        tokens.sort_by(|a, b| a.amount().total_cmp(&b.amount()));
        tokens
    }
}

/// One token of a stored cost string.
enum Token<'a> {
    Number(Number<'a>),
    /// A stored string without any numeric match, trimmed.
    Text(&'a str),
}

impl Token<'_> {
    /// The sort key: text tokens sort as 0.
    fn amount(&self) -> f64 {
        match self {
            Token::Number(number) => number.amount,
            Token::Text(_) => 0.0,
        }
    }
}

/// A numeric token: a match of `[.,]?[0-9]+[.,]?[0-9]*`.
struct Number<'a> {
    /// The token as written (`1,000`), which the formatted cost shows.
    text: &'a str,
    /// The value string of `cost_details.values` (`1000`).
    value: String,
    /// The value for sorting and duplicate detection. A float is exact for every amount a
    /// price list can hold; only amounts beyond about 15 significant digits could collide.
    amount: f64,
}

impl<'a> Number<'a> {
    fn new(text: &'a str) -> Number<'a> {
        let value = value_string(text);
        // The pattern allows a leading and an inner separator, which can both turn out to be
        // decimal separators (`.5.25`); like PHP's numeric conversion, the number then ends
        // before the second one.
        let end = value
            .match_indices('.')
            .nth(1)
            .map_or(value.len(), |(i, _)| i);
        let amount = value[..end]
            .parse()
            .expect("digits with at most one `.` (and at least one digit) form a float");
        Number {
            text,
            value,
            amount,
        }
    }

    /// Whether the amount is 0 to two decimals. Rounding half up, as the plugin's
    /// `number_format` does: `0.005` is `0.01`.
    fn is_free(&self) -> bool {
        self.amount < 0.005
    }
}

/// A `cost` value that becomes one stored string: a string (`""` included; a lone one clears,
/// see [`Cost::from_write`]) or a number in its shortest decimal form.
fn scalar(value: &Value) -> Result<String, Invalid> {
    match value {
        Value::String(s) if s.contains('\0') => Err(Invalid::new(
            SubCode::InvalidCharacters,
            "must not contain the NUL character.",
        )),
        Value::String(s) if s.len() > MAX_STRING_BYTES => Err(Invalid::new(
            SubCode::TooLong,
            format!("must be at most {MAX_STRING_BYTES} bytes long."),
        )),
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(match n.as_f64() {
            // Floats use `Display`, the shortest round-trip form without an exponent, so `20.0`
            // is stored as `20` and `6.5` as `6.5`, as PHP renders them. Integers keep all
            // their digits (an `f64` would round those above 2^53).
            Some(f) if n.is_f64() => f.to_string(),
            _ => n.to_string(),
        }),
        _ => Err(Invalid::new(SubCode::InvalidType, COST_TYPE)),
    }
}

/// The byte ranges of the numeric tokens of `s`, leftmost first, as a regex engine finds the
/// non-overlapping matches of `[.,]?[0-9]+[.,]?[0-9]*`.
fn numeric_matches(s: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let bytes = s.as_bytes();
    let is_separator = |i: usize| matches!(bytes.get(i), Some(b'.' | b','));
    let digits_from = |i: usize| i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut start = 0;
    std::iter::from_fn(move || {
        while start < bytes.len() {
            let begin = start;
            // The leading separator only counts when a digit follows it; without one the
            // pattern cannot match here either way.
            let digits = begin + usize::from(is_separator(begin));
            let mut end = digits_from(digits);
            if end == digits {
                start += 1;
                continue;
            }
            if is_separator(end) {
                end = digits_from(end + 1);
            }
            start = end;
            // All pattern characters are ASCII, so both ends are character boundaries.
            return Some(begin..end);
        }
        None
    })
}

/// The value string of a numeric token: thousands separators removed, the decimal
/// separator turned into `.` (`25,55` → `25.55`, `1,000` → `1000`, `6.50` → `6.50`).
fn value_string(token: &str) -> String {
    let (decimal, thousands) = match (token.rfind('.'), token.rfind(',')) {
        (Some(dot), Some(comma)) if dot > comma => ('.', ','),
        (Some(_), Some(_)) => (',', '.'),
        // Only one kind: the digits after its last occurrence decide (all ASCII, so the
        // byte count is the digit count).
        (Some(at), None) | (None, Some(at)) if token.len() - at - 1 != 3 => {
            let separator = token.as_bytes()[at] as char;
            (separator, if separator == '.' { ',' } else { '.' })
        }
        _ => ('.', ','),
    };
    token
        .chars()
        .filter(|&c| c != thousands)
        .map(|c| if c == decimal { '.' } else { c })
        .collect()
}

/// The symbol shared by every element with exactly one numeric token, once that token is
/// removed; `""` when an element has several tokens or the candidates differ.
fn currency_symbol(elements: &[&str]) -> String {
    let mut symbol: Option<String> = None;
    for element in elements {
        let mut matches = numeric_matches(element);
        let Some(token) = matches.next() else {
            continue;
        };
        if matches.next().is_some() {
            return String::new();
        }
        let candidate = format!("{}{}", &element[..token.start], &element[token.end..]);
        let candidate = candidate.trim();
        match &symbol {
            None => symbol = Some(candidate.to_owned()),
            Some(first) if first == candidate => {}
            Some(_) => return String::new(),
        }
    }
    symbol.unwrap_or_default()
}

/// `prefix` or `postfix` when every (trimmed) element containing the symbol agrees, else
/// `""`. No element contains the symbol when its candidate was cut out of the middle of an
/// element (`$ 5 USD` → `$  USD`); with nothing to agree on, the position is `""` too.
fn currency_position(elements: &[&str], symbol: &str) -> &'static str {
    if symbol.is_empty() {
        return "";
    }
    let mut positions = elements.iter().filter(|e| e.contains(symbol)).map(|e| {
        if e.starts_with(symbol) {
            "prefix"
        } else {
            "postfix"
        }
    });
    match positions.next() {
        Some(first) if positions.all(|p| p == first) => first,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(input: Value) -> Cost {
        Cost::from_write(&input).unwrap()
    }

    /// One example: (formatted, symbol, position, values).
    fn assert_row(input: Value, formatted: &str, symbol: &str, position: &str, values: &[&str]) {
        let c = cost(input.clone());
        assert_eq!(c.formatted(), formatted, "formatted {input}");
        assert_eq!(c.currency_symbol, symbol, "symbol {input}");
        assert_eq!(c.currency_position, position, "position {input}");
        assert_eq!(
            c.details(),
            json!({
                "currency_symbol": symbol,
                "currency_code": "",
                "currency_position": position,
                "values": values,
            }),
            "details {input}"
        );
    }

    fn invalid(input: Value) -> SubCode {
        Cost::from_write(&input).unwrap_err().code
    }

    fn values(input: Value) -> Vec<String> {
        let details = cost(input).details();
        serde_json::from_value(details["values"].clone()).unwrap()
    }

    // Examples, one write value each

    #[test]
    fn postfix_dollar() {
        assert_row(json!("20$"), "20$", "$", "postfix", &["20"]);
    }

    #[test]
    fn array_with_zero() {
        assert_row(
            json!(["0$", "20$", "30$"]),
            "Free – 30$",
            "$",
            "postfix",
            &["0", "20", "30"],
        );
    }

    #[test]
    fn prefix_dollar() {
        assert_row(json!("$23"), "$23", "$", "prefix", &["23"]);
    }

    #[test]
    fn plain_number() {
        assert_row(json!(20), "$20", "", "", &["20"]);
        assert_eq!(cost(json!(20)).values, ["20"]);
    }

    #[test]
    fn range_in_one_string_uses_default_symbol() {
        assert_row(
            json!("€6.50 - €8.50"),
            "$6.50 – $8.50",
            "",
            "",
            &["6.50", "8.50"],
        );
    }

    #[test]
    fn free_text() {
        assert_row(json!("Free"), "Free", "", "", &["free"]);
    }

    #[test]
    fn no_cost() {
        let none = Cost::default();
        assert_eq!(none.formatted(), "");
        assert_eq!(none.offer_price(), None);
        assert_eq!(
            serde_json::to_string(&none.details()).unwrap(),
            r#"{"currency_symbol":"","currency_code":"","currency_position":"","values":[]}"#
        );
    }

    // A composed example

    #[test]
    fn euro_postfix_range() {
        assert_row(
            json!(["10€", "25€"]),
            "10€ – 25€",
            "€",
            "postfix",
            &["10", "25"],
        );
        assert_eq!(cost(json!(["10€", "25€"])).values, ["10€", "25€"]);
    }

    #[test]
    fn details_key_order() {
        let text = serde_json::to_string(&cost(json!("$23")).details()).unwrap();
        assert_eq!(
            text,
            r#"{"currency_symbol":"$","currency_code":"","currency_position":"prefix","values":["23"]}"#
        );
    }

    // Numeric values

    #[test]
    fn separators() {
        assert_eq!(values(json!("25,55")), ["25.55"]);
        assert_eq!(values(json!("1,000")), ["1000"]);
        assert_eq!(values(json!("6.50")), ["6.50"]);
        assert_eq!(values(json!("1.000")), ["1.000"]);
        // Both kinds in one token need a leading separator: the pattern allows one more.
        assert_eq!(values(json!(",1.5")), ["1.5"]);
        assert_eq!(values(json!(".1,25")), ["1.25"]);
        // So `1.234,56` is two tokens, `1.234` (three digits: `.` is decimal) and `,56`.
        assert_eq!(values(json!("1.234,56")), [".56", "1.234"]);
        assert_eq!(values(json!(".5")), [".5"]);
        assert_eq!(values(json!("12,5")), ["12.5"]);
    }

    #[test]
    fn thousands_keep_original_text_in_formatted_cost() {
        let c = cost(json!(["$1,000", "$25,55"]));
        assert_eq!(c.formatted(), "$25,55 – $1,000");
        assert_eq!(c.details()["values"], json!(["25.55", "1000"]));
    }

    #[test]
    fn tokens_follow_the_pattern() {
        let tokens = |s| numeric_matches(s).map(|r| &s[r]).collect::<Vec<&str>>();
        assert_eq!(tokens("€6.50 - €8.50"), ["6.50", "8.50"]);
        assert_eq!(tokens("1,000,000"), ["1,000", ",000"]);
        assert_eq!(tokens("20. and .5"), ["20.", ".5"]);
        assert_eq!(tokens(". , 7"), ["7"]);
        assert_eq!(tokens("Free"), Vec::<&str>::new());
        assert_eq!(tokens("£৩5"), ["5"]);
    }

    #[test]
    fn doubled_decimal_separator_reads_the_leading_number() {
        let number = Number::new(".5.25");
        assert_eq!(number.value, ".5.25");
        assert_eq!(number.amount, 0.5);
        assert_eq!(Number::new("20,").amount, 20.0);
    }

    #[test]
    fn duplicates_by_value_keep_the_first() {
        assert_eq!(values(json!(["$10", "10.00", "$5", "10"])), ["5", "10"]);
        assert_eq!(values(json!(["6.50", "6.5"])), ["6.50"]);
        let c = cost(json!(["10.00$", "10$"]));
        assert_eq!(c.formatted(), "10.00$");
    }

    #[test]
    fn text_tokens_sort_as_zero() {
        assert_eq!(
            values(json!(["20", "Free", "Donation", "0.5"])),
            ["free", "donation", "0.5", "20"]
        );
        // A text token and the amount 0 are not duplicates; equal slugs are.
        assert_eq!(values(json!(["0", "Free", "free!"])), ["0", "free"]);
    }

    #[test]
    fn text_with_numbers_formats_numbers_only() {
        let c = cost(json!(["Free", "20$"]));
        assert_eq!(c.currency_symbol, "$");
        assert_eq!(c.currency_position, "postfix");
        assert_eq!(c.formatted(), "20$");
        assert_eq!(c.details()["values"], json!(["free", "20"]));
    }

    #[test]
    fn several_texts_show_the_first() {
        let c = cost(json!(["Donation", "Pay what you want"]));
        assert_eq!(c.formatted(), "Donation");
        assert_eq!(
            c.details()["values"],
            json!(["donation", "pay-what-you-want"])
        );
    }

    // Formatting

    #[test]
    fn zero_is_free() {
        assert_eq!(cost(json!(0)).formatted(), "Free");
        assert_eq!(cost(json!("0")).formatted(), "Free");
        assert_eq!(cost(json!("$0.00")).formatted(), "Free");
        assert_eq!(cost(json!("0.004")).formatted(), "Free");
        assert_eq!(cost(json!("0.005")).formatted(), "$0.005");
        assert_eq!(cost(json!(["0", "0.001"])).formatted(), "Free");
    }

    #[test]
    fn mixed_positions() {
        let c = cost(json!(["$10", "20$"]));
        assert_eq!(c.currency_symbol, "$");
        assert_eq!(c.currency_position, "");
        // No position: the symbol goes before the number.
        assert_eq!(c.formatted(), "$10 – $20");

        let c = cost(json!(["€10", "20 €"]));
        assert_eq!(c.currency_symbol, "€");
        assert_eq!(c.currency_position, "");
        assert_eq!(c.formatted(), "€10 – €20");
    }

    #[test]
    fn trailing_separator_belongs_to_the_token() {
        // The symbol rule cuts the string at the comma, but the tokens of the stored string
        // keep it, as in the plugin.
        let c = cost(json!("€10, 20€"));
        assert_eq!(
            (c.currency_symbol.as_str(), c.currency_position.as_str()),
            ("€", "")
        );
        assert_eq!(c.formatted(), "€10, – €20");
        assert_eq!(c.details()["values"], json!(["10.", "20"]));
    }

    #[test]
    fn symbol_from_comma_separated_string() {
        let c = cost(json!("10 EUR, 25 EUR"));
        assert_eq!(c.currency_symbol, "EUR");
        assert_eq!(c.currency_position, "postfix");
        assert_eq!(c.formatted(), "10EUR – 25EUR");
        assert_eq!(c.values, ["10 EUR, 25 EUR"]);
    }

    #[test]
    fn no_symbol_when_candidates_differ_or_an_element_has_two_numbers() {
        assert_eq!(cost(json!(["$10", "€20"])).currency_symbol, "");
        assert_eq!(cost(json!(["$10", "20"])).currency_symbol, "");
        assert_eq!(cost(json!(["$10", "$20-30"])).currency_symbol, "");
        // A string is cut at commas, so a thousands separator splits it.
        assert_eq!(cost(json!("$1,000")).currency_symbol, "");
        // Array items are not cut.
        let c = cost(json!(["$1,000"]));
        assert_eq!(
            (c.currency_symbol.as_str(), c.currency_position.as_str()),
            ("$", "prefix")
        );
    }

    #[test]
    fn symbol_with_space_and_text_elements() {
        let c = cost(json!(["Free", "€ 5"]));
        assert_eq!(
            (c.currency_symbol.as_str(), c.currency_position.as_str()),
            ("€", "prefix")
        );
        assert_eq!(c.formatted(), "€5");
        // Cut from the middle of the element: no element contains the candidate.
        let c = cost(json!("$ 5 USD"));
        assert_eq!(
            (c.currency_symbol.as_str(), c.currency_position.as_str()),
            ("$  USD", "")
        );
    }

    // Offer price

    #[test]
    fn offer_price() {
        assert_eq!(cost(json!("20$")).offer_price().as_deref(), Some("20"));
        assert_eq!(
            cost(json!(["0$", "20$", "30$"])).offer_price().as_deref(),
            Some("0 – 30")
        );
        assert_eq!(
            cost(json!("€6.50 - €8.50")).offer_price().as_deref(),
            Some("6.50 – 8.50")
        );
        assert_eq!(cost(json!("Free")).offer_price().as_deref(), Some("0"));
        assert_eq!(cost(json!(0)).offer_price().as_deref(), Some("0"));
        assert_eq!(
            cost(json!("Donation")).offer_price().as_deref(),
            Some("Donation")
        );
        assert_eq!(cost(json!([""])).offer_price(), None);
    }

    // Writes

    #[test]
    fn clearing() {
        assert_eq!(cost(json!("")), Cost::default());
        assert_eq!(cost(json!([])), Cost::default());
    }

    #[test]
    fn blank_items_are_no_tokens() {
        let c = cost(json!(["", "  "]));
        assert_eq!(c.formatted(), "");
        assert_eq!(c.details()["values"], json!([]));
        assert_eq!(cost(json!(" ")).formatted(), "");
    }

    #[test]
    fn numbers_are_stored_in_shortest_form() {
        assert_eq!(
            cost(json!([20.0, 6.5, -3, 0.1, 1e21])).values,
            ["20", "6.5", "-3", "0.1", "1000000000000000000000"]
        );
        assert_eq!(cost(json!(u64::MAX)).values, [u64::MAX.to_string()]);
    }

    #[test]
    fn mixed_array_of_strings_and_numbers() {
        let c = cost(json!(["$5", 10]));
        assert_eq!(c.values, ["$5", "10"]);
        assert_eq!(c.formatted(), "$5 – $10");
    }

    #[test]
    fn invalid_inputs() {
        assert_eq!(invalid(json!({"price": 5})), SubCode::InvalidType);
        assert_eq!(invalid(json!(true)), SubCode::InvalidType);
        assert_eq!(invalid(json!(false)), SubCode::InvalidType);
        assert_eq!(invalid(json!(["5", {"price": 5}])), SubCode::InvalidType);
        assert_eq!(invalid(json!(["5", true])), SubCode::InvalidType);
        assert_eq!(invalid(json!([["5"]])), SubCode::InvalidType);
        assert_eq!(invalid(json!(null)), SubCode::InvalidType);
        assert_eq!(
            Cost::from_write(&json!(true)).unwrap_err().reason,
            COST_TYPE
        );
    }

    #[test]
    fn limits() {
        assert_eq!(invalid(json!("a\0b")), SubCode::InvalidCharacters);
        assert_eq!(invalid(json!(["5", "\0"])), SubCode::InvalidCharacters);
        assert_eq!(
            invalid(json!("1".repeat(MAX_STRING_BYTES + 1))),
            SubCode::TooLong
        );
        assert!(Cost::from_write(&json!("1".repeat(MAX_STRING_BYTES))).is_ok());
        let items = vec![json!("1"); MAX_LIST_ITEMS];
        assert!(Cost::from_write(&Value::Array(items.clone())).is_ok());
        let too_many = [items, vec![json!("1")]].concat();
        assert_eq!(invalid(Value::Array(too_many)), SubCode::TooManyItems);
    }

    #[test]
    fn storage_round_trip() {
        let c = cost(json!(["10€", "25€"]));
        let stored = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Cost>(&stored).unwrap(), c);
    }
}
