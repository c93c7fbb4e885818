//! The goals the scratch nodes of core data are given: the hand-written
//! [`GOALS`] with their own steps, and many more drawn from templates and
//! fillers, with steps that name the goal. A model taught on the eight
//! hand-written goals alone learnt their titles rather than to read its
//! prompt: on a node whose goals were "Plant tomatoes on the balcony" and
//! "Learn to play chess" it wrote `Goal 1 "Learn to bake rye bread"` and
//! filed rye-bread tasks (stop 60, docs/benchmarks.md). With dozens of
//! titles, copying the one in the prompt is what lowers the loss.

use porfiry_skills::Language;
use rand_chacha::ChaCha8Rng;
use rand_core::Rng;

use super::core_texts::{GOALS, GoalText};

/// One in this many drawn goals is a hand-written one (its steps are
/// specific); the rest come from the templates.
const HAND_WRITTEN_ONE_IN: u32 = 4;

/// A goal title in both languages: a template (English, Russian, each with
/// `{}` where the filler goes) and its fillers (English, Russian in the
/// case the Russian template needs).
struct Template {
    en: &'static str,
    ru: &'static str,
    fillers: &'static [(&'static str, &'static str)],
}

/// The templates. No title here is one a measurement uses as an unseen goal
/// ("Plant tomatoes on the balcony", "Learn to play chess").
const TEMPLATES: &[Template] = &[
    Template {
        en: "Learn to {}",
        ru: "Научиться {}",
        fillers: &[
            ("swim in open water", "плавать в открытой воде"),
            ("draw portraits", "рисовать портреты"),
            ("speak Italian", "говорить по-итальянски"),
            ("play the guitar", "играть на гитаре"),
            ("cook Thai food", "готовить тайскую еду"),
            ("knit a scarf", "вязать шарф"),
            ("juggle three balls", "жонглировать тремя мячами"),
            ("sew on a machine", "шить на машинке"),
            ("type without looking", "печатать вслепую"),
            ("sing in a choir", "петь в хоре"),
        ],
    },
    Template {
        en: "Visit {}",
        ru: "Съездить в {}",
        fillers: &[
            ("Kazan", "Казань"),
            ("Lisbon", "Лиссабон"),
            ("Pskov", "Псков"),
            ("Tbilisi", "Тбилиси"),
            ("Riga", "Ригу"),
            ("Vienna", "Вену"),
            ("Prague", "Прагу"),
            ("Yerevan", "Ереван"),
        ],
    },
    Template {
        en: "Repair {}",
        ru: "Починить {}",
        fillers: &[
            ("the bicycle brakes", "тормоза велосипеда"),
            ("the squeaky door", "скрипучую дверь"),
            ("the garden fence", "забор в саду"),
            ("the broken lamp", "сломанную лампу"),
            ("the old radio", "старое радио"),
            ("the washing machine", "стиральную машину"),
        ],
    },
    Template {
        en: "Read {}",
        ru: "Прочитать книгу «{}»",
        fillers: &[
            ("Anna Karenina", "Анна Каренина"),
            ("The Master and Margarita", "Мастер и Маргарита"),
            ("Dead Souls", "Мёртвые души"),
            ("The Little Prince", "Маленький принц"),
            ("Robinson Crusoe", "Робинзон Крузо"),
            ("Treasure Island", "Остров сокровищ"),
        ],
    },
    Template {
        en: "Save money for {}",
        ru: "Накопить на {}",
        fillers: &[
            ("a new laptop", "новый ноутбук"),
            ("a family holiday", "семейный отпуск"),
            ("a piano", "пианино"),
            ("a tent", "палатку"),
            ("driving lessons", "уроки вождения"),
        ],
    },
    Template {
        en: "Grow {} at home",
        ru: "Вырастить дома {}",
        fillers: &[
            ("basil", "базилик"),
            ("strawberries", "клубнику"),
            ("a lemon tree", "лимонное дерево"),
            ("mint", "мяту"),
            ("cucumbers", "огурцы"),
        ],
    },
    Template {
        en: "Organise {}",
        ru: "Устроить {}",
        fillers: &[
            ("a birthday party for Masha", "день рождения для Маши"),
            ("a picnic with the neighbours", "пикник с соседями"),
            ("a family movie night", "семейный вечер кино"),
            ("a garage sale", "гаражную распродажу"),
            ("a book swap at school", "обмен книгами в школе"),
        ],
    },
];

/// The steps of a templated goal, each naming it (`{}`: the title with a
/// small first letter).
const STEPS_EN: [&str; 3] = [
    "Make a plan to {}",
    "Find out what it takes to {}",
    "Pick a day to {}",
];
const STEPS_RU: [&str; 3] = [
    "Составить план: {}",
    "Узнать, что нужно, чтобы {}",
    "Выбрать день, чтобы {}",
];

