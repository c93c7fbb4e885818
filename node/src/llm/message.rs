//! One message of the chat history the caller passes to the client.

use serde::{Deserialize, Serialize};

/// Who said a message, in the OpenAI chat format's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions; the client sends the prompt as the first one itself.
    System,
    /// The person (or, in the tool loop, a tool reply passed back as user text).
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
}

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
}
