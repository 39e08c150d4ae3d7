//! The pages' stylesheet and scripts, embedded in the binary and served under names that carry
//! a hash of their content (so they can be cached for good); `embed.js`, named by other
//! sites' pages, also keeps its plain name.

use super::settings::Settings;
use crate::http::response::SharedBody;
use std::sync::Arc;

const STYLESHEET: &str = include_str!("../../../assets/style.css");
/// Runs inside an embedded page: tells the embedding page its height.
const FRAME_SCRIPT: &str = include_str!("../../../assets/frame.js");
/// Runs in the embedding page: turns `data-almanac-view` elements into frames.
const EMBED_SCRIPT: &str = include_str!("../../../assets/embed.js");
/// Runs in the editors' event form: filters its long lists as one types.
const MANAGE_SCRIPT: &str = include_str!("../../../assets/manage.js");

struct Asset {
    /// `name.HASH.ext`.
    name: String,
    body: Arc<SharedBody>,
}

impl Asset {
    fn new(name: &str, ext: &str, media_type: &'static str, text: String) -> Asset {
        let hash = blake3::hash(text.as_bytes()).to_hex();
        Asset {
            name: format!("{name}.{}.{ext}", &hash[..12]),
            body: Arc::new(SharedBody::new(media_type, text.into_bytes())),
        }
    }
}

/// The built assets of one server.
pub(crate) struct Assets {
    stylesheet: Asset,
    frame: Asset,
    embed: Asset,
    manage: Asset,
    /// `/assets/style.HASH.css` under the public URL's path.
    stylesheet_href: String,
    frame_href: String,
    manage_href: String,
}

impl Assets {
    /// The stylesheet is the built-in one with the operator's accent, then their own CSS.
    pub(crate) fn build(settings: &Settings, public_url: &str) -> Assets {
        let mut css = STYLESHEET.replacen(
            "--accent: #1d5fbf;",
            &format!("--accent: {};", settings.accent),
            1,
        );
        if let Some(extra) = &settings.extra_css {
            css.push_str("\n/* the operator's stylesheet */\n");
            css.push_str(extra);
        }
        let stylesheet = Asset::new("style", "css", "text/css; charset=utf-8", css);
        let frame = Asset::new(
            "frame",
            "js",
            "text/javascript; charset=utf-8",
            FRAME_SCRIPT.into(),
        );
        let manage = Asset::new(
            "manage",
            "js",
            "text/javascript; charset=utf-8",
            MANAGE_SCRIPT.into(),
        );
        let base = super::address::base_path(public_url);
        Assets {
            stylesheet_href: format!("{base}/assets/{}", stylesheet.name),
            frame_href: format!("{base}/assets/{}", frame.name),
            manage_href: format!("{base}/assets/{}", manage.name),
            stylesheet,
            frame,
            manage,
            embed: Asset::new(
                "embed",
                "js",
                "text/javascript; charset=utf-8",
                EMBED_SCRIPT.into(),
            ),
        }
    }

    pub(crate) fn stylesheet_href(&self) -> &str {
        &self.stylesheet_href
    }

    pub(crate) fn frame_script_href(&self) -> &str {
        &self.frame_href
    }

    pub(crate) fn manage_script_href(&self) -> &str {
        &self.manage_href
    }

    /// The asset called `name` and whether its name is content-hashed.
    pub(crate) fn get(&self, name: &str) -> Option<(Arc<SharedBody>, bool)> {
        if name == "embed.js" {
            return Some((self.embed.body.clone(), false));
        }
        [&self.stylesheet, &self.frame, &self.embed, &self.manage]
            .into_iter()
            .find(|a| a.name == name)
            .map(|a| (a.body.clone(), true))
    }
}
