//! [`StoreSet`]: the one [`Toolset`] behind every record set. A family
//! file gives its name, its tools and a handler; this file routes a call to
//! the handler by verb and turns its [`Reply`] into a [`ToolOutput`], so a
//! failure of any kind ([`Fail`]) reaches the model as one clear sentence.

use porfiry_skills::{
    ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect, ToolOutput, ToolSpec, Toolset,
};
use porfiry_storage::StorageError;

use crate::StoreTools;
use crate::dispatch::unknown_tool;
use crate::texts::{store as descs, store_replies as texts};
use porfiry_storage::db::DbError;

/// Why a record tool did nothing. Every variant leaves the data as it was:
/// writes happen in one closure on the writer thread, after every check.
#[derive(Debug)]
pub(crate) enum Fail {
    /// The database actor did not answer.
    Db(DbError),
    /// Storage refused (unknown id, validation, duplicate, foreign key).
    Store(StorageError),
    /// The arguments made no sense; the text says why, in the call's language.
    Bad(String),
}

impl From<DbError> for Fail {
    fn from(e: DbError) -> Self {
        Fail::Db(e)
    }
}

impl From<StorageError> for Fail {
    fn from(e: StorageError) -> Self {
        Fail::Store(e)
    }
}

impl Fail {
    /// A refusal from elsewhere (the node, the friends list) as the model
    /// reads it: "refused, nothing changed: …".
    pub(crate) fn refused(lang: Language, e: impl std::fmt::Display) -> Fail {
        Fail::Bad(texts::refused(lang, &e.to_string()))
    }

    /// The sentence the model reads.
    pub(crate) fn text(&self, lang: Language) -> String {
        match self {
            Fail::Db(DbError::Closed) => texts::db_closed(lang).to_owned(),
            Fail::Db(e) => texts::refused(lang, &e.to_string()),
            Fail::Store(StorageError::NotFound { table, key }) => {
                texts::not_found(lang, texts::noun(lang, table), &shown_key(key))
            }
            Fail::Store(e) => texts::refused(lang, &e.to_string()),
            Fail::Bad(why) => why.clone(),
        }
    }
}

/// Storage names keys `id 7` / `peer 12D3…` / `key mode`; the model knows
/// rows as `#7`.
fn shown_key(key: &str) -> String {
    match key.split_once(' ') {
        Some(("id", id)) => format!("#{id}"),
        Some((_, rest)) => rest.to_owned(),
        None => key.to_owned(),
    }
}

/// What a record tool gives back: the reply, or why it did nothing.
pub(crate) type Reply = Result<String, Fail>;

/// Runs one verb of a set: `(tools, verb, args, ctx)`; `None` for a verb
/// the set does not have.
pub(crate) type Handler =
    for<'a> fn(&'a StoreTools, &'a str, &'a Args, &'a CallContext) -> BoxFuture<'a, Option<Reply>>;

/// One record set: a name, its tools, and the handler that runs them.
pub(crate) struct StoreSet {
    name: &'static str,
    summary: &'static str,
    tools: Vec<ToolSpec>,
    deps: StoreTools,
    handler: Handler,
}

impl StoreSet {
    /// The set `name` with `tools` as `(verb, args, effect)`, described in
    /// the language of `deps`.
    pub(crate) fn new(
        name: &'static str,
        deps: &StoreTools,
        tools: Vec<(&str, Vec<ArgSpec>, ToolEffect)>,
        handler: Handler,
    ) -> Self {
        let lang = deps.language;
        let tools = tools
            .into_iter()
            .map(|(verb, args, effect)| {
                let full = format!("{name}_{verb}");
                let desc = descs::tool_desc(lang, &full);
                ToolSpec::new(&full, desc, args, effect)
            })
            .collect();
        Self {
            name,
            summary: descs::set_summary(lang, name),
            tools,
            deps: deps.clone(),
            handler,
        }
    }
}

impl Toolset for StoreSet {
    fn name(&self) -> &str {
        self.name
    }

    fn summary(&self) -> &str {
        self.summary
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Args,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let verb = tool
                .strip_prefix(self.name)
                .and_then(|rest| rest.strip_prefix('_'))
                .unwrap_or("");
            match (self.handler)(&self.deps, verb, args, ctx).await {
                Some(Ok(text)) => ToolOutput::ok(text),
                Some(Err(fail)) => {
                    tracing::debug!(tool, ?fail, "record tool refused");
                    ToolOutput::failed(fail.text(ctx.language))
                }
                // The registry routes only listed tools here; answer anyway.
                None => {
                    ToolOutput::failed(unknown_tool(ctx.language, tool, self.name, &self.tools))
                }
            }
        })
    }
}
