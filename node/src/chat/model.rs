//! The tool loop's model is the node's HTTP client: implements
//! `porfiry_skills::Llm` for [`OpenAiClient`]. Both speak the same
//! vocabulary (`porfiry_skills::llm`: messages, roles, [`LlmError`]), so the
//! history goes out as it is and a failure comes back with every detail.

use std::future::Future;

use porfiry_skills::{Llm, LlmError, ModelRequest};

use crate::llm::OpenAiClient;

impl Llm for OpenAiClient {
    fn complete(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<String, LlmError>> + Send {
        self.chat(&request.system, &request.messages)
    }
}
