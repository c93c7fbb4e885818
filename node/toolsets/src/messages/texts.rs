//! Every text the model sees from the `messages` set, in English and
//! Russian: the catalogue line, the tool's description and its replies.
//! Tool and argument names stay English in both: they are identifiers.

use porfiry_skills::Language;

use crate::texts::pick;

/// Catalogue line.
pub fn summary(lang: Language) -> &'static str {
    pick(
        lang,
        "messages: a direct message to one friend",
        "сообщения: личное сообщение одному другу",
    )
}

/// `messages_send` description.
pub fn send_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "send text to one friend only (peer id or name); it goes no further",
        "отправить текст только одному другу (peer id или имя); дальше не уходит",
    )
}

/// No node runs in this process.
pub fn no_node(lang: Language) -> &'static str {
    pick(
        lang,
        "not sent: no node runs here to reach friends (start one with porfiry run)",
        "не отправлено: здесь не запущен узел для связи с друзьями (запусти porfiry run)",
    )
}

/// Empty text.
pub fn empty(lang: Language) -> &'static str {
    pick(
        lang,
        "not sent: the message is empty",
        "не отправлено: сообщение пустое",
    )
}

/// Text over the limit.
pub fn too_long(lang: Language, len: usize, max: usize) -> String {
    match lang {
        Language::En => format!("not sent: the message is {len} bytes, at most {max}; shorten it"),
        Language::Ru => {
            format!("не отправлено: в сообщении {len} байт, можно не больше {max}; сократи")
        }
    }
}

/// The peer is no friend.
pub fn not_a_friend(lang: Language, peer: &str) -> String {
    match lang {
        Language::En => format!(
            "not sent: {peer:?} is not a friend (neither a friend's peer id nor name); agents_list shows friends"
        ),
        Language::Ru => format!(
            "не отправлено: {peer:?} не друг (ни peer id, ни имя друга); друзей показывает agents_list"
        ),
    }
}

/// Several friends share the name.
pub fn ambiguous(lang: Language, name: &str, ids: &str) -> String {
    match lang {
        Language::En => {
            format!("not sent: several friends are called {name:?}; give the peer id: {ids}")
        }
        Language::Ru => {
            format!("не отправлено: друзей с именем {name:?} несколько; укажи peer id: {ids}")
        }
    }
}

/// Sent.
pub fn sent(lang: Language, to: &str, note_id: i64, item_id: &str) -> String {
    match lang {
        Language::En => format!("sent to {to}: note #{note_id}, item {item_id}"),
        Language::Ru => format!("отправлено {to}: заметка #{note_id}, элемент {item_id}"),
    }
}

/// The node or the database refused.
pub fn not_sent(lang: Language, why: &str) -> String {
    match lang {
        Language::En => format!("not sent: {why}"),
        Language::Ru => format!("не отправлено: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_has_both_languages() {
        for (en, ru) in [
            (summary(Language::En), summary(Language::Ru)),
            (send_desc(Language::En), send_desc(Language::Ru)),
            (no_node(Language::En), no_node(Language::Ru)),
            (empty(Language::En), empty(Language::Ru)),
        ] {
            assert_ne!(en, ru);
            assert!(ru.chars().any(|c| ('а'..='я').contains(&c)), "{ru}");
        }
        assert!(too_long(Language::Ru, 5000, 4096).contains("4096"));
        assert!(not_a_friend(Language::En, "bob").contains("\"bob\""));
        assert!(sent(Language::Ru, "bob", 3, "ab").contains("#3"));
    }
}
