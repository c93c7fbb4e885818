//! `sharing audience`: reading a typed value (refusals name the accepted
//! forms in one line), showing the setting (default, set, unusable), and
//! the store's checks on a real node (a club it is not in, a group no
//! friend has, a club by its short name) that write nothing.

use super::*;
use porfiry_mesh::friends::{check_friend, save_friend};
use porfiry_mesh::sharing::clubs::create_club;
use porfiry_mesh::sharing::publish::KNOWHOW_AUDIENCE_KEY;
use porfiry_protocol::NodeKey;

fn bad(given: &str) -> String {
    let e = read_value(given).unwrap_err();
    assert!(
        matches!(e, SharingCommandError::BadAudience { .. }),
        "{given}: {e:?}"
    );
    e.to_string()
}

#[test]
fn know_how_audiences_are_read_and_others_refused_in_one_line() {
    assert_eq!(
        read_value("friends").unwrap(),
        Wanted::Audience(Audience::Friends)
    );
    assert_eq!(
        read_value("public").unwrap(),
        Wanted::Audience(Audience::Public)
    );
    assert_eq!(
        read_value("group:family").unwrap(),
        Wanted::Audience(Audience::Group("family".into()))
    );
    assert_eq!(
        read_value("club:chess").unwrap(),
        Wanted::ClubNamed("chess".into())
    );
    let founder = NodeKey::from_seed([3; 32]).peer_id().to_string();
    assert_eq!(
        read_value(&format!("club:chess@{founder}")).unwrap(),
        Wanted::Audience(Audience::Club(format!("chess@{founder}").parse().unwrap()))
    );

    let unknown = bad("everyone");
    assert_eq!(
        unknown,
        format!("bad know-how audience \"everyone\": {KNOWHOW_AUDIENCE_FORMS}")
    );
    let peer = NodeKey::from_seed([4; 32]).peer_id().to_string();
    for not_for_knowhow in ["devices".to_owned(), format!("peer:{peer}")] {
        let said = bad(&not_for_knowhow);
        assert!(said.contains("no single peer nor to devices"), "{said}");
    }
    let said = bad("group:Family");
    assert!(said.contains("bad group name"), "{said}");
    let said = bad("club:chess@nobody");
    assert!(said.contains("club:chess@nobody"), "{said}");
    for said in [unknown, said, bad("devices"), bad(""), bad("club:")] {
        assert!(!said.contains('\n'), "one line: {said}");
        assert!(said.ends_with(KNOWHOW_AUDIENCE_FORMS), "{said}");
    }
}

#[test]
fn the_setting_shows_as_default_set_or_unusable() {
    let default = shown(Ok(None));
    assert_eq!(
        serde_json::to_value(&default).unwrap(),
        serde_json::json!({"knowhow_audience": "public", "default": true})
    );
    assert_eq!(
        to_text(&default, false),
        "know-how audience is public (the default)"
    );

    let set = shown(Ok(Some(Audience::Friends)));
    assert_eq!(
        serde_json::to_value(&set).unwrap(),
        serde_json::json!({"knowhow_audience": "friends", "default": false})
    );
    assert_eq!(to_text(&set, false), "know-how audience is friends");
    assert_eq!(to_text(&set, true), "know-how audience is now friends");

    let unusable = shown(Err(KnowhowAudienceError::NotText("7".into())));
    assert_eq!(unusable.knowhow_audience, "friends", "the fallback");
    assert!(!unusable.default);
    let text = to_text(&unusable, false);
    assert!(
        text.starts_with("know-how goes to friends: the stored setting is unusable"),
        "{text}"
    );
    let json = serde_json::to_value(&unusable).unwrap();
    assert!(json["bad_setting"].as_str().unwrap().contains("found 7"));
}

/// A node made by `porfiry init` in `root`, with a friend tagged `family`.
fn node(root: &std::path::Path) -> DataDir {
    let dir = DataDir::new(root);
    porfiry_mesh::init::init(&dir, porfiry_skills::Language::En).unwrap();
    let (key, store) = open(&dir).unwrap();
    let friend = NodeKey::from_seed([7; 32]).peer_id().to_string();
    let checked = check_friend(&friend, &[], &["family".to_owned()]).unwrap();
    save_friend(&store, &key.peer_id(), &checked, 1_000).unwrap();
    dir
}

fn set(dir: &DataDir, value: &str) -> Result<String, SharingCommandError> {
    let command = SharingCommand::Audience {
        value: Some(value.to_owned()),
        json: false,
    };
    sharing(dir, &command, 2_000)
}

fn show(dir: &DataDir) -> serde_json::Value {
    let command = SharingCommand::Audience {
        value: None,
        json: true,
    };
    serde_json::from_str(&sharing(dir, &command, 3_000).unwrap()).unwrap()
}

#[test]
fn the_store_refuses_audiences_that_would_reach_nobody_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = node(tmp.path());
    let (key, store) = open(&dir).unwrap();
    let unset = || store.config_value(KNOWHOW_AUDIENCE_KEY).unwrap().is_none();

    let err = set(&dir, "group:chess").unwrap_err();
    assert!(matches!(err, SharingCommandError::NoSuchGroup(_)), "{err}");
    let stranger = NodeKey::from_seed([9; 32]).peer_id().to_string();
    let err = set(&dir, &format!("club:chess@{stranger}")).unwrap_err();
    assert!(err.to_string().contains("not a member"), "{err}");
    let err = set(&dir, "club:chess").unwrap_err();
    assert!(err.to_string().contains("no club \"chess\""), "{err}");
    assert!(unset(), "nothing written");
    assert_eq!(show(&dir)["default"], true);

    assert_eq!(
        set(&dir, "group:family").unwrap(),
        "know-how audience is now group:family"
    );
    let club = create_club(&store, &key, "chess", 1_500).unwrap();
    assert_eq!(
        set(&dir, "club:chess").unwrap(),
        format!("know-how audience is now club:{club}"),
        "the short name is stored as NAME@FOUNDER"
    );
    assert_eq!(
        show(&dir),
        serde_json::json!({"knowhow_audience": format!("club:{club}"), "default": false})
    );
}
