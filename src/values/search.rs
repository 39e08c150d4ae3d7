//! Search (docs/api.md, "Search"): the analysis of queries and field text, word matching with
//! stems, prefixes and typo tolerance, phrases and exclusions, and the relevance score of
//! `orderby=relevance`.

use rust_stemmers::{Algorithm, Stemmer};
use std::cell::RefCell;
use unicode_normalization::char::is_combining_mark;

use super::language::Language;
use crate::values::slug::{fold, fold_into};
use crate::values::text::{decode_entities, strip_tags};

/// Query words of at least this many characters (folded) also match within one edit.
const TYPO_MIN_CHARS: usize = 5;

/// Score of a query word by how it matches, see [`SearchQuery::score`].
const STEM_SCORE: f32 = 4.0;
const PREFIX_SCORE: f32 = 2.0;
const TYPO_SCORE: f32 = 1.0;
/// Factor for a match in the first field (title or name). Below `PREFIX_SCORE / TYPO_SCORE`
/// and `STEM_SCORE / PREFIX_SCORE`, so that the kind of match outranks the field.
const TITLE_FACTOR: f32 = 1.5;

/// One analysed query word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueryWord {
    /// Lower-cased and accent-folded (step 3 of [`analyze`]).
    pub folded: String,
    /// The language's Snowball stem of `folded` (step 4).
    pub stem: String,
}

/// A parsed `search` value: required words, quoted phrases and excluded words.
///
/// - Words outside quotes are required: each must match a word of some field.
/// - `"…"` is a phrase: its words must follow each other in one field, each equal as a stem.
///   An unbalanced quote is closed at the end of the query.
/// - `-…` at the start of the query or after whitespace is an exclusion, up to the next
///   whitespace or quote (`-"…"` excludes a quoted part). A record where its words follow each
///   other in one field, each equal as a stem or as a prefix, is removed; an exclusion is
///   usually a single word, but `-foo.bar` is split like any text, into `foo` `bar`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    language: Language,
    /// The distinct required words and phrase words, in query order; see [`SearchQuery::words`].
    words: Vec<QueryWord>,
    phrases: Vec<Vec<QueryWord>>,
    exclusions: Vec<Vec<QueryWord>>,
}

/// How a query word matches a field word, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    Typo,
    Prefix,
    Stem,
}

impl SearchQuery {
    /// Parses a `search` value (already validated as a non-empty string) with the analyzer of
    /// the list's language.
    pub fn parse(query: &str, language: Language) -> SearchQuery {
        let mut parsed = SearchQuery {
            language,
            words: Vec::new(),
            phrases: Vec::new(),
            exclusions: Vec::new(),
        };
        let mut rest = query;
        let mut after_space = true;
        while let Some(c) = rest.chars().next() {
            if c.is_whitespace() {
                rest = &rest[c.len_utf8()..];
                after_space = true;
                continue;
            }
            let excluded = c == '-' && after_space;
            if excluded {
                rest = &rest[1..];
            }
            after_space = false;
            let (part, quoted, next) = match rest.strip_prefix('"') {
                Some(body) => match body.find('"') {
                    Some(end) => (&body[..end], true, &body[end + 1..]),
                    None => (body, true, ""),
                },
                None => {
                    let end = rest
                        .find(|c: char| c.is_whitespace() || c == '"')
                        .unwrap_or(rest.len());
                    (&rest[..end], false, &rest[end..])
                }
            };
            rest = next;
            let words: Vec<QueryWord> = analyze_plain(part, language)
                .map(|(folded, stem)| QueryWord { folded, stem })
                .collect();
            if words.is_empty() {
                continue;
            }
            if excluded {
                parsed.exclusions.push(words);
                continue;
            }
            for word in &words {
                // A repeated word counts once, for matching and for the score.
                if !parsed.words.iter().any(|w| w.folded == word.folded) {
                    parsed.words.push(word.clone());
                }
            }
            if quoted {
                parsed.phrases.push(words);
            }
        }
        parsed
    }

