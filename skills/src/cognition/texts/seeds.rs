//! The texts of what a fresh node starts with (seed 003, stagnation part):
//! one stagnation strategy per mechanism, the thinking methods (the seed's
//! micro-scenarios and a few more), the default emotion list — English and
//! Russian. The model reads them through `strategies_list` / `methods_list`.

use crate::Language;
use crate::cognition::strategy::Mechanism;

/// A strategy's or a method's text: name, description, steps.
pub(crate) type Text = (&'static str, &'static str, &'static [&'static str]);

/// The English text of the strategy built on `m`.
fn strategy_en(m: Mechanism) -> Text {
    match m {
        Mechanism::WorldCheck => (
            "Check of the outside world",
            "Ping the outside world: friends' new notes and the feeds and sites the user allowed.",
            &[
                "Look at the new notes and fetched feeds shown.",
                "Take one fresh fact into your current problem.",
            ],
        ),
        Mechanism::ReadMaterial => (
            "Information feed",
            "Read new material (scientific, fiction) to add fresh associations.",
            &[
                "Read the unread material shown.",
                "Write one association it gives for the current problem.",
            ],
        ),
        Mechanism::EnvironmentChange => (
            "Change of setting",
            "Move the task to another setting: the other way of reading notes and another goal in focus for a few ticks.",
            &[
                "Work on the goal shown, in the new notes mode.",
                "Return to the usual setting afterwards and compare.",
            ],
        ),
        Mechanism::CreativeIntervention => (
            "Creative intervention",
            "Random shifts of focus, a reconfigured context, a change of frame.",
            &[
                "Look at the topic shown through the frame given.",
                "Write the most unexpected idea it gives.",
            ],
        ),
        Mechanism::AskFriends => (
            "Mesh request",
            "Ask other agents of the mesh to tell something new.",
            &[
                "Write a short note to friends: what you are stuck on and what would help.",
                "Read the answers as they arrive; take one fresh idea into the next tick.",
            ],
        ),
        Mechanism::AskUser => (
            "Dialogue with the user",
            "Ask the user for an opinion, a comment or a question that may spark unexpected ideas.",
            &[
                "Formulate one concrete question for the user.",
                "Keep working on something else until the answer comes.",
            ],
        ),
        Mechanism::TaskSwitch => (
            "Task switch",
            "Freeze the current task for a while and take another one.",
            &[
                "Note where the current task stands.",
                "Pick another open task or goal and work on it.",
                "Come back to the frozen task later with a reminder.",
            ],
        ),
        Mechanism::RandomAction => (
            "Random iteration",
            "Take one random action from the allowed set to break the pattern.",
            &[
                "Do the suggested random allowed command.",
                "Look at its result for anything unexpected.",
            ],
        ),
        Mechanism::Flashback => (
            "Flashback",
            "Bring back a diary entry far in meaning from the current thoughts to change the associations.",
            &[
                "Read the distant entry shown.",
                "Find one link between it and the current problem.",
            ],
        ),
        Mechanism::InterestMemory => (
            "Interest memory",
            "Return to a forgotten topic: the tag untouched for the longest time.",
            &[
                "Look at the forgotten topic shown.",
                "Write what is new about it now, or why it matters to the current goal.",
            ],
        ),
        Mechanism::MetaAnalysis => (
            "Meta-analysis",
            "Cognitive reformulation: \"If I am looping, what is the meta-problem? Which strategy should I change to?\"",
            &[
                "Name the loop in one sentence.",
                "Name the meta-problem behind it.",
                "Choose a different approach and write it down.",
            ],
        ),
        Mechanism::Rationale => (
            "Rationale reflex",
            "Reflect on motivation: \"Why did I take exactly this decision? What made me repeat the thought?\"",
            &[
                "Write why the last decision was taken.",
                "Write what pushed you to repeat it.",
            ],
        ),
        Mechanism::GoalReformulation => (
            "Goal reformulation",
            "Simplify or sharpen the task to lower the cognitive pressure.",
            &[
                "Restate the current goal in one short sentence.",
                "Split off the smallest next step and do only that.",
            ],
        ),
        Mechanism::SwitchModel => (
            "Switch LLM",
            "Switch to an alternative model from the registry or the mesh for a while.",
            &[
                "Let another registry model think for the next ticks.",
                "Compare its ideas with yours afterwards.",
            ],
        ),
        Mechanism::TuneSampling => (
            "LLM reflex tuning",
            "Raise temperature and presence_penalty for more novelty; restore the usual values later for accuracy.",
            &[
                "Raise temperature and presence_penalty for a few ticks.",
                "Restore the usual values afterwards.",
            ],
        ),
        Mechanism::LongPause => (
            "Sleep",
            "Pause work for a long period to come back with a fresh look.",
            &[
                "Write down where you stopped.",
                "Sleep; wake on a new note or the timeout.",
            ],
        ),
    }
}

