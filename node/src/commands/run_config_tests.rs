//! Tests of `run`'s config file through the real command-line parser: keys
//! become flags, flags win, every `run` flag is a key, and each bad file is
//! one line naming the file and the key.

use std::path::Path;

use clap::CommandFactory as _;

use super::*;
use crate::cli::{Cli, Command, ParseError, parse_args};
use crate::commands::run::RunArgs;

/// Parses `porfiry <args>` with `default` as the default config path.
fn parse(args: &[&str], default: &Path) -> Result<Cli, ParseError> {
    let argv = std::iter::once("porfiry").chain(args.iter().copied());
    parse_args(argv.map(OsString::from).collect(), default)
}

fn run_args(cli: Cli) -> RunArgs {
    match cli.command {
        Command::Run(run) => run,
        other => panic!("not run: {other:?}"),
    }
}

/// Writes `text` as a config file in a fresh folder.
fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("porfiry.toml");
    std::fs::write(&path, text).unwrap();
    (tmp, path)
}

/// The one-line error `run` gives for this file.
fn refused(text: &str) -> (String, PathBuf) {
    let (_tmp, path) = file(text);
    let err = parse(
        &["run", "--config", path.to_str().unwrap()],
        Path::new("/nonexistent"),
    )
    .unwrap_err();
    let ParseError::Config(e) = err else {
        panic!("not a config error: {err}")
    };
    let line = e.to_string();
    assert!(!line.contains('\n'), "{line}");
    assert!(line.starts_with(&path.display().to_string()), "{line}");
    (line, path)
}

const SERVER: &str = r#"
# A home server.
data-dir = "/var/lib/porfiry"
listen = ["/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"]
api = "0.0.0.0:4580"
api-public = true
llm-url = "http://127.0.0.1:8080/v1"
llm-model = "qwen"
offload = true
offload-capacity = 3
relay = true
language = "ru"
"#;

#[test]
fn the_file_sets_what_a_server_needs() {
    let (_tmp, path) = file(SERVER);
    let cli = parse(
        &["run", "--config", path.to_str().unwrap()],
        Path::new("/none"),
    )
    .unwrap();
    assert_eq!(cli.data_dir.as_deref(), Some(Path::new("/var/lib/porfiry")));
    let run = run_args(cli);
    assert_eq!(
        run.listen,
        ["/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"]
    );
    assert_eq!(run.api.api, "0.0.0.0:4580");
    assert!(run.api.api_public && !run.api.no_api);
    assert_eq!(run.llm.llm_model.as_deref(), Some("qwen"));
    assert!(run.offload.offload);
    assert_eq!(run.offload.offload_capacity, 3);
    assert!(run.reach.relay);
    assert_eq!(run.language, Some(porfiry_skills::Language::Ru));
}

#[test]
fn a_flag_on_the_command_line_wins_over_the_file() {
    let (_tmp, path) = file(SERVER);
    let config = path.to_str().unwrap();
    let cli = parse(
        &[
            "--data-dir",
            "/tmp/mine",
            "run",
            "--config",
            config,
            "--listen",
            "/ip4/127.0.0.1/tcp/9",
            "--offload-capacity",
            "7",
        ],
        Path::new("/none"),
    )
    .unwrap();
    assert_eq!(cli.data_dir.as_deref(), Some(Path::new("/tmp/mine")));
    let run = run_args(cli);
    assert_eq!(
        run.listen,
        ["/ip4/127.0.0.1/tcp/9"],
        "the list is replaced, not joined"
    );
    assert_eq!(run.offload.offload_capacity, 7);
    assert_eq!(
        run.api.api, "0.0.0.0:4580",
        "keys not given still come from the file"
    );
    // A flag that conflicts with a file key drops that key.
    let (_tmp2, hidden) = file("no-api = true\n");
    let run = run_args(
        parse(
            &["run", "--config", hidden.to_str().unwrap(), "--api-public"],
            Path::new("/none"),
        )
        .unwrap(),
    );
    assert!(run.api.api_public && !run.api.no_api);
}

#[test]
fn the_default_file_is_read_when_it_exists_and_config_picks_another() {
    let (_tmp, default) = file("offload-capacity = 5\n");
    assert_eq!(
        run_args(parse(&["run"], &default).unwrap())
            .offload
            .offload_capacity,
        5
    );
    let missing = default.with_file_name("absent.toml");
    let run = run_args(parse(&["run"], &missing).unwrap());
    assert_eq!(
        run.offload.offload_capacity,
        crate::commands::offload_flags::DEFAULT_OFFLOAD_CAPACITY
    );
    let (_tmp2, other) = file("offload-capacity = 6\n");
    let run = run_args(parse(&["run", "--config", other.to_str().unwrap()], &default).unwrap());
    assert_eq!(run.offload.offload_capacity, 6);
    // Other commands never read it.
    let (_tmp3, broken) = file("not toml at all [");
    assert!(parse(&["status"], &broken).is_ok());
    // A --config that is missing is an error naming it.
    let err = parse(&["run", "--config", missing.to_str().unwrap()], &default).unwrap_err();
    assert!(err.to_string().contains("absent.toml"), "{err}");
}

#[test]
fn an_unknown_key_is_named() {
    let (line, _) = refused("lisen = [\"/ip4/0.0.0.0/tcp/1\"]\n");
    assert!(line.ends_with("unknown key \"lisen\""), "{line}");
    for key in ["config", "help", "version"] {
        let (line, _) = refused(&format!("{key} = true\n"));
        assert!(line.contains(&format!("unknown key \"{key}\"")), "{line}");
    }
    let (line, _) = refused("[api]\naddr = \"x\"\n");
    assert!(line.contains("key \"api\""), "{line}");
}

