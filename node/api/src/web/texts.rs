//! Every text the family page shows, in English and Russian, chosen by the
//! node's language: the page's labels (the browser tests find controls by
//! the English ones) and the refusal pages a person sees when a link or a
//! name is wrong. The page reads its labels from a JSON object the server
//! writes into it; nothing here is in the JavaScript.

use porfiry_skills::Language;
use serde::Serialize;

/// The labels and messages of the page itself.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PageTexts {
    /// The page's title.
    pub title: &'static str,
    /// Tab: the notes.
    pub feed: &'static str,
    /// Tab: chat with the agent.
    pub chat: &'static str,
    /// Tab: friends and invitations.
    pub friends: &'static str,
    /// Tab: what the cognitive core is doing.
    pub mind: &'static str,
    /// Tab: this node.
    pub node: &'static str,
    /// The switch that pauses and resumes thinking.
    pub thinking: &'static str,
    /// The core's goals (with their tasks).
    pub goals: &'static str,
    /// Its last ticks.
    pub ticks: &'static str,
    /// Its diary.
    pub diary: &'static str,
    /// An empty list.
    pub nothing_yet: &'static str,
    /// Before "executed/found" in a tick line.
    pub commands_run: &'static str,
    /// Before the device that wrote a goal, task or diary entry.
    pub written_on: &'static str,
    /// The node tab's line of this person's other devices.
    pub devices: &'static str,
    /// When there are none.
    pub no_devices: &'static str,
    /// How far a device is behind; `{n}` is the count of versions.
    pub behind: &'static str,
    /// The note box.
    pub new_note: &'static str,
    /// The audience picker.
    pub audience: &'static str,
    /// Post the note.
    pub post: &'static str,
    /// Audience: only this node.
    pub private: &'static str,
    /// Audience: every friend.
    pub all_friends: &'static str,
    /// Audience: anyone.
    pub public: &'static str,
    /// Audience prefix of a group.
    pub group: &'static str,
    /// Audience prefix of a club.
    pub club: &'static str,
    /// Audience prefix of one friend.
    pub only: &'static str,
    /// Filter label over the feed.
    pub show: &'static str,
    /// Filter: every note.
    pub everything: &'static str,
    /// Filter: own notes.
    pub mine: &'static str,
    /// Filter: friends' notes.
    pub from_friends: &'static str,
    /// The author of own notes.
    pub me: &'static str,
    /// The feed filter's group of audiences (friends, public, groups, clubs).
    pub by_audience: &'static str,
    /// The feed filter's group of friends (one friend's notes).
    pub by_friend: &'static str,
    /// Answer a note (its button; the author's name follows in its accessible name).
    pub reply: &'static str,
    /// A reply's line about the note it answers: `{who}` its author,
    /// `{what}` its first words.
    pub reply_to: &'static str,
    /// A reply whose note this node does not hold.
    pub reply_to_unknown: &'static str,
    /// Stop answering, post a plain note.
    pub cancel_reply: &'static str,
    /// Under an answer a friend's model wrote (offload): `{name}` is what
    /// this node calls that friend, else its short peer id.
    pub via: &'static str,
    /// The chat box.
    pub message: &'static str,
    /// Send the message.
    pub send: &'static str,
    /// Stop the answer.
    pub stop: &'static str,
    /// Start a new conversation.
    pub new_chat: &'static str,
    /// Make an invitation.
    pub invite: &'static str,
    /// The invitation code, to copy.
    pub invitation_code: &'static str,
    /// How to use the code on the other node.
    pub invitation_hint: &'static str,
    /// Name for the invited friend.
    pub invite_name: &'static str,
    /// The box for another node's invitation code.
    pub join_code: &'static str,
    /// Redeem that code.
    pub join: &'static str,
    /// Link kinds.
    pub direct: &'static str,
    /// A link through a relay.
    pub relayed: &'static str,
    /// No link.
    pub not_connected: &'static str,
    /// "since" before a time.
    pub since: &'static str,
    /// Last catch-up label.
    pub last_catchup: &'static str,
    /// May use this node's model.
    pub may_use_model: &'static str,
    /// May pull this node's model files (`porfiry run --share-models`).
    pub may_pull_models: &'static str,
    /// Rename a friend.
    pub rename: &'static str,
    /// Remove a friend.
    pub remove: &'static str,
    /// Asked before removing.
    pub confirm_remove: &'static str,
    /// No friends yet.
    pub no_friends: &'static str,
    /// The node's peer id.
    pub peer_id: &'static str,
    /// The model in use.
    pub model: &'static str,
    /// Where the model runs, by `model_source.kind`; `{detail}` is the
    /// file, URL, friend or registry entry.
    pub source_file: &'static str,
    /// See `source_file`.
    pub source_server: &'static str,
    /// See `source_file`.
    pub source_friend: &'static str,
    /// See `source_file`.
    pub source_registry: &'static str,
    /// See `source_file`.
    pub source_friends: &'static str,
    /// Items held.
    pub items: &'static str,
    /// The database's size.
    pub database: &'static str,
    /// Items the quotas refused (count of items and authors follow).
    pub refused: &'static str,
    /// "{items} items from {authors} authors".
    pub refused_count: &'static str,
    /// The node's version.
    pub version: &'static str,
    /// Shown when a request failed.
    pub failed: &'static str,
    /// No notes yet.
    pub no_notes: &'static str,
    /// The node tab's backup heading.
    pub backup: &'static str,
    /// What a backup holds and how to use it.
    pub backup_hint: &'static str,
    /// The passphrase box.
    pub backup_passphrase: &'static str,
    /// The box that repeats it.
    pub backup_again: &'static str,
    /// Make and save the backup.
    pub download_backup: &'static str,
    /// The two boxes differ.
    pub backup_mismatch: &'static str,
    /// While the node makes it.
    pub backup_making: &'static str,
    /// The saved file's link; `{name}` is its file name.
    pub backup_ready: &'static str,
}

