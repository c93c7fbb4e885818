use porfiry_skills::llm::{ChatMessage, ModelRequest};
use porfiry_storage::LlmConfig;

use super::*;
use porfiry_offload::OffloadStream;
use porfiry_toolsets::acting::test_support::ScriptedServer;

/// An opener that reaches nobody.
struct NoRoute;

impl OffloadOpener for NoRoute {
    fn open(&self, _peer: PeerId) -> porfiry_skills::BoxFuture<'_, Result<OffloadStream, String>> {
        Box::pin(async { Err("no route to the friend".to_owned()) })
    }
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "sys".into(),
        messages: vec![ChatMessage::user("hello")],
        max_tokens: None,
        grammar: None,
        stop: Vec::new(),
    }
}

#[tokio::test]
async fn a_url_row_calls_its_server_with_the_rows_sampling_settings() {
    let server = ScriptedServer::start().await;
    let mut entry = server.entry("local", "qwen");
    entry.config = LlmConfig {
        temperature: Some(0.7),
        presence_penalty: Some(1.25),
        max_retries: Some(0),
        ..LlmConfig::default()
    };
    let model = RegistryModels::new(None).model(&entry).unwrap();
    assert_eq!(model.model_name(), "qwen");
    let answer = model.complete(&request()).await.unwrap();
    assert_eq!(answer.text, "qwen says: hello");
    let bodies = server.bodies.lock().unwrap();
    assert_eq!(bodies[0]["temperature"], serde_json::json!(0.7));
    assert_eq!(bodies[0]["presence_penalty"], serde_json::json!(1.25));
}

#[tokio::test]
async fn a_url_row_sends_the_grammar_only_when_told_and_the_stop_always() {
    let server = ScriptedServer::start().await;
    let entry = server.entry("local", "qwen");
    let request = request()
        .with_grammar(Some("root ::= \"x\"".into()))
        .with_stop(&["TOOL_RESULT"]);
    let quiet = RegistryModels::new(None).model(&entry).unwrap();
    quiet.complete(&request).await.unwrap();
    let told = RegistryModels::new(None)
        .with_http_grammars(true)
        .model(&entry)
        .unwrap();
    let mut stream = told.stream(&request).await.unwrap();
    while futures::StreamExt::next(&mut stream).await.is_some() {}
    let bodies = server.bodies.lock().unwrap();
    assert!(bodies[0].get("grammar").is_none(), "{}", bodies[0]);
    assert_eq!(bodies[0]["stop"], serde_json::json!(["TOOL_RESULT"]));
    assert_eq!(bodies[1]["grammar"], serde_json::json!("root ::= \"x\""));
    assert_eq!(bodies[1]["stop"], serde_json::json!(["TOOL_RESULT"]));
    assert_eq!(bodies[1]["stream"], serde_json::json!(true));
}

#[tokio::test]
async fn an_unset_presence_penalty_is_not_sent() {
    let server = ScriptedServer::start().await;
    let model = RegistryModels::new(None)
        .model(&server.entry("local", "qwen"))
        .unwrap();
    model.complete(&request()).await.unwrap();
    let bodies = server.bodies.lock().unwrap();
    assert!(bodies[0].get("presence_penalty").is_none(), "{}", bodies[0]);
}

#[tokio::test]
async fn a_peer_row_is_a_friends_model_through_the_opener() {
    let peer = PeerId::random();
    let entry = LlmEntry {
        name: "bob".into(),
        endpoint: format!("peer:{peer}"),
        model: "gemma".into(),
        ..LlmEntry::default()
    };
    let opener: Arc<dyn OffloadOpener> = Arc::new(NoRoute);
    let model = RegistryModels::new(Some(opener)).model(&entry).unwrap();
    assert!(model.model_name().contains(&peer.to_string()));
    let e = model.complete(&request()).await.unwrap_err().to_string();
    assert!(e.contains("no route to the friend"), "{e}");
}

#[test]
fn each_endpoint_is_its_kind_of_backend() {
    use crate::llm::constrained::Backend;
    let peer = PeerId::random();
    let kinds = ["http://h/v1", &format!("peer:{peer}"), "file:/m/smol.gguf"]
        .map(|e| parse_endpoint(e).unwrap().backend());
    assert_eq!(kinds, [Backend::Http, Backend::Friend, Backend::Engine]);
}

#[test]
fn a_peer_row_without_a_mesh_and_a_bad_endpoint_are_clear_errors() {
    let peer = PeerId::random();
    let entry = LlmEntry {
        name: "bob".into(),
        endpoint: peer.to_string(),
        ..LlmEntry::default()
    };
    let e = RegistryModels::new(None)
        .model(&entry)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("bob") && e.contains("porfiry run"), "{e}");
    let bad = LlmEntry {
        endpoint: "ftp://x".into(),
        ..entry
    };
    let e = RegistryModels::new(None)
        .model(&bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("http(s)://"), "{e}");
    assert_eq!(
        parse_endpoint(" HTTPS://h/v1 "),
        Ok(Endpoint::Url("HTTPS://h/v1".into()))
    );
}

#[test]
fn a_file_endpoint_is_a_local_model_and_a_missing_file_is_named() {
    assert_eq!(
        parse_endpoint("file:/models/m.gguf"),
        Ok(Endpoint::File("/models/m.gguf".into()))
    );
    let dir = tempfile::tempdir().unwrap();
    let entry = LlmEntry {
        name: "local".into(),
        endpoint: format!("file:{}", dir.path().join("gone.gguf").display()),
        model: "gone".into(),
        ..Default::default()
    };
    let e = RegistryModels::new(None).model(&entry).err().unwrap();
    assert!(matches!(e, LlmError::NoModel(_)), "{e}");
    assert!(e.to_string().contains("gone.gguf"), "{e}");
}