    /// True when the query has no word, phrase or exclusion (only spaces or punctuation): it
    /// then filters nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.words.is_empty() && self.exclusions.is_empty()
    }

    /// Whether a record whose searchable fields hold `fields` (stored text, HTML allowed)
    /// matches: every word matches some word of some field (equal stem, folded prefix, or for
    /// query words of 5+ characters one edit), every phrase appears in one field, and no
    /// exclusion does.
    pub fn matches(&self, fields: &[&str]) -> bool {
        if self.is_empty() {
            return true;
        }
        let fields = self.analyze_fields(fields);
        self.words.iter().all(|q| best_match(q, &fields).is_some())
            && self.phrases.iter().all(|phrase| {
                fields
                    .iter()
                    .any(|field| contains_sequence(field, phrase, |q, w| q.stem == w.1))
            })
            && !self.exclusions.iter().any(|exclusion| {
                fields.iter().any(|field| {
                    contains_sequence(field, exclusion, |q, w| {
                        q.stem == w.1 || w.0.starts_with(&q.folded)
                    })
                })
            })
    }

    /// The relevance of a record for `orderby=relevance`, `fields[0]` being its title or name.
    ///
    /// The score is the sum over the distinct query words ([`SearchQuery::words`]) of the best
    /// value the word reaches on any word of any field:
    ///
    /// `value = kind × place`, with `kind` = 4 for an equal stem, 2 for a prefix, 1 for a match
    /// within one edit, and `place` = 1.5 in `fields[0]`, 1 elsewhere.
    ///
    /// The values order as stem in title (6) > stem elsewhere (4) > prefix in title (3) >
    /// prefix elsewhere (2) > typo in title (1.5) > typo elsewhere (1): the kind of match
    /// decides first, the field second. A word that matches nowhere adds 0. The score needs no
    /// collection statistics (there is no IDF), so records are scored one at a time and the
    /// same record always gets the same score.
    pub fn score(&self, fields: &[&str]) -> f32 {
        let fields = self.analyze_fields(fields);
        self.words
            .iter()
            .filter_map(|q| best_match(q, &fields))
            .map(|(strength, field)| {
                let kind = match strength {
                    Strength::Stem => STEM_SCORE,
                    Strength::Prefix => PREFIX_SCORE,
                    Strength::Typo => TYPO_SCORE,
                };
                if field == 0 {
                    kind * TITLE_FACTOR
                } else {
                    kind
                }
            })
            .sum()
    }

    /// The distinct required words, phrase words included, in query order: each word's
    /// folded form and stem. Every matching record has, for each of them, a field word that
    /// matches it by the word rules, so an index may use them to narrow the candidates.
    /// Exclusions are not included.
    pub(crate) fn words(&self) -> &[QueryWord] {
        &self.words
    }

    /// The quoted phrases, each a run of words that must follow each other in one field.
    pub(crate) fn phrases(&self) -> &[Vec<QueryWord>] {
        &self.phrases
    }

    /// The exclusions, each a run of one or more words.
    pub(crate) fn exclusions(&self) -> &[Vec<QueryWord>] {
        &self.exclusions
    }

    fn analyze_fields(&self, fields: &[&str]) -> Vec<Vec<(String, String)>> {
        fields
            .iter()
            .map(|field| analyze(field, self.language))
            .collect()
    }
}

/// Analysis of field text in four steps: (1) HTML tags removed and character references
/// decoded, (2) split at every character that is not a letter or digit, (3) lower-cased and
/// folded, (4) stemmed. Returns `(folded, stem)` per word, in text order.
pub fn analyze(text: &str, language: Language) -> Vec<(String, String)> {
    analyze_plain(&decode_entities(&strip_tags(text)), language).collect()
}

