//! What the scripted server received, and helpers to read a chat-completion body.

use serde_json::Value;

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// 1-based arrival order among all requests.
    pub number: usize,
    /// `POST`, `GET`, …
    pub method: String,
    /// Path and query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers with lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON; a body that is not JSON is kept as a JSON string (lossy UTF-8).
    pub body: Value,
}

impl RecordedRequest {
    /// The first value of a header (name matched case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The content of the first `system` message.
    pub fn system_prompt(&self) -> Option<&str> {
        system_prompt(&self.body)
    }

    /// The content of the last `user` message.
    pub fn last_user(&self) -> Option<&str> {
        last_user(&self.body)
    }

    /// The content of the last message, whatever its role.
    pub fn last_message(&self) -> Option<&str> {
        last_message(&self.body)
    }

    /// `(role, content)` of every message, in order.
    pub fn messages(&self) -> Vec<(&str, &str)> {
        messages(&self.body)
    }
}

/// `(role, content)` of every message of a chat-completion body; entries without a
/// string role or content are skipped.
pub fn messages(body: &Value) -> Vec<(&str, &str)> {
    body.get("messages")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|m| Some((m.get("role")?.as_str()?, m.get("content")?.as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The content of the first `system` message of a chat-completion body.
pub fn system_prompt(body: &Value) -> Option<&str> {
    messages(body)
        .into_iter()
        .find(|(role, _)| *role == "system")
        .map(|(_, c)| c)
}

/// The content of the last `user` message of a chat-completion body.
pub fn last_user(body: &Value) -> Option<&str> {
    messages(body)
        .into_iter()
        .rev()
        .find(|(role, _)| *role == "user")
        .map(|(_, c)| c)
}

/// The content of the last message of a chat-completion body.
pub fn last_message(body: &Value) -> Option<&str> {
    messages(body).last().map(|(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn helpers_read_the_messages() {
        let body = json!({"messages": [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "U1"},
            {"role": "assistant", "content": "A"},
            {"role": "user", "content": "U2"},
            {"role": "assistant", "content": null},
            {"role": "assistant", "content": "A2"},
        ]});
        assert_eq!(system_prompt(&body), Some("S"));
        assert_eq!(last_user(&body), Some("U2"));
        assert_eq!(last_message(&body), Some("A2"));
        assert_eq!(messages(&body).len(), 5);
        assert_eq!(messages(&json!("x")), vec![]);
        assert_eq!(system_prompt(&json!({"messages": []})), None);
    }

    #[test]
    fn header_lookup_ignores_case() {
        let r = RecordedRequest {
            number: 1,
            method: "POST".into(),
            path: "/".into(),
            headers: vec![("authorization".into(), "Bearer k".into())],
            body: Value::Null,
        };
        assert_eq!(r.header("Authorization"), Some("Bearer k"));
        assert_eq!(r.header("x-none"), None);
    }
}
