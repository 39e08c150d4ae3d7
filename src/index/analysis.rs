//! The index's analyzers: the text analysis of common.md §9.11 by the functions of
//! [`crate::values::search`], wrapped as tantivy tokenizers so that indexing, index queries and
//! the in-memory matcher can never disagree.

use crate::model::Language;
use crate::values::search::{folded_words, stem};
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
}

/// Tokens of one text, computed up front (field texts are short).
struct Tokens {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for Tokens {
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
    type TokenStream<'a> = Tokens;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Tokens {
        let words = folded_words(text).into_iter();
        let texts: Vec<String> = match self.form {
            Form::Stem(language) => words.map(|folded| stem(&folded, language)).collect(),
            Form::Folded => words.collect(),
        };
        let tokens = texts
            .into_iter()
            .enumerate()
            .map(|(position, text)| Token {
                offset_from: 0,
                offset_to: 0,
                position,
                text,
                position_length: 1,
            })
            .collect();
        Tokens { tokens, next: 0 }
    }
}

/// The tokenizer name of the stemmed fields of a language (see index_schema/schema.toml).
pub fn stem_tokenizer(language: Language) -> String {
    format!("stem_{}", language.code())
}

pub const FOLD_TOKENIZER: &str = "fold";

/// Registers the analyzers under the names the schema file uses.
pub fn register(manager: &TokenizerManager) {
    for language in Language::ALL {
        manager.register(
            &stem_tokenizer(language),
            AlmanacTokenizer {
                form: Form::Stem(language),
            },
        );
    }
    manager.register(FOLD_TOKENIZER, AlmanacTokenizer { form: Form::Folded });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(mut t: AlmanacTokenizer, s: &str) -> Vec<String> {
        let mut stream = t.token_stream(s);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn stems_and_folds_like_the_matcher() {
        let stem = AlmanacTokenizer {
            form: Form::Stem(Language::En),
        };
        assert_eq!(
            texts(stem, "<b>Jazz</b> Concerts &amp; Música"),
            ["jazz", "concert", "musica"]
        );
        let fold = AlmanacTokenizer { form: Form::Folded };
        assert_eq!(texts(fold, "Workshops São"), ["workshops", "sao"]);
    }
}
