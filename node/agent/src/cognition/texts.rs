//! Every text the core's IO glue shows a model, English and Russian: the
//! short record of a fired reflex, `help` replies, the prompts the
//! anti-stagnation mechanisms put into the next tick's context, and the
//! results of the commands of a tick the node stopped in.

use porfiry_skills::Language;

/// The reflection line of a reflex record.
pub fn reflex_reflection(lang: Language) -> String {
    match lang {
        Language::En => "no new ideas: repetition".into(),
        Language::Ru => "новых идей нет: повтор".into(),
    }
}

/// `help` without an argument: the sets, one per line.
pub fn help_index(lang: Language, lines: &[String]) -> String {
    let head = match lang {
        Language::En => "Command sets (`help SET` lists its commands):",
        Language::Ru => "Наборы команд (`help НАБОР` покажет его команды):",
    };
    format!("{head}\n{}", lines.join("\n"))
}

/// `help` for a set or tool nobody has.
pub fn help_unknown(lang: Language, what: &str) -> String {
    match lang {
        Language::En => format!("no command set or command {what:?}; `help` lists the sets"),
        Language::Ru => format!("нет набора или команды {what:?}; `help` покажет наборы"),
    }
}

/// Asking friends for something new (the mesh request mechanism): the note
/// posted to friends.
pub fn ask_friends_note(lang: Language, topic: &str) -> String {
    match lang {
        Language::En => format!(
            "I seem to be going round in circles on \"{topic}\". Tell me something new: what would you explore now?"
        ),
        Language::Ru => format!(
            "Кажется, я хожу по кругу в теме «{topic}». Расскажите что-нибудь новое: что бы вы сейчас исследовали?"
        ),
    }
}

/// The hint after friends were asked.
pub fn asked_friends_hint(lang: Language) -> String {
    match lang {
        Language::En => "Anti-stagnation: you asked your friends for something new; read their answers in the incoming notes.".into(),
        Language::Ru => "Антистагнация: ты попросил друзей рассказать что-нибудь новое; читай их ответы во входящих заметках.".into(),
    }
}

/// Flashback: a distant diary entry.
pub fn flashback_hint(lang: Language, id: i64, text: &str) -> String {
    match lang {
        Language::En => format!(
            "Anti-stagnation (flashback): an old diary entry #{id}, far from your recent thoughts: \"{text}\". Connect it to your current problem."
        ),
        Language::Ru => format!(
            "Антистагнация (flashback): давняя запись дневника #{id}, далёкая от недавних мыслей: «{text}». Свяжи её с текущей задачей."
        ),
    }
}

/// Interest memory: the longest-untouched tag.
pub fn interest_hint(lang: Language, tag: &str) -> String {
    match lang {
        Language::En => format!(
            "Anti-stagnation (interest memory): you have not returned to the topic #{tag} for the longest time. Is it still relevant? Think about it."
        ),
        Language::Ru => format!(
            "Антистагнация (память интересов): к теме #{tag} ты не возвращался дольше всего. Актуальна ли она? Подумай о ней."
        ),
    }
}

/// Meta-analysis (seed wording).
pub fn meta_analysis_hint(lang: Language) -> String {
    match lang {
        Language::En => "Anti-stagnation (meta-analysis): if I am stuck in a loop, what is the meta-problem? Which change of strategy should I apply?".into(),
        Language::Ru => "Антистагнация (мета-анализ): если я зациклился, в чём метапроблема? Какую стратегию смены применить?".into(),
    }
}

/// Rationale reflex (seed wording).
pub fn rationale_hint(lang: Language) -> String {
    match lang {
        Language::En => "Anti-stagnation (rationale): why did I take exactly this decision? What pushed me to repeat the thought?".into(),
        Language::Ru => "Антистагнация (рефлексия мотивации): почему я принял именно это решение? Что подтолкнуло меня повторить мысль?".into(),
    }
}

/// Goal reformulation for the named goal.
pub fn reformulate_hint(lang: Language, goal: &str) -> String {
    match lang {
        Language::En => format!(
            "Anti-stagnation (goal reformulation): simplify or sharpen the goal \"{goal}\" to lower the pressure; update it with goals_update."
        ),
        Language::Ru => format!(
            "Антистагнация (переформулировка цели): упрости или уточни цель «{goal}», чтобы снизить давление; обнови её через goals_update."
        ),
    }
}

