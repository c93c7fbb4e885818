//! `ClubRef`: a club's name, written `NAME@FOUNDER`.

use std::fmt;
use std::str::FromStr;

use crate::item::audience::{MAX_GROUP_NAME_LEN, valid_group_name, valid_peer_id};

/// A club: its short name and its founder's peer id. Two founders may both
/// have a `chess` club; `chess@A` and `chess@B` are different clubs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClubRef {
    /// Short name, the same alphabet as group names (`[a-z0-9_-]`, 1 to 32).
    pub name: String,
    /// The founder's peer id (`12D3KooW…`).
    pub founder: String,
}

/// Why a string is not a club reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClubRefError {
    /// No `@` between the name and the founder.
    #[error("bad club {0:?}: expected NAME@FOUNDER_PEER_ID")]
    NoFounder(String),
    /// The name part is empty, too long or oddly spelled.
    #[error("bad club name {0:?}: 1 to {MAX_GROUP_NAME_LEN} characters of a-z, 0-9, '-' or '_'")]
    BadName(String),
    /// The founder part is not a node id.
    #[error("bad club founder {0:?}: expected a node id as `porfiry id` prints it")]
    BadFounder(String),
}

impl ClubRef {
    /// A checked club reference.
    pub fn new(name: &str, founder: &str) -> Result<ClubRef, ClubRefError> {
        if !valid_group_name(name) {
            return Err(ClubRefError::BadName(name.to_owned()));
        }
        if !valid_peer_id(founder) {
            return Err(ClubRefError::BadFounder(founder.to_owned()));
        }
        Ok(ClubRef {
            name: name.to_owned(),
            founder: founder.to_owned(),
        })
    }

    /// Checks a hand-built reference the way parsing checks a written one.
    pub fn check(&self) -> Result<(), ClubRefError> {
        ClubRef::new(&self.name, &self.founder).map(|_| ())
    }
}

impl fmt::Display for ClubRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.founder)
    }
}

impl FromStr for ClubRef {
    type Err = ClubRefError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, founder) = s
            .split_once('@')
            .ok_or_else(|| ClubRefError::NoFounder(s.to_owned()))?;
        ClubRef::new(name, founder)
    }
}

crate::text_form::serde_as_text!(ClubRef);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::NodeKey;

    #[test]
    fn text_form_round_trips_and_bad_forms_are_refused() {
        let founder = NodeKey::from_seed([3; 32]).peer_id().to_string();
        let c = ClubRef::new("chess", &founder).unwrap();
        assert_eq!(c.to_string(), format!("chess@{founder}"));
        assert_eq!(c.to_string().parse::<ClubRef>(), Ok(c));
        assert!(matches!(
            "chess".parse::<ClubRef>(),
            Err(ClubRefError::NoFounder(_))
        ));
        assert!(matches!(
            format!("Chess@{founder}").parse::<ClubRef>(),
            Err(ClubRefError::BadName(_))
        ));
        assert!(matches!(
            "chess@bob".parse::<ClubRef>(),
            Err(ClubRefError::BadFounder(_))
        ));
    }
}
