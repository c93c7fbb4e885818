//! The `llm` set's texts, and the prompts it sends other models.

use porfiry_skills::Language;

use super::pick;

/// Catalogue line of the `llm` set.
pub fn llm_summary(lang: Language) -> &'static str {
    pick(
        lang,
        "known models: list, select the main one, tune, give a task, ask several",
        "известные модели: список, выбор основной, настройка, поручение, вопрос нескольким",
    )
}

/// `llm_list` description.
pub fn llm_list_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "list the known models and their settings",
        "список известных моделей и их настроек",
    )
}

/// `llm_select` description.
pub fn llm_select_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "make a model the main one (your thinking model)",
        "сделать модель основной (модель твоего мышления)",
    )
}

/// `llm_update` description.
pub fn llm_update_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "set a model's temperature (0..2) or presence_penalty (-2..2); value default resets",
        "задать модели temperature (0..2) или presence_penalty (-2..2); значение default сбрасывает",
    )
}

/// `llm_task` description.
pub fn llm_task_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "give a task to another model in the background; the answer lands in process_list",
        "поручить задачу другой модели в фоне; ответ появится в process_list",
    )
}

/// `llm_ask` description.
pub fn llm_ask_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "ask several models (names with commas, or all) one question; answers side by side",
        "задать один вопрос нескольким моделям (имена через запятую или all); ответы рядом",
    )
}

/// A name that is not in the registry.
pub fn llm_no_name(lang: Language, name: &str) -> String {
    match lang {
        Language::En => format!("no model named {name}; see llm_list"),
        Language::Ru => format!("нет модели с именем {name}; см. llm_list"),
    }
}

/// The registry is empty.
pub fn llm_none(lang: Language) -> &'static str {
    pick(
        lang,
        "no models are known; the user adds them with `porfiry llm add`",
        "моделей нет; пользователь добавляет их через `porfiry llm add`",
    )
}

/// `llm_select` done.
pub fn llm_selected(lang: Language, name: &str) -> String {
    match lang {
        Language::En => format!("main model: {name}"),
        Language::Ru => format!("основная модель: {name}"),
    }
}

/// A setting value out of range.
pub fn llm_bad_value(lang: Language, setting: &str, value: &str, min: f64, max: f64) -> String {
    match lang {
        Language::En => format!(
            "{setting} must be a number from {min} to {max} (or default), got {value:?}; nothing changed"
        ),
        Language::Ru => format!(
            "{setting} должно быть числом от {min} до {max} (или default), получено {value:?}; ничего не изменено"
        ),
    }
}

/// The word for "the server's default" in `llm_update`'s reply.
pub fn llm_default_value(lang: Language) -> &'static str {
    pick(
        lang,
        "the server's default",
        "значение сервера по умолчанию",
    )
}

/// `llm_update` done.
pub fn llm_updated(lang: Language, name: &str, setting: &str, value: &str) -> String {
    match lang {
        Language::En => format!("{name}: {setting} is now {value}"),
        Language::Ru => format!("{name}: {setting} теперь {value}"),
    }
}

/// A row whose model cannot be built (bad endpoint, friend without a mesh).
pub fn llm_model_unusable(lang: Language, name: &str, error: &str) -> String {
    match lang {
        Language::En => format!("model {name} cannot be used: {error}"),
        Language::Ru => format!("модель {name} недоступна: {error}"),
    }
}

/// `llm_task` while the most tasks already run.
pub fn llm_task_busy(lang: Language, max: usize) -> String {
    match lang {
        Language::En => format!("refused: {max} model tasks already run; wait for one"),
        Language::Ru => format!("отказано: уже идут {max} поручения(ий) моделям; дождись одного"),
    }
}

/// The system prompt of a model doing an `llm_task`.
pub fn llm_task_system(lang: Language) -> &'static str {
    pick(
        lang,
        "Another agent's thinking core gives you a task. Do it and answer with the result only, briefly.",
        "Мыслительное ядро другого агента даёт тебе задачу. Выполни её и ответь только результатом, кратко.",
    )
}