/// A page that says why a request was refused and what to do.
#[derive(Debug, Clone, Copy)]
pub struct Refusal {
    /// Its heading.
    pub heading: &'static str,
    /// What to do.
    pub advice: &'static str,
}

/// The refusal pages.
#[derive(Debug, Clone, Copy)]
pub struct RefusalTexts {
    /// No session cookie.
    pub signed_out: Refusal,
    /// A used login link.
    pub used: Refusal,
    /// An expired login link.
    pub expired: Refusal,
    /// A login link this node never made.
    pub unknown: Refusal,
    /// A `Host` the API does not answer to.
    pub wrong_host: Refusal,
    /// A write from another site.
    pub wrong_origin: Refusal,
}

/// The page's texts in `language`.
pub fn page(language: Language) -> &'static PageTexts {
    match language {
        Language::En => &EN,
        Language::Ru => &RU,
    }
}

/// The refusal texts in `language`.
pub fn refusals(language: Language) -> &'static RefusalTexts {
    match language {
        Language::En => &EN_REFUSALS,
        Language::Ru => &RU_REFUSALS,
    }
}

static EN: PageTexts = PageTexts {
    title: "Porfiry",
    feed: "Feed",
    chat: "Chat",
    friends: "Friends",
    mind: "Mind",
    node: "Node",
    thinking: "Thinking (off: the agent starts no new tick)",
    goals: "Goals and tasks",
    ticks: "Last ticks",
    diary: "Diary",
    nothing_yet: "Nothing yet.",
    commands_run: "commands run",
    written_on: "written on",
    devices: "Your other devices",
    no_devices: "none (porfiry devices link)",
    behind: "{n} behind",
    new_note: "New note",
    audience: "Audience",
    post: "Post",
    private: "Only me",
    all_friends: "Friends",
    public: "Public",
    group: "Group",
    club: "Club",
    only: "Only",
    show: "Show",
    everything: "Everything",
    mine: "Mine",
    from_friends: "From friends",
    me: "me",
    by_audience: "By audience",
    by_friend: "By friend",
    reply: "Reply",
    reply_to: "reply to {who}: {what}",
    reply_to_unknown: "reply to a note this node does not have",
    cancel_reply: "Cancel reply",
    via: "via {name}'s server",
    message: "Message",
    send: "Send",
    stop: "Stop",
    new_chat: "New chat",
    invite: "Invite",
    invitation_code: "Invitation code",
    invitation_hint: "On the other node: porfiry join <code> (valid 24 hours, once)",
    invite_name: "Their name",
    join_code: "Code from another node",
    join: "Join",
    direct: "direct",
    relayed: "relayed",
    not_connected: "not connected",
    since: "since",
    last_catchup: "last catch-up",
    may_use_model: "May use this node's model",
    may_pull_models: "May copy this node's model files",
    rename: "Rename",
    remove: "Remove",
    confirm_remove: "Remove this friend? Their notes stay; they stop getting yours.",
    no_friends: "No friends yet. Invite someone.",
    peer_id: "Peer id",
    model: "Model",
    source_file: "on this device, {detail}",
    source_server: "served at {detail}",
    source_friend: "{detail}'s server",
    source_registry: "registry entry {detail}",
    source_friends: "whichever friend offers one",
    items: "Items held",
    database: "Database",
    refused: "Refused (over quota)",
    refused_count: "{items} items from {authors} authors",
    version: "Version",
    failed: "That did not work:",
    no_notes: "No notes yet.",
    backup: "Backup",
    backup_hint: "One encrypted file with this node's key, friends, memory, skills and settings (not the model files). On a new machine: porfiry restore FILE --data-dir DIR. Without the passphrase nobody can open it, you included.",
    backup_passphrase: "Backup passphrase",
    backup_again: "The same again",
    download_backup: "Download a backup",
    backup_mismatch: "The two passphrases differ.",
    backup_making: "Making the backup…",
    backup_ready: "Backup saved: {name}",
};

