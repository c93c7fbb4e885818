//! Bringing the API up from `porfiry run`: the flags (`--api HOST:PORT`,
//! `--no-api`, `--api-public`), checked before anything starts; the agent
//! from the model flags; the token; the listener; `api on http://HOST:PORT`.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use clap::Args;

use crate::commands::llm_flags::{HalfConfiguredModel, OptionalLlmArgs};
use porfiry_agent::chat::{ChatConfig, ChatEngine, ChatError, Clock, Llm};
use porfiry_agent::llm::LlmTarget;
use porfiry_api::adapters::ChatAgent;
use porfiry_api::backend::{Agent, NodeApi};
use porfiry_api::limits::DEFAULT_API_ADDR;
use porfiry_api::state::ApiState;
use porfiry_api::token::{ApiToken, TokenError, token_path};
use porfiry_mesh::data_dir::DataDir;

/// The API flags of `porfiry run`.
#[derive(Debug, Clone, Args)]
pub struct ApiArgs {
    /// Address of the HTTP API (OpenAI-compatible chat, notes, friends,
    /// status). Loopback unless --api-public is given.
    #[arg(long = "api", value_name = "HOST:PORT", default_value = DEFAULT_API_ADDR,
          value_parser = |s: &str| api_address(s, true).map(|_| s.to_owned()).map_err(|e| e.to_string()))]
    pub api: String,
    /// Run without the HTTP API.
    #[arg(long, conflicts_with = "api_public")]
    pub no_api: bool,
    /// Allow --api on a non-loopback address (other machines can then reach
    /// the API; every request still needs the token).
    #[arg(long)]
    pub api_public: bool,
}

/// Why the API cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `--api` is not `IP:PORT`.
    #[error("--api {given:?} is not HOST:PORT (e.g. {DEFAULT_API_ADDR})")]
    BadAddress {
        /// What was given.
        given: String,
    },
    /// A non-loopback address without `--api-public`.
    #[error(
        "--api {addr} is reachable from other machines; add --api-public to allow that \
         (or use 127.0.0.1)"
    )]
    NotLoopback {
        /// The address.
        addr: SocketAddr,
    },
    /// One model flag without the other.
    #[error(transparent)]
    Model(#[from] HalfConfiguredModel),
    /// The chat engine could not be built (bad URL, catalogue).
    #[error(transparent)]
    Chat(#[from] ChatError),
    /// The token file.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The address could not be bound.
    #[error(
        "cannot listen on {addr} for the API: {source} (another node on this machine? \
         give it another --api HOST:PORT, or --no-api)"
    )]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Writing the `api on …` line failed.
    #[error("cannot write to stdout: {0}")]
    Output(std::io::Error),
}

/// What `porfiry run` will serve, checked from the flags before anything starts.
#[derive(Debug, Clone)]
pub struct ApiPlan {
    /// Where to listen; `None` with `--no-api`.
    pub addr: Option<SocketAddr>,
    /// Whether the agent's requests carry their reply grammar (`--constrained`).
    pub constrained: bool,
    /// The settings file the page's backup takes along, as `porfiry backup`
    /// does (`run` sets it to the file it read).
    pub settings_file: Option<std::path::PathBuf>,
}

impl ApiPlan {
    /// Checks the API flags, and that the model flags are not half given.
    pub fn from_args(api: &ApiArgs, llm: &OptionalLlmArgs) -> Result<Self, StartError> {
        llm.target()?;
        let addr = if api.no_api {
            None
        } else {
            Some(api_address(&api.api, api.api_public)?)
        };
        Ok(Self {
            addr,
            constrained: llm.constrained.mode().builds_grammars(),
            settings_file: None,
        })
    }
}

/// Parses `--api`; a non-loopback address needs `public`.
pub fn api_address(given: &str, public: bool) -> Result<SocketAddr, StartError> {
    let bad = || StartError::BadAddress {
        given: given.to_owned(),
    };
    let addr = match given.parse::<SocketAddr>() {
        Ok(addr) => addr,
        Err(_) => match given.rsplit_once(':') {
            Some(("localhost", port)) => SocketAddr::new(
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                port.parse().map_err(|_| bad())?,
            ),
            _ => return Err(bad()),
        },
    };
    if !addr.ip().is_loopback() && !public {
        return Err(StartError::NotLoopback { addr });
    }
    Ok(addr)
}

/// The agent's model and where it runs (`/api/status` `model_source`).
pub struct AgentModel {
    /// The model.
    pub llm: Arc<dyn Llm>,
    /// Where it runs.
    pub source: porfiry_api::backend::ModelSource,
}

