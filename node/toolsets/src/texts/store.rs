//! The record sets' catalogue lines and tool descriptions (seed 003's
//! command list), English and Russian, as two tables keyed by set and tool
//! name. A test in `toolsets::store` checks that every registered set and
//! tool has both texts and that they differ.

use porfiry_skills::Language;

/// `(set, English, Russian)`: one catalogue line per set.
const SUMMARIES: &[(&str, &str, &str)] = &[
    (
        "diary",
        "cognitive diary: observations and reflections",
        "когнитивный дневник: наблюдения и размышления",
    ),
    (
        "concepts",
        "semantic graph nodes: named ideas",
        "узлы семантического графа: именованные идеи",
    ),
    (
        "links",
        "semantic graph edges between concepts",
        "рёбра семантического графа между концептами",
    ),
    ("goals", "your goals", "твои цели"),
    (
        "tasks",
        "tasks serving the goals",
        "задачи, ведущие к целям",
    ),
    ("tags", "tag statistics", "статистика тегов"),
    (
        "reputation",
        "what you think of other agents",
        "твоё мнение о других агентах",
    ),
    (
        "notes",
        "notes: the user's notebook and the friends' chat",
        "заметки: блокнот пользователя и чат друзей",
    ),
    (
        "memory",
        "your notebook of working ideas and plans",
        "твой блокнот рабочих идей и планов",
    ),
    (
        "identity",
        "who you are: name and role",
        "кто ты: имя и роль",
    ),
    (
        "config",
        "agent settings (key = JSON)",
        "настройки агента (ключ = JSON)",
    ),
    (
        "agents",
        "friends: the peers this node replicates with",
        "друзья: узлы, с которыми идёт обмен",
    ),
    (
        "scripts",
        "your scripts (kept as text, never run)",
        "твои скрипты (хранятся текстом, не запускаются)",
    ),
    (
        "tables",
        "your table definitions (kept, never created)",
        "твои описания таблиц (хранятся, не создаются)",
    ),
    (
        "strategies",
        "ways out of stagnation",
        "способы выхода из стагнации",
    ),
    ("methods", "thinking methods", "методы мышления"),
    (
        "ratings",
        "ratings of strategies, methods, models",
        "оценки стратегий, методов, моделей",
    ),
    ("services", "external services", "внешние сервисы"),
    (
        "accounts",
        "accounts on external services (secrets by reference only)",
        "учётные записи во внешних сервисах (секреты только ссылкой)",
    ),
    (
        "users",
        "people who talk to you",
        "люди, которые с тобой говорят",
    ),
    ("groups", "groups of users", "группы пользователей"),
];

