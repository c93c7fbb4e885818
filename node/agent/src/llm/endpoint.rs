//! Turns the base URL a user typed into the chat-completions URL the client posts to.

use porfiry_skills::llm::LlmError;
use reqwest::Url;

/// Path every supported server (Ollama, llama.cpp, vLLM, LM Studio) serves the API under;
/// appended when the base URL has no path at all.
pub const DEFAULT_API_PREFIX: &str = "/v1";

/// Path appended to the base URL.
pub const CHAT_COMPLETIONS_PATH: &str = "/chat/completions";

/// The `…/chat/completions` URL for a base URL.
///
/// Surrounding whitespace and trailing `/` are dropped; a base that already ends in
/// `/chat/completions` is taken as the full URL; a base with no path gets `/v1`. Only
/// `http` and `https` are accepted; the query string, if any, is kept.
pub fn chat_completions_url(base: &str) -> Result<Url, LlmError> {
    let invalid = |reason: &str| LlmError::InvalidBaseUrl {
        url: base.to_owned(),
        reason: reason.to_owned(),
    };
    let trimmed = base.trim();
    if trimmed.is_empty() {
        return Err(invalid("it is empty"));
    }
    let mut url = Url::parse(trimmed).map_err(|e| invalid(&e.to_string()))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(invalid("only http:// and https:// are supported"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("it has no host"));
    }
    if url.fragment().is_some() {
        return Err(invalid("it has a #fragment"));
    }
    let path = url.path().trim_end_matches('/');
    let path = path.strip_suffix(CHAT_COMPLETIONS_PATH).unwrap_or(path);
    let path = path.trim_end_matches('/');
    let path = if path.is_empty() {
        DEFAULT_API_PREFIX
    } else {
        path
    };
    let full = format!("{path}{CHAT_COMPLETIONS_PATH}");
    url.set_path(&full);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(base: &str) -> String {
        chat_completions_url(base).unwrap().to_string()
    }

    #[test]
    fn base_ending_in_v1_gets_the_path_appended() {
        assert_eq!(
            url("http://127.0.0.1:11434/v1"),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(
            url("http://127.0.0.1:8080/v1/"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
    }

    #[test]
    fn base_without_path_gets_v1() {
        assert_eq!(
            url("http://localhost:1234"),
            "http://localhost:1234/v1/chat/completions"
        );
        assert_eq!(
            url(" http://localhost:1234/ \n"),
            "http://localhost:1234/v1/chat/completions"
        );
    }

    #[test]
    fn other_paths_are_kept_as_given() {
        assert_eq!(
            url("https://example.org/api/v1"),
            "https://example.org/api/v1/chat/completions"
        );
        assert_eq!(url("http://h/openai"), "http://h/openai/chat/completions");
    }

    #[test]
    fn full_url_is_accepted_as_is() {
        assert_eq!(
            url("http://h:8000/v1/chat/completions"),
            "http://h:8000/v1/chat/completions"
        );
        assert_eq!(
            url("http://h:8000/v1/chat/completions/"),
            "http://h:8000/v1/chat/completions"
        );
    }

    #[test]
    fn query_is_kept() {
        assert_eq!(
            url("http://h/v1?api-version=1"),
            "http://h/v1/chat/completions?api-version=1"
        );
    }

    #[test]
    fn bad_bases_are_refused_with_a_reason() {
        for (base, reason) in [
            ("", "empty"),
            ("   ", "empty"),
            ("localhost:8080/v1", "http"),
            ("ftp://h/v1", "http"),
            ("not a url", "relative URL"),
            ("http://h/v1#x", "fragment"),
        ] {
            let err = chat_completions_url(base).unwrap_err();
            let LlmError::InvalidBaseUrl { url, reason: got } = &err else {
                panic!("{base:?} gave {err:?}");
            };
            assert_eq!(url, base);
            assert!(got.contains(reason), "{base:?}: {got}");
            assert!(err.to_string().contains("base URL"), "{err}");
        }
    }
}