/// The agent over `model` (the node's own model server, a friend's model, or
/// whichever friend offers one), with the user's skills from the data dir
/// and the node's toolsets (`None`: the ones that need no database); its
/// requests carry their reply grammar when `constrained`.
pub fn build_agent(
    dir: &DataDir,
    model: AgentModel,
    toolsets: Option<porfiry_skills::ToolsetRegistry>,
    language: porfiry_skills::Language,
    constrained: bool,
) -> Result<Arc<dyn Agent>, StartError> {
    let AgentModel { llm, source } = model;
    let model = llm.model_name();
    let target = LlmTarget::new(String::new(), model.clone());
    let config = ChatConfig {
        skills_dir: Some(dir.skills_dir()),
        language,
        constrained,
        ..ChatConfig::new(target)
    };
    let engine = match toolsets {
        Some(toolsets) => ChatEngine::with_toolsets(&config, llm, toolsets)?,
        None => ChatEngine::with_llm(&config, llm)?,
    };
    Ok(Arc::new(
        ChatAgent::new(Arc::new(engine), model).with_source(source),
    ))
}

/// A running API server.
pub struct RunningApi {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The server; resolves after `shutdown` once requests in flight end.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// Dropping or sending stops it (when started by [`serve_node`]).
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl RunningApi {
    /// Stops accepting, lets requests in flight end for up to
    /// [`SHUTDOWN_GRACE`], then drops what is left.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match tokio::time::timeout(SHUTDOWN_GRACE, &mut self.task).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => tracing::warn!("the API server stopped with an error: {e}"),
            Ok(Err(e)) => tracing::warn!("the API server task failed: {e}"),
            Err(_) => {
                tracing::info!("API requests still running after the grace period; dropped");
                self.task.abort();
            }
        }
    }
}

/// How long a stopping node waits for API requests in flight (a streamed
/// answer may run for minutes): long enough for a short answer to finish,
/// short enough that SIGTERM from a supervisor ends the process promptly.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What `porfiry run` calls once the node is up: serves the API over
/// `node` as `plan` says (nothing with `--no-api`), until
/// [`RunningApi::stop`].
pub async fn serve_node(
    dir: &DataDir,
    plan: &ApiPlan,
    node: &porfiry_mesh::node::NodeHandle,
    model: AgentModel,
    toolsets: porfiry_skills::ToolsetRegistry,
    language: porfiry_skills::Language,
    out: &mut impl Write,
) -> Result<Option<RunningApi>, StartError> {
    let Some(addr) = plan.addr else {
        return Ok(None);
    };
    let agent = Some(build_agent(
        dir,
        model,
        Some(toolsets),
        language,
        plan.constrained,
    )?);
    // The page's backup takes the settings file along, as `porfiry backup`
    // does, and names this binary's version in its manifest.
    let node = Arc::new(
        porfiry_api::adapters::NodeAdapter::with_links_file(
            node.clone(),
            dir.root().join(porfiry_mesh::net::LINKS_FILE_NAME),
        )
        .with_backup_settings(plan.settings_file.clone(), crate::cli::VERSION),
    );
    let clock: Arc<dyn Clock> = Arc::new(porfiry_agent::chat::SystemClock::utc());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut running = start(
        dir,
        addr,
        node,
        agent,
        language,
        clock,
        async move {
            let _ = stopped.await;
        },
        out,
    )
    .await?;
    running.stop = Some(stop);
    Ok(Some(running))
}

/// Loads the token, binds `addr`, prints `api on http://ADDR` and the
/// family page's one-time sign-in link to `out` and serves (the page in
/// `language`) until `shutdown` resolves.
#[allow(clippy::too_many_arguments)]
pub async fn start(
    dir: &DataDir,
    addr: SocketAddr,
    node: Arc<dyn NodeApi>,
    agent: Option<Arc<dyn Agent>>,
    language: porfiry_skills::Language,
    clock: Arc<dyn Clock>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    out: &mut impl Write,
) -> Result<RunningApi, StartError> {
    let token = ApiToken::load_or_create(dir)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| StartError::Bind { addr, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| StartError::Bind { addr, source })?;
    if agent.is_none() {
        tracing::info!("no model configured: chat requests will get an error saying so");
    }
    let state = ApiState::new(node, agent, token, clock).with_page_language(language);
    match state.restore_page_sessions().await {
        Ok(0) => {}
        Ok(n) => tracing::info!(
            sessions = n,
            "family page: browsers signed in before stay signed in"
        ),
        Err(e) => {
            tracing::warn!(error = %e, "family page sessions not restored: browsers sign in again")
        }
    }
    match state.restore_turn_records().await {
        Ok(0) => {}
        Ok(n) => tracing::info!(
            records = n,
            "clients' earlier turns keep their tool results"
        ),
        Err(e) => {
            tracing::warn!(error = %e, "turn records not restored: rebuilt histories lack their tool turns")
        }
    }
    writeln!(out, "api on http://{addr}").map_err(StartError::Output)?;
    match state.issue_login_code() {
        Ok(code) => writeln!(
            out,
            "family page: http://{}/login?code={code} (opens once, within 10 minutes; \
             `porfiry web` prints a new link)",
            crate::commands::web::browser_address(&addr.to_string())
        )
        .map_err(StartError::Output)?,
        Err(e) => tracing::warn!("no sign-in link for the family page: {e}"),
    }
    out.flush().map_err(StartError::Output)?;
    tracing::info!(token_file = %token_path(dir).display(), "API token");
    write_api_address(dir, addr);
    let task = tokio::spawn(porfiry_api::serve(listener, state, shutdown));
    Ok(RunningApi {
        addr,
        task,
        stop: None,
    })
}

