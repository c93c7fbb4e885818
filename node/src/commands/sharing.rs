//! `porfiry sharing audience [VALUE]`: show or set who receives this
//! node's know-how (stagnation strategies, thinking methods, ratings), the
//! node setting `sharing.knowhow_audience` (`porfiry_mesh`'s
//! [`set_knowhow_audience`]). Works whether or not the node is running: it
//! writes the database, and a running daemon reads the setting on every
//! publishing pass.
//!
//! A value is checked before the database is opened, and against it before
//! anything is written, as `notes post --audience` checks its audience: a
//! club is named `NAME@FOUNDER`, or `NAME` when only one club of that name
//! is known here, and this node must be a member of it; a group must be
//! one some friend is tagged with. A refused value changes nothing.

use clap::Subcommand;
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{FriendsError, open};
use porfiry_mesh::sharing::clubs::{ClubsError, check_member, resolve_club};
use porfiry_mesh::sharing::publish::{
    KNOWHOW_AUDIENCE, KNOWHOW_AUDIENCE_WHEN_BAD, KnowhowAudienceError, parse_knowhow_audience,
    set_knowhow_audience, stored_knowhow_audience,
};
use porfiry_protocol::Audience;
use porfiry_protocol::item::audience::AudienceError;
use porfiry_storage::{StorageError, Store};
use serde::Serialize;

/// The values `sharing audience` takes, for its refusals.
pub const KNOWHOW_AUDIENCE_FORMS: &str =
    "expected public, friends, group:NAME, club:NAME or club:NAME@FOUNDER";

/// `porfiry sharing …`
#[derive(Debug, Subcommand)]
pub enum SharingCommand {
    /// Show who receives this node's know-how (strategies, thinking
    /// methods, ratings), or set it: public (the default; friends and
    /// onward), friends, group:NAME (friends tagged NAME) or club:NAME
    /// (or club:NAME@FOUNDER; a club this node is a member of).
    Audience {
        /// The new audience; without it the current one is shown.
        #[arg(value_name = "AUDIENCE")]
        value: Option<String>,
        /// Print JSON (`knowhow_audience`, `default`).
        #[arg(long)]
        json: bool,
    },
}

