//! `porfiry invite [--name NAME] [--group G]… [--valid-for 24h]`: makes a
//! one-time invitation and prints its code as one line, then as a QR code
//! for a phone's camera. The secret is stored only hashed; the code holds
//! this node's peer id and the addresses its daemon listens on (as last
//! recorded by `porfiry run`) unless `--address` names them. The daemon
//! (running now or started later) admits whoever presents the code in time.

use clap::Args;
use porfiry_storage::{MAX_INVITATION_NAME_BYTES, StorageError};
use qrcode::QrCode;
use qrcode::render::unicode::Dense1x2;

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{FriendsError, open};
use porfiry_mesh::invite::duration::parse_valid_for;
use porfiry_mesh::invite::service::LISTENING_CONFIG_KEY;
use porfiry_mesh::invite::{InvitationRequest, MakeError, make_invitation};

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
    /// Making the invitation failed.
    #[error(transparent)]
    Make(#[from] MakeError),
    /// Friends-style failure (no node).
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The database refused.
    #[error(transparent)]
    Storage(#[from] StorageError),
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
    let (key, store) = open(dir)?;
    let addresses: Vec<String> = if args.addresses.is_empty() {
        store
            .config_get::<Vec<String>>(LISTENING_CONFIG_KEY)?
            .unwrap_or_default()
    } else {
        args.addresses.clone()
    };
    let request = InvitationRequest {
        name: name.clone(),
        groups: args.groups.clone(),
        valid_for,
        addresses,
        kind: porfiry_storage::InvitationKind::Friend,
    };
    let code = make_invitation(&store, &key.peer_id(), &request, now_ms)?;
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
