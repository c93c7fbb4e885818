//! The texts of the taught core replies, in English and Russian: a family's
//! goals with their first steps, the sentence a tick thinks about a goal,
//! and the command that serves it, as a `TOOL_CALL` line or as the seed's
//! JSON command block (both forms the core's prompt teaches).

use porfiry_skills::Language;

use super::core_goals::DrawnGoal;

/// A goal a person gives their node, and steps toward it.
pub struct GoalText {
    en: &'static str,
    ru: &'static str,
    steps_en: [&'static str; 3],
    steps_ru: [&'static str; 3],
}

impl GoalText {
    /// The goal's title in `language`.
    pub fn title(&self, language: Language) -> &'static str {
        match language {
            Language::En => self.en,
            Language::Ru => self.ru,
        }
    }

    /// Step `n` toward it (the steps taken in turn, again from the first
    /// once all are taken).
    pub fn step(&self, language: Language, n: usize) -> &'static str {
        let steps = match language {
            Language::En => &self.steps_en,
            Language::Ru => &self.steps_ru,
        };
        steps[n % steps.len()]
    }
}

/// The goals scratch nodes are given (two each).
pub const GOALS: &[GoalText] = &[
    GoalText {
        en: "Learn to bake rye bread",
        ru: "Научиться печь ржаной хлеб",
        steps_en: [
            "Find a simple rye bread recipe",
            "Buy rye flour and a starter",
            "Bake a first test loaf",
        ],
        steps_ru: [
            "Найти простой рецепт ржаного хлеба",
            "Купить ржаную муку и закваску",
            "Испечь первую пробную буханку",
        ],
    },
    GoalText {
        en: "Run 5 km without stopping",
        ru: "Пробежать 5 км без остановки",
        steps_en: [
            "Run 2 km three times this week",
            "Buy running shoes",
            "Plan a 5 km route in the park",
        ],
        steps_ru: [
            "Бегать по 2 км три раза на этой неделе",
            "Купить кроссовки для бега",
            "Проложить маршрут на 5 км в парке",
        ],
    },
    GoalText {
        en: "Call grandma every Sunday",
        ru: "Звонить бабушке каждое воскресенье",
        steps_en: [
            "Set a Sunday reminder to call grandma",
            "Ask grandma which time suits her",
            "Write down what we talked about",
        ],
        steps_ru: [
            "Поставить напоминание позвонить бабушке в воскресенье",
            "Спросить бабушку, какое время ей удобно",
            "Записать, о чём говорили",
        ],
    },
    GoalText {
        en: "Learn 300 Spanish words",
        ru: "Выучить 300 испанских слов",
        steps_en: [
            "Pick a list of 300 common words",
            "Learn 20 words this week",
            "Review the words every evening",
        ],
        steps_ru: [
            "Выбрать список из 300 частых слов",
            "Выучить 20 слов на этой неделе",
            "Повторять слова каждый вечер",
        ],
    },
    GoalText {
        en: "Tidy the garage",
        ru: "Разобрать гараж",
        steps_en: [
            "Sort the garage shelves",
            "Take the old paint to recycling",
            "Sell the spare bicycle",
        ],
        steps_ru: [
            "Разобрать полки в гараже",
            "Сдать старую краску в переработку",
            "Продать лишний велосипед",
        ],
    },
    GoalText {
        en: "Read 12 books this year",
        ru: "Прочитать 12 книг за год",
        steps_en: [
            "Choose the first three books",
            "Read 20 pages a day",
            "Write a short note on each finished book",
        ],
        steps_ru: [
            "Выбрать первые три книги",
            "Читать по 20 страниц в день",
            "Писать короткую заметку о каждой прочитанной книге",
        ],
    },
    GoalText {
        en: "Plan the family summer trip",
        ru: "Спланировать семейную поездку летом",
        steps_en: [
            "Ask everyone where they want to go",
            "Compare the costs of train and car",
            "Book the rooms",
        ],
        steps_ru: [
            "Спросить всех, куда они хотят поехать",
            "Сравнить цену поезда и машины",
            "Забронировать жильё",
        ],
    },
    GoalText {
        en: "Fix the leaking kitchen tap",
        ru: "Починить текущий кран на кухне",
        steps_en: [
            "Find the tap's model",
            "Buy a new cartridge for the tap",
            "Replace the cartridge",
        ],
        steps_ru: [
            "Узнать модель крана",
            "Купить новый картридж для крана",
            "Заменить картридж",
        ],
    },
];

/// The reply to the tick's evaluation and reflex questions (not taught: a
/// usable judgement so the tick goes on to run its commands).
pub fn evaluation(language: Language) -> String {
    match language {
        Language::En => {
            r#"{"novel": "yes", "novelty": 0.7, "new_ideas": ["a next step"], "tags": ["goals"]}"#
        }
        Language::Ru => {
            r#"{"novel": "yes", "novelty": 0.7, "new_ideas": ["следующий шаг"], "tags": ["цели"]}"#
        }
    }
    .to_owned()
}

/// The taught reply about goal `id`, its step `step`: one sentence, then
/// one command in the form `form` draws (a task line most, then the JSON
/// block, then a diary line).
pub fn reply_for(language: Language, id: i64, goal: &DrawnGoal, step: usize, form: u32) -> String {
    let title = goal.title(language);
    let next = goal.step(language, step);
    let thought = match (language, step) {
        (Language::En, 0) => {
            format!("Goal {id} \"{title}\" has no task yet; the first step is clear.")
        }
        (Language::En, _) => format!("Goal {id} \"{title}\" moves on; one more step."),
        (Language::Ru, 0) => format!("У цели {id} «{title}» ещё нет задач; первый шаг ясен."),
        (Language::Ru, _) => format!("Цель {id} «{title}» движется; ещё один шаг."),
    };
    match form % 4 {
        0 | 1 => format!("{thought}\nTOOL_CALL: tasks_add|{next}|{id}"),
        2 => {
            let (open, close, why) = match language {
                Language::En => (
                    "# Commands:",
                    "# End of commands",
                    "the next step of the goal",
                ),
                Language::Ru => ("# Команды:", "# Конец команд", "следующий шаг цели"),
            };
            // In the order the prompt's own example writes a command.
            let quoted = |s: &str| serde_json::Value::from(s).to_string();
            format!(
                "{thought}\n{open}\n{{\"cmd_id\": \"c1\", \"type\": \"tasks_add\", \"args\": \
                 {{\"title\": {}, \"goal\": {id}}}, \"description\": {}}}\n{close}",
                quoted(next),
                quoted(why)
            )
        }
        _ => {
            let (entry, tag) = match language {
                Language::En => (format!("For goal {id}: {next}."), "goals"),
                Language::Ru => (format!("Для цели {id}: {next}."), "цели"),
            };
            format!("{thought}\nTOOL_CALL: diary_add|{entry}|{tag}")
        }
    }
}