/// Why a `sharing` command failed.
#[derive(Debug, thiserror::Error)]
pub enum SharingCommandError {
    /// Not a value know-how may go to.
    #[error("bad know-how audience {given:?}: {reason}{KNOWHOW_AUDIENCE_FORMS}")]
    BadAudience {
        /// What was given.
        given: String,
        /// What is wrong with it, ending in "; " (empty when the forms say it).
        reason: String,
    },
    /// No friend is tagged with the group, so know-how would reach nobody.
    #[error(
        "no friend here is in group {0:?}: know-how would reach nobody (`porfiry friends list` shows each friend's groups)"
    )]
    NoSuchGroup(String),
    /// The club is unknown here, ambiguous, or this node is not a member.
    #[error(transparent)]
    Club(#[from] ClubsError),
    /// Opening the node failed.
    #[error(transparent)]
    Open(#[from] FriendsError),
    /// Reading or writing the setting failed.
    #[error(transparent)]
    Setting(#[from] KnowhowAudienceError),
    /// Reading the friends failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// An audience as typed, before the store is asked about it.
#[derive(Debug, PartialEq, Eq)]
enum Wanted {
    /// A whole audience (a club named `NAME@FOUNDER`).
    Audience(Audience),
    /// `club:NAME`: a club named by its short name, resolved in the store.
    ClubNamed(String),
}

/// The know-how audience as `sharing audience` prints it.
#[derive(Debug, Serialize, PartialEq, Eq)]
struct Shown {
    /// The audience know-how goes to now.
    knowhow_audience: String,
    /// True while the setting is unset (the default applies).
    default: bool,
    /// Why the stored value is unusable, when it is (then the fallback,
    /// friends, is what know-how goes to).
    #[serde(skip_serializing_if = "Option::is_none")]
    bad_setting: Option<String>,
}

/// Runs one `sharing` command; returns what to print.
pub fn sharing(
    dir: &DataDir,
    command: &SharingCommand,
    now_ms: u64,
) -> Result<String, SharingCommandError> {
    let SharingCommand::Audience { value, json } = command;
    let Some(given) = value else {
        let (_, store) = open(dir)?;
        return print(&current(&store)?, *json, false);
    };
    let wanted = read_value(given)?;
    let (key, store) = open(dir)?;
    let audience = check_in_store(&store, &key.peer_id().to_string(), wanted)?;
    set_knowhow_audience(&store, &audience, now_ms)?;
    print(&current(&store)?, *json, true)
}

/// Reads `given` as a know-how audience, without the store.
fn read_value(given: &str) -> Result<Wanted, SharingCommandError> {
    if let Some(name) = given.strip_prefix("club:")
        && !name.is_empty()
        && !name.contains('@')
    {
        return Ok(Wanted::ClubNamed(name.to_owned()));
    }
    parse_knowhow_audience(given)
        .map(Wanted::Audience)
        .map_err(|e| SharingCommandError::BadAudience {
            given: given.to_owned(),
            reason: match e {
                KnowhowAudienceError::Audience(AudienceError::Unknown(_)) => String::new(),
                KnowhowAudienceError::Audience(
                    e @ (AudienceError::BadGroupName(_)
                    | AudienceError::BadPeerId(_)
                    | AudienceError::BadClub(_)),
                ) => format!("{e}; "),
                KnowhowAudienceError::NotForKnowhow(_) => {
                    "know-how goes to no single peer nor to devices; ".to_owned()
                }
                other => format!("{other}; "),
            },
        })
}

/// The audience `wanted` names, refused when the store shows it would
/// reach nobody: a club this node is not a member of (or does not know),
/// a group no friend is tagged with.
fn check_in_store(
    store: &Store,
    me: &str,
    wanted: Wanted,
) -> Result<Audience, SharingCommandError> {
    let audience = match wanted {
        Wanted::ClubNamed(name) => Audience::Club(resolve_club(store, &name)?),
        Wanted::Audience(audience) => audience,
    };
    match &audience {
        Audience::Club(club) => check_member(store, club, me)?,
        Audience::Group(group) => {
            let tagged = store
                .friends()?
                .iter()
                .any(|f| f.row.groups.iter().any(|g| g == group));
            if !tagged {
                return Err(SharingCommandError::NoSuchGroup(group.clone()));
            }
        }
        _ => {}
    }
    Ok(audience)
}

/// The setting as it stands; a stored value that cannot be read as an
/// audience shows the fallback publishing uses, and why.
fn current(store: &Store) -> Result<Shown, SharingCommandError> {
    match stored_knowhow_audience(store) {
        Err(KnowhowAudienceError::Storage(e)) => Err(e.into()),
        stored => Ok(shown(stored)),
    }
}

/// What a read of the setting shows.
fn shown(stored: Result<Option<Audience>, KnowhowAudienceError>) -> Shown {
    match stored {
        Ok(None) => Shown {
            knowhow_audience: KNOWHOW_AUDIENCE.to_string(),
            default: true,
            bad_setting: None,
        },
        Ok(Some(audience)) => Shown {
            knowhow_audience: audience.to_string(),
            default: false,
            bad_setting: None,
        },
        Err(e) => Shown {
            knowhow_audience: KNOWHOW_AUDIENCE_WHEN_BAD.to_string(),
            default: false,
            bad_setting: Some(e.to_string()),
        },
    }
}

/// `shown` as JSON or one line; `set` when it was just written.
fn print(shown: &Shown, json: bool, set: bool) -> Result<String, SharingCommandError> {
    if json {
        return Ok(serde_json::to_string_pretty(shown)?);
    }
    Ok(to_text(shown, set))
}

/// The one line `sharing audience` prints.
fn to_text(shown: &Shown, set: bool) -> String {
    let verb = if set { "is now" } else { "is" };
    let audience = &shown.knowhow_audience;
    match (&shown.bad_setting, shown.default) {
        (Some(why), _) => format!(
            "know-how goes to {audience}: the stored setting is unusable ({why}); set it again"
        ),
        (None, true) => format!("know-how audience {verb} {audience} (the default)"),
        (None, false) => format!("know-how audience {verb} {audience}"),
    }
}

#[cfg(test)]
#[path = "sharing_tests.rs"]
mod tests;
