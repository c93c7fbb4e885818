//! What another of the person's devices wrote reaches this device's next
//! tick (issue 45 §3): a pinned diary entry, a goal and a line of the
//! core's notebook, arriving as signed `mind_record` versions the way the
//! replication loop stores them (`insert_items`, received from a device),
//! show in the prompt of the next tick — context 3, the goals, context 6 —
//! without anything but the database between them.

mod core_support;

use std::collections::BTreeMap;

use core_support::*;
use porfiry_protocol::devices::DEVICES_MAX_HOPS;
use porfiry_protocol::mind::{MindRecord, MindTable, MindValue, VersionVector};
use porfiry_protocol::{Audience, Body, ItemRecord, NodeKey, PayloadDraft, sign};
use porfiry_storage::StoredItem;

/// A version of a new record of `table` with `fields`, written by the
/// device `phone` at `at_ms`, as it arrives here.
fn from_phone(
    phone: &NodeKey,
    table: MindTable,
    key: u8,
    fields: &[(&str, MindValue)],
) -> StoredItem {
    let mut vv = VersionVector::new();
    vv.bump(&phone.peer_id().to_string()).unwrap();
    let item = sign(
        phone,
        &PayloadDraft {
            created_ms: 1_000,
            audience: Audience::Devices,
            max_hops: DEVICES_MAX_HOPS,
            expires_ms: None,
            replaces: None,
            body: Body::MindRecord(MindRecord {
                table,
                key: [key; 16],
                vv,
                at_ms: 1_000,
                deleted: false,
                fields: fields
                    .iter()
                    .map(|(n, v)| ((*n).to_owned(), v.clone()))
                    .collect::<BTreeMap<_, _>>(),
            }),
        },
    )
    .unwrap();
    StoredItem {
        record: ItemRecord::of(
            &item,
            item.max_hops() - 1,
            Some(phone.peer_id().to_string()),
        ),
        payload: item.envelope_bytes().to_vec(),
        signature: item.signature_bytes().to_vec(),
    }
}

fn text(t: &str) -> MindValue {
    MindValue::Text(t.into())
}

#[tokio::test]
async fn a_devices_diary_goal_and_notebook_reach_the_next_tick() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let phone = NodeKey::from_seed([7; 32]);
    let items = vec![
        from_phone(
            &phone,
            MindTable::Diary,
            1,
            &[
                ("text", text("on the phone: the sea was cold")),
                ("priority", MindValue::Int(0)),
                ("pinned", MindValue::Bool(true)),
                ("tags", text("[]")),
                ("created", MindValue::Int(1_000)),
            ],
        ),
        from_phone(
            &phone,
            MindTable::Goal,
            2,
            &[
                ("title", text("learn to swim")),
                ("description", text("")),
                ("status", text("open")),
                ("priority", MindValue::Int(1)),
                ("tags", text("[]")),
                ("created", MindValue::Int(1_000)),
            ],
        ),
        from_phone(
            &phone,
            MindTable::LlmMemory,
            3,
            &[
                ("content", text("the user swims on Sundays")),
                ("tags", text("[]")),
                ("created", MindValue::Int(1_000)),
            ],
        ),
    ];
    db.write(move |s| s.insert_items(&items))
        .await
        .unwrap()
        .unwrap();
    let (main, prompts) = scripted(&["Thinking on."]);
    let mut core = core_of(&db, main, &start_clock()).await;
    core.tick().await.unwrap();
    let prompt = prompts.lock().unwrap()[0].clone();
    let section = |from: &str, to: &str| -> String {
        let a = prompt
            .find(from)
            .unwrap_or_else(|| panic!("{from} missing: {prompt}"));
        let b = prompt[a..].find(to).map_or(prompt.len(), |b| a + b);
        prompt[a..b].to_owned()
    };
    let records = section("## 3.", "## 4.");
    assert!(
        records.contains("on the phone: the sea was cold"),
        "{records}"
    );
    assert!(prompt.contains("learn to swim"), "the goal: {prompt}");
    let notebook = section("## 6.", "## 7.");
    assert!(notebook.contains("the user swims on Sundays"), "{notebook}");
}