/// Steps 1–3 of field text, word by word: `f` sees each folded word, in text order, unstemmed
/// (what prefix and typo matching look at). The words are lent, not allocated one by one:
/// indexing analyses every text of every document.
pub(crate) fn for_each_folded_word(text: &str, mut f: impl FnMut(&str)) {
    let plain = decode_entities(&strip_tags(text));
    let mut folded = String::new();
    for word in split_words(&plain) {
        fold_into(word, &mut folded);
        cap_word(&mut folded);
        // A word of marks alone folds to nothing.
        if !folded.is_empty() {
            f(&folded);
        }
    }
}

/// Steps 2–4, for text without markup (the query itself is not HTML).
fn analyze_plain(text: &str, language: Language) -> impl Iterator<Item = (String, String)> + '_ {
    words(text).map(move |folded| {
        let stem = stem(&folded, language);
        (folded, stem)
    })
}

/// Longest folded word kept whole, in bytes; longer words are indexed and searched by their
/// first [`MAX_WORD_BYTES`] (the index refuses terms of 64 KiB, and no real word comes near).
const MAX_WORD_BYTES: usize = 240;

/// Cuts a folded word to [`MAX_WORD_BYTES`], at a character boundary.
fn cap_word(folded: &mut String) {
    if folded.len() > MAX_WORD_BYTES {
        let mut end = MAX_WORD_BYTES;
        while !folded.is_char_boundary(end) {
            end -= 1;
        }
        folded.truncate(end);
    }
}

/// Steps 2–3: split, lower-cased and folded.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    split_words(text)
        .map(|word| {
            let mut folded = fold(word);
            cap_word(&mut folded);
            folded
        })
        // A word of marks alone folds to nothing.
        .filter(|folded| !folded.is_empty())
}

/// Step 2: the words of a text, as written.
fn split_words(text: &str) -> impl Iterator<Item = &str> {
    // Combining marks belong to the word they follow, so that decomposed text (NFD) splits as
    // its composed form does; folding then drops them. ASCII (most text) has no combining
    // marks and a cheaper test for letters and digits.
    text.split(|c: char| {
        if c.is_ascii() {
            !c.is_ascii_alphanumeric()
        } else {
            !c.is_alphanumeric() && !is_combining_mark(c)
        }
    })
    .filter(|word| !word.is_empty())
}

/// Distinct words whose stems a thread remembers per language before it starts over.
const REMEMBERED_STEMS: usize = 50_000;

thread_local! {
    /// Stems of words seen before, per language (in `Language::ALL` order). Text repeats its
    /// words, and a Snowball stem costs several times a lookup: indexing a long description
    /// stemmed every word afresh.
    static STEMS: RefCell<[foldhash::HashMap<String, String>; 3]> = RefCell::default();
}

/// Step 4: the language's Snowball stem of a folded word.
pub(crate) fn stem(folded: &str, language: Language) -> String {
    with_stem(folded, language, str::to_string)
}

/// [`stem`], lent to `f` instead of copied (`f` must not stem in turn).
pub(crate) fn with_stem<T>(folded: &str, language: Language, f: impl FnOnce(&str) -> T) -> T {
    STEMS.with(|stems| {
        let mut stems = stems.borrow_mut();
        let slot = Language::ALL
            .iter()
            .position(|l| *l == language)
            .expect("every language is in ALL");
        let known = &mut stems[slot];
        if let Some(stem) = known.get(folded) {
            return f(stem);
        }
        let stem = stemmer(language).stem(folded).into_owned();
        if known.len() >= REMEMBERED_STEMS {
            known.clear();
        }
        let out = f(&stem);
        known.insert(folded.to_owned(), stem);
        out
    })
}

fn stemmer(language: Language) -> Stemmer {
    Stemmer::create(match language {
        Language::En => Algorithm::English,
        Language::PtBr => Algorithm::Portuguese,
        Language::Es => Algorithm::Spanish,
    })
}

