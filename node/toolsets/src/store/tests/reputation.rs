//! `reputation`: scores and comments in `agent_reputation`, created on first use.

use porfiry_skills::Language;
use porfiry_storage::Reputation;

use crate::store::testkit::Kit;

#[tokio::test]
async fn scores_and_comments_change_the_file() {
    let kit = Kit::new(Language::En);
    assert_eq!(
        kit.ok("reputation_set", "peerA|2.5").await,
        "reputation of peerA: 2.5"
    );
    assert_eq!(
        kit.ok("reputation_increase", "peerA").await,
        "reputation of peerA: 3.5"
    );
    assert_eq!(
        kit.ok("reputation_decrease", "peerA|0.5").await,
        "reputation of peerA: 3"
    );
    assert_eq!(
        kit.ok("reputation_decrease", "peerB").await,
        "reputation of peerB: -1"
    );
    assert_eq!(
        kit.ok("reputation_notes", "peerA|answers fast").await,
        "comments on peerA saved"
    );
    let row = kit
        .read(|s| s.reputation("peerA").unwrap().unwrap())
        .await
        .row;
    assert_eq!((row.score, row.notes.as_str()), (3.0, "answers fast"));
    assert_eq!(
        kit.ok("reputation_read", "peerA").await,
        "peerA: 3 — answers fast"
    );
    let list = kit.ok("reputation_list", "").await;
    assert_eq!(list.lines().count(), 2, "{list}");
}

#[tokio::test]
async fn reputation_refusals_change_nothing() {
    let kit = Kit::new(Language::Ru);
    kit.ok("reputation_set", "peerA|1").await;
    let before = kit.read(|s| s.reputation("peerA").unwrap().unwrap()).await;
    assert!(
        kit.fails("reputation_set", "peerA|много")
            .await
            .contains("score")
    );
    assert!(
        kit.fails("reputation_increase", "peerA|inf")
            .await
            .contains("amount")
    );
    assert!(
        kit.fails("reputation_read", "peerZ")
            .await
            .contains("не найдено")
    );
    assert!(
        kit.fails("reputation_set", "peer with spaces|1")
            .await
            .contains("отказано")
    );
    assert_eq!(
        kit.read(|s| s.reputation("peerA").unwrap().unwrap()).await,
        before
    );
    assert_eq!(kit.read(|s| s.count::<Reputation>().unwrap()).await, 1);
}