/// `(tool, English, Russian)`: one short description per tool.
const TOOLS: &[(&str, &str, &str)] = &[
    (
        "diary_list",
        "newest entries, optionally with a tag",
        "новые записи, можно по тегу",
    ),
    (
        "diary_search",
        "entries containing words",
        "записи, содержащие слова",
    ),
    ("diary_read", "one entry in full", "одна запись целиком"),
    (
        "diary_add",
        "write an entry; tags comma-separated",
        "записать; теги через запятую",
    ),
    (
        "diary_update",
        "change one field of an entry",
        "изменить поле записи",
    ),
    ("diary_delete", "delete an entry", "удалить запись"),
    (
        "diary_pin",
        "keep an entry in attention",
        "закрепить запись во внимании",
    ),
    ("diary_unpin", "release a pinned entry", "открепить запись"),
    (
        "concepts_list",
        "newest concepts, optionally with a tag",
        "новые концепты, можно по тегу",
    ),
    (
        "concepts_read",
        "a concept (id or name) and its links",
        "концепт (id или имя) и его связи",
    ),
    (
        "concepts_add",
        "add a concept with a unique name",
        "добавить концепт с уникальным именем",
    ),
    (
        "concepts_update",
        "change one field of a concept",
        "изменить поле концепта",
    ),
    (
        "concepts_delete",
        "delete a concept and its links",
        "удалить концепт и его связи",
    ),
    (
        "concepts_pin",
        "keep a concept in attention",
        "закрепить концепт во внимании",
    ),
    (
        "concepts_unpin",
        "release a pinned concept",
        "открепить концепт",
    ),
    (
        "links_list",
        "links, of one concept if named",
        "связи, можно одного концепта",
    ),
    ("links_read", "one link", "одна связь"),
    (
        "links_add",
        "link two concepts (ids or names): from|relation|to",
        "связать концепты (id или имена): from|relation|to",
    ),
    (
        "links_update",
        "change one field of a link",
        "изменить поле связи",
    ),
    ("links_delete", "delete a link", "удалить связь"),
    (
        "goals_list",
        "newest goals, optionally with a tag",
        "новые цели, можно по тегу",
    ),
    ("goals_read", "a goal and its tasks", "цель и её задачи"),
    ("goals_add", "set a goal", "поставить цель"),
    (
        "goals_update",
        "change one field of a goal",
        "изменить поле цели",
    ),
    (
        "goals_delete",
        "delete a goal (its tasks stay)",
        "удалить цель (задачи остаются)",
    ),
    (
        "tasks_list",
        "newest tasks, optionally with a tag",
        "новые задачи, можно по тегу",
    ),
    ("tasks_read", "one task", "одна задача"),
    (
        "tasks_add",
        "add a task, optionally for a goal id",
        "добавить задачу, можно к цели",
    ),
    (
        "tasks_update",
        "change one field of a task",
        "изменить поле задачи",
    ),
    ("tasks_delete", "delete a task", "удалить задачу"),
    (
        "tasks_pin",
        "show a task in every context",
        "показывать задачу в каждом контексте",
    ),
    ("tasks_unpin", "release a pinned task", "открепить задачу"),
    (
        "tags_stats",
        "most used tags, by source or all",
        "частые теги, по источнику или все",
    ),
    (
        "tags_pin",
        "pin every diary entry, concept or task with a tag",
        "закрепить все записи дневника, концепты и задачи с тегом",
    ),
    (
        "tags_unpin",
        "release every pinned row with a tag",
        "открепить все записи с тегом",
    ),
    (
        "reputation_list",
        "agents you rated",
        "агенты, которых ты оценил",
    ),
    (
        "reputation_read",
        "score and comments on an agent",
        "оценка и заметки об агенте",
    ),
    (
        "reputation_set",
        "set an agent's score",
        "задать оценку агента",
    ),
    (
        "reputation_increase",
        "raise a score (by 1 by default)",
        "повысить оценку (по умолчанию на 1)",
    ),
    (
        "reputation_decrease",
        "lower a score (by 1 by default)",
        "понизить оценку (по умолчанию на 1)",
    ),
    (
        "reputation_notes",
        "replace your comments on an agent",
        "заменить заметки об агенте",
    ),
    ("notes_list", "newest notes first", "сначала новые заметки"),
    ("notes_read", "one note in full", "одна заметка целиком"),
    (
        "notes_add",
        "write a note; audience private (default), friends, public, group:NAME",
        "написать заметку; аудитория private (по умолчанию), friends, public, group:ИМЯ",
    ),
    (
        "notes_update",
        "edit your own note",
        "изменить свою заметку",
    ),
    (
        "notes_delete",
        "delete a note here",
        "удалить заметку здесь",
    ),
    (
        "notes_tag",
        "replace a note's tags",
        "заменить теги заметки",
    ),
    (
        "notes_readmark",
        "mark a note read (or unread)",
        "отметить заметку прочитанной (или нет)",
    ),
    (
        "notes_cleanup",
        "delete old read notes (or all)",
        "удалить старые прочитанные заметки (или все)",
    ),
    (
        "memory_list",
        "newest notebook pages, optionally with a tag",
        "новые страницы блокнота, можно по тегу",
    ),
    (
        "memory_add",
        "write a page; tags comma-separated",
        "записать страницу; теги через запятую",
    ),
    ("memory_delete", "delete a page", "удалить страницу"),
    ("identity_read", "your names and roles", "твои имена и роли"),
    (
        "identity_update",
        "change your name, role or description",
        "изменить имя, роль или описание",
    ),
    (
        "config_read",
        "one setting, or all keys",
        "одна настройка или все ключи",
    ),
    (
        "config_update",
        "set a setting (value as JSON or text)",
        "задать настройку (значение JSON или текст)",
    ),
    (
        "agents_list",
        "friends and their state",
        "друзья и их состояние",
    ),
    (
        "agents_add",
        "befriend a node: peer id, address, groups",
        "подружиться с узлом: peer id, адрес, группы",
    ),
    (
        "agents_delete",
        "stop being friends with a node",
        "прекратить дружбу с узлом",
    ),
    ("scripts_list", "your scripts", "твои скрипты"),
    (
        "scripts_add",
        "keep a script (never run)",
        "сохранить скрипт (не запускается)",
    ),
    ("scripts_delete", "delete a script", "удалить скрипт"),
    (
        "tables_list",
        "your table definitions",
        "твои описания таблиц",
    ),
    (
        "tables_add",
        "keep a table definition (never created)",
        "сохранить описание таблицы (не создаётся)",
    ),
    (
        "tables_delete",
        "delete a table definition",
        "удалить описание таблицы",
    ),
    (
        "strategies_list",
        "ways out of stagnation",
        "способы выхода из стагнации",
    ),
    (
        "strategies_add",
        "add a strategy; a mechanism (flashback, ask_friends, …) lets the core choose it; steps separated by ;; shared sends it to friends",
        "добавить стратегию; mechanism (flashback, ask_friends, …) позволит ядру её выбирать; шаги через ;; shared отправит её друзьям",
    ),
    (
        "strategies_delete",
        "delete a strategy",
        "удалить стратегию",
    ),
    ("methods_list", "thinking methods", "методы мышления"),
    (
        "methods_add",
        "add a method; steps separated by ;; shared sends it to friends",
        "добавить метод; шаги через ;; shared отправит его друзьям",
    ),
    ("methods_delete", "delete a method", "удалить метод"),
    (
        "ratings_list",
        "ratings, of one target if named",
        "оценки, можно одной цели",
    ),
    (
        "ratings_add",
        "rate something: target|score",
        "оценить: target|score",
    ),
    ("ratings_delete", "delete a rating", "удалить оценку"),
    ("services_list", "external services", "внешние сервисы"),
    (
        "users_list",
        "the users you know",
        "известные тебе пользователи",
    ),
    (
        "users_add",
        "record a user: name|[mail]|[languages like ru, en]",
        "записать пользователя: имя|[почта]|[языки вроде ru, en]",
    ),
    ("users_delete", "forget a user", "забыть пользователя"),
    ("groups_list", "groups of users", "группы пользователей"),
    (
        "groups_add",
        "make a group: name|[description]|[member ids like 1, 2]",
        "создать группу: имя|[описание]|[id участников вроде 1, 2]",
    ),
    ("groups_delete", "delete a group", "удалить группу"),
    (
        "services_add",
        "record an external service",
        "записать внешний сервис",
    ),
    (
        "services_delete",
        "delete a service and its accounts",
        "удалить сервис и его учётные записи",
    ),
    (
        "accounts_list",
        "accounts (secrets shown by name only)",
        "учётные записи (секреты только по имени)",
    ),
    (
        "accounts_add",
        "record an account; secret_ref names where the secret is, never the secret",
        "записать учётную запись; secret_ref — где секрет, не сам секрет",
    ),
    (
        "accounts_delete",
        "delete an account",
        "удалить учётную запись",
    ),
];

/// Looks `name` up in `table`; "" when absent (a test catches that).
fn lookup(
    table: &[(&str, &'static str, &'static str)],
    lang: Language,
    name: &str,
) -> &'static str {
    table
        .iter()
        .find(|(n, _, _)| *n == name)
        .map_or("", |&(_, en, ru)| super::pick(lang, en, ru))
}

/// The catalogue line of the record set `set`.
pub fn set_summary(lang: Language, set: &str) -> &'static str {
    lookup(SUMMARIES, lang, set)
}

/// The description of the record tool `tool`.
pub fn tool_desc(lang: Language, tool: &str) -> &'static str {
    lookup(TOOLS, lang, tool)
}
