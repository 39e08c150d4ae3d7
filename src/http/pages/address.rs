//! The addresses of the public pages, parsed from a request path and written back: every
//! link a page holds is built here, so a page can only link to addresses this module reads.
//!
//! ```text
//! [/embed][/es|/pt-br]/events/[category/{path}/]{list/[page/N/]|month/[YYYY-MM/]|week/[YYYY-MM-DD/]|today/|YYYY-MM-DD/}
//! [/embed][/es|/pt-br]/tag/{slug}/{the same views}
//! [/es|/pt-br]/event/{slug}/   /venue/{slug}/   /organizer/{slug}/
//! [/es|/pt-br]/events/propose/   (visitors' proposals, answered with the editors' forms)
//! ```

use super::settings::ViewKind;
use crate::model::Language;
use chrono::{Datelike, NaiveDate};
use std::sync::Arc;

/// Which events a calendar view shows before its filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    All,
    /// A category archive: the slugs from the top-level category down.
    Category(Vec<String>),
    Tag(String),
}

/// A view and the date or page it shows (`None`: today, or the first page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// The scope's root (`/events/`): the operator's default view.
    Default,
    List {
        page: usize,
    },
    Month(Option<NaiveDate>),
    Week(Option<NaiveDate>),
    Day(Option<NaiveDate>),
}

impl View {
    pub(crate) fn kind(self, default: ViewKind) -> ViewKind {
        match self {
            View::Default => default,
            View::List { .. } => ViewKind::List,
            View::Month(_) => ViewKind::Month,
            View::Week(_) => ViewKind::Week,
            View::Day(_) => ViewKind::Day,
        }
    }

    /// The view of `kind` around `date`.
    pub(crate) fn at(kind: ViewKind, date: Option<NaiveDate>) -> View {
        match kind {
            ViewKind::List => View::List { page: 1 },
            ViewKind::Month => View::Month(date),
            ViewKind::Week => View::Week(date),
            ViewKind::Day => View::Day(date),
        }
    }
}

/// Record pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordKind {
    Event,
    Venue,
    Organizer,
}

impl RecordKind {
    fn word(self) -> &'static str {
        match self {
            RecordKind::Event => "event",
            RecordKind::Venue => "venue",
            RecordKind::Organizer => "organizer",
        }
    }
}

/// What a path inside the pages' space names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Page {
    Calendar {
        scope: Scope,
        view: View,
    },
    Record {
        kind: RecordKind,
        slug: String,
    },
    /// Not an address of the pages (answered by the 404 page).
    Unknown,
}

/// A parsed page path: where it is, in which language, framed or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Address {
    pub language: Language,
    pub embed: bool,
    pub page: Page,
}

impl Address {
    /// Reads decoded path segments (no empty ones, trailing slash removed).
    pub(crate) fn parse(segments: &[String]) -> Address {
        let mut rest = segments;
        let embed = rest.first().is_some_and(|s| s == "embed");
        if embed {
            rest = &rest[1..];
        }
        let language = rest.first().and_then(|s| Language::from_segment(s));
        if language.is_some() {
            rest = &rest[1..];
        }
        let words: Vec<&str> = rest.iter().map(String::as_str).collect();
        let page = match words.as_slice() {
            ["events", tail @ ..] => calendar(tail),
            ["tag", slug, tail @ ..] => match view(tail) {
                Some(view) => Page::Calendar {
                    scope: Scope::Tag(slug.to_string()),
                    view,
                },
                None => Page::Unknown,
            },
            // An occurrence of a series: its series' slug and its date.
            ["event", slug, date]
                if !embed && chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok() =>
            {
                record(RecordKind::Event, &format!("{slug}/{date}"))
            }
            [word, slug] if !embed => match *word {
                "event" => record(RecordKind::Event, slug),
                "venue" => record(RecordKind::Venue, slug),
                "organizer" => record(RecordKind::Organizer, slug),
                _ => Page::Unknown,
            },
            _ => Page::Unknown,
        };
        Address {
            language: language.unwrap_or(Language::En),
            embed,
            page,
        }
    }
}

