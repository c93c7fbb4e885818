//! The `messages` toolset: `messages_send|peer|text` writes a direct message
//! to one friend — a note with the audience `peer:ID`, published through the
//! running node ([`NodeHandle::post_note_from`]), so it travels one hop to
//! that friend and nowhere else (docs/wire.md, "Who may receive an item").
//! The friend is named by peer id or by the name the user gave it. Refused,
//! with a reply saying why and nothing written, when no node runs here, the
//! text is empty or too long, or the peer is not a friend. Texts in
//! [`texts`] (English and Russian).

#[cfg(test)]
mod tests;
mod texts;

use porfiry_protocol::Audience;
use porfiry_skills::{
    ArgSpec, Args, CallContext, Language, RegistryError, ToolEffect, ToolOutput, ToolSpec,
    ToolsetRegistry,
};
use porfiry_storage::{Friend, NoteSource, Sharing, Stored};

use super::deps::StoreTools;
use super::dispatch::{run_toolset, unknown_tool};
use porfiry_mesh::node::NotePost;

/// The set's name and its tools' prefix.
pub const MESSAGES: &str = "messages";
/// `messages_send|peer|text`.
pub const MESSAGES_SEND: &str = "messages_send";

/// Longest message, in bytes: a direct message is a chat line or a short
/// letter, not a document. 4 KiB is about a page; it keeps a model from
/// pouring its context into a friend's notebook, far below the item
/// format's 32 KiB text limit.
pub const MAX_MESSAGE_BYTES: usize = 4_096;

/// Friends' names listed when a name is ambiguous: enough to choose from,
/// short enough for a small model's context.
pub const MAX_NAMES_SHOWN: usize = 5;

/// Registers the `messages` set (B3's entry point for the lead).
pub fn register_messages(
    registry: &mut ToolsetRegistry,
    tools: &StoreTools,
) -> Result<(), RegistryError> {
    registry.register(MessagesToolset::new(tools.clone()))
}

/// Direct messages to one friend.
#[derive(Clone)]
pub struct MessagesToolset {
    deps: StoreTools,
    specs: Vec<ToolSpec>,
}

impl MessagesToolset {
    /// The set, describing itself in `deps.language`.
    pub fn new(deps: StoreTools) -> Self {
        let specs = vec![ToolSpec::new(
            MESSAGES_SEND,
            texts::send_desc(deps.language),
            vec![ArgSpec::word("peer"), ArgSpec::text("text")],
            // It leaves this node for a friend's.
            ToolEffect::Network,
        )];
        Self { deps, specs }
    }

    async fn send(&self, peer: &str, text: &str, lang: Language) -> ToolOutput {
        let Some(node) = &self.deps.node else {
            return ToolOutput::failed(texts::no_node(lang));
        };
        let text = text.trim();
        if text.is_empty() {
            return ToolOutput::failed(texts::empty(lang));
        }
        if text.len() > MAX_MESSAGE_BYTES {
            return ToolOutput::failed(texts::too_long(lang, text.len(), MAX_MESSAGE_BYTES));
        }
        let friends = match self.deps.db.read(|s| s.friends()).await {
            Ok(Ok(friends)) => friends,
            Ok(Err(e)) => return ToolOutput::failed(texts::not_sent(lang, &e.to_string())),
            Err(e) => return ToolOutput::failed(texts::not_sent(lang, &e.to_string())),
        };
        let friend = match pick_friend(&friends, peer) {
            Ok(f) => f,
            Err(Pick::None) => return ToolOutput::failed(texts::not_a_friend(lang, peer)),
            Err(Pick::Several(ids)) => {
                return ToolOutput::failed(texts::ambiguous(lang, peer, &ids.join(", ")));
            }
        };
        let audience = Audience::Peer(friend.row.peer_id.clone());
        if let Err(e) = audience.check() {
            return ToolOutput::failed(texts::not_sent(lang, &e.to_string()));
        }
        let post = NotePost {
            text: text.to_owned(),
            audience: Sharing::Shared(audience),
            reply_to: None,
        };
        match node.post_note_from(post, NoteSource::Llm).await {
            Ok(posted) => ToolOutput::ok(texts::sent(
                lang,
                &shown_name(friend),
                posted.id,
                posted.item_id.as_deref().unwrap_or("-"),
            )),
            Err(e) => ToolOutput::failed(texts::not_sent(lang, &e.to_string())),
        }
    }
}

/// Why no single friend matched.
#[derive(Debug, PartialEq, Eq)]
enum Pick {
    /// Neither a friend's peer id nor a friend's name.
    None,
    /// A name several friends share: their peer ids (at most
    /// [`MAX_NAMES_SHOWN`]).
    Several(Vec<String>),
}

/// The friend `given` names: its exact peer id, else the one friend whose
/// name matches without regard to case.
fn pick_friend<'a>(friends: &'a [Stored<Friend>], given: &str) -> Result<&'a Stored<Friend>, Pick> {
    let given = given.trim();
    if let Some(f) = friends.iter().find(|f| f.row.peer_id == given) {
        return Ok(f);
    }
    let named: Vec<&Stored<Friend>> = friends
        .iter()
        .filter(|f| !f.row.name.is_empty() && f.row.name.to_lowercase() == given.to_lowercase())
        .collect();
    match named.as_slice() {
        [one] => Ok(one),
        [] => Err(Pick::None),
        many => Err(Pick::Several(
            many.iter()
                .take(MAX_NAMES_SHOWN)
                .map(|f| f.row.peer_id.clone())
                .collect(),
        )),
    }
}

/// `name (id)`, or the id alone for a friend without a name.
fn shown_name(f: &Stored<Friend>) -> String {
    if f.row.name.is_empty() {
        f.row.peer_id.clone()
    } else {
        format!("{} ({})", f.row.name, f.row.peer_id)
    }
}

impl MessagesToolset {
    async fn run(&self, tool: &str, args: &Args, ctx: &CallContext) -> ToolOutput {
        match tool {
            MESSAGES_SEND => {
                self.send(args.text("peer"), args.text("text"), ctx.language)
                    .await
            }
            other => ToolOutput::failed(unknown_tool(ctx.language, other, MESSAGES, &self.specs)),
        }
    }
}

run_toolset!(MessagesToolset, MESSAGES, texts::summary, deps);
