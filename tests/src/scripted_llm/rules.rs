//! The script: rules that pick a reply for each request, tried in order.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::recorded::RecordedRequest;
use super::streamed::{Chunking, StreamEnd, Streamed};

/// A condition on a request.
#[derive(Clone)]
pub enum When {
    /// Every request.
    Always,
    /// The last `user` message contains the text.
    LastUserContains(String),
    /// The last message (any role) contains the text.
    LastMessageContains(String),
    /// The system prompt contains the text.
    SystemContains(String),
    /// The request is the n-th the server received (1-based).
    RequestNumber(usize),
    /// Every condition holds.
    All(Vec<When>),
    /// At least one condition holds.
    Any(Vec<When>),
    /// The condition does not hold.
    Not(Box<When>),
    /// Any test of the recorded request.
    Custom(Arc<dyn Fn(&RecordedRequest) -> bool + Send + Sync>),
}

/// What the server sends back.
#[derive(Clone)]
pub enum Reply {
    /// 200 with a chat completion whose content is the text.
    Text(String),
    /// 200 with this JSON body as is (reasoning-only replies, empty choices, …).
    Json(Value),
    /// This status with this body (sent as JSON when it parses as JSON, else as text).
    Status(u16, String),
    /// 200, `Content-Type: application/json`, these bytes.
    Garbage(Vec<u8>),
    /// 200 and these bytes of a chunked body, then the connection breaks mid-body.
    BrokenBody(Vec<u8>),
    /// To a streamed request (`"stream": true`): these server-sent events, paced and
    /// ended as configured. To any other request: a completion of its whole text.
    /// [`Reply::Text`] answers a streamed request as this with every setting at its
    /// default ([`Streamed::new`]).
    Stream(Box<Streamed>),
    /// 200, `Content-Type: text/event-stream`, these byte pieces as the body, each its
    /// own write, whatever the request asked; then the body ends, or with `then_hang`
    /// stays open sending nothing more.
    Sse {
        /// The body's pieces.
        pieces: Vec<Vec<u8>>,
        /// Keep the body open after the last piece.
        then_hang: bool,
    },
    /// Wait, then send the inner reply.
    Delay(Duration, Box<Reply>),
    /// A reply computed from the request.
    Func(Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>),
}

/// A condition, a reply, and how many times the rule may fire (`None`: always).
#[derive(Clone, Debug)]
pub struct Rule {
    /// When the rule applies.
    pub when: When,
    /// What it answers.
    pub then: Reply,
    /// How many more times it may fire (`None`: always).
    pub times: Option<usize>,
}

impl When {
    /// [`When::LastUserContains`].
    pub fn last_user_contains(text: impl Into<String>) -> Self {
        When::LastUserContains(text.into())
    }

    /// [`When::LastMessageContains`].
    pub fn last_message_contains(text: impl Into<String>) -> Self {
        When::LastMessageContains(text.into())
    }

    /// [`When::SystemContains`].
    pub fn system_contains(text: impl Into<String>) -> Self {
        When::SystemContains(text.into())
    }

    /// [`When::Custom`].
    pub fn custom(f: impl Fn(&RecordedRequest) -> bool + Send + Sync + 'static) -> Self {
        When::Custom(Arc::new(f))
    }

    /// Whether the request meets the condition.
    pub fn matches(&self, req: &RecordedRequest) -> bool {
        let has = |got: Option<&str>, want: &str| got.is_some_and(|g| g.contains(want));
        match self {
            When::Always => true,
            When::LastUserContains(t) => has(req.last_user(), t),
            When::LastMessageContains(t) => has(req.last_message(), t),
            When::SystemContains(t) => has(req.system_prompt(), t),
            When::RequestNumber(n) => req.number == *n,
            When::All(all) => all.iter().all(|w| w.matches(req)),
            When::Any(any) => any.iter().any(|w| w.matches(req)),
            When::Not(w) => !w.matches(req),
            When::Custom(f) => f(req),
        }
    }
}

impl Reply {
    /// [`Reply::Text`].
    pub fn text(text: impl Into<String>) -> Self {
        Reply::Text(text.into())
    }

    /// [`Reply::Status`].
    pub fn status(code: u16, body: impl Into<String>) -> Self {
        Reply::Status(code, body.into())
    }

    /// [`Reply::Garbage`].
    pub fn garbage(bytes: impl Into<Vec<u8>>) -> Self {
        Reply::Garbage(bytes.into())
    }

    /// [`Reply::Delay`].
    pub fn delayed(by: Duration, then: Reply) -> Self {
        Reply::Delay(by, Box::new(then))
    }

