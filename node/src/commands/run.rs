//! `porfiry run`: the node daemon. Opens (or creates) the node, starts the
//! mesh with the friends from the database, prints `peer id: <id>` and one
//! `listening on <addr>/p2p/<id>` line per listen address, and runs until
//! SIGINT or SIGTERM; then prints `stopped: <n> items held` once everything
//! accepted is committed. With a model configured it also runs the
//! cognitive core ([`crate::commands::run_core`]) and prints
//! `cognitive core on: <model>`. Under systemd it says READY and feeds the
//! watchdog ([`crate::commands::service_notify`]); its flags may also come
//! from a config file ([`crate::commands::run_config`]).

use std::io::Write;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

use super::quota_flags::QuotaArgs;
use crate::commands::api_start::{ApiArgs, ApiPlan, StartError};
use crate::commands::llm_flags::OptionalLlmArgs;
use crate::commands::model_choice::{self, OffloadStartError};
use crate::commands::offload_flags::{ModelChoice, OffloadArgs, OffloadFlagsError, OffloadPlan};
use crate::commands::reach_flags::{ReachArgs, ReachFlagsError};
use crate::commands::run_core::{ThinkFlags, node_registry, start_core};
use crate::commands::service_notify;
use porfiry_agent::llm::local::open_model_file;
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::init::InitError;
use porfiry_mesh::lock::LockError;
use porfiry_mesh::net::Multiaddr;
use porfiry_mesh::net::limits::DEFAULT_SERVER_LISTEN_QUIC;
use porfiry_mesh::net::swarm::QUIC_BUILT;
use porfiry_mesh::node::{Node, NodeConfig, NodeError};
use porfiry_mesh::replication::ReplicationError;
use porfiry_mesh::replication::limits::DEFAULT_SERVER_LISTEN;
use porfiry_toolsets::CHAT_SETS;

pub use porfiry_mesh::net::Profile;

/// Flags of `porfiry run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Address to listen on (repeatable), e.g. /ip4/127.0.0.1/tcp/4001.
    /// A server without one listens on /ip4/0.0.0.0/tcp/4001 and
    /// /ip4/0.0.0.0/udp/4001/quic-v1 (TCP only in a phone build); a phone
    /// never listens.
    #[arg(long = "listen", value_name = "MULTIADDR", value_parser = listen_address)]
    pub listen: Vec<String>,
    /// Network profile.
    #[arg(
        long,
        default_value_t = Profile::Server,
        value_parser = PossibleValuesParser::new(["server", "phone"]).try_map(|s| s.parse::<Profile>())
    )]
    pub profile: Profile,
    /// The model the API's agent uses (same flags as `porfiry chat`).
    #[command(flatten)]
    pub llm: OptionalLlmArgs,
    /// The HTTP API.
    #[command(flatten)]
    pub api: ApiArgs,
    /// Offering the model to friends, or using a friend's.
    #[command(flatten)]
    pub offload: OffloadArgs,
    /// Serve this node's registered model files to friends allowed to pull
    /// them (`porfiry friends models PEER on`) over /porfiry/model/1, for
    /// `porfiry model pull NAME --from THIS_NODE` and phones.
    #[arg(long)]
    pub share_models: bool,
    /// The cognitive core.
    #[command(flatten)]
    pub think: ThinkFlags,
    /// Relaying, listening nowhere, LAN discovery.
    #[command(flatten)]
    pub reach: ReachArgs,
    /// What one author may make this node hold.
    #[command(flatten)]
    pub quota: QuotaArgs,
    /// Language of every text the node's models see (the API's agent, the
    /// core, the toolsets): en or ru. Default: the one `porfiry init
    /// --language` chose.
    #[arg(long, value_name = "LANG", value_parser = |s: &str| s.parse::<porfiry_skills::Language>().map_err(|e| e.to_string()))]
    pub language: Option<porfiry_skills::Language>,
    /// Settings file (TOML; keys are these flags' long names, e.g.
    /// `listen = ["/ip4/0.0.0.0/tcp/4001"]`, `offload = true`). Default:
    /// /etc/porfiry/porfiry.toml when it exists. A flag given here wins.
    #[arg(long, env = "PORFIRY_CONFIG", value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
}

/// Checks a `--listen` value (or a config file's `listen` entry) when it is
/// read, so a bad one is named where it was written.
fn listen_address(given: &str) -> Result<String, String> {
    given
        .parse::<Multiaddr>()
        .map(|_| given.to_owned())
        .map_err(|e| format!("bad listen address {given:?}: {e}"))
}