#[test]
fn a_bad_value_is_named_with_its_key() {
    for (text, key, says) in [
        ("offload-capacity = 0\n", "offload-capacity", "0"),
        ("offload-capacity = \"many\"\n", "offload-capacity", "many"),
        ("offload = \"yes\"\n", "offload", "true or false"),
        ("listen = [\"tcp:80\"]\n", "listen", "bad listen address"),
        ("listen = \"/ip4/0.0.0.0/tcp/1\"\n", "listen", ""),
        ("api = \"nowhere\"\n", "api", "HOST:PORT"),
        ("api = [\"127.0.0.1:1\"]\n", "api", "not a list"),
        ("profile = \"tablet\"\n", "profile", "tablet"),
        ("language = \"fr\"\n", "language", "fr"),
    ] {
        let result = {
            let (_tmp, path) = file(text);
            parse(
                &["run", "--config", path.to_str().unwrap()],
                Path::new("/none"),
            )
            .map(|_| ())
        };
        if key == "listen" && says.is_empty() {
            // One string for a list key is one entry: fine.
            assert!(result.is_ok(), "{text}");
            continue;
        }
        let (line, _) = refused(text);
        assert!(
            line.contains(&format!("key \"{key}\"")) && line.contains(says),
            "{text}: {line}"
        );
    }
}

#[test]
fn broken_toml_names_the_line_and_keys_in_conflict_name_the_file() {
    let (line, _) = refused("offload = true\nrelay = \n");
    assert!(line.contains("line 2"), "{line}");
    let (line, _) = refused("no-api = true\napi-public = true\n");
    assert!(
        line.contains("--no-api") || line.contains("--api-public"),
        "{line}"
    );
    let (line, _) = refused(&"#".repeat(MAX_CONFIG_BYTES as usize + 1));
    assert!(line.contains("not a settings file"), "{line}");
}

/// Every flag of `run` is a key: a flag added to `run` (the lead's quota
/// flags, say) needs nothing here. Each is given its default, or `true`
/// for a switch, or a value its parser takes.
#[test]
fn every_run_flag_is_a_key() {
    let mut command = Cli::command();
    command.build();
    let run = command.find_subcommand("run").unwrap();
    let mut keys = 0;
    for arg in run.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if NOT_KEYS.contains(&long) {
            continue;
        }
        let value = if !arg.get_action().takes_values() {
            "true".to_owned()
        } else if let Some(default) = arg.get_default_values().first() {
            format!("{:?}", default.to_str().unwrap())
        } else if let Some(possible) = arg.get_possible_values().first() {
            format!("{:?}", possible.get_name())
        } else {
            match arg
                .get_value_names()
                .and_then(|n| n.first())
                .map(|n| n.as_str())
            {
                Some("MULTIADDR") => "\"/ip4/127.0.0.1/tcp/1\"".to_owned(),
                Some("N" | "SECS" | "BYTES") => "4096".to_owned(),
                Some("LANG") => "\"en\"".to_owned(),
                _ => "\"x\"".to_owned(),
            }
        };
        let table: toml::Table = format!("{long} = {value}\n").parse().unwrap();
        let got = file_args(run, &table, &|_| false, Path::new("f.toml"));
        assert!(got.is_ok(), "{long} = {value}: {}", got.unwrap_err());
        // With every other flag given, the key's conflicts are looked up
        // (and a flag it conflicts with drops it); its own flag drops it.
        let id = arg.get_id().as_str();
        let others = file_args(run, &table, &|given| given != id, Path::new("f.toml"));
        assert!(others.is_ok(), "{long}: {}", others.unwrap_err());
        let itself = file_args(run, &table, &|given| given == id, Path::new("f.toml"));
        assert_eq!(itself.unwrap(), Vec::<OsString>::new(), "{long}");
        keys += 1;
    }
    assert!(keys >= 20, "only {keys} keys");
}

/// The packaged config (node/debian/porfiry.toml) parses, and each key it
/// shows commented out is a real key with a value its flag takes.
#[test]
fn the_packaged_config_and_its_commented_examples_are_valid() {
    let shipped = include_str!("../../debian/porfiry.toml");
    let table: toml::Table = shipped.parse().unwrap();
    let mut command = Cli::command();
    command.build();
    let run = command.find_subcommand("run").unwrap();
    assert_eq!(
        file_args(run, &table, &|_| false, Path::new("p")).unwrap(),
        ["--data-dir=/var/lib/porfiry"]
    );
    let mut examples = 0;
    for line in shipped.lines() {
        let Some(example) = line.strip_prefix("# ") else {
            continue;
        };
        let Ok(one) = example.parse::<toml::Table>() else {
            continue;
        };
        if one.len() != 1 {
            continue;
        }
        let got = file_args(run, &one, &|_| false, Path::new("p"));
        assert!(got.is_ok(), "{example}: {}", got.unwrap_err());
        examples += 1;
    }
    assert!(examples >= 10, "only {examples} examples");
    let container: toml::Table = include_str!("../../../packaging/container.toml")
        .parse()
        .unwrap();
    let flags = file_args(run, &container, &|_| false, Path::new("c")).unwrap();
    assert_eq!(flags, ["--api=0.0.0.0:4580", "--api-public"]);
}