static RU: PageTexts = PageTexts {
    title: "Порфирий",
    feed: "Лента",
    chat: "Чат",
    friends: "Друзья",
    mind: "Мысли",
    node: "Узел",
    thinking: "Размышления (выкл.: агент не начинает новых тактов)",
    goals: "Цели и задачи",
    ticks: "Последние такты",
    diary: "Дневник",
    nothing_yet: "Пока ничего.",
    commands_run: "выполнено команд",
    written_on: "записано на",
    devices: "Ваши другие устройства",
    no_devices: "нет (porfiry devices link)",
    behind: "отстаёт на {n}",
    new_note: "Новая заметка",
    audience: "Кому",
    post: "Опубликовать",
    private: "Только мне",
    all_friends: "Друзьям",
    public: "Всем",
    group: "Группа",
    club: "Клуб",
    only: "Только",
    show: "Показать",
    everything: "Всё",
    mine: "Мои",
    from_friends: "От друзей",
    me: "я",
    by_audience: "По адресатам",
    by_friend: "По другу",
    reply: "Ответить",
    reply_to: "в ответ на заметку ({who}): {what}",
    reply_to_unknown: "ответ на заметку, которой на этом узле нет",
    cancel_reply: "Не отвечать",
    via: "через сервер {name}",
    message: "Сообщение",
    send: "Отправить",
    stop: "Стоп",
    new_chat: "Новый разговор",
    invite: "Пригласить",
    invitation_code: "Код приглашения",
    invitation_hint: "На другом узле: porfiry join <код> (действует 24 часа, один раз)",
    invite_name: "Имя",
    join_code: "Код с другого узла",
    join: "Присоединиться",
    direct: "напрямую",
    relayed: "через ретранслятор",
    not_connected: "нет связи",
    since: "с",
    last_catchup: "последняя сверка",
    may_use_model: "Может пользоваться моделью этого узла",
    may_pull_models: "Может скачивать файлы моделей этого узла",
    rename: "Переименовать",
    remove: "Удалить",
    confirm_remove: "Удалить друга? Его заметки останутся; ваши он получать перестанет.",
    no_friends: "Друзей пока нет. Пригласите кого-нибудь.",
    peer_id: "Идентификатор",
    model: "Модель",
    source_file: "на этом устройстве, {detail}",
    source_server: "сервер {detail}",
    source_friend: "сервер {detail}",
    source_registry: "запись реестра {detail}",
    source_friends: "модель любого друга, который её предлагает",
    items: "Записей",
    database: "База данных",
    refused: "Отклонено (сверх квоты)",
    refused_count: "{items} записей от {authors} авторов",
    version: "Версия",
    failed: "Не получилось:",
    no_notes: "Заметок пока нет.",
    backup: "Резервная копия",
    backup_hint: "Один зашифрованный файл: ключ узла, друзья, память, навыки и настройки (без файлов моделей). На новой машине: porfiry restore ФАЙЛ --data-dir ПАПКА. Без пароля его не откроет никто, и вы тоже.",
    backup_passphrase: "Пароль резервной копии",
    backup_again: "Ещё раз",
    download_backup: "Скачать резервную копию",
    backup_mismatch: "Пароли не совпадают.",
    backup_making: "Создаю резервную копию…",
    backup_ready: "Копия сохранена: {name}",
};

