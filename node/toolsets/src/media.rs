//! The `media` toolset (the seed's example), data-driven: search, details,
//! play and playback control (pause, resume, stop: seed 000 §9's
//! "запуск/управление") over a list of films handed in by the caller. Playing
//! and controlling are client actions: the client's player does them. No file IO here;
//! [`super::media_catalog`] loads the catalogue JSON
//! (`[{"id","title","year","description"}]`). Its texts are in [`super::texts`].

use serde::{Deserialize, Serialize};

use porfiry_skills::{
    ArgSpec, Args, BoxFuture, CallContext, ClientEvent, Language, ToolEffect, ToolOutput, ToolSpec,
    Toolset,
};

use super::dispatch::unknown_tool;
use super::texts;

/// The set's name and its tools' prefix.
pub const MEDIA: &str = "media";
/// `media_search|query`.
pub const MEDIA_SEARCH: &str = "media_search";
/// `media_info|id`.
pub const MEDIA_INFO: &str = "media_info";
/// `media_play|id`.
pub const MEDIA_PLAY: &str = "media_play";
/// `media_control|action`: pause, resume or stop what is playing.
pub const MEDIA_CONTROL: &str = "media_control";
/// What `media_control` can do (the client's player does it).
pub const MEDIA_CONTROL_ACTIONS: &[&str] = &["pause", "resume", "stop"];

/// `media_search` lists at most this many hits: five lines are enough to pick
/// from and keep the result near 100 tokens.
pub const MAX_MEDIA_SEARCH_RESULTS: usize = 5;

/// One film of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaEntry {
    /// Stable id, used by `media_info` / `media_play`.
    pub id: String,
    /// Title.
    pub title: String,
    /// Release year, if known.
    #[serde(default)]
    pub year: Option<i32>,
    /// A sentence or two about it.
    #[serde(default)]
    pub description: String,
}

impl MediaEntry {
    /// `id — title (year)`.
    fn hit_line(&self) -> String {
        match self.year {
            Some(year) => format!("{} — {} ({year})", self.id, self.title),
            None => format!("{} — {}", self.id, self.title),
        }
    }
}

/// Search, details and play over a fixed list of films.
#[derive(Debug, Clone)]
pub struct MediaToolset {
    language: Language,
    entries: Vec<MediaEntry>,
    /// Lower-cased title and description per entry, for search.
    haystacks: Vec<(String, String)>,
    tools: Vec<ToolSpec>,
}

impl MediaToolset {
    /// The set over `entries`, describing itself in `language`.
    pub fn new(entries: Vec<MediaEntry>, language: Language) -> Self {
        let haystacks = entries
            .iter()
            .map(|e| (e.title.to_lowercase(), e.description.to_lowercase()))
            .collect();
        let tools = vec![
            ToolSpec::new(
                MEDIA_SEARCH,
                texts::media_search_desc(language),
                vec![ArgSpec::text("query")],
                ToolEffect::Read,
            ),
            ToolSpec::new(
                MEDIA_INFO,
                texts::media_info_desc(language),
                vec![ArgSpec::word("id")],
                ToolEffect::Read,
            ),
            ToolSpec::new(
                MEDIA_PLAY,
                texts::media_play_desc(language),
                vec![ArgSpec::word("id")],
                // The client starts playing: an act in the world, not a read.
                ToolEffect::Write,
            ),
            ToolSpec::new(
                MEDIA_CONTROL,
                texts::media_control_desc(language),
                vec![ArgSpec::choice("action", MEDIA_CONTROL_ACTIONS)],
                ToolEffect::Write,
            ),
        ];
        Self {
            language,
            entries,
            haystacks,
            tools,
        }
    }

    /// The catalogue.
    pub fn entries(&self) -> &[MediaEntry] {
        &self.entries
    }

    fn find(&self, id: &str) -> Option<&MediaEntry> {
        self.entries.iter().find(|e| e.id.eq_ignore_ascii_case(id))
    }

    fn search(&self, query: &str) -> ToolOutput {
        let lower = query.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() {
            return ToolOutput::ok(texts::media_nothing_found(self.language, query));
        }
        // Title hits first, then description hits, each in catalogue order.
        let mut in_title = Vec::new();
        let mut in_text = Vec::new();
        for (entry, (title, description)) in self.entries.iter().zip(&self.haystacks) {
            if words.iter().all(|w| title.contains(w)) {
                in_title.push(entry);
            } else if words
                .iter()
                .all(|w| title.contains(w) || description.contains(w))
            {
                in_text.push(entry);
            }
        }
        let hits: Vec<&MediaEntry> = in_title.into_iter().chain(in_text).collect();
        if hits.is_empty() {
            return ToolOutput::ok(texts::media_nothing_found(self.language, query));
        }
        let mut lines: Vec<String> = hits
            .iter()
            .take(MAX_MEDIA_SEARCH_RESULTS)
            .map(|e| e.hit_line())
            .collect();
        if hits.len() > MAX_MEDIA_SEARCH_RESULTS {
            lines.push(texts::media_more(
                self.language,
                hits.len() - MAX_MEDIA_SEARCH_RESULTS,
            ));
        }
        ToolOutput::ok(lines.join("\n"))
    }

    fn info(&self, id: &str) -> ToolOutput {
        match self.find(id) {
            Some(e) if e.description.is_empty() => ToolOutput::ok(e.hit_line()),
            Some(e) => ToolOutput::ok(format!("{}: {}", e.hit_line(), e.description)),
            None => ToolOutput::failed(texts::media_no_id(self.language, id)),
        }
    }

    fn play(&self, id: &str) -> ToolOutput {
        match self.find(id) {
            Some(e) => ToolOutput::ok(texts::media_playing(self.language, &e.title)).with_event(
                ClientEvent::Action {
                    tool: MEDIA_PLAY.to_owned(),
                    value: e.id.clone(),
                },
            ),
            None => ToolOutput::failed(texts::media_no_id(self.language, id)),
        }
    }
}

impl Toolset for MediaToolset {
    fn name(&self) -> &str {
        MEDIA
    }

    fn summary(&self) -> &str {
        texts::media_summary(self.language)
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// Answers at once (the catalogue is in memory), so the future is ready.
    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Args,
        _ctx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(std::future::ready(self.run(tool, args)))
    }
}

impl MediaToolset {
    /// Runs one of the set's tools.
    fn run(&self, tool: &str, args: &Args) -> ToolOutput {
        match tool {
            MEDIA_SEARCH => self.search(args.text("query")),
            MEDIA_INFO => self.info(args.text("id")),
            MEDIA_PLAY => self.play(args.text("id")),
            MEDIA_CONTROL => {
                let action = args.text("action").to_ascii_lowercase();
                ToolOutput::ok(texts::media_controlled(self.language, &action)).with_event(
                    ClientEvent::Action {
                        tool: MEDIA_CONTROL.to_owned(),
                        value: action,
                    },
                )
            }
            // The registry routes only listed tools here; answer anyway.
            other => ToolOutput::failed(unknown_tool(self.language, other, MEDIA, &self.tools)),
        }
    }
}
