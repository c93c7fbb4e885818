//! Context 1 as the `cycle` set leaves it: concentration chosen by a
//! command selects the recent replies the next tick shows.

use porfiry_skills::Language;
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings};
use porfiry_storage::RecentResponse;
use porfiry_toolsets::acting::CycleToolset;
use porfiry_toolsets::acting::test_support::call;
use porfiry_toolsets::test_support::{ctx_at, store_tools};

use super::recent_replies;

#[tokio::test]
async fn concentration_set_by_the_cycle_set_selects_context_1() {
    let (_dir, tools) = store_tools(Language::En);
    let c = CycleToolset::new(tools.clone());
    let ctx = ctx_at(5_000, Language::En);
    let out = call(
        &c,
        "cycle_concentration",
        "on|архитектура, AGI|тревожность:≥2, joy:>=4|or",
        &ctx,
    )
    .await;
    assert!(out.ok, "{}", out.text);
    // Context 1 now selects by it: a reply the reflex tagged "agi" (tags
    // are stored lower-cased) is chosen by "AGI"; an untagged one is not.
    let recent = tools
        .db
        .write(|s| {
            for (content, tags) in [("about agi", vec!["agi".to_owned()]), ("other", vec![])] {
                s.add(
                    &RecentResponse {
                        content: content.into(),
                        tags,
                        ..Default::default()
                    },
                    6_000,
                )?;
            }
            let cycle: CycleSettings = s.config_get(CYCLE_CONFIG_KEY)?.unwrap_or_default();
            recent_replies(s, &cycle)
        })
        .await
        .unwrap()
        .unwrap();
    let shown: Vec<&str> = recent.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(shown, ["about agi"]);
}
