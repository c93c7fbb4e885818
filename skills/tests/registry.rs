//! The toolset registry on its own, as the HMP cognitive core uses it:
//! registration checks, prefix routing, argument checking, invocation.

mod common;

use common::films::Films;
use common::{Notes, films};
use porfiry_skills::{
    ArgSpec, Args, ArgsError, BoxFuture, CallContext, Caller, Language, LoopConfig, PrepareError,
    RegistryError, Route, SkillRegistry, ToolEffect, ToolOutput, ToolSpec, Toolbox, Toolset,
    ToolsetRegistry,
};

struct Custom {
    name: &'static str,
    tools: Vec<ToolSpec>,
}

impl Toolset for Custom {
    fn name(&self) -> &str {
        self.name
    }
    fn summary(&self) -> &str {
        "custom"
    }
    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }
    fn call<'a>(
        &'a self,
        tool: &'a str,
        _args: &'a Args,
        _ctx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(std::future::ready(ToolOutput::ok(tool)))
    }
}

fn custom(name: &'static str, tools: &[&str]) -> Custom {
    Custom {
        name,
        tools: tools
            .iter()
            .map(|t| ToolSpec::new(t, "d", vec![], ToolEffect::Read))
            .collect(),
    }
}

fn registry() -> ToolsetRegistry {
    let mut r = ToolsetRegistry::new();
    r.register(Films::new(films(), Language::En)).unwrap();
    r.register(Notes::new()).unwrap();
    r
}

#[test]
fn registration_refuses_every_kind_of_bad_set() {
    let mut r = registry();
    assert_eq!(
        r.register(custom("media", &["media_x"])),
        Err(RegistryError::DuplicateSet("media".into()))
    );
    assert_eq!(
        r.register(custom("my_set", &[])),
        Err(RegistryError::BadSetName("my_set".into()))
    );
    assert_eq!(
        r.register(custom("", &[])),
        Err(RegistryError::BadSetName("".into()))
    );
    assert_eq!(
        r.register(custom("Web", &[])),
        Err(RegistryError::BadSetName("Web".into()))
    );
    assert!(matches!(
        r.register(custom("web", &["fetch"])),
        Err(RegistryError::BadToolName { .. })
    ));
    assert!(matches!(
        r.register(custom("web", &["web_"])),
        Err(RegistryError::BadToolName { .. })
    ));
    assert!(matches!(
        r.register(custom("web", &["webfetch"])),
        Err(RegistryError::BadToolName { .. })
    ));
    assert!(matches!(
        r.register(custom("web", &["web_Fetch"])),
        Err(RegistryError::BadToolName { .. })
    ));
    assert_eq!(
        r.register(custom("web", &["web_get", "web_get"])),
        Err(RegistryError::DuplicateTool("web_get".into()))
    );
    assert_eq!(
        r.register(custom("read", &["read_skill"])),
        Err(RegistryError::ClashesWithCoreTool("read_skill".into()))
    );
    let bad_order = Custom {
        name: "web",
        tools: vec![ToolSpec::new(
            "web_get",
            "d",
            vec![ArgSpec::word("a").optional(), ArgSpec::word("b")],
            ToolEffect::Network,
        )],
    };
    assert_eq!(
        r.register(bad_order),
        Err(RegistryError::RequiredAfterOptional("web_get".into()))
    );
    assert_eq!(r.len(), 2, "nothing half-registered");
    r.register(custom("web", &["web_get", "web_get_all"]))
        .unwrap();
    assert_eq!(r.names().collect::<Vec<_>>(), ["media", "notes", "web"]);
}

#[test]
fn the_prefix_routes_and_identifies_the_set() {
    let r = registry();
    assert!(
        matches!(r.route("media_info"), Route::Tool(set, spec) if set.name() == "media" && spec.name == "media_info")
    );
    assert!(matches!(r.route("notes_add"), Route::Tool(set, _) if set.name() == "notes"));
    assert!(matches!(r.route("media_nope"), Route::UnknownVerb(set) if set.name() == "media"));
    assert!(matches!(r.route("web_get"), Route::Unknown));
    assert!(
        matches!(r.route("media"), Route::Unknown),
        "no underscore, no route"
    );
    assert_eq!(r.set_of("notes_list").map(|s| s.name()), Some("notes"));
}

fn toolbox() -> Toolbox {
    Toolbox::new(registry(), SkillRegistry::new(), LoopConfig::default())
}

fn ctx() -> CallContext {
    CallContext::new(
        "s1",
        Caller::Core { tick: 7 },
        common::clock_now(),
        Language::En,
    )
}

#[tokio::test]
async fn invoke_routes_binds_and_runs_by_position_or_by_name() {
    let tb = toolbox();
    assert_eq!(
        tb.invoke("notes_list", "", &ctx()).await,
        Ok(ToolOutput::ok("1. buy milk"))
    );
    assert_eq!(
        tb.invoke("notes_mark", "3|open", &ctx()).await,
        Ok(ToolOutput::ok("note 3 is open"))
    );
    assert_eq!(
        tb.invoke("notes_mark", r#"{"state": "open", "n": 3}"#, &ctx())
            .await,
        Ok(ToolOutput::ok("note 3 is open"))
    );
    let out = tb.invoke("media_info", "nope", &ctx()).await.unwrap();
    assert!(!out.ok);
    assert_eq!(
        out.text,
        "no film with id \"nope\"; find ids with media_search|query"
    );
}

#[test]
fn prepare_checks_arguments_before_anything_runs() {
    let tb = toolbox();
    let prepared = tb.prepare("media_play", r#"{"id": "tt0000042"}"#).unwrap();
    assert_eq!(prepared.tool(), "media_play");
    assert_eq!(prepared.set_name(), "media");
    assert_eq!(prepared.args().get("id"), Some("tt0000042"));
    assert_eq!(prepared.effect(), ToolEffect::Write);
    let not_a_number = ArgsError::NotANumber {
        name: "n".into(),
        value: "x".into(),
    };
    let invalid = PrepareError::InvalidArgs {
        schema: "notes_mark|n(number)|[state(done/open)]".into(),
        error: not_a_number,
    };
    assert_eq!(tb.prepare("notes_mark", "x"), Err(invalid.clone()));
    assert_eq!(
        tb.prepare("notes_mark", r#"{"n": "x"}"#),
        Err(invalid),
        "named arguments fail exactly like positional ones"
    );
    assert_eq!(
        tb.prepare("notes_zap", ""),
        Err(PrepareError::UnknownVerb {
            set: "notes".into(),
            tool: "notes_zap".into()
        })
    );
    assert_eq!(
        tb.prepare("web_get", ""),
        Err(PrepareError::UnknownTool {
            tool: "web_get".into()
        })
    );
}

#[test]
fn only_keeps_the_named_sets_and_shares_them() {
    let all = registry();
    let names: Vec<&str> = all.names().collect();
    let first = names[0];
    let some = all.only(&[first, "nosuch"]);
    assert_eq!(some.names().collect::<Vec<_>>(), [first]);
    let a = all.get(first).unwrap() as *const dyn porfiry_skills::Toolset as *const u8;
    let b = some.get(first).unwrap() as *const dyn porfiry_skills::Toolset as *const u8;
    assert_eq!(a, b, "the same toolset object, not a copy");
    assert!(all.only(&[]).is_empty());
}
