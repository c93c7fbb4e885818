//! A small film toolset named `media` for the tests and the bench: the shape
//! of the node's media set (search, details, play with a client action) in
//! both languages, so the loop's mechanism is tested on a realistic set
//! without the crate owning a concrete toolset.

use porfiry_skills::{
    ArgSpec, Args, BoxFuture, CallContext, ClientEvent, Language, ToolEffect, ToolOutput, ToolSpec,
    Toolset,
};

/// One film.
#[derive(Debug, Clone)]
pub struct Film {
    pub id: String,
    pub title: String,
    pub year: Option<i32>,
    pub description: String,
}

impl Film {
    /// `id — title (year)`.
    fn line(&self) -> String {
        match self.year {
            Some(year) => format!("{} — {} ({year})", self.id, self.title),
            None => format!("{} — {}", self.id, self.title),
        }
    }
}

/// `media_search|query`, `media_info|id`, `media_play|id` over a film list.
pub struct Films {
    language: Language,
    films: Vec<Film>,
    tools: Vec<ToolSpec>,
}

impl Films {
    pub fn new(films: Vec<Film>, language: Language) -> Self {
        let en = language == Language::En;
        let pick = |e: &'static str, r: &'static str| if en { e } else { r };
        let tools = vec![
            ToolSpec::new(
                "media_search",
                pick(
                    "find films by title or words",
                    "найти фильмы по названию или словам",
                ),
                vec![ArgSpec::text("query")],
                ToolEffect::Read,
            ),
            ToolSpec::new(
                "media_info",
                pick("film details by id", "детали фильма по id"),
                vec![ArgSpec::word("id")],
                ToolEffect::Read,
            ),
            ToolSpec::new(
                "media_play",
                pick("start playing a film by id", "запустить фильм по id"),
                vec![ArgSpec::word("id")],
                ToolEffect::Write,
            ),
        ];
        Self {
            language,
            films,
            tools,
        }
    }

    fn find(&self, id: &str) -> Option<&Film> {
        self.films.iter().find(|f| f.id.eq_ignore_ascii_case(id))
    }

    /// Films whose title (first) or title and description hold every word.
    fn search(&self, query: &str) -> String {
        let lower = query.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let holds = |hay: &str| !words.is_empty() && words.iter().all(|w| hay.contains(w));
        let titles = self.films.iter().filter(|f| holds(&f.title.to_lowercase()));
        let texts = self.films.iter().filter(|f| {
            !holds(&f.title.to_lowercase())
                && holds(&format!("{} {}", f.title, f.description).to_lowercase())
        });
        let lines: Vec<String> = titles.chain(texts).take(5).map(Film::line).collect();
        if lines.is_empty() {
            format!("nothing found for {query:?}")
        } else {
            lines.join("\n")
        }
    }
}

impl Toolset for Films {
    fn name(&self) -> &str {
        "media"
    }

    fn summary(&self) -> &str {
        match self.language {
            Language::En => "films: search, details, play",
            Language::Ru => "фильмы: поиск, детали, запуск",
        }
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Args,
        _ctx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(std::future::ready(self.run(tool, args)))
    }
}

impl Films {
    fn run(&self, tool: &str, args: &Args) -> ToolOutput {
        let id = args.text("id");
        match (tool, self.find(id)) {
            ("media_search", _) => ToolOutput::ok(self.search(args.text("query"))),
            ("media_info", Some(f)) if f.description.is_empty() => ToolOutput::ok(f.line()),
            ("media_info", Some(f)) => ToolOutput::ok(format!("{}: {}", f.line(), f.description)),
            ("media_play", Some(f)) => {
                ToolOutput::ok(format!("playing: {}", f.title)).with_event(ClientEvent::Action {
                    tool: "media_play".to_owned(),
                    value: f.id.clone(),
                })
            }
            ("media_info" | "media_play", None) => ToolOutput::failed(format!(
                "no film with id {id:?}; find ids with media_search|query"
            )),
            _ => ToolOutput::failed(format!("no tool {tool:?} in media")),
        }
    }
}
