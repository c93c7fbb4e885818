//! What a person asks of the node, worded many ways in English and Russian,
//! with the call that serves each (or the plain answer where no tool does):
//! the raw material of the training data. Texts the model is taught, so
//! they live together here, both languages side by side.
//!
//! An [`Intent`] is a tool and its request templates: `{a}` and `{b}` are
//! slots filled from a [`Slot`]'s values ([`super::slots`]), the same value going into the
//! request and into the call's arguments (`args`, with the same slots). The
//! built-in scoring set's requests are never produced: the generator drops
//! any request equal to one of them ([`is_scoring_request`]).

use porfiry_skills::Language;

use crate::chat::tool_use::builtin_cases;

pub use super::slots::{Slot, slot_values};

/// A tool and the ways a person asks for it.
#[derive(Debug, Clone, Copy)]
pub struct Intent {
    /// The tool that serves it.
    pub tool: &'static str,
    /// The call's arguments, with the same slots as the requests.
    pub args: &'static str,
    /// The slot `{a}`, if any.
    pub a: Option<Slot>,
    /// The slot `{b}`, if any.
    pub b: Option<Slot>,
    /// English requests.
    pub en: &'static [&'static str],
    /// Russian requests.
    pub ru: &'static [&'static str],
    /// The answer after the tool's result, English: `{r}` is the result's
    /// first line, `{a}`/`{b}` the slots.
    pub answer_en: &'static str,
    /// The same in Russian.
    pub answer_ru: &'static str,
}

impl Intent {
    /// The requests in `language`.
    pub fn requests(&self, language: Language) -> &'static [&'static str] {
        match language {
            Language::En => self.en,
            Language::Ru => self.ru,
        }
    }

    /// The answer template in `language`.
    pub fn answer(&self, language: Language) -> &'static str {
        match language {
            Language::En => self.answer_en,
            Language::Ru => self.answer_ru,
        }
    }
}