static EN_REFUSALS: RefusalTexts = RefusalTexts {
    signed_out: Refusal {
        heading: "Sign in to this node",
        advice: "Run `porfiry web` on the machine where the node runs and open the link it prints.",
    },
    used: Refusal {
        heading: "This sign-in link was already used",
        advice: "Each link works once. Run `porfiry web` for a new one.",
    },
    expired: Refusal {
        heading: "This sign-in link has expired",
        advice: "Links work for 10 minutes. Run `porfiry web` for a new one.",
    },
    unknown: Refusal {
        heading: "This sign-in link is not from this node",
        advice: "It may be from before the node restarted. Run `porfiry web` for a new one.",
    },
    wrong_host: Refusal {
        heading: "Open the node by its address",
        advice: "This node answers at an IP address or localhost, as `porfiry run` printed it (e.g. http://127.0.0.1:4580/), not under another name.",
    },
    wrong_origin: Refusal {
        heading: "Refused: the request came from another site",
        advice: "Changes to this node can only be made from its own page.",
    },
};

static RU_REFUSALS: RefusalTexts = RefusalTexts {
    signed_out: Refusal {
        heading: "Войдите на этот узел",
        advice: "Выполните `porfiry web` на машине, где работает узел, и откройте ссылку, которую он напишет.",
    },
    used: Refusal {
        heading: "Эта ссылка для входа уже использована",
        advice: "Каждая ссылка действует один раз. Выполните `porfiry web`, чтобы получить новую.",
    },
    expired: Refusal {
        heading: "Срок ссылки для входа истёк",
        advice: "Ссылка действует 10 минут. Выполните `porfiry web`, чтобы получить новую.",
    },
    unknown: Refusal {
        heading: "Эта ссылка для входа не от этого узла",
        advice: "Возможно, она выдана до перезапуска узла. Выполните `porfiry web`, чтобы получить новую.",
    },
    wrong_host: Refusal {
        heading: "Откройте узел по его адресу",
        advice: "Узел отвечает по IP-адресу или localhost, как написал `porfiry run` (например, http://127.0.0.1:4580/), а не под другим именем.",
    },
    wrong_origin: Refusal {
        heading: "Отказано: запрос пришёл с другого сайта",
        advice: "Менять что-то на узле можно только с его собственной страницы.",
    },
};

/// A small HTML page for `refusal`, its text escaped.
pub fn refusal_page(language: Language, refusal: &Refusal) -> String {
    let lang = match language {
        Language::En => "en",
        Language::Ru => "ru",
    };
    format!(
        "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{h}</title><style>body{{font-family:system-ui,sans-serif;max-width:36rem;\
         margin:3rem auto;padding:0 1rem;line-height:1.5}}</style></head>\
         <body><h1>{h}</h1><p>{a}</p></body></html>",
        h = escape(refusal.heading),
        a = escape(refusal.advice),
    )
}

/// `text` safe inside HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_languages_fill_every_label() {
        for language in [Language::En, Language::Ru] {
            let json = serde_json::to_value(page(language)).unwrap();
            let labels = json.as_object().unwrap();
            assert!(labels.len() > 30);
            assert!(labels.values().all(|v| !v.as_str().unwrap().is_empty()));
        }
        assert_ne!(page(Language::En).post, page(Language::Ru).post);
        for language in [Language::En, Language::Ru] {
            let line = page(language).reply_to;
            assert!(line.contains("{who}") && line.contains("{what}"), "{line}");
            assert!(page(language).via.contains("{name}"));
            assert!(page(language).backup_ready.contains("{name}"));
        }
    }

    #[test]
    fn a_refusal_page_says_what_to_do_escaped() {
        let html = refusal_page(Language::En, &refusals(Language::En).used);
        assert!(
            html.contains("<h1>This sign-in link was already used</h1>"),
            "{html}"
        );
        assert!(html.contains("porfiry web"));
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