/// Task switch: the task now in focus.
pub fn task_switch_hint(lang: Language, task: &str) -> String {
    match lang {
        Language::En => format!(
            "Anti-stagnation (task switch): the current task is set aside for a while; work on \"{task}\" now."
        ),
        Language::Ru => format!(
            "Антистагнация (переключение задачи): текущая задача отложена на время; займись сейчас «{task}»."
        ),
    }
}

/// The automatic reminder when a task switch returns (seed: "Автоматический
/// триггер-напоминание о задаче").
pub fn task_return_hint(lang: Language, tasks: &str) -> String {
    match lang {
        Language::En => format!(
            "Back to your task: {tasks} is pinned again. Compare where you are now with before the switch."
        ),
        Language::Ru => format!(
            "Возвращение к задаче: {tasks} снова закреплена. Сравни, где ты сейчас, с тем, что было до переключения."
        ),
    }
}

/// The result of a random allowed action.
pub fn random_action_hint(lang: Language, tool: &str, output: &str) -> String {
    match lang {
        Language::En => format!(
            "Anti-stagnation (random step): the core ran {tool} to break the pattern. It answered: {output}"
        ),
        Language::Ru => format!(
            "Антистагнация (случайный шаг): ядро выполнило {tool}, чтобы разорвать шаблон. Ответ: {output}"
        ),
    }
}

/// Switched to another model.
pub fn switch_model_hint(lang: Language, model: &str) -> String {
    match lang {
        Language::En => format!("Anti-stagnation: this tick thinks with another model, {model}."),
        Language::Ru => format!("Антистагнация: в этом тике думает другая модель, {model}."),
    }
}

/// Ask the user for an opinion.
pub fn ask_user_hint(lang: Language) -> String {
    match lang {
        Language::En => "Anti-stagnation (dialogue with the user): ask the user a question or their opinion with notes_add; their answer may bring an unexpected idea.".into(),
        Language::Ru => "Антистагнация (диалог с пользователем): задай пользователю вопрос или спроси мнение через notes_add; ответ может дать неожиданную идею.".into(),
    }
}

/// The catalogue line of the core's own `mesh_interact` command.
pub fn mesh_catalogue_line(lang: Language) -> String {
    match lang {
        Language::En => "mesh — mesh_interact|question: ask your friends over the mesh; their answers come back as a process in context 2".into(),
        Language::Ru => "mesh — mesh_interact|вопрос: спросить друзей через Mesh; их ответы придут процессом в контекст 2".into(),
    }
}

/// `mesh_interact` posted its question.
pub fn mesh_asked(lang: Language, note: i64, process: i64) -> String {
    match lang {
        Language::En => {
            format!("asked friends in note #{note}; their answers will come in process #{process}")
        }
        Language::Ru => {
            format!("друзья спрошены в заметке #{note}; их ответы придут в процесс #{process}")
        }
    }
}

/// `mesh_interact` without a question, or with one too long.
pub fn mesh_bad_question(lang: Language, max: usize) -> String {
    match lang {
        Language::En => format!("mesh_interact needs a question of 1 to {max} characters"),
        Language::Ru => format!("mesh_interact нужен вопрос длиной от 1 до {max} символов"),
    }
}

/// `mesh_interact` where no friend can be reached.
pub fn mesh_unreachable(lang: Language, why: &str) -> String {
    match lang {
        Language::En => format!("cannot ask friends: {why}"),
        Language::Ru => format!("не могу спросить друзей: {why}"),
    }
}

/// The result of a command the node stopped in the middle of (a recovered
/// tick, [`crate::cognition::journal`]): it may or may not have done its work.
pub fn command_interrupted(lang: Language) -> &'static str {
    match lang {
        Language::En => {
            "the node stopped while this command ran; its outcome is unknown: check whether it took effect before running it again"
        }
        Language::Ru => {
            "узел остановился, пока выполнялась эта команда; её результат неизвестен: проверь, сработала ли она, прежде чем запускать её снова"
        }
    }
}

/// The result of a command the node stopped before it started (a
/// recovered tick): it did nothing.
pub fn command_not_started(lang: Language) -> &'static str {
    match lang {
        Language::En => "not run: the node stopped before this command started",
        Language::Ru => "не выполнена: узел остановился до её запуска",
    }
}