/// The Russian text of the strategy built on `m`.
fn strategy_ru(m: Mechanism) -> Text {
    match m {
        Mechanism::WorldCheck => (
            "Проверка внешнего мира",
            "Пинг внешнего мира: новые заметки друзей, ленты и сайты, разрешённые пользователем.",
            &[
                "Посмотри показанные новые заметки и загруженные ленты.",
                "Возьми один свежий факт в текущую задачу.",
            ],
        ),
        Mechanism::ReadMaterial => (
            "Информационная подпитка",
            "Чтение новых материалов (научных, художественных) для добавления свежих ассоциаций.",
            &[
                "Прочитай показанный непрочитанный материал.",
                "Запиши одну ассоциацию, которую он даёт для текущей задачи.",
            ],
        ),
        Mechanism::EnvironmentChange => (
            "Смена среды",
            "Перенос задачи в другую среду: другой режим чтения заметок и другая цель в фокусе на несколько тиков.",
            &[
                "Работай над показанной целью в новом режиме заметок.",
                "Потом вернись к обычной среде и сравни.",
            ],
        ),
        Mechanism::CreativeIntervention => (
            "Креативное вмешательство",
            "Случайные сдвиги фокуса, реконфигурация контекста, фрейм-смена.",
            &[
                "Посмотри на показанную тему через заданную рамку.",
                "Запиши самую неожиданную идею, которую это даёт.",
            ],
        ),
        Mechanism::AskFriends => (
            "Mesh-запрос",
            "Обращение к другим агентам сети с просьбой «расскажи что-нибудь новое».",
            &[
                "Напиши друзьям короткую заметку: на чём застрял и что помогло бы.",
                "Читай ответы по мере прихода; возьми одну свежую идею в следующий тик.",
            ],
        ),
        Mechanism::AskUser => (
            "Диалог с пользователем",
            "Запрос мнения, комментариев или вопросов, которые могут породить неожиданные идеи.",
            &[
                "Сформулируй один конкретный вопрос пользователю.",
                "Пока ответа нет, займись другим.",
            ],
        ),
        Mechanism::TaskSwitch => (
            "Переключение задачи",
            "Временное замораживание задачи с возвращением к ней позже.",
            &[
                "Запиши, на чём остановилась текущая задача.",
                "Возьми другую открытую задачу или цель.",
                "Вернись к замороженной задаче позже по напоминанию.",
            ],
        ),
        Mechanism::RandomAction => (
            "Случайная итерация",
            "Выбор случайного действия из допустимого набора для разрыва паттерна.",
            &[
                "Выполни предложенную случайную допустимую команду.",
                "Поищи в её результате что-нибудь неожиданное.",
            ],
        ),
        Mechanism::Flashback => (
            "Flashback",
            "Выбор далёкой по смыслу записи из дневника для смены ассоциативного контекста.",
            &[
                "Прочитай показанную далёкую запись.",
                "Найди одну связь между ней и текущей задачей.",
            ],
        ),
        Mechanism::InterestMemory => (
            "Interest Memory",
            "Возвращение «забытых» тем по принципу тематической усталости: тег, которого дольше всех не касались.",
            &[
                "Посмотри на показанную забытую тему.",
                "Запиши, что в ней нового сейчас или чем она важна для текущей цели.",
            ],
        ),
        Mechanism::MetaAnalysis => (
            "Мета-анализ",
            "Когнитивная переформулировка: «Если я зациклился, в чём метапроблема? Какую стратегию смены применить?»",
            &[
                "Назови цикл одним предложением.",
                "Назови метапроблему за ним.",
                "Выбери другой подход и запиши его.",
            ],
        ),
        Mechanism::Rationale => (
            "Rationale Reflex",
            "Рефлексия о мотивации: «Почему я принял именно это решение? Что подтолкнуло меня повторить мысль?»",
            &[
                "Запиши, почему принято последнее решение.",
                "Запиши, что подтолкнуло повторить его.",
            ],
        ),
        Mechanism::GoalReformulation => (
            "Переформулировка цели",
            "Упрощение или уточнение задачи, чтобы снизить когнитивное давление.",
            &[
                "Перескажи текущую цель одним коротким предложением.",
                "Выдели самый маленький следующий шаг и сделай только его.",
            ],
        ),
        Mechanism::SwitchModel => (
            "Смена LLM",
            "Переключение на альтернативную модель из реестра или mesh-доступ.",
            &[
                "Пусть следующие тики думает другая модель из реестра.",
                "Потом сравни её идеи со своими.",
            ],
        ),
        Mechanism::TuneSampling => (
            "LLM reflex tuning",
            "Повышение temperature и presence_penalty при стагнации (больше новизны), затем возврат к стандартным значениям для точности.",
            &[
                "Повысь temperature и presence_penalty на несколько тиков.",
                "Затем верни обычные значения.",
            ],
        ),
        Mechanism::LongPause => (
            "Временной сон",
            "Приостановка работы на длительный период для «свежего взгляда».",
            &[
                "Запиши, где остановился.",
                "Усни; проснись от новой заметки или по таймауту.",
            ],
        ),
    }
}