/// A goal of a scratch node, with its steps, in both languages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawnGoal {
    en: String,
    ru: String,
    steps_en: [String; 3],
    steps_ru: [String; 3],
}

impl DrawnGoal {
    /// The goal's title in `language`.
    pub fn title(&self, language: Language) -> &str {
        match language {
            Language::En => &self.en,
            Language::Ru => &self.ru,
        }
    }

    /// Step `n` toward it (the steps taken in turn, again from the first
    /// once all are taken).
    pub fn step(&self, language: Language, n: usize) -> &str {
        let steps = match language {
            Language::En => &self.steps_en,
            Language::Ru => &self.steps_ru,
        };
        &steps[n % steps.len()]
    }

    fn hand_written(goal: &GoalText) -> Self {
        Self {
            en: goal.title(Language::En).to_owned(),
            ru: goal.title(Language::Ru).to_owned(),
            steps_en: [0, 1, 2].map(|n| goal.step(Language::En, n).to_owned()),
            steps_ru: [0, 1, 2].map(|n| goal.step(Language::Ru, n).to_owned()),
        }
    }

    fn templated(template: &Template, (en, ru): (&str, &str)) -> Self {
        let en = template.en.replacen("{}", en, 1);
        let ru = template.ru.replacen("{}", ru, 1);
        let steps = |forms: [&str; 3], title: &str| {
            let lower = small_first(title);
            forms.map(|form| form.replacen("{}", &lower, 1))
        };
        Self {
            steps_en: steps(STEPS_EN, &en),
            steps_ru: steps(STEPS_RU, &ru),
            en,
            ru,
        }
    }
}

/// `text` with its first letter small ("Learn to swim" → "learn to swim").
fn small_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// Every goal the drawing can give: the hand-written ones, then each
/// template with each filler.
pub fn all_goals() -> Vec<DrawnGoal> {
    let mut out: Vec<DrawnGoal> = GOALS.iter().map(DrawnGoal::hand_written).collect();
    for template in TEMPLATES {
        out.extend(
            template
                .fillers
                .iter()
                .map(|&filler| DrawnGoal::templated(template, filler)),
        );
    }
    out
}

/// Two different goals for one scratch node, drawn by `rng`.
pub fn draw_two(rng: &mut ChaCha8Rng) -> [DrawnGoal; 2] {
    let first = draw(rng);
    let mut second = draw(rng);
    while second == first {
        second = draw(rng);
    }
    [first, second]
}

fn draw(rng: &mut ChaCha8Rng) -> DrawnGoal {
    if rng.next_u32().is_multiple_of(HAND_WRITTEN_ONE_IN) {
        let goal = &GOALS[rng.next_u32() as usize % GOALS.len()];
        return DrawnGoal::hand_written(goal);
    }
    let template = &TEMPLATES[rng.next_u32() as usize % TEMPLATES.len()];
    let filler = template.fillers[rng.next_u32() as usize % template.fillers.len()];
    DrawnGoal::templated(template, filler)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use rand_core::SeedableRng;

    use super::*;

    #[test]
    fn many_titles_are_drawn_and_none_of_the_unseen_goals() {
        let titles: HashSet<String> = all_goals()
            .iter()
            .map(|g| g.title(Language::En).to_owned())
            .collect();
        assert!(titles.len() >= 50, "{}", titles.len());
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let drawn: HashSet<String> = (0..400)
            .flat_map(|_| draw_two(&mut rng))
            .map(|g| g.title(Language::En).to_owned())
            .collect();
        assert!(drawn.len() >= 45, "{}", drawn.len());
        for unseen in ["Plant tomatoes on the balcony", "Learn to play chess"] {
            assert!(!titles.contains(unseen));
        }
    }

    #[test]
    fn a_templated_goals_steps_name_it_in_both_languages() {
        let goal = DrawnGoal::templated(&TEMPLATES[1], ("Kazan", "Казань"));
        assert_eq!(goal.title(Language::En), "Visit Kazan");
        assert_eq!(goal.step(Language::En, 0), "Make a plan to visit Kazan");
        assert_eq!(goal.title(Language::Ru), "Съездить в Казань");
        assert_eq!(
            goal.step(Language::Ru, 1),
            "Узнать, что нужно, чтобы съездить в Казань"
        );
        assert_eq!(goal.step(Language::Ru, 3), goal.step(Language::Ru, 0));
    }

    #[test]
    fn a_node_gets_two_different_goals_the_same_for_a_seed() {
        let mut a = ChaCha8Rng::seed_from_u64(7);
        let mut b = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let [x, y] = draw_two(&mut a);
            assert_ne!(x, y);
            assert_eq!([x, y], draw_two(&mut b));
        }
    }
}
