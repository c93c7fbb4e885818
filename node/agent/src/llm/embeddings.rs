//! `POST {base}/embeddings` (OpenAI's embeddings API, which Ollama, llama.cpp's
//! server with `--embeddings`, vLLM and LM Studio serve beside chat): one
//! vector per text, for the cognitive core's similarity detector and its
//! flashback choice. A server without the route (404, 405, 501) answers
//! [`LlmError::Unsupported`], which the core takes as "compare words".

use porfiry_skills::llm::{LlmError, snippet};
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::{Deserialize, Serialize};

use super::client::{AttemptError, OpenAiClient, error_chain};
use super::endpoint::CHAT_COMPLETIONS_PATH;

/// Path of the embeddings API beside `/chat/completions`.
pub const EMBEDDINGS_PATH: &str = "/embeddings";

/// Texts sent in one request: the flashback's pool (50 diary entries) and
/// the reply fit; servers cap batches near here (Ollama and llama.cpp
/// handle 64 inputs without splitting).
pub const MAX_EMBED_INPUTS: usize = 64;

#[derive(Serialize)]
struct EmbeddingsRequest<'a> {
    model: &'a str,
    input: &'a [String],
}

#[derive(Deserialize)]
struct EmbeddingsReply {
    data: Vec<EmbeddingRow>,
}

#[derive(Deserialize)]
struct EmbeddingRow {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

/// The embeddings URL beside a chat-completions URL.
pub fn embeddings_url(chat: &Url) -> Url {
    let mut url = chat.clone();
    let path = chat.path();
    let base = path.strip_suffix(CHAT_COMPLETIONS_PATH).unwrap_or(path);
    url.set_path(&format!("{}{EMBEDDINGS_PATH}", base.trim_end_matches('/')));
    url
}

impl OpenAiClient {
    /// One vector per text, in order; at most [`MAX_EMBED_INPUTS`] texts.
    pub async fn embeddings(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let url = embeddings_url(self.chat_url());
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        if texts.len() > MAX_EMBED_INPUTS {
            return Err(LlmError::Other(format!(
                "{} texts to embed, more than the {MAX_EMBED_INPUTS} one request takes",
                texts.len()
            )));
        }
        let body = serde_json::to_vec(&EmbeddingsRequest {
            model: &self.target().model,
            input: texts,
        })
        .map_err(|e| LlmError::RequestEncoding {
            detail: e.to_string(),
        })?;
        let mut request = self
            .http()
            .post(url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .timeout(self.target().timeout())
            .body(body);
        if let Some(key) = &self.target().api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| LlmError::Unreachable {
            url: url.to_string(),
            detail: error_chain(&e),
            attempts: 1,
        })?;
        let status = response.status().as_u16();
        let body = match self.read_body(response).await {
            Ok(b) => b,
            Err(AttemptError::Final(e)) => return Err(e),
            Err(AttemptError::Retry { .. }) => {
                return Err(LlmError::Transport {
                    url: url.to_string(),
                    detail: "the embeddings reply broke off".into(),
                    attempts: 1,
                });
            }
        };
        if matches!(status, 404 | 405 | 501) {
            return Err(LlmError::Unsupported {
                model: format!("{} at {url}", self.target().model),
                what: "embeddings".into(),
            });
        }
        if !(200..300).contains(&status) {
            return Err(LlmError::Status {
                url: url.to_string(),
                status,
                snippet: snippet(&body),
            });
        }
        vectors(url.as_str(), &body, texts.len())
    }
}

/// The reply's vectors in input order; a reply with another count, a bad
/// index or no JSON is refused with what was wrong.
fn vectors(url: &str, body: &[u8], expected: usize) -> Result<Vec<Vec<f32>>, LlmError> {
    let bad = |detail: String| LlmError::BadJson {
        url: url.to_owned(),
        detail,
        snippet: snippet(body),
    };
    let reply: EmbeddingsReply = serde_json::from_slice(body).map_err(|e| bad(e.to_string()))?;
    if reply.data.len() != expected {
        return Err(bad(format!(
            "{} vectors for {expected} texts",
            reply.data.len()
        )));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (pos, row) in reply.data.into_iter().enumerate() {
        let i = row.index.unwrap_or(pos);
        match out.get_mut(i) {
            Some(slot @ None) => *slot = Some(row.embedding),
            _ => return Err(bad(format!("index {i} out of range or repeated"))),
        }
    }
    Ok(out.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embeddings_url_sits_beside_chat_completions() {
        let chat = Url::parse("http://127.0.0.1:8080/v1/chat/completions?x=1").unwrap();
        assert_eq!(
            embeddings_url(&chat).as_str(),
            "http://127.0.0.1:8080/v1/embeddings?x=1"
        );
    }

    #[test]
    fn vectors_come_back_in_input_order() {
        let body = br#"{"data":[{"index":1,"embedding":[2.0]},{"index":0,"embedding":[1.0]}]}"#;
        assert_eq!(vectors("u", body, 2).unwrap(), vec![vec![1.0], vec![2.0]]);
        // Without indexes, the order given.
        let body = br#"{"data":[{"embedding":[1.0]},{"embedding":[2.0]}]}"#;
        assert_eq!(vectors("u", body, 2).unwrap(), vec![vec![1.0], vec![2.0]]);
    }

    #[test]
    fn a_reply_that_does_not_fit_the_request_is_refused_with_why() {
        let e = vectors("u", br#"{"data":[{"embedding":[1.0]}]}"#, 2).unwrap_err();
        assert!(e.to_string().contains("1 vectors for 2 texts"), "{e}");
        let body = br#"{"data":[{"index":0,"embedding":[1.0]},{"index":0,"embedding":[2.0]}]}"#;
        let e = vectors("u", body, 2).unwrap_err();
        assert!(e.to_string().contains("index 0"), "{e}");
        let e = vectors("u", b"<html>", 1).unwrap_err();
        assert!(matches!(e, LlmError::BadJson { .. }), "{e}");
    }
}