    /// [`Reply::Func`].
    pub fn func(f: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) -> Self {
        Reply::Func(Arc::new(f))
    }

    /// [`Reply::Stream`] of `text` with every setting at its default.
    pub fn streamed(text: impl Into<String>) -> Self {
        Reply::Stream(Box::new(Streamed::new(text)))
    }

    /// [`Reply::Sse`] that ends after its pieces.
    pub fn sse(pieces: Vec<Vec<u8>>) -> Self {
        Reply::Sse {
            pieces,
            then_hang: false,
        }
    }

    /// [`Reply::Sse`] that stays open after its pieces.
    pub fn sse_then_hang(pieces: Vec<Vec<u8>>) -> Self {
        Reply::Sse {
            pieces,
            then_hang: true,
        }
    }

    /// Streams the answer in pieces of `n` characters.
    pub fn chunks_of(self, n: usize) -> Self {
        self.with_stream(|s| s.chunking = Chunking::Chars(n))
    }

    /// Streams the answer in exactly these pieces (they become the answer text).
    pub fn pieces<S: Into<String>>(self, pieces: impl IntoIterator<Item = S>) -> Self {
        let pieces: Vec<String> = pieces.into_iter().map(Into::into).collect();
        self.with_stream(|s| {
            s.text = pieces.concat();
            s.chunking = Chunking::Pieces(pieces);
        })
    }

    /// Waits `by` before every streamed piece but the first.
    pub fn every(self, by: Duration) -> Self {
        self.with_stream(|s| s.every = by)
    }

    /// Sends a thought (`delta.reasoning_content`) before the answer.
    pub fn with_reasoning(self, thought: impl Into<String>) -> Self {
        let thought = thought.into();
        self.with_stream(|s| s.reasoning = thought)
    }

    /// The `finish_reason` of the finish chunk.
    pub fn finish_reason(self, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        self.with_stream(|s| s.finish_reason = reason)
    }

    /// The token counts of the usage chunk.
    pub fn usage(self, prompt: u64, completion: u64) -> Self {
        self.with_stream(|s| s.usage = Some((prompt, completion)))
    }

    /// Breaks the connection after `n` answer pieces.
    pub fn cut_after(self, n: usize) -> Self {
        self.with_stream(|s| s.end = StreamEnd::CutAfter(n))
    }

    /// Sends an error object after `n` answer pieces, then ends the body.
    pub fn error_after(self, n: usize, message: impl Into<String>) -> Self {
        let message = message.into();
        self.with_stream(|s| s.end = StreamEnd::ErrorAfter(n, message))
    }

    /// Sends nothing more after `n` answer pieces, never ending the body.
    pub fn hang_after(self, n: usize) -> Self {
        self.with_stream(|s| s.end = StreamEnd::HangAfter(n))
    }

    /// Changes the stream settings of a [`Reply::Stream`], [`Reply::Text`] (made a
    /// stream) or the reply inside a [`Reply::Delay`].
    ///
    /// # Panics
    /// On any other reply: a stream setting on it would mean nothing.
    pub fn with_stream(self, change: impl FnOnce(&mut Streamed)) -> Self {
        match self {
            Reply::Stream(mut s) => {
                change(&mut s);
                Reply::Stream(s)
            }
            Reply::Text(text) => Reply::streamed(text).with_stream(change),
            Reply::Delay(by, then) => Reply::Delay(by, Box::new(then.with_stream(change))),
            other => panic!("stream settings on a reply that does not stream: {other:?}"),
        }
    }
}

impl Rule {
    /// A rule that fires whenever `when` holds.
    pub fn new(when: When, then: Reply) -> Self {
        Self {
            when,
            then,
            times: None,
        }
    }

    /// A rule for every request.
    pub fn always(then: Reply) -> Self {
        Self::new(When::Always, then)
    }

    /// A rule for the next request only (see [`Rule::times`]).
    pub fn once(then: Reply) -> Self {
        Self::always(then).times(1)
    }

    /// Lets the rule fire at most `n` times; after that it is skipped.
    pub fn times(mut self, n: usize) -> Self {
        self.times = Some(n);
        self
    }
}

/// A rule and how often it has fired.
#[derive(Debug, Clone)]
pub(crate) struct RuleSlot {
    pub rule: Rule,
    pub fired: usize,
}

/// The reply of the first rule that has uses left and matches, counting the use.
pub(crate) fn pick(rules: &mut [RuleSlot], req: &RecordedRequest) -> Option<Reply> {
    let slot = rules
        .iter_mut()
        .find(|s| s.rule.times.is_none_or(|t| s.fired < t) && s.rule.when.matches(req))?;
    slot.fired += 1;
    Some(slot.rule.then.clone())
}