/// The file in the data dir where a running node writes its API's
/// `HOST:PORT`, so `porfiry llm list` (another process) can ask it. A stale
/// file (node stopped) only means the connection is refused.
pub const API_ADDRESS_FILE: &str = "api-address";

/// Where the API address of the node in `dir` is written.
pub fn api_address_path(dir: &DataDir) -> std::path::PathBuf {
    dir.root().join(API_ADDRESS_FILE)
}

/// Writes [`API_ADDRESS_FILE`]; a failure is logged, not fatal: the API
/// serves all the same, only other commands cannot find it.
fn write_api_address(dir: &DataDir, addr: SocketAddr) {
    let path = api_address_path(dir);
    if let Err(e) = std::fs::write(&path, format!("{addr}\n")) {
        tracing::warn!(path = %path.display(), "cannot write the API address: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_are_served_and_others_need_api_public() {
        assert_eq!(
            api_address(DEFAULT_API_ADDR, false).unwrap(),
            "127.0.0.1:4580".parse().unwrap()
        );
        assert_eq!(api_address("localhost:9", false).unwrap().port(), 9);
        assert!(api_address("[::1]:9", false).is_ok());
        let err = api_address("0.0.0.0:4580", false).unwrap_err();
        assert!(err.to_string().contains("--api-public"), "{err}");
        assert!(api_address("0.0.0.0:4580", true).is_ok());
        let err = api_address("4580", false).unwrap_err();
        assert!(matches!(err, StartError::BadAddress { .. }), "{err}");
    }

    #[test]
    fn no_api_plans_no_listener() {
        let api = ApiArgs {
            api: "0.0.0.0:1".to_owned(),
            no_api: true,
            api_public: false,
        };
        let llm = OptionalLlmArgs {
            llm_url: None,
            llm_model: None,
            call: crate::commands::llm_flags::LlmCallArgs {
                llm_timeout_secs: 1,
                llm_retries: 0,
            },
            file: Default::default(),
            constrained: Default::default(),
        };
        assert!(ApiPlan::from_args(&api, &llm).unwrap().addr.is_none());
    }

    #[tokio::test]
    async fn start_prints_the_address_and_serves_until_shutdown() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("node"));
        // A real node behind the API (a phone: it listens nowhere).
        let config =
            porfiry_mesh::NodeConfig::new(dir.clone(), porfiry_mesh::Profile::Phone, vec![]);
        let (node, join) = porfiry_mesh::Node::spawn(config).unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let mut out = Vec::new();
        let running = start(
            &dir,
            "127.0.0.1:0".parse().unwrap(),
            Arc::new(porfiry_api::adapters::NodeAdapter::new(node.clone())),
            None,
            porfiry_skills::Language::En,
            Arc::new(porfiry_agent::chat::SystemClock::utc()),
            async move {
                let _ = stopped.await;
            },
            &mut out,
        )
        .await
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        let mut lines = out.lines();
        assert_eq!(
            lines.next(),
            Some(format!("api on http://{}", running.addr).as_str())
        );
        let link = lines.next().unwrap();
        let prefix = format!("family page: http://{}/login?code=", running.addr);
        assert!(link.starts_with(&prefix), "{link}");
        assert_eq!(link[prefix.len()..].split(' ').next().unwrap().len(), 32);
        assert!(token_path(&dir).exists());
        stop.send(()).unwrap();
        running.task.await.unwrap().unwrap();
        node.shutdown();
        join.await.unwrap();
    }
}