fn record(kind: RecordKind, slug: &str) -> Page {
    Page::Record {
        kind,
        slug: slug.to_string(),
    }
}

fn calendar(tail: &[&str]) -> Page {
    if let ["category", rest @ ..] = tail {
        // The category path runs to the first word that starts a view.
        let split = rest
            .iter()
            .position(|w| starts_view(w))
            .unwrap_or(rest.len());
        let (path, view_words) = rest.split_at(split);
        return match (path.is_empty(), view(view_words)) {
            (false, Some(view)) => Page::Calendar {
                scope: Scope::Category(path.iter().map(|s| s.to_string()).collect()),
                view,
            },
            _ => Page::Unknown,
        };
    }
    match view(tail) {
        Some(view) => Page::Calendar {
            scope: Scope::All,
            view,
        },
        None => Page::Unknown,
    }
}

fn starts_view(word: &str) -> bool {
    matches!(word, "list" | "month" | "week" | "today") || date(word).is_some()
}

fn view(words: &[&str]) -> Option<View> {
    Some(match words {
        [] => View::Default,
        ["list"] => View::List { page: 1 },
        ["list", "page", n] => View::List {
            page: n.parse().ok().filter(|n| (1..=10_000).contains(n))?,
        },
        ["month"] => View::Month(None),
        ["month", ym] => View::Month(Some(month(ym)?)),
        ["week"] => View::Week(None),
        ["week", d] => View::Week(Some(date(d)?)),
        ["today"] => View::Day(None),
        [d] => View::Day(Some(date(d)?)),
        _ => return None,
    })
}

/// `YYYY-MM-DD` between the years 1900 and 2200 (what the API's windows take).
pub(crate) fn date(word: &str) -> Option<NaiveDate> {
    if word.len() != 10 {
        return None;
    }
    NaiveDate::parse_from_str(word, "%Y-%m-%d")
        .ok()
        .filter(|d| in_range(*d))
}

/// Whether a date can be in an address: previous and next stop at the ends of the range.
pub(crate) fn in_range(date: NaiveDate) -> bool {
    (1900..=2200).contains(&date.year())
}

/// `YYYY-MM`, as the month's first day.
fn month(word: &str) -> Option<NaiveDate> {
    if word.len() != 7 {
        return None;
    }
    date(&format!("{word}-01"))
}

/// The path of the public URL (`""`, or `/prefix` behind a reverse proxy that adds one).
pub(crate) fn base_path(public_url: &str) -> String {
    url::Url::parse(public_url)
        .map(|u| u.path().trim_end_matches('/').to_string())
        .unwrap_or_default()
}

/// Builds page paths (starting with `/`, under the public URL's own path) in one language and
/// framing.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    pub language: Language,
    pub embed: bool,
    /// [`base_path`].
    pub base: Arc<str>,
}

impl Paths {
    fn prefix(&self, embed: bool) -> String {
        let mut out = self.base.to_string();
        if embed {
            out.push_str("/embed");
        }
        if self.language != Language::En {
            out.push('/');
            out.push_str(self.language.code());
        }
        out
    }

    /// A calendar view of a scope.
    pub(crate) fn calendar(&self, scope: &Scope, view: View) -> String {
        let mut out = self.prefix(self.embed);
        match scope {
            Scope::All => out.push_str("/events/"),
            Scope::Category(path) => {
                out.push_str("/events/category/");
                for slug in path {
                    out.push_str(&encode(slug));
                    out.push('/');
                }
            }
            Scope::Tag(slug) => {
                out.push_str("/tag/");
                out.push_str(&encode(slug));
                out.push('/');
            }
        }
        match view {
            View::Default => {}
            View::List { page: 1 } => out.push_str("list/"),
            View::List { page } => out.push_str(&format!("list/page/{page}/")),
            View::Month(None) => out.push_str("month/"),
            View::Month(Some(d)) => out.push_str(&format!("month/{}/", d.format("%Y-%m"))),
            View::Week(None) => out.push_str("week/"),
            View::Week(Some(d)) => out.push_str(&format!("week/{}/", d.format("%Y-%m-%d"))),
            View::Day(None) => out.push_str("today/"),
            View::Day(Some(d)) => out.push_str(&format!("{}/", d.format("%Y-%m-%d"))),
        }
        out
    }

