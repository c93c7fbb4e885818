//! One message of a chat history in the OpenAI chat format's words: its role
//! and text. Tool results are `user` messages that start with `TOOL_RESULT`
//! (see the [`super`] module for why).

use serde::{Deserialize, Serialize};

/// Who said a message, in the OpenAI chat format's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions; the client sends the prompt as the first one itself.
    System,
    /// The person, or a tool result (`TOOL_RESULT …`) passed back as user text.
    User,
    /// The model.
    Assistant,
}

/// A message of the history: a role and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: String,
}

impl ChatMessage {
    /// A message with the given role.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// A model message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A tool result: `TOOL_RESULT <tool>: <text>` as a user message.
    pub fn tool_result(tool: &str, text: &str) -> Self {
        Self::user(format!("{TOOL_RESULT_PREFIX} {tool}: {text}"))
    }
}

/// How a tool result message starts.
pub const TOOL_RESULT_PREFIX: &str = "TOOL_RESULT";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_in_the_openai_shape() {
        let v = serde_json::to_value(ChatMessage::assistant("hi")).unwrap();
        assert_eq!(v, serde_json::json!({"role": "assistant", "content": "hi"}));
        let v = serde_json::to_value(ChatMessage::user("q")).unwrap();
        assert_eq!(v["role"], "user");
        let v = serde_json::to_value(ChatMessage::system("s")).unwrap();
        assert_eq!(v["role"], "system");
    }

    #[test]
    fn tool_results_are_user_messages_with_a_prefix() {
        let m = ChatMessage::tool_result("media_search", "tt1 — Tomb Raider (2001)");
        assert_eq!(m.role, Role::User);
        assert_eq!(
            m.content,
            "TOOL_RESULT media_search: tt1 — Tomb Raider (2001)"
        );
    }
}