/// Why `run` stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Opening or creating the node failed.
    #[error(transparent)]
    Init(#[from] InitError),
    /// The node failed while running.
    #[error(transparent)]
    Daemon(#[from] ReplicationError),
    /// The node could not start, or stopped with an error.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// The API or model flags are unusable, or the API could not start.
    #[error(transparent)]
    Api(#[from] StartError),
    /// The offload flags are unusable (`--llm-peer` with `--llm-url`, …).
    #[error(transparent)]
    Offload(#[from] OffloadFlagsError),
    /// The offload service could not start.
    #[error(transparent)]
    OffloadService(#[from] OffloadStartError),
    /// Model sharing could not start.
    #[error("model sharing: {0}")]
    ModelSharing(#[from] porfiry_mesh::net::MeshError),
    /// The reach flags do not fit together (`--relay` with `--no-listen`, …).
    #[error(transparent)]
    Reach(#[from] ReachFlagsError),
    /// The cognitive core could not start.
    #[error("cognitive core: {0:#}")]
    Core(anyhow::Error),
    /// Another `porfiry run` holds this data dir, or its lock failed.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The registry's main model could not be read.
    #[error("reading the model registry: {0}")]
    Registry(#[from] porfiry_storage::StorageError),
    /// The local model file is unusable (missing, truncated, not GGUF, too big).
    #[error(transparent)]
    LocalModel(#[from] porfiry_agent::llm::local::EngineError),
}

/// Where a server listens without `--listen`: TCP and, where this build has
/// it, QUIC on the same port number.
fn default_listen() -> Vec<&'static str> {
    if QUIC_BUILT {
        vec![DEFAULT_SERVER_LISTEN, DEFAULT_SERVER_LISTEN_QUIC]
    } else {
        vec![DEFAULT_SERVER_LISTEN]
    }
}

/// The listen addresses `args` ask for, parsed.
pub fn listen_addresses(args: &RunArgs) -> Result<Vec<Multiaddr>, ReplicationError> {
    let given: Vec<&str> = if args.reach.no_listen {
        Vec::new()
    } else if args.listen.is_empty() && args.profile == Profile::Server {
        default_listen()
    } else {
        args.listen.iter().map(String::as_str).collect()
    };
    let parsed = given
        .into_iter()
        .map(|a| {
            a.parse::<Multiaddr>()
                .map_err(|e| ReplicationError::BadListenAddress {
                    address: a.to_owned(),
                    reason: e.to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if args.profile == Profile::Phone && !parsed.is_empty() {
        return Err(porfiry_mesh::net::MeshError::PhoneListens(parsed).into());
    }
    Ok(parsed)
}

/// Opens (or creates) the node and runs it until SIGINT/SIGTERM.
pub async fn run(dir: &DataDir, args: &RunArgs) -> Result<(), RunError> {
    // Flags first: a bad address must not create a node.
    let listen = listen_addresses(args)?;
    let reach = args.reach.to_config(args.profile)?;
    let mut api = ApiPlan::from_args(&args.api, &args.llm)?;
    // The settings `run` read, for the page's backup (as `porfiry backup`).
    api.settings_file = args.config.clone().or_else(|| {
        let default = std::path::PathBuf::from(crate::commands::run_config::DEFAULT_CONFIG_PATH);
        default.exists().then_some(default)
    });
    // What the offload server and the model choice get (issue 10).
    // A friend's name after --llm-peer becomes its peer id (issue 12).
    let offload = OffloadPlan::from_args(&args.llm, &args.offload.with_peer_resolved(dir)?)?;
    // No model flags: the registry's main model, if one is set (issue 30).
    // A data dir without a node has none, and is not created for asking.
    let registry_main = if matches!(offload.model, ModelChoice::Learned) && dir.db_path().exists() {
        let (_, store) = porfiry_mesh::init::open_or_init(dir)?;
        store.llm_main()?.map(|row| row.row)
    } else {
        None
    };
    let offload = offload.with_registry_main(registry_main)?;
    // A local model is checked and loaded before the node starts; held for
    // the run, so the agent, the core and offload share the one engine.
    let _local = match offload.model.file() {
        Some(path) => Some(open_model_file(&path, &offload.engine)?),
        None => None,
    };
    let mut config = NodeConfig::new(dir.clone(), args.profile, listen);
    config.reach = reach;
    config.quotas = args.quota.quotas();
    let (node, mut join) = Node::spawn(config)?;
    let mut stdout = std::io::stdout();
    print_line(&mut stdout, &format!("peer id: {}", node.peer_id()))?;
    print_line(&mut stdout, &format!("model: {}", offload.model.describe()))?;
    print_line(&mut stdout, &offload.describe_constrained())?;
    // Publish, replace or retract the LlmAddress advertisement; a failure
    // leaves the node running without it (friends just do not learn it).
    match node.advertise_offload(offload.offer()).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(items = n, "offload advertisement updated"),
        Err(e) => tracing::warn!("cannot update the offload advertisement: {e}"),
    }
    let offload_service = match model_choice::start_offload_service(&offload, &node) {
        Ok(service) => service,
        Err(e) => {
            node.shutdown();
            join.await?;
            return Err(e.into());
        }
    };
    // Answers `porfiry join` from other nodes while an invitation is open;
    // without it the node still runs, it just takes no invitations.
    let model_sharing = if args.share_models {
        match porfiry_model_share::start_model_sharing(&node) {
            Ok(task) => Some(task),
            Err(e) => {
                node.shutdown();
                join.await?;
                return Err(e.into());
            }
        }
    } else {
        None
    };
    let invites = porfiry_mesh::invite::InviteService::start(&node)
        .inspect_err(|e| tracing::warn!("invitations are off: {e}"))
        .ok();
    let llm = match model_choice::agent_model(&offload, &node) {
        Ok(llm) => llm,
        Err(e) => {
            node.shutdown();
            join.await?;
            return Err(StartError::Chat(porfiry_agent::chat::ChatError::from(e)).into());
        }
    };
    let language = match args.language {
        Some(language) => language,
        None => {
            let stored = node
                .db()
                .read(porfiry_mesh::language::node_language)
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.to_string()));
            stored.unwrap_or_else(|e| {
                tracing::warn!("cannot read the node's language, speaking English: {e}");
                porfiry_skills::Language::default()
            })
        }
    };
    let send_grammar = offload.constrained.sends_to_http();
    let toolsets = match node_registry(&node, language, &offload.engine, send_grammar) {
        Ok(toolsets) => toolsets,
        Err(e) => {
            node.shutdown();
            join.await?;
            return Err(StartError::Chat(porfiry_agent::chat::ChatError::from(e)).into());
        }
    };
    let api = match crate::commands::api_start::serve_node(
        dir,
        &api,
        &node,
        crate::commands::api_start::AgentModel {
            llm,
            source: offload.model.source(),
        },
        toolsets.0.only(CHAT_SETS),
        language,
        &mut stdout,
    )
    .await
    {
        Ok(api) => {
            if let Some(running) = &api {
                tracing::info!(addr = %running.addr, "API serving");
            }
            api
        }
        Err(e) => {
            // The API could not start (port taken): stop the node cleanly.
            node.shutdown();
            join.await?;
            return Err(e.into());
        }
    };
    let core = match start_core(&args.think, &args.llm, &offload, &node, toolsets, language).await {
        Ok(core) => core,
        Err(e) => {
            if let Some(api) = api {
                api.stop().await;
            }
            node.shutdown();
            join.await?;
            return Err(RunError::Core(e));
        }
    };
    let mut core = core.map(|(task, model)| {
        let _ = print_line(&mut stdout, &format!("cognitive core on: {model}"));
        task
    });
    tracing::info!(profile = ?args.profile, "node running; Ctrl-C to stop");
    // The handlers before READY: a supervisor may stop the node at once.
    let shutdown = crate::commands::signal::shutdown_signal();
    tokio::pin!(shutdown);
    // Under systemd (`Type=notify`): ready now, and the watchdog fed while
    // the database answers; nothing is sent outside systemd.
    service_notify::ready(&format!("peer id {}", node.peer_id()));
    let watchdog = service_notify::spawn_watchdog(&node);
    let mut listening = node.listening();
    let mut printed = 0;
    let stopped = loop {
        tokio::select! {
            () = &mut shutdown => {
                // The core first: it writes through the node's database.
                if let Some(core) = core.take() {
                    core.stop().await;
                }
                node.shutdown();
                break (&mut join).await?;
            }
            stopped = &mut join => break stopped?,
            changed = listening.changed() => {
                if changed.is_err() {
                    // The node is gone; `join` says why.
                    break (&mut join).await?;
                }
                let fresh: Vec<String> = listening.borrow_and_update()[printed..].to_vec();
                for address in fresh {
                    print_line(&mut stdout, &format!("listening on {address}"))?;
                    printed += 1;
                }
            }
        }
    };
    service_notify::stopping();
    if let Some(watchdog) = watchdog {
        watchdog.abort();
    }
    if let Some(core) = core {
        core.stop().await;
    }
    if let Some(api) = api {
        api.stop().await;
    }
    if let Some(service) = offload_service {
        service.abort();
    }
    if let Some(sharing) = model_sharing {
        sharing.abort();
    }
    if let Some(invites) = invites {
        invites.stop();
    }
    print_line(
        &mut stdout,
        &format!("stopped: {} items held", stopped.items_held),
    )?;
    Ok(())
}

/// Writes one whole line in one write and flushes it, so whoever reads our
/// stdout (a supervisor, a test) never sees half of it.
fn print_line(out: &mut dyn Write, line: &str) -> Result<(), ReplicationError> {
    out.write_all(format!("{line}\n").as_bytes())?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(listen: &[&str], profile: Profile) -> RunArgs {
        RunArgs {
            listen: listen.iter().map(|s| s.to_string()).collect(),
            profile,
            llm: OptionalLlmArgs {
                llm_url: None,
                llm_model: None,
                call: crate::commands::llm_flags::LlmCallArgs {
                    llm_timeout_secs: 1,
                    llm_retries: 0,
                },
                file: Default::default(),
                constrained: Default::default(),
            },
            api: ApiArgs {
                api: porfiry_api::limits::DEFAULT_API_ADDR.to_owned(),
                no_api: false,
                api_public: false,
            },
            offload: OffloadArgs::default(),
            share_models: false,
            think: ThinkFlags::default(),
            reach: ReachArgs::default(),
            language: None,
            config: None,
            quota: QuotaArgs::default(),
        }
    }

    #[test]
    fn a_server_without_listen_gets_the_default_and_a_phone_none() {
        let s = listen_addresses(&args(&[], Profile::Server)).unwrap();
        assert_eq!(
            s,
            [
                DEFAULT_SERVER_LISTEN.parse::<Multiaddr>().unwrap(),
                DEFAULT_SERVER_LISTEN_QUIC.parse::<Multiaddr>().unwrap()
            ][..default_listen().len()]
        );
        assert_eq!(default_listen().len(), if QUIC_BUILT { 2 } else { 1 });
        let mut hidden = args(&[], Profile::Server);
        hidden.reach.no_listen = true;
        assert!(listen_addresses(&hidden).unwrap().is_empty());
        assert!(
            listen_addresses(&args(&[], Profile::Phone))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_bad_listen_address_is_named() {
        let err = listen_addresses(&args(&["/ip4/127.0.0.1/tcp/1", "tcp:80"], Profile::Server))
            .unwrap_err();
        assert!(err.to_string().contains("tcp:80"), "{err}");
        let err = listen_addresses(&args(&["/ip4/127.0.0.1/tcp/1"], Profile::Phone)).unwrap_err();
        assert!(err.to_string().contains("phone"), "{err}");
    }

    #[tokio::test]
    async fn a_public_api_address_without_api_public_is_refused_before_anything_starts() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("node"));
        let mut a = args(&[], Profile::Server);
        a.api.api = "0.0.0.0:4580".to_owned();
        let err = run(&dir, &a).await.unwrap_err();
        assert!(
            matches!(err, RunError::Api(StartError::NotLoopback { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("--api-public"), "{err}");
        assert!(!dir.root().exists(), "nothing was created");
    }

    #[test]
    fn run_parses_the_model_and_api_flags() {
        use clap::Parser as _;
        let cli = crate::cli::Cli::try_parse_from([
            "porfiry",
            "run",
            "--api",
            "0.0.0.0:9",
            "--api-public",
            "--llm-url",
            "http://h/v1",
            "--llm-model",
            "m",
        ])
        .unwrap();
        let crate::cli::Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.api.api, "0.0.0.0:9");
        assert!(run.api.api_public && !run.api.no_api);
        assert_eq!(run.llm.llm_model.as_deref(), Some("m"));
        assert!(
            crate::cli::Cli::try_parse_from(["porfiry", "run", "--no-api", "--api-public"])
                .is_err()
        );
    }

    #[tokio::test]
    async fn llm_peer_with_llm_url_is_refused_before_anything_starts() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("node"));
        let mut a = args(&[], Profile::Server);
        a.llm.llm_url = Some("http://h/v1".into());
        a.llm.llm_model = Some("m".into());
        a.offload.llm_peer = Some("12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA".into());
        let err = run(&dir, &a).await.unwrap_err();
        assert!(err.to_string().contains("pick one"), "{err}");
        assert!(!dir.root().exists(), "nothing was created");
    }

    #[test]
    fn run_parses_the_offload_flags() {
        use clap::Parser as _;
        let cli = crate::cli::Cli::try_parse_from([
            "porfiry",
            "run",
            "--offload",
            "--offload-capacity",
            "3",
            "--offload-per-friend",
            "2",
        ])
        .unwrap();
        let crate::cli::Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert!(run.offload.offload);
        assert_eq!(
            (run.offload.offload_capacity, run.offload.offload_per_friend),
            (3, 2)
        );
        assert!(
            crate::cli::Cli::try_parse_from(["porfiry", "run", "--offload-capacity", "0"]).is_err()
        );
    }
}