/// A task's model call failed (the row's result).
pub fn llm_task_failed(lang: Language, error: &str) -> String {
    match lang {
        Language::En => format!("the model failed: {error}"),
        Language::Ru => format!("модель не справилась: {error}"),
    }
}

/// A task ran past its deadline (the row's result).
pub fn llm_task_timed_out(lang: Language, secs: u64) -> String {
    match lang {
        Language::En => format!("no answer within {secs} s"),
        Language::Ru => format!("нет ответа за {secs} с"),
    }
}

/// `llm_task` started.
pub fn llm_task_started(lang: Language, id: i64, name: &str) -> String {
    match lang {
        Language::En => {
            format!("task #{id} given to {name}; the answer will appear in process_list")
        }
        Language::Ru => format!("задача #{id} передана {name}; ответ появится в process_list"),
    }
}

/// The system prompt of a model asked by `llm_ask`.
pub fn llm_ask_system(lang: Language) -> &'static str {
    pick(
        lang,
        "Answer the question briefly and to the point, in a few sentences.",
        "Ответь на вопрос кратко и по существу, в нескольких предложениях.",
    )
}

/// One voice of `llm_ask` that failed.
pub fn llm_voice_failed(lang: Language, name: &str, error: &str) -> String {
    match lang {
        Language::En => format!("{name}: (no answer: {error})"),
        Language::Ru => format!("{name}: (нет ответа: {error})"),
    }
}

/// One voice of `llm_ask` that did not answer in time.
pub fn llm_voice_silent(lang: Language, name: &str, secs: u64) -> String {
    match lang {
        Language::En => format!("{name}: (silent for {secs} s)"),
        Language::Ru => format!("{name}: (молчит {secs} с)"),
    }
}

/// `llm_ask` named more models than it asks.
pub fn llm_ask_skipped(lang: Language, skipped: usize, max: usize) -> String {
    match lang {
        Language::En => format!("…{skipped} more not asked (at most {max} at once)"),
        Language::Ru => format!("…ещё {skipped} не спрошены (не больше {max} сразу)"),
    }
}

#[cfg(test)]
mod tests {
    use porfiry_skills::texts::check_translations;

    use super::*;

    fn every_text(lang: Language) -> Vec<(&'static str, String)> {
        vec![
            ("llm_summary", llm_summary(lang).to_owned()),
            ("llm_list_desc", llm_list_desc(lang).to_owned()),
            ("llm_select_desc", llm_select_desc(lang).to_owned()),
            ("llm_update_desc", llm_update_desc(lang).to_owned()),
            ("llm_task_desc", llm_task_desc(lang).to_owned()),
            ("llm_ask_desc", llm_ask_desc(lang).to_owned()),
            ("llm_no_name", llm_no_name(lang, "x")),
            ("llm_none", llm_none(lang).to_owned()),
            ("llm_selected", llm_selected(lang, "x")),
            (
                "llm_bad_value",
                llm_bad_value(lang, "temperature", "9", 0.0, 2.0),
            ),
            ("llm_default_value", llm_default_value(lang).to_owned()),
            ("llm_updated", llm_updated(lang, "x", "temperature", "0.7")),
            (
                "llm_model_unusable",
                llm_model_unusable(lang, "x", "bad url"),
            ),
            ("llm_task_busy", llm_task_busy(lang, 2)),
            ("llm_task_system", llm_task_system(lang).to_owned()),
            ("llm_task_failed", llm_task_failed(lang, "500")),
            ("llm_task_timed_out", llm_task_timed_out(lang, 600)),
            ("llm_task_started", llm_task_started(lang, 4, "x")),
            ("llm_ask_system", llm_ask_system(lang).to_owned()),
            ("llm_voice_failed", llm_voice_failed(lang, "x", "500")),
            ("llm_voice_silent", llm_voice_silent(lang, "x", 15)),
            ("llm_ask_skipped", llm_ask_skipped(lang, 2, 4)),
        ]
    }

    #[test]
    fn every_text_differs_between_languages() {
        assert_eq!(
            check_translations(
                &every_text(Language::En),
                &every_text(Language::Ru),
                include_str!("llm.rs"),
            ),
            Ok(())
        );
    }
}