/// Every intent the chat agent's tools serve.
pub const INTENTS: &[Intent] = &[
    Intent {
        tool: "get_current_time",
        args: "",
        a: None,
        b: None,
        en: &[
            "What's the time?",
            "Tell me the time, please.",
            "Do you know what time it is?",
            "What day is it today?",
            "What's the date today?",
            "Is it morning or evening now?",
            "What day of the week is it?",
            "Current time please.",
            "Hey, what time is it?",
        ],
        ru: &[
            "Сколько времени?",
            "Подскажи, который час.",
            "Какой сегодня день?",
            "Какое сегодня число и день недели?",
            "Сейчас утро или вечер?",
            "Скажи текущее время.",
            "Который час, не подскажешь?",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "show_text",
        args: "{a}",
        a: Some(Slot::Screen),
        b: None,
        en: &[
            "Show '{a}' on the screen.",
            "Put the text '{a}' on my screen.",
            "Display this on the screen: {a}",
            "Can you show '{a}' on the display?",
            "Write '{a}' on the screen for everyone.",
        ],
        ru: &[
            "Покажи на экране «{a}».",
            "Выведи на экран текст «{a}».",
            "Напиши на экране: {a}",
            "Покажи всем на экране «{a}».",
        ],
        answer_en: "Done, it's on the screen.",
        answer_ru: "Готово, текст на экране.",
    },
    Intent {
        tool: "read_skill",
        args: "{a}",
        a: Some(Slot::Set),
        b: None,
        en: &[
            "Read your {a} skill first.",
            "What are the steps of your {a} skill?",
            "Open the {a} skill and follow it.",
            "Check the {a} skill, please.",
        ],
        ru: &[
            "Прочитай свой навык {a}.",
            "Какие шаги в навыке {a}?",
            "Открой навык {a}.",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "enable_toolset",
        args: "{a}",
        a: Some(Slot::Set),
        b: None,
        en: &[
            "Switch on the {a} tools.",
            "Turn the {a} toolset on.",
            "Activate {a}, please.",
            "I need the {a} tools now.",
        ],
        ru: &[
            "Включи инструменты {a}.",
            "Активируй набор {a}.",
            "Мне нужны инструменты {a}.",
        ],
        answer_en: "The {a} tools are on.",
        answer_ru: "Инструменты {a} включены.",
    },
    Intent {
        tool: "media_search",
        args: "{a}",
        a: Some(Slot::Film),
        b: None,
        en: &[
            "Find the film {a}.",
            "Look for {a}.",
            "Do you have {a}?",
            "Search films: {a}",
            "I want to watch {a}, can you find it?",
            "Any films like {a}?",
        ],
        ru: &[
            "Найди фильм «{a}».",
            "Поищи «{a}».",
            "У тебя есть «{a}»?",
            "Хочу посмотреть «{a}», найди его.",
            "Найди фильмы: {a}",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "media_info",
        args: "{a}",
        a: Some(Slot::FilmId),
        b: None,
        en: &[
            "What is the film {a} about?",
            "Give me details of {a}.",
            "Show the info for {a}.",
            "Who is in {a}?",
        ],
        ru: &[
            "О чём фильм {a}?",
            "Расскажи подробнее про {a}.",
            "Покажи описание {a}.",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "media_play",
        args: "{a}",
        a: Some(Slot::FilmId),
        b: None,
        en: &[
            "Play {a}.",
            "Put on {a}, please.",
            "Let's watch {a}.",
            "Start the film {a}.",
        ],
        ru: &[
            "Запусти {a}.",
            "Поставь {a}.",
            "Давай посмотрим {a}.",
            "Включи {a}, пожалуйста.",
        ],
        answer_en: "Playing {a}.",
        answer_ru: "Запускаю {a}.",
    },
    Intent {
        tool: "media_control",
        args: "pause",
        a: None,
        b: None,
        en: &[
            "Pause it.",
            "Hold the film a moment.",
            "Pause playback, please.",
        ],
        ru: &[
            "Пауза.",
            "Останови фильм на минутку.",
            "Поставь на паузу, пожалуйста.",
        ],
        answer_en: "Paused.",
        answer_ru: "На паузе.",
    },
    Intent {
        tool: "media_control",
        args: "resume",
        a: None,
        b: None,
        en: &["Resume the film.", "Carry on playing.", "Unpause, please."],
        ru: &["Продолжи фильм.", "Сними с паузы.", "Включи дальше."],
        answer_en: "Playing again.",
        answer_ru: "Продолжаю.",
    },
    Intent {
        tool: "media_control",
        args: "stop",
        a: None,
        b: None,
        en: &[
            "Stop the film.",
            "Turn the movie off.",
            "Enough, stop playing.",
        ],
        ru: &["Останови фильм.", "Выключи кино.", "Хватит, выключи."],
        answer_en: "Stopped.",
        answer_ru: "Остановил.",
    },
    Intent {
        tool: "notes_add",
        args: "{a}",
        a: Some(Slot::Note),
        b: None,
        en: &[
            "Note: {a}.",
            "Write down: {a}.",
            "Make a note to {a}.",
            "Save a note: {a}",
            "Remember this for me: {a}.",
        ],
        ru: &[
            "Заметка: {a}.",
            "Запиши: {a}.",
            "Сохрани заметку: {a}",
            "Запомни: {a}.",
        ],
        answer_en: "Noted.",
        answer_ru: "Записал.",
    },
    Intent {
        tool: "notes_list",
        args: "",
        a: None,
        b: None,
        en: &[
            "Show my notes.",
            "Any new notes?",
            "What's in my notebook?",
            "Did friends write anything?",
            "List the latest notes.",
        ],
        ru: &[
            "Покажи мои заметки.",
            "Есть новые заметки?",
            "Что в блокноте?",
            "Друзья что-нибудь писали?",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "notes_read",
        args: "{a}",
        a: Some(Slot::Number),
        b: None,
        en: &[
            "Open note {a}.",
            "Show me note number {a}.",
            "What does note {a} say?",
        ],
        ru: &[
            "Открой заметку {a}.",
            "Покажи заметку номер {a}.",
            "Что в заметке {a}?",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "notes_delete",
        args: "{a}",
        a: Some(Slot::Number),
        b: None,
        en: &[
            "Remove note {a}.",
            "Throw away note number {a}.",
            "Get rid of note {a}.",
        ],
        ru: &["Удали заметку {a}.", "Сотри заметку номер {a}."],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "messages_send",
        args: "{a}|{b}",
        a: Some(Slot::Peer),
        b: Some(Slot::Message),
        en: &[
            "Message {a}: {b}",
            "Tell {a} that {b}.",
            "Send {a} a message saying {b}.",
            "Write to {a}: {b}",
        ],
        ru: &[
            "Напиши {a}: {b}",
            "Передай {a}, что {b}.",
            "Отправь {a} сообщение: {b}",
        ],
        answer_en: "Sent to {a}.",
        answer_ru: "Отправил {a}.",
    },
    Intent {
        tool: "diary_add",
        args: "{a}",
        a: Some(Slot::Diary),
        b: None,
        en: &[
            "Diary: {a}.",
            "Add to my diary: {a}.",
            "Put in the diary that {a}.",
        ],
        ru: &[
            "Дневник: {a}.",
            "Добавь в дневник: {a}.",
            "Запиши в дневник, что {a}.",
        ],
        answer_en: "Written in the diary.",
        answer_ru: "Записал в дневник.",
    },
    Intent {
        tool: "diary_search",
        args: "{a}",
        a: Some(Slot::Query),
        b: None,
        en: &[
            "Find diary entries about {a}.",
            "What did I write about {a}?",
            "Search the diary for {a}.",
        ],
        ru: &["Найди в дневнике про «{a}».", "Что я писал про «{a}»?"],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "diary_list",
        args: "",
        a: None,
        b: None,
        en: &[
            "Show my latest diary entries.",
            "What's in my diary lately?",
        ],
        ru: &[
            "Покажи последние записи дневника.",
            "Что в дневнике за последнее время?",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "goals_add",
        args: "{a}",
        a: Some(Slot::Goal),
        b: None,
        en: &[
            "New goal: {a}.",
            "I want to {a}; make it a goal.",
            "Add a goal to {a}.",
        ],
        ru: &[
            "Новая цель: {a}.",
            "Хочу {a}, запиши как цель.",
            "Добавь цель: {a}.",
        ],
        answer_en: "Goal set.",
        answer_ru: "Цель поставлена.",
    },
    Intent {
        tool: "goals_list",
        args: "",
        a: None,
        b: None,
        en: &[
            "List my goals.",
            "Which goals do I have?",
            "Remind me of my goals.",
        ],
        ru: &["Какие у меня цели?", "Напомни мои цели.", "Покажи цели."],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "tasks_add",
        args: "{a}",
        a: Some(Slot::Task),
        b: None,
        en: &[
            "New task: {a}.",
            "Add to my to-do list: {a}.",
            "I need to {a}, add a task.",
        ],
        ru: &[
            "Новая задача: {a}.",
            "Добавь в список дел: {a}.",
            "Надо {a}, добавь задачу.",
        ],
        answer_en: "Task added.",
        answer_ru: "Задача добавлена.",
    },
    Intent {
        tool: "tasks_list",
        args: "",
        a: None,
        b: None,
        en: &[
            "What's on my to-do list?",
            "List my tasks.",
            "What tasks are left?",
        ],
        ru: &[
            "Что у меня в списке дел?",
            "Какие задачи остались?",
            "Список задач, пожалуйста.",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
    Intent {
        tool: "tasks_update",
        args: "{a}|status|done",
        a: Some(Slot::Number),
        b: None,
        en: &[
            "Task {a} is done.",
            "I finished task {a}.",
            "Tick off task {a}.",
        ],
        ru: &[
            "Задача {a} выполнена.",
            "Я сделал задачу {a}.",
            "Отметь задачу {a} как сделанную.",
        ],
        answer_en: "{r}",
        answer_ru: "{r}",
    },
];

/// Requests no tool serves, with the plain answer, English.
pub const NO_TOOL_EN: &[(&str, &str)] = &[
    ("Hi there!", "Hi! How can I help?"),
    ("Good morning!", "Good morning! What can I do for you?"),
    ("Thank you!", "You're welcome!"),
    ("Bye for now.", "Bye! Talk soon."),
    ("How are you?", "I'm fine, thanks. How can I help?"),
    ("What is the capital of Italy?", "Rome."),
    ("What is the capital of Japan?", "Tokyo."),
    ("What is the capital of Spain?", "Madrid."),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci."),
    ("Who wrote Hamlet?", "William Shakespeare."),
    ("How many days are in a week?", "Seven."),
    ("What colour is the sky on a clear day?", "Blue."),
    ("How do you say 'dog' in French?", "Chien."),
    ("How do you say 'thank you' in German?", "Danke."),
    (
        "Explain briefly what a verb is.",
        "A verb is a word for an action or a state, like 'run' or 'be'.",
    ),
    ("Give me a word that rhymes with 'cat'.", "Hat."),
    (
        "Is a tomato a fruit?",
        "Yes, botanically a tomato is a fruit.",
    ),
    (
        "Tell me something funny.",
        "Why did the scarecrow win a prize? He was outstanding in his field.",
    ),
    ("OK, great.", "Glad to help!"),
    ("Sleep well!", "Good night!"),
];

/// Requests no tool serves, with the plain answer, Russian.
pub const NO_TOOL_RU: &[(&str, &str)] = &[
    ("Здравствуй!", "Здравствуйте! Чем помочь?"),
    ("Доброе утро!", "Доброе утро! Что нужно сделать?"),
    ("Спасибо!", "Пожалуйста!"),
    ("До встречи.", "До встречи!"),
    ("Как дела?", "Хорошо, спасибо. Чем помочь?"),
    ("Какая столица Италии?", "Рим."),
    ("Какая столица Японии?", "Токио."),
    ("Какая столица Испании?", "Мадрид."),
    ("Кто написал «Евгения Онегина»?", "Александр Пушкин."),
    ("Кто нарисовал «Мону Лизу»?", "Леонардо да Винчи."),
    ("Сколько дней в неделе?", "Семь."),
    ("Как по-английски «собака»?", "Dog."),
    (
        "Объясни коротко, что такое глагол.",
        "Глагол — слово, которое называет действие или состояние: «бежать», «быть».",
    ),
    ("Подбери рифму к слову «кот».", "Рот."),
    (
        "Расскажи что-нибудь смешное.",
        "Почему программисты путают Хэллоуин и Рождество? Потому что 31 oct = 25 dec.",
    ),
    ("Хорошо, отлично.", "Рад помочь!"),
    ("Сладких снов!", "Спокойной ночи!"),
];

/// An arithmetic request and its answer: unlimited no-tool requests whose
/// answers are right by construction.
pub fn arithmetic(language: Language, a: u32, b: u32, times: bool) -> (String, String) {
    let result = if times { a * b } else { a + b };
    let request = match (language, times) {
        (Language::En, false) => format!("What is {a} plus {b}?"),
        (Language::En, true) => format!("How much is {a} times {b}?"),
        (Language::Ru, false) => format!("Сколько будет {a} плюс {b}?"),
        (Language::Ru, true) => format!("Сколько будет {a} умножить на {b}?"),
    };
    (request, result.to_string())
}

/// A request with spacing, case and punctuation taken out: how two
/// requests are compared.
pub fn normalize(request: &str) -> String {
    request
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .collect::<String>()
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `request` is one of the built-in scoring set's (normalised): the
/// data must never teach the answers it is scored on.
pub fn is_scoring_request(request: &str) -> bool {
    let request = normalize(request);
    builtin_cases(None)
        .iter()
        .any(|case| normalize(&case.request) == request)
}

/// `template` with `{a}` and `{b}` filled.
pub fn fill(template: &str, a: &str, b: &str) -> String {
    template.replace("{a}", a).replace("{b}", b)
}
