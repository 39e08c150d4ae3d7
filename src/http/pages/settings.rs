//! What an operator sets about the public pages (docs/pages.md, "Settings"): the site's name,
//! logo and accent colour, the default view, the week's first day, the display time zone, the
//! month view's events per day, an extra stylesheet, the origins that may frame `/embed/` and
//! those whose images pages show.

use crate::values::timezone::Zone;
use chrono::Weekday;

/// The calendar views a visitor can switch between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKind {
    List,
    Month,
    Week,
    Day,
}

impl ViewKind {
    pub const ALL: [ViewKind; 4] = [
        ViewKind::List,
        ViewKind::Month,
        ViewKind::Week,
        ViewKind::Day,
    ];

    /// The view's path word (`/events/month/`), also its option value.
    pub fn word(self) -> &'static str {
        match self {
            ViewKind::List => "list",
            ViewKind::Month => "month",
            ViewKind::Week => "week",
            ViewKind::Day => "day",
        }
    }

    pub fn parse(word: &str) -> Option<ViewKind> {
        ViewKind::ALL.into_iter().find(|v| v.word() == word)
    }
}

/// The pages' settings; [`Settings::default`] is what a server started without options shows.
#[derive(Debug, Clone)]
pub struct Settings {
    pub site_name: String,
    /// An absolute URL (or a path on this site) of an image shown beside the site name.
    pub logo_url: Option<String>,
    /// A CSS colour (`#1a73e8`): links, buttons and today's mark.
    pub accent: String,
    pub default_view: ViewKind,
    pub week_start: Weekday,
    /// The zone "today" and the week's days are read in; events keep their own zones.
    pub zone: Zone,
    /// Events listed in a day of the month view before its "+ N more" link.
    pub month_events_per_day: usize,
    /// Events on a page of the list view.
    pub list_per_page: usize,
    /// CSS appended after the built-in stylesheet (the operator's own file, read at start).
    pub extra_css: Option<String>,
    /// Origins allowed to frame `/embed/…` pages (CSP `frame-ancestors`).
    pub embed_origins: Vec<String>,
    /// Origins whose images pages show besides the site's own (CSP `img-src`); images
    /// elsewhere are left out, so a page requests nothing from an origin not listed.
    pub image_origins: Vec<String>,
    /// Whether visitors may propose events (`/events/propose/`).
    pub public_submissions: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            site_name: "Calendar".into(),
            logo_url: None,
            accent: "#1d5fbf".into(),
            default_view: ViewKind::List,
            week_start: Weekday::Mon,
            zone: Zone::Utc,
            month_events_per_day: 3,
            list_per_page: 12,
            extra_css: None,
            embed_origins: Vec::new(),
            image_origins: Vec::new(),
            public_submissions: false,
        }
    }
}

/// Whether `value` is a CSS colour safe to write into a stylesheet: `#rgb`, `#rrggbb` or a
/// name of letters.
pub fn valid_accent(value: &str) -> bool {
    match value.strip_prefix('#') {
        Some(hex) => matches!(hex.len(), 3 | 6) && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => {
            !value.is_empty() && value.len() <= 30 && value.bytes().all(|b| b.is_ascii_alphabetic())
        }
    }
}

/// Whether `value` is an origin a browser sends: `http(s)://host[:port]`, nothing after.
pub fn valid_origin(value: &str) -> bool {
    let Ok(url) = url::Url::parse(value) else {
        return false;
    };
    matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some()
        && value.trim_end_matches('/') == url.origin().ascii_serialization()
}