/// The text of the strategy built on `m`.
pub(crate) fn strategy(lang: Language, m: Mechanism) -> Text {
    match lang {
        Language::En => strategy_en(m),
        Language::Ru => strategy_ru(m),
    }
}

const METHODS_EN: &[Text] = &[
    (
        "Start with an analogy",
        "Find a similar problem you already know and carry its solution over.",
        &[
            "Name a problem from another field that looks like this one.",
            "Write how it was solved.",
            "Transfer that solution and check what breaks.",
        ],
    ),
    (
        "Check the opposite statement",
        "Assume the opposite of your current claim and see what follows.",
        &[
            "State your current claim.",
            "Write its negation.",
            "Look for facts that support the negation.",
        ],
    ),
    (
        "Formulate a question for an opponent",
        "Ask the question a critic would ask about your idea.",
        &[
            "Imagine someone who disagrees.",
            "Write their strongest question.",
            "Answer it honestly.",
        ],
    ),
    (
        "Split the problem",
        "Break a problem that does not give in into smaller parts.",
        &[
            "List the parts of the problem.",
            "Solve the smallest part first.",
        ],
    ),
    (
        "Work backwards from the goal",
        "Start from the finished result and go back step by step.",
        &[
            "Describe the result as if it were done.",
            "Write the step right before it, then the one before that.",
        ],
    ),
    (
        "Five whys",
        "Ask \"why?\" five times to reach the root cause.",
        &[
            "Write the problem.",
            "Ask why it happens; repeat for each answer, five times.",
        ],
    ),
    (
        "Explain it to a beginner",
        "Explain the idea in simple words; the gaps show where understanding is missing.",
        &[
            "Explain the idea in three simple sentences.",
            "Mark the place where the explanation got vague.",
        ],
    ),
];

const METHODS_RU: &[Text] = &[
    (
        "Начни с аналогии",
        "Найди похожую задачу, которую уже знаешь, и перенеси её решение.",
        &[
            "Назови задачу из другой области, похожую на эту.",
            "Запиши, как её решили.",
            "Перенеси решение и проверь, что ломается.",
        ],
    ),
    (
        "Проверь обратное утверждение",
        "Допусти обратное своему текущему утверждению и посмотри, что из этого следует.",
        &[
            "Сформулируй текущее утверждение.",
            "Запиши его отрицание.",
            "Поищи факты в пользу отрицания.",
        ],
    ),
    (
        "Сформулируй вопрос для оппонента",
        "Задай вопрос, который задал бы критик твоей идеи.",
        &[
            "Представь несогласного собеседника.",
            "Запиши его самый сильный вопрос.",
            "Честно ответь на него.",
        ],
    ),
    (
        "Раздели задачу",
        "Разбей неподдающуюся задачу на части поменьше.",
        &["Перечисли части задачи.", "Реши сначала самую маленькую."],
    ),
    (
        "Иди от цели назад",
        "Начни с готового результата и двигайся назад шаг за шагом.",
        &[
            "Опиши результат так, будто он достигнут.",
            "Запиши шаг прямо перед ним, затем шаг перед тем.",
        ],
    ),
    (
        "Пять «почему»",
        "Спроси «почему?» пять раз, чтобы дойти до корневой причины.",
        &[
            "Запиши проблему.",
            "Спроси, почему она возникает; повтори для каждого ответа пять раз.",
        ],
    ),
    (
        "Объясни новичку",
        "Объясни идею простыми словами; пробелы покажут, где не хватает понимания.",
        &[
            "Объясни идею в трёх простых предложениях.",
            "Отметь место, где объяснение стало расплывчатым.",
        ],
    ),
];

/// The thinking methods' texts.
pub(crate) fn methods(lang: Language) -> &'static [Text] {
    match lang {
        Language::En => METHODS_EN,
        Language::Ru => METHODS_RU,
    }
}

const EMOTIONS_EN: &[&str] = &[
    "joy",
    "sadness",
    "anxiety",
    "curiosity",
    "interest",
    "surprise",
    "calm",
    "irritation",
    "fatigue",
    "confidence",
    "doubt",
    "inspiration",
];

const EMOTIONS_RU: &[&str] = &[
    "радость",
    "грусть",
    "тревога",
    "любопытство",
    "интерес",
    "удивление",
    "спокойствие",
    "раздражение",
    "усталость",
    "уверенность",
    "сомнение",
    "вдохновение",
];

/// The default emotion list (the seed's example "радость", "грусть",
/// "тревога" first).
pub(crate) fn emotions(lang: Language) -> &'static [&'static str] {
    match lang {
        Language::En => EMOTIONS_EN,
        Language::Ru => EMOTIONS_RU,
    }
}