    /// A record's page; never framed (links from an embed open the full page).
    /// (An occurrence's slug is its series' and its date: `slug/YYYY-MM-DD`.)
    pub(crate) fn record(&self, kind: RecordKind, slug: &str) -> String {
        let mut out = format!("{}/{}/", self.prefix(false), kind.word());
        for segment in slug.split('/') {
            out.push_str(&encode(segment));
            out.push('/');
        }
        out
    }

    /// The form where visitors propose an event; never framed.
    pub(crate) fn propose(&self) -> String {
        format!("{}/events/propose/", self.prefix(false))
    }

    /// The same paths in another language.
    pub(crate) fn in_language(&self, language: Language) -> Paths {
        Paths {
            language,
            ..self.clone()
        }
    }
}

/// What a path segment keeps as it is: letters, digits, `-`, `_` and `.`.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.');

/// A path segment, percent-encoded where needed (slugs are mostly ASCII already).
fn encode(segment: &str) -> std::borrow::Cow<'_, str> {
    percent_encoding::utf8_percent_encode(segment, SEGMENT).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(path: &str) -> Address {
        let segments: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        Address::parse(&segments)
    }

    #[test]
    fn paths_keep_the_public_urls_own_path() {
        let paths = Paths {
            language: Language::Es,
            embed: false,
            base: base_path("https://example.org/agenda/").into(),
        };
        assert_eq!(
            paths.calendar(&Scope::All, View::Month(None)),
            "/agenda/es/events/month/"
        );
        assert_eq!(base_path("http://127.0.0.1:8080"), "");
    }

    #[test]
    fn calendar_addresses_read_back_as_written() {
        let d = NaiveDate::from_ymd_opt(2027, 3, 15).unwrap();
        let m = NaiveDate::from_ymd_opt(2027, 3, 1).unwrap();
        let scopes = [
            Scope::All,
            Scope::Category(vec!["music".into(), "jazz".into()]),
            Scope::Tag("free-entry".into()),
        ];
        let views = [
            View::Default,
            View::List { page: 1 },
            View::List { page: 3 },
            View::Month(None),
            View::Month(Some(m)),
            View::Week(Some(d)),
            View::Day(None),
            View::Day(Some(d)),
        ];
        for language in Language::ALL {
            for embed in [false, true] {
                let paths = Paths {
                    language,
                    embed,
                    base: "".into(),
                };
                for scope in &scopes {
                    for view in views {
                        let path = paths.calendar(scope, view);
                        let address = parse(&path);
                        assert_eq!(address.language, language, "{path}");
                        assert_eq!(address.embed, embed, "{path}");
                        assert_eq!(
                            address.page,
                            Page::Calendar {
                                scope: scope.clone(),
                                view
                            },
                            "{path}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn records_and_unknown_addresses() {
        assert_eq!(
            parse("/es/event/concierto/").page,
            Page::Record {
                kind: RecordKind::Event,
                slug: "concierto".into()
            }
        );
        for unknown in [
            "/events/month/2027-13/",
            "/events/2027-02-30/",
            "/events/list/page/0/",
            "/events/nope/",
            "/events/category/",
            "/embed/event/x/",
            "/venue/",
        ] {
            assert_eq!(parse(unknown).page, Page::Unknown, "{unknown}");
        }
    }
}
