//! The page's files, compiled in: `page/index.html` (with the language and
//! the texts written in at serve time), `page/app.js`, `page/app.css`.

use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use porfiry_skills::Language;

use super::texts;

/// The page's HTML, with `{{LANG}}` and `{{TEXTS}}` to fill in.
pub const INDEX_HTML: &str = include_str!("page/index.html");
/// The page's script.
pub const APP_JS: &str = include_str!("page/app.js");
/// The page's style sheet.
pub const APP_CSS: &str = include_str!("page/app.css");

/// Only this node's own files and data: images come from `data:` (the QR
/// codes), nothing from elsewhere, no inline script (the texts' JSON block
/// is data, not run), no framing by another site.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The page in `language`.
pub fn index(language: Language) -> String {
    let lang = match language {
        Language::En => "en",
        Language::Ru => "ru",
    };
    // `<` escaped so no text can close the script block it sits in.
    let json = serde_json::to_string(texts::page(language))
        .unwrap_or_else(|_| "{}".to_owned())
        .replace('<', "\\u003c");
    INDEX_HTML
        .replace("{{LANG}}", lang)
        .replace("{{TEXTS}}", &json)
}

/// A response with `body` as `content_type`, revalidated on every load (a
/// new binary brings a new page) and under the page's security policy.
pub fn file(content_type: &'static str, body: String) -> Response {
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP)),
            (
                HeaderName::from_static("x-content-type-options"),
                HeaderValue::from_static("nosniff"),
            ),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_its_language_and_texts_and_nothing_from_elsewhere() {
        let en = index(Language::En);
        assert!(
            en.starts_with("<!doctype html>\n<html lang=\"en\">"),
            "{en}"
        );
        assert!(en.contains("\"post\":\"Post\""));
        assert!(!en.contains("{{"));
        let ru = index(Language::Ru);
        assert!(ru.contains("<html lang=\"ru\">") && ru.contains("Опубликовать"));
        for asset in [INDEX_HTML, APP_JS, APP_CSS] {
            assert!(
                !asset.contains("https://") && !asset.contains("http://"),
                "an outside URL"
            );
        }
    }
}
