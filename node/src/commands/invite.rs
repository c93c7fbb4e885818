//! `porfiry invite [--name NAME] [--group G]… [--valid-for 24h]`: makes a
//! one-time invitation and prints its code as one line, then as a QR code
//! for a phone's camera. The secret is stored only hashed; the code holds
//! this node's peer id and the addresses its daemon listens on (as last
//! recorded by `porfiry run`) unless `--address` names them. The daemon
//! (running now or started later) admits whoever presents the code in time.

use clap::Args;
use porfiry_storage::{MAX_INVITATION_NAME_BYTES, NewInvitation, StorageError, check_groups};
use qrcode::QrCode;
use qrcode::render::unicode::Dense1x2;

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{FriendsError, open, parse_address};
use porfiry_mesh::invite::code::MAX_CODE_ADDRESSES;
use porfiry_mesh::invite::duration::parse_valid_for;
use porfiry_mesh::invite::secret::{hash_secret, new_secret};
use porfiry_mesh::invite::service::LISTENING_CONFIG_KEY;
use porfiry_mesh::invite::{CodeError, InviteCode};
use porfiry_mesh::net::Multiaddr;
use porfiry_mesh::net::Protocol;

/// Arguments of `porfiry invite`.
#[derive(Debug, Args)]
pub struct InviteArgs {
    /// The name the new friend gets here (local, never sent).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// A group the new friend joins (repeatable); group notes reach it.
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// How long the code works: a number and s, m, h or d (at most 30d).
    #[arg(long, value_name = "DURATION", default_value = "24h")]
    pub valid_for: String,
    /// An address the other node should dial (repeatable); default: the
    /// addresses this node's daemon listens on.
    #[arg(long = "address", value_name = "MULTIADDR")]
    pub addresses: Vec<String>,
    /// Print only the code line, no QR code.
    #[arg(long)]
    pub no_qr: bool,
}

/// Why `invite` failed.
#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    /// A flag's value was refused.
    #[error("{0}")]
    BadArgument(String),
    /// No address to put in the code.
    #[error(
        "no address to put in the code: start the daemon (`porfiry run`, which listens) once, or pass --address"
    )]
    NoAddress,
    /// The OS random source failed.
    #[error("cannot make a secret: {0}")]
    Random(String),
    /// Friends-style failure (no node, bad address).
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The database refused.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The code could not be made.
    #[error(transparent)]
    Code(#[from] CodeError),
    /// The QR code could not be made.
    #[error("cannot draw the QR code: {0}")]
    Qr(String),
}

/// Makes an invitation at `now_ms`; returns what to print.
pub fn invite(dir: &DataDir, args: &InviteArgs, now_ms: u64) -> Result<String, InviteError> {
    let valid_for = parse_valid_for(&args.valid_for)
        .map_err(|e| InviteError::BadArgument(format!("--valid-for {e}")))?;
    let name = args.name.clone().unwrap_or_default();
    if name.len() > MAX_INVITATION_NAME_BYTES {
        return Err(InviteError::BadArgument(format!(
            "--name is {} bytes; at most {MAX_INVITATION_NAME_BYTES}",
            name.len()
        )));
    }
    check_groups(&args.groups)?;
    let (key, store) = open(dir)?;
    let peer = key.peer_id();
    let given: Vec<String> = if args.addresses.is_empty() {
        store
            .config_get::<Vec<String>>(LISTENING_CONFIG_KEY)?
            .unwrap_or_default()
    } else {
        args.addresses.clone()
    };
    let mut addresses: Vec<Multiaddr> = Vec::new();
    for a in &given {
        let m = parse_address(a, &peer)?;
        // The code names the peer once; drop a trailing /p2p/<id> (a relay
        // circuit address keeps its relay's /p2p/<relay>/p2p-circuit).
        let bare = porfiry_mesh::net::without_peer_suffix(m, &peer);
        if !addresses.contains(&bare) {
            addresses.push(bare);
        }
    }
    // Relay circuit addresses first, so the cut below never drops the only
    // way to reach a node that cannot be dialled (the joiner tries all at once).
    addresses.sort_by_key(|a| !a.iter().any(|p| p == Protocol::P2pCircuit));
    addresses.truncate(MAX_CODE_ADDRESSES);
    if addresses.is_empty() {
        return Err(InviteError::NoAddress);
    }
    let secret = new_secret().map_err(|e| InviteError::Random(e.to_string()))?;
    let code = InviteCode {
        peer,
        addresses,
        secret,
    }
    .encode()?;
    let valid_ms = u64::try_from(valid_for.as_millis()).unwrap_or(u64::MAX);
    store.add_invitation(
        &NewInvitation {
            secret_hash: hash_secret(&secret),
            name: name.clone(),
            groups: args.groups.clone(),
            expires_ms: now_ms.saturating_add(valid_ms),
        },
        now_ms,
    )?;
    let mut out = code.clone();
    if !args.no_qr {
        let qr = QrCode::new(code.as_bytes()).map_err(|e| InviteError::Qr(e.to_string()))?;
        let drawn = qr
            .render::<Dense1x2>()
            .dark_color(Dense1x2::Light)
            .light_color(Dense1x2::Dark)
            .quiet_zone(true)
            .build();
        out.push('\n');
        out.push_str(&drawn);
    }
    let who = if name.is_empty() {
        "the new friend".to_owned()
    } else {
        format!("{name:?}")
    };
    let groups = if args.groups.is_empty() {
        String::new()
    } else {
        format!(" in groups {}", args.groups.join(", "))
    };
    out.push_str(&format!(
        "\none-time invitation for {who}{groups}, valid for {}; on the other node run: porfiry join <code>",
        args.valid_for.trim()
    ));
    Ok(out)
}

#[cfg(test)]
mod reach_tests {
    use super::*;
    use porfiry_mesh::init::open_or_init;

    #[test]
    fn a_code_carries_a_relay_circuit_address_first() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let (key, _) = open_or_init(&dir).unwrap();
        let me = key.peer_id();
        let relay = porfiry_mesh::net::Keypair::generate_ed25519()
            .public()
            .to_peer_id();
        let mut addresses: Vec<String> = (1..=8)
            .map(|port| format!("/ip4/10.0.0.1/tcp/{port}/p2p/{me}"))
            .collect();
        let circuit = format!("/ip4/192.0.2.1/tcp/4001/p2p/{relay}/p2p-circuit");
        addresses.push(format!("{circuit}/p2p/{me}"));
        let args = InviteArgs {
            name: None,
            groups: Vec::new(),
            valid_for: "1h".into(),
            addresses,
            no_qr: true,
        };
        let out = invite(&dir, &args, 1).unwrap();
        let code = InviteCode::decode(out.lines().next().unwrap()).unwrap();
        assert_eq!(code.addresses.len(), MAX_CODE_ADDRESSES);
        assert_eq!(code.addresses[0].to_string(), circuit);
    }
}
