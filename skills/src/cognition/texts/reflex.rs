//! The reflexes' short prompts (seed 003 §5–6): the cognitive and the
//! emotional evaluation of a new reply, the validators' question, the labels
//! of the reflection line and the record written when the anti-stagnation
//! reflex fires. The seed's wording, plus one line fixing the answer's shape
//! so a small model's answer can be parsed; the JSON keys stay English in
//! both languages (identifiers), the parser also accepts Russian ones.

use crate::Language;

use super::pick;

/// System message of the cognitive evaluation (seed §5, "Когнитивная оценка").
pub(crate) fn cognitive_system(lang: Language) -> &'static str {
    pick(
        lang,
        "Compare two answers and judge:\n\
         * does the new one contain new thoughts or commands,\n\
         * which old ideas were refined,\n\
         * which were discarded,\n\
         * give semantic tags for the new answer.\n\
         Give a qualitative judgement (yes/no), a quantitative one, \
         a JSON list of new ideas, a JSON list of refined ideas, \
         a JSON list of discarded ideas, \
         a JSON list of tags of the new answer (strict format: an array of strings, e.g. [\"emotions\",\"architecture\"]).\n\
         Answer with one JSON object only: {\"novel\": \"yes\", \"novelty\": 0.7, \"new_ideas\": [], \
         \"refined_ideas\": [], \"discarded_ideas\": [], \"tags\": []} \
         (novelty from 0, nothing new, to 1, all new).",
        "Сравни два ответа и оцени:\n\
         * содержатся ли в новом новые мысли или команды,\n\
         * какие старые идеи были доработаны,\n\
         * какие были отброшены,\n\
         * расставь смысловые теги для нового ответа.\n\
         Дай качественную оценку (да/нет), количественную оценку, \
         JSON-список новых идей, JSON-список доработанных идей, \
         JSON-список отбракованных идей, \
         JSON-список тегов нового ответа (строгий формат: массив строк, например [\"эмоции\",\"архитектура\"]).\n\
         Ответь одним JSON-объектом: {\"novel\": \"да\", \"novelty\": 0.7, \"new_ideas\": [], \
         \"refined_ideas\": [], \"discarded_ideas\": [], \"tags\": []} \
         (novelty от 0 — ничего нового — до 1 — всё новое).",
    )
}

/// Heading of the previous answer in the evaluation's user message.
pub(crate) fn previous_heading(lang: Language) -> &'static str {
    pick(lang, "Previous answer:", "Предыдущий ответ:")
}

/// Heading of the new answer in the evaluation's user message.
pub(crate) fn new_heading(lang: Language) -> &'static str {
    pick(lang, "New answer:", "Новый ответ:")
}

/// Stands for an empty previous answer (the first tick).
pub(crate) fn nothing_before(lang: Language) -> &'static str {
    pick(lang, "(none yet)", "(пока нет)")
}

/// Marks text cut to keep a reflex request short.
pub(crate) fn cut_mark(lang: Language) -> &'static str {
    pick(lang, "… [cut]", "… [обрезано]")
}

/// System message of the emotional evaluation; `{emotions}` is the JSON list.
pub(crate) fn emotional_system(lang: Language) -> &'static str {
    pick(
        lang,
        "Determine the emotional state of the answer using the list of emotions {emotions}.\n\
         Return an array of strings in the format \"emotion:strength\", where strength ranges from 1 to 5.\n\
         If an emotion is absent (0), do not include it in the result.\n\
         If the answer shows emotions that are not in the list, add them to the result.\n\
         Answer with the JSON array only, e.g. [\"curiosity:3\"].",
        "Определи эмоциональное состояние ответа, используя список эмоций {emotions}.\n\
         Верни массив строк в формате \"эмоция:сила\", где сила варьируется от 1 до 5.\n\
         Если эмоция отсутствует (0), не включай её в результат.\n\
         Если в ответе обнаружены эмоции, которых нет в списке, добавь их в результат.\n\
         Ответь только JSON-массивом, например [\"любопытство:3\"].",
    )
}

/// Heading of the answer in the emotional evaluation's user message.
pub(crate) fn answer_heading(lang: Language) -> &'static str {
    pick(lang, "Answer:", "Ответ:")
}

/// The validators' universal question (seed §6).
pub(crate) fn validator_system(lang: Language) -> &'static str {
    pick(
        lang,
        "Rate the correctness of this message from -3 (completely incorrect) to +3 (completely correct). \
         If unsure, 0.\nAnswer with one whole number only.",
        "Оцени корректность данного сообщения в диапазоне от -3 (полностью некорректное) до +3 (полностью корректное). \
         Если не уверен — 0.\nОтветь только одним целым числом.",
    )
}

/// Heading of the prompt the message answered.
pub(crate) fn prompt_heading(lang: Language) -> &'static str {
    pick(lang, "Prompt:", "Исходный промпт:")
}

/// Heading of the message being rated.
pub(crate) fn message_heading(lang: Language) -> &'static str {
    pick(lang, "Message:", "Сообщение:")
}

/// Reflection label for new ideas (seed: "новые идеи: ...").
pub(crate) fn new_ideas_label(lang: Language) -> &'static str {
    pick(lang, "new ideas: ", "новые идеи: ")
}

/// Reflection label for refined ideas.
pub(crate) fn refined_ideas_label(lang: Language) -> &'static str {
    pick(lang, "refined ideas: ", "доработанные идеи: ")
}

/// Reflection label for discarded ideas.
pub(crate) fn discarded_ideas_label(lang: Language) -> &'static str {
    pick(lang, "discarded ideas: ", "отброшенные идеи: ")
}

/// Reflection when no list has anything in it.
pub(crate) fn no_ideas(lang: Language) -> &'static str {
    pick(lang, "no new ideas", "новых идей нет")
}

/// Added to the reflection when novelty was estimated lexically because
/// the evaluation's answer was unusable.
pub(crate) fn lexical_estimate(lang: Language) -> &'static str {
    pick(
        lang,
        "novelty estimated by word overlap",
        "новизна оценена по совпадению слов",
    )
}

/// The short record stored instead of a repeated reply (seed §5: "вместо
/// этого добавляется краткая запись, фиксирующая запуск рефлекса").
pub(crate) fn reflex_fired(lang: Language) -> &'static str {
    pick(
        lang,
        "anti-stagnation reflex: the reply repeated the previous one and was not stored again",
        "антистагнационный рефлекс: ответ повторил предыдущий и не записан повторно",
    )
}
