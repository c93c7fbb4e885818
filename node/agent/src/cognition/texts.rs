//! Every text the core's IO glue shows a model, English and Russian: the
//! short record of a fired reflex, `help` replies, and the prompts the
//! anti-stagnation mechanisms put into the next tick's context.

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
