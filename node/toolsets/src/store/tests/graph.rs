//! `concepts` and `links`: the semantic graph in `concepts` and `links`,
//! concepts named by id or name, links deleted with their concepts.

use porfiry_skills::Language;
use porfiry_storage::{Concept, Link};

use crate::store::testkit::Kit;

async fn counts(kit: &Kit) -> (u64, u64) {
    kit.read(|s| (s.count::<Concept>().unwrap(), s.count::<Link>().unwrap()))
        .await
}

#[tokio::test]
async fn concepts_and_links_build_the_graph() {
    let kit = Kit::new(Language::En);
    kit.main_model("qwen").await;
    assert_eq!(
        kit.ok("concepts_add", "Cat|a small feline").await,
        "added: concept #1"
    );
    assert_eq!(kit.ok("concepts_add", "Animal").await, "added: concept #2");
    assert_eq!(
        kit.ok("links_add", "Cat|is_a|Animal").await,
        "added: link #1"
    );
    assert_eq!(kit.ok("links_add", "1|eats|#2|0.5").await, "added: link #2");
    let link = kit.read(|s| s.get::<Link>(1).unwrap()).await.row;
    assert_eq!(
        (link.from_concept, link.to_concept, link.weight),
        (1, 2, 1.0)
    );
    assert_eq!(link.llm_id.as_deref(), Some("qwen"));

    let read = kit.ok("concepts_read", "Cat").await;
    assert!(read.starts_with("#1 Cat — a small feline"), "{read}");
    assert!(
        read.contains("links:\n#1 Cat(#1) —is_a→ Animal(#2) (w 1)"),
        "{read}"
    );
    assert_eq!(kit.ok("concepts_read", "1").await, read, "by id or by name");
    assert_eq!(kit.ok("links_list", "Animal").await.lines().count(), 2);
    assert_eq!(kit.ok("links_list", "").await.lines().count(), 2);
    assert!(kit.ok("links_read", "2").await.contains("—eats→"));

    kit.ok("links_update", "2|weight|0,7").await;
    kit.ok("concepts_update", "2|description|a living being")
        .await;
    kit.ok("concepts_update", "2|tags|life").await;
    kit.ok("concepts_pin", "2").await;
    let animal = kit.read(|s| s.get::<Concept>(2).unwrap()).await.row;
    assert_eq!(animal.description, "a living being");
    assert_eq!(animal.tags, ["life"]);
    assert!(animal.pinned);
    assert_eq!(
        kit.read(|s| s.get::<Link>(2).unwrap()).await.row.weight,
        0.7
    );
    kit.ok("concepts_unpin", "2").await;

    assert_eq!(kit.ok("concepts_delete", "1").await, "deleted: concept #1");
    assert_eq!(counts(&kit).await, (1, 0), "a concept's links go with it");
}

#[tokio::test]
async fn graph_refusals_change_nothing() {
    let kit = Kit::new(Language::En);
    kit.ok("concepts_add", "Cat").await;
    kit.ok("concepts_add", "Dog").await;
    kit.ok("links_add", "Cat|chases|Dog|2").await;
    let link = kit.read(|s| s.get::<Link>(1).unwrap()).await;
    let refusals = [
        ("links_add", "Cat|is_a|Unicorn", "no concept Unicorn"),
        (
            "links_add",
            "Cat|likes|Dog|a lot",
            "weight must be a number",
        ),
        ("links_add", "Cat|is_a|99", "no concept #99"),
        ("links_update", "1|weight|heavy", "weight must be a number"),
        ("links_update", "1|to|77", "refused"),
        ("concepts_add", "Cat", "duplicate"),
        ("concepts_read", "Unicorn", "no concept Unicorn"),
        ("concepts_update", "1|name|   ", "missing"),
        ("links_delete", "5", "no link #5"),
    ];
    for (tool, raw, why) in refusals {
        let text = kit.fails(tool, raw).await;
        assert!(text.contains(why), "{tool}|{raw}: {text}");
    }
    assert_eq!(counts(&kit).await, (2, 1));
    assert_eq!(kit.read(|s| s.get::<Link>(1).unwrap()).await, link);
}
