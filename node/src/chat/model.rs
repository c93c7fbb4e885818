//! The tool loop's model is the node's HTTP client: implements
//! `porfiry_skills::Llm` for [`OpenAiClient`]. Both speak the same
//! vocabulary (`porfiry_skills::llm`: messages, roles, [`LlmError`]), so the
//! history goes out as it is and a failure comes back with every detail.
//!
//! Streaming uses the trait's default (one whole answer as one delta) until
//! the client streams from the upstream itself.

use porfiry_skills::{BoxFuture, Completion, Llm, LlmError, ModelRequest, Usage};

use crate::llm::OpenAiClient;

impl Llm for OpenAiClient {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            let c = OpenAiClient::complete(self, &request.system, &request.messages).await?;
            Ok(Completion {
                text: c.text,
                usage: c.usage.map(|u| {
                    Usage::new(
                        u.prompt_tokens.unwrap_or(0),
                        u.completion_tokens.unwrap_or(0),
                    )
                }),
                finish_reason: c.finish_reason,
            })
        })
    }

    fn model_name(&self) -> String {
        self.target().model.clone()
    }
}
