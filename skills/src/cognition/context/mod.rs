//! Contexts 0–6 of a tick's prompt (seed 003 §2–3), assembled from rows the
//! node loaded, under a token budget.
//!
//! The request has two messages. The system message is context 0: the core
//! system prompt from `system_prompts`, the output-format instructions, the
//! catalogue of command sets (one line each; `help` shows a set's tools)
//! and the agent's own utilities and tables. One user message holds
//! contexts 1–6 in the seed's order, the line saying what was cut, this
//! tick's anti-stagnation hints, and a closing line.
//!
//! **Budget.** The prompt fits `budget_tokens` minus the room kept for the
//! answer ([`budget::answer_reserve`]), by the
//! conservative [`estimate_tokens`]. Never
//! cut: the system prompt, the instructions, the headings, the mode, task
//! count, per-priority counts and tick lines, and the hints. Cut, whole
//! records only, the blocks of [`ContextBlock`]: first the newest recent
//! reply, then goals and pinned tasks, newest first, up to
//! [`INTENT_FIRST_PERCENT`] of the room, then open processes up to
//! [`RESULTS_FIRST_PERCENT`]; then
//! the catalogue takes what it needs (only a context too small for it
//! loses its last lines); then each other block its newest record, in [`KEEP_ORDER`], then its
//! newest records up to its share of the room
//! ([`ContextBlock::share_percent`]), then the room left goes to older
//! records in [`KEEP_ORDER`]: recent replies, goals, pinned tasks,
//! processes, requested records, notes, notebook, utilities, settings. One
//! line says what was cut ("Cut to fit the context (oldest first): 3 of 10
//! recent replies, 120 of 130 notes."). If the never-cut part alone is over
//! the budget, the prompt is returned over it and [`BuiltPrompt::tokens`]
//! says by how much.
//!
//! Every list in [`ContextData`] is given oldest first (the last item is the
//! newest). A record longer than [`MAX_RECORD_CHARS`] is shown cut with `…`
//! (its tool reads it whole); whitespace inside a record is collapsed so a
//! record is one line.

mod data;
mod records;

pub use data::{
    BuiltPrompt, ContextData, Line, NoteLine, NotesView, ProcessLine, RecentLine, UnreadNote,
};
pub use records::{MAX_RECORD_CHARS, record_prefix};

use super::budget::{self, Block, MESSAGE_OVERHEAD_TOKENS, estimate_tokens, record_cost};
use super::texts::prompt::{self as texts, Section};
use crate::{ChatMessage, Language, ModelRequest};
use records::block_of;

/// A block of whole records the budget may cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextBlock {
    /// Context 0: the command-set catalogue (cut last lines first).
    Catalogue,
    /// Context 0: the agent's utilities and tables.
    Utilities,
    /// Context 1: recent replies with reflections.
    Recent,
    /// Context 1: goals.
    Goals,
    /// Context 1: pinned tasks.
    PinnedTasks,
    /// Context 2: open processes.
    Processes,
    /// Context 3: requested records.
    Requested,
    /// Context 4: notes (auto) or unread ids (manual).
    Notes,
    /// Context 5: further settings.
    Settings,
    /// Context 6: the notebook.
    Memory,
}

/// The order the blocks take their newest record in, and the room left
/// after the shares goes to, most important first: the recent replies are
/// the model's train of thought (without the last one it repeats itself);
/// goals and pinned tasks steer everything and are few; processes carry the
/// results of the model's own commands; then what it asked for, what others
/// sent, its notebook, and the rarely needed utilities and extra settings.
pub const KEEP_ORDER: [ContextBlock; 9] = [
    ContextBlock::Recent,
    ContextBlock::Goals,
    ContextBlock::PinnedTasks,
    ContextBlock::Processes,
    ContextBlock::Requested,
    ContextBlock::Notes,
    ContextBlock::Memory,
    ContextBlock::Utilities,
    ContextBlock::Settings,
];

