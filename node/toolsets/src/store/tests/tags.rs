//! `tags_pin` / `tags_unpin`: attention held by tag across the pinnable
//! tables, one source or all, rows already so left as they are, and a bad
//! tag refused with nothing changed.

use porfiry_skills::Language;
use porfiry_storage::{Concept, DiaryEntry, ListQuery, Task};

use crate::store::testkit::Kit;

/// Ids of the pinned rows of diary, concepts and tasks.
async fn pinned(kit: &Kit) -> [Vec<i64>; 3] {
    kit.read(|s| {
        let q = ListQuery {
            limit: Some(100),
            oldest_first: true,
            ..Default::default()
        };
        let ids = |rows: Vec<(i64, bool)>| -> Vec<i64> {
            rows.into_iter()
                .filter(|(_, p)| *p)
                .map(|(id, _)| id)
                .collect()
        };
        [
            ids(s
                .list::<DiaryEntry>(&q)
                .unwrap()
                .into_iter()
                .map(|r| (r.id, r.row.pinned))
                .collect()),
            ids(s
                .list::<Concept>(&q)
                .unwrap()
                .into_iter()
                .map(|r| (r.id, r.row.pinned))
                .collect()),
            ids(s
                .list::<Task>(&q)
                .unwrap()
                .into_iter()
                .map(|r| (r.id, r.row.pinned))
                .collect()),
        ]
    })
    .await
}

#[tokio::test]
async fn a_tag_pins_and_unpins_every_row_carrying_it() {
    let kit = Kit::new(Language::En);
    kit.ok("diary_add", "rye starter fed|baking").await;
    kit.ok("diary_add", "relay rebooted|mesh").await;
    kit.ok("diary_add", "bread cooled|baking, kitchen").await;
    kit.ok("concepts_add", "sourdough|a living starter").await;
    kit.ok("concepts_update", "1|tags|baking").await;
    assert_eq!(
        kit.ok("tags_pin", "#baking").await,
        "pinned by #baking: 3 (diary entry 2, concept 1)"
    );
    assert_eq!(pinned(&kit).await, [vec![1, 3], vec![1], vec![]]);
    assert_eq!(
        kit.ok("tags_pin", "baking|diary").await,
        "pinned by #baking: 0",
        "already pinned rows are not counted again"
    );
    assert_eq!(
        kit.ok("tags_unpin", "baking|concepts").await,
        "unpinned by #baking: 1 (concept 1)"
    );
    assert_eq!(
        pinned(&kit).await,
        [vec![1, 3], vec![], vec![]],
        "only the source named"
    );
}

#[tokio::test]
async fn pinning_by_tag_in_russian_and_a_bad_source_is_refused() {
    let kit = Kit::new(Language::Ru);
    kit.ok("diary_add", "закваска|выпечка").await;
    assert_eq!(
        kit.ok("tags_pin", "выпечка").await,
        "закреплено по #выпечка: 1 (запись дневника 1)"
    );
    let refused = kit.call("tags_pin", "выпечка|notes").await;
    assert!(!refused.ok, "{}", refused.text);
}