/// The best match of `q` over all words of all fields, with the index of the field where it
/// is reached (the first field on a tie, so that a title match counts as one).
fn best_match(q: &QueryWord, fields: &[Vec<(String, String)>]) -> Option<(Strength, usize)> {
    let typo_tolerant = q.folded.chars().count() >= TYPO_MIN_CHARS;
    let mut best: Option<(Strength, usize)> = None;
    for (index, field) in fields.iter().enumerate() {
        for (folded, stem) in field {
            let strength = if q.stem == *stem {
                Strength::Stem
            } else if folded.starts_with(&q.folded) {
                Strength::Prefix
            } else if typo_tolerant && within_one_edit(&q.folded, folded) {
                Strength::Typo
            } else {
                continue;
            };
            if best.is_none_or(|(b, _)| strength > b) {
                best = Some((strength, index));
            }
        }
    }
    best
}

/// Whether `words` occur consecutively, in order, in `field`, each pair agreeing by `same`.
fn contains_sequence(
    field: &[(String, String)],
    words: &[QueryWord],
    same: impl Fn(&QueryWord, &(String, String)) -> bool,
) -> bool {
    field
        .windows(words.len())
        .any(|window| words.iter().zip(window).all(|(q, w)| same(q, w)))
}

/// Whether `a` and `b` differ by at most one character inserted, deleted or replaced, or two
/// adjacent characters swapped (optimal string alignment distance ≤ 1). Works on the strings
/// in place: past the common prefix, the rests must agree after that one edit.
fn within_one_edit(a: &str, b: &str) -> bool {
    let common: usize = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum();
    let (a, b) = (&a[common..], &b[common..]);
    let Some((x, a_rest)) = split(a) else {
        return b.chars().count() <= 1;
    };
    let Some((y, b_rest)) = split(b) else {
        return a_rest.is_empty();
    };
    let swapped = match (split(a_rest), split(b_rest)) {
        (Some((x2, a_tail)), Some((y2, b_tail))) => x2 == y && y2 == x && a_tail == b_tail,
        _ => false,
    };
    a_rest == b_rest || a_rest == b || a == b_rest || swapped
}