impl ContextBlock {
    /// The share of the room each block is sure of before the rest is
    /// handed out by [`KEEP_ORDER`] (percent, 100 in all), so that 10,000
    /// requested records cannot push out every note. The catalogue has no
    /// share: it is fitted before every block but the last reply, goals,
    /// pinned tasks and processes (see [`INTENT_FIRST_PERCENT`] and
    /// [`RESULTS_FIRST_PERCENT`]).
    pub fn share_percent(self) -> usize {
        match self {
            ContextBlock::Catalogue => 0,
            ContextBlock::Recent => 30,
            ContextBlock::Requested | ContextBlock::Notes => 20,
            ContextBlock::Processes => 10,
            ContextBlock::Goals | ContextBlock::PinnedTasks | ContextBlock::Memory => 5,
            ContextBlock::Utilities => 3,
            ContextBlock::Settings => 2,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The share of the room (percent) goals, then pinned tasks, take before
/// the catalogue: a tick that cannot see the person's goals cannot serve
/// them, while a few dozen goals must not push out every command set.
pub const INTENT_FIRST_PERCENT: usize = 15;

/// The share of the room (percent) open processes — the results of the
/// model's own commands — take before the catalogue, after the goals: at
/// 1,024 tokens the catalogue alone would fill what is left, and a result
/// the model never sees stays open.
pub const RESULTS_FIRST_PERCENT: usize = 10;

/// How many kinds of block there are.
const BLOCKS: usize = 10;

/// The blocks in the order they appear in the prompt (for the cut line).
const SHOW_ORDER: [ContextBlock; BLOCKS] = [
    ContextBlock::Catalogue,
    ContextBlock::Utilities,
    ContextBlock::Recent,
    ContextBlock::Goals,
    ContextBlock::PinnedTasks,
    ContextBlock::Processes,
    ContextBlock::Requested,
    ContextBlock::Notes,
    ContextBlock::Settings,
    ContextBlock::Memory,
];

/// Builds the tick's prompt within `budget_tokens` (the model's context;
/// [`DEFAULT_CONTEXT_TOKENS`](super::budget::DEFAULT_CONTEXT_TOKENS) by
/// default). See the module doc for what is cut and in which order.
pub fn build_prompt(data: &ContextData, budget_tokens: usize) -> BuiltPrompt {
    let lang = data.language;
    let limit = budget::prompt_limit(budget_tokens);
    let system_fixed = system_fixed(data);
    let user_parts = user_parts(data);
    let utilities_heading = if data.utilities.is_empty() {
        0
    } else {
        2 + record_cost(texts::utilities_heading(lang)) // after a blank line
    };
    let fixed = estimate_tokens(&system_fixed)
        + utilities_heading
        + user_parts.iter().map(|p| p.fixed_cost()).sum::<usize>()
        + MESSAGE_OVERHEAD_TOKENS;
    // First without room for the cut line; if anything is cut, again with
    // room for the longest line those blocks' totals can give; if that cut
    // more blocks, once more with room for every block's.
    let mut fitted = fit_blocks(data, limit.saturating_sub(fixed));
    let mut cut = cut_entries(lang, &fitted);
    let mut reserved_for = Vec::new();
    while !cut.is_empty() {
        let cut_blocks = cut_blocks(&fitted);
        if cut_blocks.iter().all(|b| reserved_for.contains(b)) {
            break;
        }
        reserved_for = if reserved_for.is_empty() {
            cut_blocks
        } else {
            SHOW_ORDER.to_vec()
        };
        let worst = reserved_for
            .iter()
            .map(|&b| (b, fitted.total[b.index()]))
            .filter(|&(_, total)| total > 0)
            .map(|(b, total)| texts::cut_entry(lang, b, total, total))
            .collect::<Vec<_>>();
        let reserve = record_cost(&texts::cut_line(lang, &worst));
        fitted = fit_blocks(data, limit.saturating_sub(fixed + reserve));
        cut = cut_entries(lang, &fitted);
    }
    let system = assemble_system(data, system_fixed, &fitted);
    let user = assemble_user(lang, &user_parts, &fitted, &cut);
    let tokens = estimate_tokens(&system) + estimate_tokens(&user) + MESSAGE_OVERHEAD_TOKENS;
    if tokens > limit {
        tracing::warn!(
            tokens,
            limit,
            "the never-cut part of the core prompt is over the budget"
        );
    }
    BuiltPrompt {
        request: ModelRequest::new(
            system,
            vec![ChatMessage::user(user)],
            Some(crate::llm::budgets::tick_answer_max_tokens(budget_tokens)),
        ),
        tokens,
        cut,
        shown_processes: shown_processes(data, &fitted),
    }
}

/// The ids of the processes `fitted` kept: a block keeps its newest
/// records, and the processes come oldest first.
fn shown_processes(data: &ContextData, fitted: &Fitted) -> Vec<i64> {
    let kept = fitted.kept[ContextBlock::Processes.index()].len();
    data.processes[data.processes.len().saturating_sub(kept)..]
        .iter()
        .map(|p| p.id)
        .collect()
}

/// Context 0 without its blocks: prompt, instructions, catalogue heading.
fn system_fixed(data: &ContextData) -> String {
    let lang = data.language;
    let mut out = String::with_capacity(4096);
    out.push_str(data.system_prompt.trim());
    out.push_str("\n\n");
    out.push_str(texts::output_instructions(lang));
    out.push_str("\n\n");
    out.push_str(texts::catalogue_heading(lang));
    out
}

/// A piece of the user message.
enum Part {
    /// A line never cut.
    Fixed(String),
    /// A block's kept records, one per line.
    Lines(ContextBlock),
    /// A label and a block's kept records on one line, `, `-separated.
    Inline(&'static str, ContextBlock),
    /// Where the cut line goes, when anything was cut (its room is kept
    /// apart, see [`build_prompt`]).
    CutLine,
}

impl Part {
    fn fixed_cost(&self) -> usize {
        match self {
            Part::Fixed(line) => record_cost(line),
            Part::Lines(_) | Part::CutLine => 0,
            Part::Inline(label, _) => record_cost(label),
        }
    }
}

/// The user message's parts in the seed's order.
fn user_parts(data: &ContextData) -> Vec<Part> {
    let lang = data.language;
    let mut parts = Vec::with_capacity(24);
    let recent = if data.cycle.concentration.is_some() {
        Section::Concentrated
    } else {
        Section::Recent
    };
    parts.push(Part::Fixed(texts::heading(
        lang,
        recent,
        data.recent.is_empty(),
    )));
    parts.push(Part::Lines(ContextBlock::Recent));
    parts.push(Part::Fixed(texts::mode_line(lang, &data.cycle)));
    parts.push(Part::Fixed(
        texts::goals_line(lang, data.goals.is_empty()).to_owned(),
    ));
    parts.push(Part::Lines(ContextBlock::Goals));
    parts.push(Part::Fixed(texts::tasks_line(
        lang,
        data.tasks_total,
        !data.pinned_tasks.is_empty(),
    )));
    parts.push(Part::Lines(ContextBlock::PinnedTasks));
    let section = |s, empty| Part::Fixed(texts::heading(lang, s, empty));
    parts.push(section(Section::Processes, data.processes.is_empty()));
    parts.push(Part::Lines(ContextBlock::Processes));
    parts.push(section(Section::Requested, data.requested.is_empty()));
    parts.push(Part::Lines(ContextBlock::Requested));
    match &data.notes {
        NotesView::Manual {
            per_priority,
            unread,
        } => {
            let empty = per_priority.is_empty() && unread.is_empty();
            parts.push(section(Section::NotesManual, empty));
            if !per_priority.is_empty() {
                parts.push(Part::Fixed(texts::notes_per_priority(lang, per_priority)));
            }
            if !unread.is_empty() {
                parts.push(Part::Inline(texts::unread_label(lang), ContextBlock::Notes));
            }
        }
        NotesView::Auto { notes } => {
            parts.push(section(Section::NotesAuto, notes.is_empty()));
            parts.push(Part::Lines(ContextBlock::Notes));
        }
    }
    parts.push(section(Section::Settings, false));
    parts.push(Part::Fixed(texts::tick_line(
        lang,
        data.tick,
        &data.now,
        data.cycle.pause_secs,
    )));
    parts.push(Part::Lines(ContextBlock::Settings));
    parts.push(section(Section::Memory, data.memory.is_empty()));
    parts.push(Part::Lines(ContextBlock::Memory));
    parts.push(Part::CutLine);
    if !data.hints.is_empty() {
        parts.push(section(Section::Hints, false));
        for hint in &data.hints {
            parts.push(Part::Fixed(format!("- {}", hint.trim())));
        }
    }
    parts.push(Part::Fixed(texts::closing(lang).to_owned()));
    parts
}

/// The kept records of each block (indexed by [`ContextBlock::index`]).
struct Fitted {
    kept: [Vec<String>; BLOCKS],
    total: [usize; BLOCKS],
}

/// Fits every block into `room` tokens: the catalogue first (its first
/// lines kept), then the others by shares and [`KEEP_ORDER`].
fn fit_blocks(data: &ContextData, room: usize) -> Fitted {
    let lang = data.language;
    let mut blocks: Vec<Block<'_>> = KEEP_ORDER
        .iter()
        .map(|&kind| block_of(data, lang, kind))
        .collect();
    // Before the catalogue: the last reply (the thread of thought), then
    // what the person wants, goals and pinned tasks, up to their share. A
    // small model's context (1,024 tokens) once went to 16 command sets and
    // showed "Goals:" empty on a node with two goals.
    let mut first = 0;
    for (kind, block) in KEEP_ORDER.iter().zip(blocks.iter_mut()) {
        if *kind == ContextBlock::Recent {
            first += block.take_newest(room);
        }
    }
    let intent_room = (room * INTENT_FIRST_PERCENT / 100).min(room - first);
    let mut intent_taken = 0;
    for (kind, block) in KEEP_ORDER.iter().zip(blocks.iter_mut()) {
        if matches!(kind, ContextBlock::Goals | ContextBlock::PinnedTasks) {
            intent_taken += block.take_within(intent_room - intent_taken);
        }
    }
    // Then the results of the model's own commands, up to their share: a
    // result never shown stays open, unseen, tick after tick.
    let results_room = (room * RESULTS_FIRST_PERCENT / 100).min(room - first - intent_taken);
    let mut results_taken = 0;
    for (kind, block) in KEEP_ORDER.iter().zip(blocks.iter_mut()) {
        if *kind == ContextBlock::Processes {
            results_taken += block.take_within(results_room);
        }
    }
    let room = room - first - intent_taken - results_taken;
    let mut catalogue = block_of(data, lang, ContextBlock::Catalogue);
    let room = room - catalogue.take_within(room);
    budget::fit(&mut blocks, room);
    let mut fitted = Fitted {
        kept: Default::default(),
        total: [0; BLOCKS],
    };
    fitted.total[ContextBlock::Catalogue.index()] = catalogue.total;
    let mut kept = catalogue.into_kept();
    kept.reverse();
    fitted.kept[ContextBlock::Catalogue.index()] = kept;
    for (kind, block) in KEEP_ORDER.into_iter().zip(blocks) {
        fitted.total[kind.index()] = block.total;
        fitted.kept[kind.index()] = block.into_kept();
    }
    fitted
}

/// The blocks that lost records, in [`SHOW_ORDER`].
fn cut_blocks(fitted: &Fitted) -> Vec<ContextBlock> {
    SHOW_ORDER
        .into_iter()
        .filter(|b| fitted.kept[b.index()].len() < fitted.total[b.index()])
        .collect()
}

/// `3 of 10 recent replies`, … for every block that lost records.
fn cut_entries(lang: Language, fitted: &Fitted) -> Vec<String> {
    SHOW_ORDER
        .iter()
        .filter_map(|&b| {
            let total = fitted.total[b.index()];
            let cut = total - fitted.kept[b.index()].len();
            (cut > 0).then(|| texts::cut_entry(lang, b, cut, total))
        })
        .collect()
}

/// Context 0 whole.
fn assemble_system(data: &ContextData, mut system: String, fitted: &Fitted) -> String {
    for line in &fitted.kept[ContextBlock::Catalogue.index()] {
        system.push('\n');
        system.push_str(line);
    }
    let utilities = &fitted.kept[ContextBlock::Utilities.index()];
    if !utilities.is_empty() {
        system.push_str("\n\n");
        system.push_str(texts::utilities_heading(data.language));
        for line in utilities {
            system.push('\n');
            system.push_str(line);
        }
    }
    system
}

/// Contexts 1–6, the cut line, the hints and the closing line.
fn assemble_user(lang: Language, parts: &[Part], fitted: &Fitted, cut: &[String]) -> String {
    let mut out = String::with_capacity(8192);
    let mut push_line = |line: &str| {
        out.push_str(line);
        out.push('\n');
    };
    for part in parts {
        match part {
            Part::Fixed(line) => push_line(line),
            Part::Lines(block) => fitted.kept[block.index()]
                .iter()
                .for_each(|line| push_line(line)),
            Part::Inline(label, block) => {
                let kept = &fitted.kept[block.index()];
                if !kept.is_empty() {
                    push_line(&format!("{label}{}", kept.join(", ")));
                }
            }
            Part::CutLine if !cut.is_empty() => push_line(&texts::cut_line(lang, cut)),
            Part::CutLine => {}
        }
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests;
