//! The token shapes that are secrets wherever they come from, and their
//! replacement by [`MARK`].

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Captures, Regex};

/// What every secret becomes.
pub const MARK: &str = "[REDACTED]";

/// Token shapes. A group named `keepN` is kept in front of the mark (the
/// header's name, a URL's user), one named `tailN` after it. Word
/// boundaries are ASCII ones (`(?-u:\b)`): a Unicode boundary makes the
/// regex engine fall back to its slowest search on every text.
const SHAPES: &[&str] = &[
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"sk-[A-Za-z0-9_\-]{20,}",
    r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
    r"(?-u:\b)pypi-[A-Za-z0-9_\-]{40,}",
    r"(?-u:\b)AKIA[0-9A-Z]{16}(?-u:\b)",
    r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    // A JWT: header and claims are base64url JSON objects.
    r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    // Webhooks whose URL is the credential.
    r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{16,}",
    r"discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_\-]{16,}",
    r"-----BEGIN[A-Z ]* PRIVATE KEY-----(?s:.)*?(-----END[A-Z ]* PRIVATE KEY-----|\z)",
    // base64 of "x-access-token:" and the token after it.
    r"eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/=]*",
    r"(?i)(?P<keep1>authorization:[ \t\r\n]*(?:basic|bearer|token)[ \t\r\n]+)[A-Za-z0-9+/=._~\-]{8,}",
];

/// A password in a URL: a shape of its own, with no literal to look for
/// first, so it is only tried on text holding an `@`.
const URL_PASSWORD: &str =
    r"(?i)(?P<keep2>(?-u:\b)[a-z][a-z0-9+.\-]*://[^/[ \t\r\n]:@]*:)[^/[ \t\r\n]@]{4,}(?P<tail2>@)";

/// The replacement of one shape's match: the mark between what its
/// `keep`/`tail` groups hold.
fn masked(caps: &Captures) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    if super::decoys::is_decoy(whole) {
        return whole.to_string();
    }
    let group = |prefix: &str| {
        (1..=2)
            .find_map(|i| caps.name(&format!("{prefix}{i}")))
            .map_or("", |m| m.as_str())
    };
    format!("{}{MARK}{}", group("keep"), group("tail"))
}

/// The token shapes: those that start with a literal as one regex (each
/// in a group of its own, so that one's flags stay its own), which the
/// regex engine looks for by their literals first; and the URL password.
#[derive(Debug, Clone)]
pub(crate) struct Shapes {
    literal: Regex,
    url: Regex,
}

impl Shapes {
    /// The shapes' matches in `text`, replaced by the mark.
    pub(super) fn replace<'a>(&self, text: Cow<'a, str>) -> Cow<'a, str> {
        let mut out = text;
        if self.literal.is_match(&out) {
            out = Cow::Owned(self.literal.replace_all(&out, masked).into_owned());
        }
        if out.contains('@') && self.url.is_match(&out) {
            out = Cow::Owned(self.url.replace_all(&out, masked).into_owned());
        }
        out
    }

    /// Each match's captures, the literal shapes' first.
    pub(crate) fn captures<'t>(&self, text: &'t str) -> Vec<Captures<'t>> {
        (self.literal.captures_iter(text))
            .chain(self.url.captures_iter(text))
            .collect()
    }
}

pub(super) fn shapes() -> &'static Shapes {
    static RE: OnceLock<Shapes> = OnceLock::new();
    RE.get_or_init(|| {
        let joined: Vec<String> = SHAPES.iter().map(|s| format!("(?:{s})")).collect();
        Shapes {
            literal: Regex::new(&joined.join("|")).expect("valid token shapes"),
            url: Regex::new(URL_PASSWORD).expect("a valid shape"),
        }
    })
}
