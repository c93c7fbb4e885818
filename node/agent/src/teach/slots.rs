//! The values a request's slots are filled with — films, notes, friends,
//! goals — in English and Russian: what [`super::phrasings`]' templates
//! and the calls they teach share.

use porfiry_skills::Language;

/// Where a slot's values come from: `(English, Russian)` pairs, the
/// request and the argument written in the request's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Film titles.
    Film,
    /// Film ids of the sample catalogue's kind.
    FilmId,
    /// Short notes a person jots down.
    Note,
    /// Friends' names.
    Peer,
    /// A short message to a friend.
    Message,
    /// Row numbers (note, task, goal, diary ids).
    Number,
    /// Text to put on the screen.
    Screen,
    /// Diary entries.
    Diary,
    /// Words to search the diary for.
    Query,
    /// Goals.
    Goal,
    /// Tasks.
    Task,
    /// Toolset names (enable/disable, read_skill).
    Set,
}

/// The values of `slot` in `language`.
pub fn slot_values(slot: Slot, language: Language) -> &'static [&'static str] {
    let (en, ru): (&[&str], &[&str]) = match slot {
        Slot::Film => (
            &[
                "Terminator",
                "Titanic",
                "Star Wars",
                "Alien",
                "Jurassic Park",
                "The Godfather",
                "Inception",
                "Toy Story",
                "Shrek",
                "Avatar",
                "Gladiator",
                "Frozen",
                "Batman",
                "Harry Potter",
                "The Lion King",
                "Interstellar",
            ],
            &[
                "Терминатор",
                "Титаник",
                "Звёздные войны",
                "Чужой",
                "Парк юрского периода",
                "Крёстный отец",
                "Начало",
                "История игрушек",
                "Шрек",
                "Аватар",
                "Гладиатор",
                "Холодное сердце",
                "Бэтмен",
                "Гарри Поттер",
                "Король Лев",
                "Интерстеллар",
            ],
        ),
        Slot::FilmId => {
            const IDS: &[&str] = &[
                "tt0088247",
                "tt0120338",
                "tt0076759",
                "tt0078748",
                "tt0107290",
                "tt0068646",
                "tt1375666",
                "tt0114709",
                "tt0126029",
                "tt0499549",
                "tt0172495",
                "tt2294629",
            ];
            (IDS, IDS)
        }
        Slot::Note => (
            &[
                "call the plumber",
                "pay the electricity bill",
                "pick up the kids at 4",
                "bread and eggs",
                "the meeting moved to Friday",
                "water the plants",
                "book a table for Sunday",
                "return the library books",
                "buy cat food",
                "Anna's birthday is on the 12th",
            ],
            &[
                "позвонить сантехнику",
                "оплатить свет",
                "забрать детей в 4",
                "хлеб и яйца",
                "встречу перенесли на пятницу",
                "полить цветы",
                "заказать столик на воскресенье",
                "вернуть книги в библиотеку",
                "купить корм коту",
                "у Ани день рождения 12-го",
            ],
        ),
        Slot::Peer => {
            const PEERS: &[&str] = &[
                "maria", "ivan", "kate", "tom", "olga", "sam", "dad", "grandma",
            ];
            (PEERS, PEERS)
        }
        Slot::Message => (
            &[
                "I'll be late",
                "dinner is ready",
                "see you at the station",
                "call me when you can",
                "happy birthday!",
                "the door code is 1234",
                "don't forget the umbrella",
                "we're out of milk",
            ],
            &[
                "я опоздаю",
                "ужин готов",
                "встретимся на вокзале",
                "перезвони, когда сможешь",
                "с днём рождения!",
                "код от двери 1234",
                "не забудь зонт",
                "молоко закончилось",
            ],
        ),
        Slot::Number => {
            const NUMBERS: &[&str] = &[
                "1", "2", "4", "6", "7", "8", "9", "10", "11", "12", "14", "15", "17", "21", "23",
            ];
            (NUMBERS, NUMBERS)
        }
        Slot::Screen => (
            &[
                "Meeting at 3",
                "Happy birthday, Mum!",
                "Quiet please",
                "Lunch is ready",
                "Welcome home",
                "Bus at 8:15",
                "Homework first!",
                "Gone for a walk",
            ],
            &[
                "Встреча в 3",
                "С днём рождения, мама!",
                "Тише, пожалуйста",
                "Обед готов",
                "Добро пожаловать домой",
                "Автобус в 8:15",
                "Сначала уроки!",
                "Ушёл гулять",
            ],
        ),
        Slot::Diary => (
            &[
                "a calm day, a long walk in the park",
                "felt tired after work",
                "a great dinner with friends",
                "rain all day, read a book",
                "finished the big report at last",
                "the kids laughed a lot today",
            ],
            &[
                "спокойный день, долгая прогулка в парке",
                "устал после работы",
                "отличный ужин с друзьями",
                "весь день дождь, читал книгу",
                "наконец закончил большой отчёт",
                "дети сегодня много смеялись",
            ],
        ),
        Slot::Query => (
            &[
                "walk", "work", "friends", "rain", "report", "sleep", "holiday",
            ],
            &[
                "прогулка",
                "работа",
                "друзья",
                "дождь",
                "отчёт",
                "сон",
                "отпуск",
            ],
        ),
        Slot::Goal => (
            &[
                "learn to swim",
                "read 12 books this year",
                "save for a new bike",
                "learn Spanish",
                "walk 10,000 steps a day",
                "sleep before midnight",
            ],
            &[
                "научиться плавать",
                "прочитать 12 книг за год",
                "накопить на велосипед",
                "выучить испанский",
                "проходить 10 000 шагов в день",
                "ложиться до полуночи",
            ],
        ),
        Slot::Task => (
            &[
                "fix the bike",
                "buy a birthday gift",
                "clean the garage",
                "renew the passport",
                "call the dentist",
                "order new glasses",
            ],
            &[
                "починить велосипед",
                "купить подарок",
                "убрать гараж",
                "продлить паспорт",
                "записаться к зубному",
                "заказать новые очки",
            ],
        ),
        Slot::Set => {
            const SETS: &[&str] = &["media", "notes", "messages", "diary", "goals", "tasks"];
            (SETS, SETS)
        }
    };
    match language {
        Language::En => en,
        Language::Ru => ru,
    }
}
