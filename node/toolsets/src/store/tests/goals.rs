//! `goals` and `tasks`: goals with their tasks, statuses checked, a deleted
//! goal's tasks kept.

use porfiry_skills::Language;
use porfiry_storage::{Goal, Progress, Task};

use crate::store::testkit::Kit;

#[tokio::test]
async fn goals_and_tasks_change_the_file() {
    let kit = Kit::new(Language::En);
    assert_eq!(
        kit.ok("goals_add", "Learn Rust|read the book").await,
        "added: goal #1"
    );
    assert_eq!(
        kit.ok("tasks_add", "Read chapter 1|1|pages 1-30").await,
        "added: task #1"
    );
    assert_eq!(kit.ok("tasks_add", "Water plants").await, "added: task #2");
    let task = kit.read(|s| s.get::<Task>(1).unwrap()).await.row;
    assert_eq!(
        (task.goal_id, task.description.as_str()),
        (Some(1), "pages 1-30")
    );
    assert_eq!(
        kit.read(|s| s.get::<Task>(2).unwrap()).await.row.goal_id,
        None
    );

    let read = kit.ok("goals_read", "1").await;
    assert!(
        read.starts_with("#1 Learn Rust (open, p0)\nread the book"),
        "{read}"
    );
    assert!(
        read.contains("tasks:\n#1 Read chapter 1 (open, p0, goal #1)"),
        "{read}"
    );

    kit.ok("goals_update", "1|status|In progress").await;
    kit.ok("goals_update", "1|priority|2").await;
    kit.ok("tasks_update", "1|status|done").await;
    kit.ok("tasks_update", "2|goal|1").await;
    kit.ok("tasks_pin", "2").await;
    let goal = kit.read(|s| s.get::<Goal>(1).unwrap()).await.row;
    assert_eq!((goal.status, goal.priority), (Progress::InProgress, 2));
    let task = kit.read(|s| s.get::<Task>(2).unwrap()).await.row;
    assert_eq!((task.goal_id, task.pinned), (Some(1), true));
    assert!(
        kit.ok("tasks_list", "")
            .await
            .contains("#2 Water plants (open, p0, goal #1, pinned)")
    );
    kit.ok("tasks_unpin", "2").await;
    kit.ok("tasks_update", "2|goal|none").await;
    assert_eq!(
        kit.read(|s| s.get::<Task>(2).unwrap()).await.row.goal_id,
        None
    );

    assert_eq!(kit.ok("goals_delete", "1").await, "deleted: goal #1");
    let orphan = kit.read(|s| s.get::<Task>(1).unwrap()).await.row;
    assert_eq!(orphan.goal_id, None, "a deleted goal's tasks stay");
    kit.ok("tasks_delete", "2").await;
    assert_eq!(kit.read(|s| s.count::<Task>().unwrap()).await, 1);
}

#[tokio::test]
async fn goal_and_task_refusals_change_nothing() {
    let kit = Kit::new(Language::En);
    kit.ok("goals_add", "Learn Rust").await;
    kit.ok("tasks_add", "Read|1").await;
    let (goal, task) = kit
        .read(|s| (s.get::<Goal>(1).unwrap(), s.get::<Task>(1).unwrap()))
        .await;
    let refusals = [
        ("goals_update", "1|status|someday", "status must be one of"),
        ("goals_update", "1|title|  ", "missing"),
        ("tasks_update", "1|goal|99", "refused"),
        (
            "tasks_update",
            "1|priority|top",
            "priority must be a number",
        ),
        ("tasks_add", "Orphan|42", "refused"),
        ("goals_read", "7", "no goal #7"),
        ("tasks_pin", "7", "no task #7"),
    ];
    for (tool, raw, why) in refusals {
        let text = kit.fails(tool, raw).await;
        assert!(text.contains(why), "{tool}|{raw}: {text}");
    }
    let after = kit
        .read(|s| {
            (
                s.get::<Goal>(1).unwrap(),
                s.get::<Task>(1).unwrap(),
                s.count::<Task>().unwrap(),
            )
        })
        .await;
    assert_eq!((after.0, after.1, after.2), (goal, task, 1));
}
