//! The index's analyzers: the text analysis of searches (docs/api.md, "Search") by the functions of
//! [`crate::values::search`], wrapped as tantivy tokenizers so that indexing, index queries and
//! the in-memory matcher can never disagree.

use crate::model::Language;
use crate::values::search::{for_each_folded_word, with_stem};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer, TokenizerManager};

/// Which form of each word a field holds.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// The language's stem of the folded word.
    Stem(Language),
    /// The folded word (lower-cased, accents removed), for prefix and typo matching.
    Folded,
}

#[derive(Clone, Debug)]
struct AlmanacTokenizer {
    form: Form,
    /// The tokens of the text analysed last, kept so that the next text reuses their
    /// allocations (tantivy gives every field of a segment writer its own tokenizer).
    tokens: Vec<Token>,
}

impl AlmanacTokenizer {
    fn new(form: Form) -> AlmanacTokenizer {
        AlmanacTokenizer {
            form,
            tokens: Vec::new(),
        }
    }
}

/// Tokens of one text, computed up front (field texts are short).
struct Tokens<'a> {
    tokens: &'a mut [Token],
    next: usize,
}

impl TokenStream for Tokens<'_> {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for AlmanacTokenizer {
    type TokenStream<'a> = Tokens<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Tokens<'a> {
        let form = self.form;
        let tokens = &mut self.tokens;
        let mut count = 0;
        for_each_folded_word(text, |folded| {
            if count == tokens.len() {
                tokens.push(Token::default());
            }
            let token = &mut tokens[count];
            token.position = count;
            token.text.clear();
            match form {
                Form::Stem(language) => with_stem(folded, language, |stem| {
                    token.text.push_str(stem);
                }),
                Form::Folded => token.text.push_str(folded),
            }
            count += 1;
        });
        Tokens {
            tokens: &mut tokens[..count],
            next: 0,
        }
    }
}

/// The tokenizer name of the stemmed fields of a language (see index_schema/schema.toml).
pub(crate) fn stem_tokenizer(language: Language) -> String {
    format!("stem_{}", language.code())
}

pub(crate) const FOLD_TOKENIZER: &str = "fold";

/// Registers the analyzers under the names the schema file uses.
pub(crate) fn register(manager: &TokenizerManager) {
    for language in Language::ALL {
        manager.register(
            &stem_tokenizer(language),
            AlmanacTokenizer::new(Form::Stem(language)),
        );
    }
    manager.register(FOLD_TOKENIZER, AlmanacTokenizer::new(Form::Folded));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(t: &mut AlmanacTokenizer, s: &str) -> Vec<String> {
        let mut stream = t.token_stream(s);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn stems_and_folds_like_the_matcher() {
        let mut stem = AlmanacTokenizer::new(Form::Stem(Language::En));
        assert_eq!(
            texts(&mut stem, "<b>Jazz</b> Concerts &amp; Música"),
            ["jazz", "concert", "musica"]
        );
        let mut fold = AlmanacTokenizer::new(Form::Folded);
        assert_eq!(texts(&mut fold, "Workshops São"), ["workshops", "sao"]);
        // A shorter text after a longer one: only its own tokens.
        assert_eq!(texts(&mut stem, "Música"), ["musica"]);
        assert_eq!(texts(&mut fold, "a"), ["a"]);
    }
}
