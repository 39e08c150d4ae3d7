//! The content languages: their codes and URL segments (a value every layer reads, from
//! search analysis up).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The three content languages. `en` is the default and has no URL segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Language {
    En,
    PtBr,
    Es,
}

impl Language {
    /// Every language, in `translations` key order.
    pub const ALL: [Language; 3] = [Language::En, Language::PtBr, Language::Es];

    pub(crate) fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::PtBr => "pt-br",
            Language::Es => "es",
        }
    }

    /// Exact, case-sensitive match of a language code (`PT-BR` is not a language).
    pub(crate) fn from_code(code: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.code() == code)
    }

    /// The path segment selecting this language; `en` has none.
    pub(crate) fn from_segment(segment: &str) -> Option<Language> {
        match segment {
            "pt-br" => Some(Language::PtBr),
            "es" => Some(Language::Es),
            _ => None,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}
