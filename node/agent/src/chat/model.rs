//! The tool loop's model is the node's HTTP client: implements
//! `porfiry_skills::Llm` for [`OpenAiClient`]. Both speak the same
//! vocabulary (`porfiry_skills::llm`: messages, roles, [`LlmError`]), so the
//! history goes out as it is and a failure comes back with every detail.
//!
//! `complete` asks for one whole reply; `stream` asks the upstream for
//! server-sent events ([`crate::llm::stream`]: its deadlines, retries before
//! the first byte only, cancellation on drop) and hands the answer on as
//! [`porfiry_skills::Delta`]s ([`crate::llm::deltas`]: the thought is kept out
//! of the answer text).

use porfiry_skills::{BoxFuture, Completion, DeltaStream, Llm, LlmError, ModelRequest};

use crate::llm::OpenAiClient;
use crate::llm::deltas::deltas;

impl Llm for OpenAiClient {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            let c = self.complete_request(request).await?;
            Ok(Completion {
                text: c.text,
                usage: c.usage.map(crate::llm::wire::Usage::counts),
                finish_reason: c.finish_reason,
                served_by: None,
            })
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(async move {
            let pieces = self.stream_request(request).await?;
            Ok(deltas(self.url(), pieces))
        })
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, LlmError>> {
        Box::pin(self.embeddings(texts))
    }

    fn model_name(&self) -> String {
        self.target().model.clone()
    }
}