/// The outside-world check: friends' new notes and the feeds being fetched.
pub fn world_check_hint(lang: Language, notes: &[String], fetches: &[String]) -> String {
    let (head, notes_head, none, feeds_head) = match lang {
        Language::En => (
            "Anti-stagnation (check of the outside world):",
            "new from friends:",
            "nothing new from friends.",
            "feeds being fetched (their text comes as processes in context 2):",
        ),
        Language::Ru => (
            "Антистагнация (проверка внешнего мира):",
            "новое от друзей:",
            "от друзей ничего нового.",
            "загружаются ленты (их текст придёт процессами в контекст 2):",
        ),
    };
    let mut out = vec![head.to_owned()];
    if notes.is_empty() {
        out.push(none.to_owned());
    } else {
        out.push(notes_head.to_owned());
        out.extend(notes.iter().map(|n| format!("- {n}")));
    }
    if !fetches.is_empty() {
        out.push(feeds_head.to_owned());
        out.extend(fetches.iter().map(|f| format!("- {f}")));
    }
    out.join("\n")
}

/// New material to read: an unread note someone else wrote.
pub fn read_material_hint(lang: Language, id: i64, from: &str, text: &str) -> String {
    match lang {
        Language::En => format!(
            "Anti-stagnation (information feed): new material, note #{id} from {from}, now marked read: \"{text}\". Find one fresh association for your current problem."
        ),
        Language::Ru => format!(
            "Антистагнация (информационная подпитка): новый материал, заметка #{id} от {from}, теперь прочитана: «{text}». Найди одну свежую ассоциацию для текущей задачи."
        ),
    }
}

/// Who wrote a note, for the read-material hint: a friend's id, else the
/// note's source.
pub fn note_author(lang: Language, friend: Option<&str>, source: &str) -> String {
    match (friend, lang) {
        (Some(peer), Language::En) => format!("friend {peer}"),
        (Some(peer), Language::Ru) => format!("друга {peer}"),
        (None, Language::En) => format!("the {source}"),
        (None, Language::Ru) => format!("источника {source}"),
    }
}

/// A notes mode's name for the change-of-setting hints.
pub fn notes_mode_name(lang: Language, auto: bool) -> &'static str {
    match (lang, auto) {
        (Language::En, true) => "auto (notes shown whole)",
        (Language::En, false) => "manual (note counts and ids; read with notes_read)",
        (Language::Ru, true) => "auto (заметки показаны целиком)",
        (Language::Ru, false) => "manual (счётчики и id заметок; читать через notes_read)",
    }
}

/// The change of setting: another notes mode and another goal for a few ticks.
pub fn environment_hint(lang: Language, mode: &str, ticks: u64, goal: Option<&str>) -> String {
    let goal = goal.unwrap_or("-");
    match lang {
        Language::En => format!(
            "Anti-stagnation (change of setting): for the next {ticks} ticks incoming notes come in mode {mode}, and the goal in focus is \"{goal}\". Think about it from this new setting."
        ),
        Language::Ru => format!(
            "Антистагнация (смена среды): следующие {ticks} тиков входящие заметки идут в режиме {mode}, а в фокусе цель «{goal}». Подумай о ней из этой новой среды."
        ),
    }
}

/// The usual setting is back after a change of setting.
pub fn environment_return_hint(lang: Language, mode: &str) -> String {
    match lang {
        Language::En => format!(
            "Back to the usual setting: incoming notes come in mode {mode} again. Compare what the other setting gave you."
        ),
        Language::Ru => format!(
            "Возврат к обычной среде: входящие заметки снова в режиме {mode}. Сравни, что дала другая среда."
        ),
    }
}

/// The frames a creative intervention looks through (seed: "фрейм-смена").
pub fn creative_frames(lang: Language) -> &'static [&'static str] {
    match lang {
        Language::En => &[
            "explain it to a ten-year-old",
            "assume the opposite is true and follow where it leads",
            "how would a gardener, a sailor or a cook solve it?",
            "describe it as a story with a beginning, a conflict and an end",
            "what would it look like a hundred years from now?",
            "make it ten times smaller, then ten times larger",
        ],
        Language::Ru => &[
            "объясни это десятилетнему ребёнку",
            "допусти, что верно обратное, и проследи, куда это ведёт",
            "как решил бы это садовник, моряк или повар?",
            "опиши это как историю с началом, конфликтом и развязкой",
            "как это будет выглядеть через сто лет?",
            "сделай это в десять раз меньше, потом в десять раз больше",
        ],
    }
}

/// A creative intervention: a topic seen through a frame.
pub fn creative_hint(lang: Language, frame: &str, focus: &str) -> String {
    match lang {
        Language::En => format!(
            "Anti-stagnation (creative intervention): shift your focus to \"{focus}\" and {frame}. Write the most unexpected idea it gives."
        ),
        Language::Ru => format!(
            "Антистагнация (креативное вмешательство): перенеси фокус на «{focus}» и {frame}. Запиши самую неожиданную идею, которая из этого выйдет."
        ),
    }
}