impl fmt::Debug for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            When::Always => write!(f, "Always"),
            When::LastUserContains(t) => write!(f, "LastUserContains({t:?})"),
            When::LastMessageContains(t) => write!(f, "LastMessageContains({t:?})"),
            When::SystemContains(t) => write!(f, "SystemContains({t:?})"),
            When::RequestNumber(n) => write!(f, "RequestNumber({n})"),
            When::All(w) => f.debug_tuple("All").field(w).finish(),
            When::Any(w) => f.debug_tuple("Any").field(w).finish(),
            When::Not(w) => f.debug_tuple("Not").field(w).finish(),
            When::Custom(_) => write!(f, "Custom(..)"),
        }
    }
}

impl fmt::Debug for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Text(t) => write!(f, "Text({t:?})"),
            Reply::Json(v) => write!(f, "Json({v})"),
            Reply::Status(c, b) => write!(f, "Status({c}, {b:?})"),
            Reply::Garbage(b) => write!(f, "Garbage({} bytes)", b.len()),
            Reply::BrokenBody(b) => write!(f, "BrokenBody({} bytes)", b.len()),
            Reply::Delay(d, r) => write!(f, "Delay({d:?}, {r:?})"),
            Reply::Stream(s) => write!(f, "Stream({s:?})"),
            Reply::Sse { pieces, then_hang } => {
                write!(f, "Sse({} pieces, then_hang: {then_hang})", pieces.len())
            }
            Reply::Func(_) => write!(f, "Func(..)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(number: usize, body: Value) -> RecordedRequest {
        RecordedRequest {
            number,
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            headers: vec![],
            body,
        }
    }

    fn chat(number: usize, system: &str, last_user: &str) -> RecordedRequest {
        req(
            number,
            json!({"messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": last_user},
                {"role": "assistant", "content": "tail"},
            ]}),
        )
    }

    fn slots(rules: Vec<Rule>) -> Vec<RuleSlot> {
        rules
            .into_iter()
            .map(|rule| RuleSlot { rule, fired: 0 })
            .collect()
    }

    fn text_of(r: Option<Reply>) -> Option<String> {
        match r? {
            Reply::Text(t) => Some(t),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn conditions() {
        let r = chat(3, "You are Porfiry", "find films");
        assert!(When::Always.matches(&r));
        assert!(When::last_user_contains("films").matches(&r));
        assert!(!When::last_user_contains("tail").matches(&r));
        assert!(When::last_message_contains("tail").matches(&r));
        assert!(When::system_contains("Porfiry").matches(&r));
        assert!(!When::system_contains("films").matches(&r));
        assert!(When::RequestNumber(3).matches(&r));
        assert!(!When::RequestNumber(2).matches(&r));
        assert!(When::All(vec![When::Always, When::RequestNumber(3)]).matches(&r));
        assert!(!When::All(vec![When::Always, When::RequestNumber(1)]).matches(&r));
        assert!(When::Any(vec![When::RequestNumber(1), When::RequestNumber(3)]).matches(&r));
        assert!(When::Not(Box::new(When::RequestNumber(1))).matches(&r));
        assert!(When::custom(|r| r.number > 2).matches(&r));
        assert!(!When::last_user_contains("x").matches(&req(1, json!("not chat"))));
    }

    #[test]
    fn first_matching_rule_with_uses_left_wins() {
        let mut rules = slots(vec![
            Rule::once(Reply::text("first")),
            Rule::new(When::last_user_contains("b"), Reply::text("b")).times(2),
            Rule::always(Reply::text("rest")),
        ]);
        let a = chat(1, "s", "a");
        let b = chat(2, "s", "b");
        assert_eq!(text_of(pick(&mut rules, &b)).as_deref(), Some("first"));
        assert_eq!(text_of(pick(&mut rules, &a)).as_deref(), Some("rest"));
        assert_eq!(text_of(pick(&mut rules, &b)).as_deref(), Some("b"));
        assert_eq!(text_of(pick(&mut rules, &b)).as_deref(), Some("b"));
        assert_eq!(text_of(pick(&mut rules, &b)).as_deref(), Some("rest"));
    }

    #[test]
    fn no_rule_left_gives_none() {
        let mut rules = slots(vec![Rule::once(Reply::text("x"))]);
        let r = chat(1, "s", "u");
        assert!(pick(&mut rules, &r).is_some());
        assert!(pick(&mut rules, &r).is_none());
        assert!(pick(&mut [], &r).is_none());
    }
}