/// The first character of `s` and the rest.
fn split(s: &str) -> Option<(char, &str)> {
    let mut chars = s.chars();
    chars.next().map(|first| (first, chars.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> SearchQuery {
        SearchQuery::parse(text, Language::En)
    }

    #[test]
    fn long_words_are_cut_to_a_prefix_on_both_sides() {
        let long = format!("{} tail", "é".repeat(70_000));
        let mut indexed = Vec::new();
        for_each_folded_word(&long, |w| indexed.push(w.to_string()));
        assert_eq!(indexed, ["e".repeat(MAX_WORD_BYTES), "tail".to_string()]);
        let searched: Vec<String> = words(&long).collect();
        assert_eq!(searched, indexed);
        // Multi-byte characters are cut at a boundary.
        let mut wide = "ж".repeat(200);
        cap_word(&mut wide);
        assert_eq!(wide, "ж".repeat(MAX_WORD_BYTES / 2));
    }

    #[test]
    fn remembered_stems_are_the_languages_own() {
        // The same word twice in each language: the second answer comes from the memo, which
        // must keep the languages apart.
        for _ in 0..2 {
            assert_eq!(stem("concerts", Language::En), "concert");
            assert_eq!(stem("cantando", Language::Es), "cant");
            assert_eq!(stem("cantando", Language::En), "cantando");
            assert_eq!(stem("apresentacoes", Language::PtBr), "apresentaco");
        }
        let mut lent = Vec::new();
        for_each_folded_word("<p>Jazz &amp; Música\u{301}s\u{301}</p>", |w| {
            lent.push(w.to_string())
        });
        assert_eq!(
            lent,
            analyze("<p>Jazz &amp; Música\u{301}s\u{301}</p>", Language::Es)
                .into_iter()
                .map(|(folded, _)| folded)
                .collect::<Vec<_>>()
        );
    }

    fn folded(words: &[QueryWord]) -> Vec<&str> {
        words.iter().map(|w| w.folded.as_str()).collect()
    }

    fn stems(text: &str, language: Language) -> Vec<String> {
        analyze(text, language)
            .into_iter()
            .map(|(_, stem)| stem)
            .collect()
    }

    /// How many of `records` (each a list of searchable fields) match `text`.
    fn count(text: &str, records: &[Vec<&str>]) -> usize {
        let q = query(text);
        records.iter().filter(|fields| q.matches(fields)).count()
    }

    /// Venue test records, in searchable-field order:
    /// name, description, excerpt, address, city, province, state, stateprovince, zip, phone.
    fn venues() -> Vec<Vec<&'static str>> {
        vec![
            vec![
                "",
                "",
                "",
                "221b Baker Street",
                "London",
                "Greater London",
                "England",
                "England, Greater London",
                "223345",
                "111111",
            ],
            vec![
                "",
                "",
                "",
                "10, Piccadilly Circus",
                "London",
                "Greater London",
                "England",
                "England, Greater London",
                "223345",
                "22222222",
            ],
            vec![
                "",
                "",
                "",
                "100, Avenue du Temple",
                "Paris",
                "Ile de France",
                "France",
                "France, Ile de France",
                "23443",
                "3333333",
            ],
        ]
    }

    /// Organizer records of the same item: name, description, excerpt, phone, email, website.
    fn organizers() -> Vec<Vec<&'static str>> {
        vec![
            vec!["", "", "", "111111111", "one@common.com", "http://one.com"],
            vec!["", "", "", "111112222", "two@common.com", "http://two.com"],
            vec![
                "",
                "",
                "",
                "222223333",
                "three@three.com",
                "http://three.com",
            ],
        ]
    }

    #[test]
    fn analysis_splits_at_non_letters_and_digits() {
        let words = |text| -> Vec<String> {
            analyze(text, Language::En)
                .into_iter()
                .map(|(folded, _)| folded)
                .collect()
        };
        assert_eq!(words("three@three.com"), ["three", "three", "com"]);
        assert_eq!(words("4000-123"), ["4000", "123"]);
        assert_eq!(words("France, Ile de"), ["france", "ile", "de"]);
        assert_eq!(
            words("\"quoted\" -dash snake_case"),
            ["quoted", "dash", "snake", "case"]
        );
        assert_eq!(words("221b Baker"), ["221b", "baker"]);
        assert_eq!(words("Мир 東京"), ["мир", "東京"]);
        assert_eq!(words("  ...  "), Vec::<String>::new());
    }

    #[test]
    fn analysis_folds_accents_and_case() {
        let words = |text| -> Vec<String> {
            analyze(text, Language::Es)
                .into_iter()
                .map(|(folded, _)| folded)
                .collect()
        };
        assert_eq!(
            words("Música en SÃO Paulo"),
            ["musica", "en", "sao", "paulo"]
        );
        assert_eq!(words("Straße Œuvre"), ["strasse", "oeuvre"]);
        // Decomposed input (e + combining acute) is one word, like its composed form.
        assert_eq!(words("Cafe\u{301}s"), ["cafes"]);
    }

    #[test]
    fn analysis_removes_markup_from_fields() {
        let analysed = analyze(
            "<p>Rock &amp; <b>Roll</b></p>&nbsp;caf&eacute;",
            Language::En,
        );
        let folded: Vec<&str> = analysed.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(folded, ["rock", "roll", "cafe"]);
        // Tag names and attributes are not words.
        assert!(analyze("<a href=\"http://x.org\">y</a>", Language::En)
            .iter()
            .all(|(f, _)| f == "y"));
    }

    #[test]
    fn stems_per_language() {
        assert_eq!(
            stems("concerts concert", Language::En),
            ["concert", "concert"]
        );
        assert_eq!(
            stems("Workshops running", Language::En),
            ["workshop", "run"]
        );
        // Portuguese: plural and gender forms share a stem.
        assert_eq!(
            stems("concertos concerto", Language::PtBr),
            stems("concerto concerto", Language::PtBr)
        );
        assert_eq!(
            stems("músicas", Language::PtBr),
            stems("música", Language::PtBr)
        );
        assert_eq!(stems("Festas festa", Language::PtBr), ["fest", "fest"]);
        assert_eq!(stems("eventos", Language::PtBr), ["event"]);
        // The stemmer sees the folded form, in which Portuguese `-ção`/`-ções`
        // have lost the accents its rules look for: the two forms keep distinct stems.
        assert_eq!(
            stems("exposição exposições", Language::PtBr),
            ["exposica", "exposico"]
        );
        // Spanish likewise.
        assert_eq!(
            stems("conciertos", Language::Es),
            stems("concierto", Language::Es)
        );
        assert_eq!(
            stems("canciones", Language::Es),
            stems("canción", Language::Es)
        );
        assert_eq!(stems("bailando bailar", Language::Es), ["bail", "bail"]);
        // No stop words are removed.
        assert_eq!(stems("the of de la", Language::En).len(), 4);
        assert_eq!(stems("de la", Language::Es).len(), 2);
    }

    #[test]
    fn language_specific_matching() {
        let pt = SearchQuery::parse("festas", Language::PtBr);
        assert!(pt.matches(&["Festa junina"]));
        let pt = SearchQuery::parse("musicas", Language::PtBr);
        assert!(pt.matches(&["Noite de música"]));
        let es = SearchQuery::parse("canciones", Language::Es);
        assert!(es.matches(&["Una canción"]));
        let es = SearchQuery::parse("conciertos", Language::Es);
        assert!(es.matches(&["Concierto de jazz"]));
        let es = SearchQuery::parse("bailando", Language::Es);
        assert!(es.matches(&["Bailar salsa"]));
        // The English stemmer does not know Spanish verb forms.
        let en = SearchQuery::parse("bailando", Language::En);
        assert!(!en.matches(&["Bailar salsa"]));
    }

    #[test]
    fn matching_rules_examples() {
        assert!(query("concerts").matches(&["Concert"]));
        assert!(query("work").matches(&["Workshops"]));
        assert!(query("mus").matches(&["Música"]));
        assert!(query("concret").matches(&["concert"]));
        assert!(query("Música").matches(&["musica"]));
        assert!(query("MUSICA").matches(&["Música"]));
        // No inner substrings.
        assert!(!query("usic").matches(&["Music"]));
        assert!(!query("shop").matches(&["Workshops"]));
        // A query word longer than the field word is no prefix of it.
        assert!(!query("concerts").matches(&["con"]));
    }

    #[test]
    fn typo_tolerance_needs_five_characters() {
        // Replaced, inserted, deleted, swapped.
        assert!(query("musik").matches(&["music"]));
        assert!(query("muusic").matches(&["music"]));
        assert!(query("jaz festival").matches(&["jazz festval"]));
        assert!(query("lodnon").matches(&["London"]));
        assert!(query("concret").matches(&["concert"]));
        // Four characters: no tolerance.
        assert!(!query("jaz").matches(&["jzz"]));
        assert!(!query("muic").matches(&["mxic"]));
        // Two edits are too many.
        assert!(!query("londres").matches(&["London"]));
        assert!(!query("mosik").matches(&["music"]));
        // Accents do not count as edits.
        assert!(query("Lódnon").matches(&["London"]));
    }

    #[test]
    fn one_edit_distance() {
        for (a, b) in [
            ("abcde", "abcde"),
            ("abcde", "abxde"),
            ("abcde", "abde"),
            ("abcde", "abcdef"),
            ("abcde", "bcde"),
            ("abcde", "xabcde"),
            ("abcde", "bacde"),
            ("abcde", "abced"),
            ("мирок", "мриок"),
            ("a", ""),
            ("", "a"),
            ("", ""),
        ] {
            assert!(within_one_edit(a, b), "{a} {b}");
            assert!(within_one_edit(b, a), "{b} {a}");
        }
        for (a, b) in [
            ("abcde", "abxdx"),
            ("abcde", "abc"),
            ("abcde", "bacdx"),
            ("abcde", "acbed"),
            ("abcde", "cabde"),
            ("ab", ""),
            ("abcde", "xbcdey"),
        ] {
            assert!(!within_one_edit(a, b), "{a} {b}");
            assert!(!within_one_edit(b, a), "{b} {a}");
        }
    }

    #[test]
    fn every_word_must_match_in_some_field() {
        let fields = ["Jazz night", "At the harbour"];
        assert!(query("jazz harbour").matches(&fields));
        assert!(!query("jazz rock").matches(&fields));
        // A repeated word counts once.
        let q = query("three@three.com");
        assert_eq!(folded(q.words()), ["three", "com"]);
        assert_eq!(q.words()[0].stem, "three");
    }

    #[test]
    fn queries_without_words_filter_nothing() {
        for text in [" ", "...", "- -", "\"\"", "\" \"", "@#!", "-"] {
            let q = query(text);
            assert!(q.is_empty(), "{text:?}");
            assert!(q.matches(&[]), "{text:?}");
            assert!(q.matches(&["anything"]), "{text:?}");
        }
        assert!(!query("a").is_empty());
        assert!(!query("\"a\"").is_empty());
        assert!(!query("-a").is_empty());
    }

    #[test]
    fn venue_search_examples() {
        let records = venues();
        for (text, expected) in [
            ("london", 2),
            ("3333333", 1),
            ("temple avenue", 1),
            ("greater london", 2),
            ("france", 1),
            ("france, ile de", 1),
            ("223345", 2),
            ("lond", 2),
            ("Lodnon", 2),
            ("londres", 0),
            ("piccadilly london", 1),
            ("-temple", 2),
            ("\"baker street\"", 1),
        ] {
            assert_eq!(count(text, &records), expected, "{text:?}");
        }
    }

    #[test]
    fn venue_name_description_excerpt_examples() {
        let owned: Vec<[String; 3]> = ["foo", "baz", "bar"]
            .iter()
            .map(|s| {
                [
                    format!("Venue {s}"),
                    format!("Content {s}"),
                    format!("Excerpt {s}"),
                ]
            })
            .collect();
        let records: Vec<Vec<&str>> = owned
            .iter()
            .map(|fields| fields.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(count("Venue", &records), 3);
        assert_eq!(count("Venue foo", &records), 1);
        assert_eq!(count("woo", &records), 0);
        assert_eq!(count("Content", &records), 3);
        assert_eq!(count("Excerpt bar", &records), 1);
    }

    #[test]
    fn organizer_search_examples() {
        let records = organizers();
        for (text, expected) in [
            ("1111", 2),
            ("111111111", 1),
            ("222223333", 1),
            ("three@three.com", 1),
            ("common.com", 2),
            ("http://one.com", 1),
            ("@common.com", 2),
        ] {
            assert_eq!(count(text, &records), expected, "{text:?}");
        }
    }

    #[test]
    fn term_search_examples() {
        // Searchable fields of terms: name and slug.
        let terms = vec![
            vec!["Foo", "foo"],
            vec!["Bar", "bar"],
            vec!["Baz", "baz"],
            vec!["One", "foo-bar"],
        ];
        assert_eq!(count("foo", &terms), 2);
        assert_eq!(count("bar", &terms), 2);
        assert_eq!(count("zoot", &terms), 0);
        let terms = vec![vec!["Music", "music"], vec!["Music Again", "music-again"]];
        assert_eq!(count("mus", &terms), 2);
        assert_eq!(count("musik", &terms), 2);
        assert_eq!(count("usic", &terms), 0);
    }

    #[test]
    fn phrases() {
        let fields = ["221b Baker Street", "Street Baker"];
        assert!(query("\"baker street\"").matches(&fields));
        assert!(query("\"BAKER streets\"").matches(&fields));
        // In order, consecutive, in one field.
        assert!(!query("\"street 221b\"").matches(&fields));
        assert!(!query("\"221b street\"").matches(&fields));
        assert!(!query("\"baker street\"").matches(&["Baker", "Street"]));
        // Stem matches only: no prefix, no typo.
        assert!(!query("\"bak street\"").matches(&fields));
        assert!(!query("\"bakre street\"").matches(&fields));
        // An unbalanced quote closes at the end of the query.
        let q = query("221b \"baker street");
        assert_eq!(q.phrases.len(), 1);
        assert!(q.matches(&fields));
        assert!(!q.matches(&["221b Baker Road Street"]));
        // Phrase words are also words of the query.
        assert_eq!(folded(q.words()), ["221b", "baker", "street"]);
        // Punctuation inside a phrase separates words as anywhere.
        assert!(query("\"baker-street\"").matches(&fields));
        assert!(query("x\"baker street\"").matches(&["x", "Baker Street"]));
    }

    #[test]
    fn exclusions() {
        let records = venues();
        assert_eq!(count("-temple", &records), 2);
        assert_eq!(count("london -piccadilly", &records), 1);
        // Exclusions match by prefix, not by typo.
        assert_eq!(count("-picca", &records), 2);
        assert_eq!(count("-picadilly", &records), 3);
        assert_eq!(count("-temples", &records), 2);
        // Several exclusions.
        assert_eq!(count("-temple -piccadilly", &records), 1);
        // `-` starts an exclusion only at the start or after a space.
        let q = query("london-temple");
        assert!(q.exclusions.is_empty());
        assert_eq!(folded(q.words()), ["london", "temple"]);
        assert_eq!(query("\t-temple").exclusions.len(), 1);
        assert_eq!(count("4000-123", &[vec!["4000-123"]]), 1);
        // A multi-word exclusion excludes the sequence.
        assert_eq!(count("-baker.street", &records), 2);
        assert_eq!(count("-street.baker", &records), 3);
        assert_eq!(count("-\"avenue du\"", &records), 2);
        // A lone `-` excludes nothing.
        assert_eq!(count("- london", &records), 2);
    }

    #[test]
    fn score_orders_stem_prefix_typo_and_title() {
        let q = query("concert");
        let stem_title = q.score(&["Concert", ""]);
        let stem_other = q.score(&["", "concerts"]);
        let prefix_title = q.score(&["Concertina", ""]);
        let prefix_other = q.score(&["", "concertina"]);
        let typo_title = q.score(&["Concret", ""]);
        let typo_other = q.score(&["", "concret"]);
        let scores = [
            stem_title,
            stem_other,
            prefix_title,
            prefix_other,
            typo_title,
            typo_other,
        ];
        assert_eq!(scores, [6.0, 4.0, 3.0, 2.0, 1.5, 1.0]);
        assert_eq!(q.score(&["nothing"]), 0.0);
        // The best match of each word counts, in any field.
        assert_eq!(q.score(&["concertina", "concert"]), 4.0);
        assert_eq!(q.score(&["concert", "concert"]), 6.0);
    }

    #[test]
    fn score_sums_distinct_words() {
        let q = query("jazz night jazz");
        assert_eq!(q.score(&["Jazz", "night"]), 6.0 + 4.0);
        assert_eq!(q.score(&["Jazz night"]), 12.0);
        let fields = ["Jazz night", "Harbour"];
        assert!(query("jazz night").score(&fields) > query("jazz harbour").score(&fields));
        assert_eq!(query("...").score(&fields), 0.0);
    }

    #[test]
    fn queries_use_their_language() {
        let q = SearchQuery::parse("Canciones", Language::Es);
        assert_eq!(q.words()[0].folded, "canciones");
        assert_eq!(q.words()[0].stem, stems("canción", Language::Es)[0]);
        let q = SearchQuery::parse("concerts", Language::En);
        assert_eq!(
            q.words(),
            [QueryWord {
                folded: "concerts".into(),
                stem: "concert".into()
            }]
        );
    }
}
