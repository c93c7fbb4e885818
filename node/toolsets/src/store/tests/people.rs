//! `users` and `groups`: people the agent knows, without passwords or
//! operator rights from the model, and groups of them.

use porfiry_skills::Language;
use porfiry_storage::{User, UserGroup};

use crate::store::testkit::Kit;

#[tokio::test]
async fn users_and_groups_are_added_listed_and_deleted() {
    let kit = Kit::new(Language::En);
    assert_eq!(
        kit.ok("users_add", "mama|mama@example.org|ru, en").await,
        "added: user #1"
    );
    kit.ok("users_add", "papa").await;
    let mama = kit.read(|s| s.get::<User>(1).unwrap().row).await;
    assert_eq!(mama.mail.as_deref(), Some("mama@example.org"));
    assert_eq!(mama.languages, ["ru", "en"]);
    assert!(!mama.operator && mama.password_hash.is_none());
    let list = kit.ok("users_list", "").await;
    assert!(
        list.contains("#1 mama <mama@example.org> [ru, en]") && list.contains("#2 papa"),
        "{list}"
    );
    assert_eq!(
        kit.ok("groups_add", "family|the house|#1, 2, 1").await,
        "added: group #1"
    );
    let family = kit.read(|s| s.get::<UserGroup>(1).unwrap().row).await;
    assert_eq!(family.members, [1, 2], "ids once each");
    assert!(
        kit.ok("groups_list", "")
            .await
            .contains("family — the house [#1, #2]")
    );
    let groups = kit.read(|s| s.groups_of_user(2).unwrap()).await;
    assert_eq!(groups.len(), 1);
    kit.ok("users_delete", "2").await;
    kit.ok("groups_delete", "1").await;
    assert_eq!(kit.read(|s| s.count::<UserGroup>().unwrap()).await, 0);
    assert_eq!(kit.read(|s| s.count::<User>().unwrap()).await, 1);
}

#[tokio::test]
async fn bad_users_and_groups_are_refused_and_nothing_is_written() {
    let kit = Kit::new(Language::En);
    let refusals = [
        ("users_add", " ", "name"),
        ("groups_add", "family||1, x", "members"),
        ("groups_add", "family||0", "members"),
    ];
    for (tool, raw, why) in refusals {
        let text = kit.fails(tool, raw).await;
        assert!(text.contains(why), "{tool}|{raw}: {text}");
    }
    let many: Vec<String> = (1..=65).map(|i| i.to_string()).collect();
    let text = kit
        .fails("groups_add", &format!("big||{}", many.join(",")))
        .await;
    assert!(text.contains("at most 64"), "{text}");
    assert_eq!(kit.read(|s| s.count::<UserGroup>().unwrap()).await, 0);
    assert_eq!(kit.read(|s| s.count::<User>().unwrap()).await, 0);
}
