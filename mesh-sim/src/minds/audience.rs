//! Who the minds' know-how goes to (`policy.audience`): `public`,
//! `friends` or `club`. Every mind's node gets it as its node setting
//! `sharing.knowhow_audience` (`porfiry_mesh`'s own
//! [`set_knowhow_audience`]), so the node's own publishing pass signs its
//! strategies, thinking methods and ratings for that audience and the
//! engines route them by the protocol's own rules: `public` is relayed
//! friend to friend up to its hops, `friends` goes one hop, to the author's
//! friends only, and `club` is relayed member to member. For `club` the
//! mesh part gets one club ([`MINDS_CLUB_NAME`]) holding every mind, as a
//! `mesh-sim run` scenario's `[club]` does; the friend graph must then
//! connect every mind to the club's founder.

use std::fmt;
use std::str::FromStr;

use porfiry_mesh::sharing::publish::{KNOWHOW_AUDIENCE, set_knowhow_audience};
use porfiry_protocol::Audience;
use porfiry_skills::Clock;
use porfiry_storage::Store;
use serde::Deserialize;

use super::mind::{Mind, MindError};
use super::run::MindsError;
use crate::clubs::ClubSpec;
use crate::world::World;

/// The name of the club holding every mind under `club`.
pub const MINDS_CLUB_NAME: &str = "minds";

/// `policy.audience`: who every mind's know-how goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
pub enum KnowhowAudience {
    /// Relayed to friends of friends (the node's default).
    #[default]
    Public,
    /// The author's friends only, one hop.
    Friends,
    /// The members of one club holding every mind, relayed member to member.
    Club,
}

impl KnowhowAudience {
    /// Every value, in the order help lists them.
    pub const ALL: [KnowhowAudience; 3] = [
        KnowhowAudience::Public,
        KnowhowAudience::Friends,
        KnowhowAudience::Club,
    ];

    /// The value as the scenario writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            KnowhowAudience::Public => "public",
            KnowhowAudience::Friends => "friends",
            KnowhowAudience::Club => "club",
        }
    }

    /// The mesh part's `[club]` for `minds` minds: every one a member under
    /// `club`, none otherwise.
    pub fn club(self, minds: usize) -> Option<ClubSpec> {
        (self == KnowhowAudience::Club).then(|| ClubSpec {
            name: MINDS_CLUB_NAME.to_owned(),
            members: minds,
        })
    }

    /// The audience every mind's node publishes know-how to in `world`.
    pub fn node_audience(self, world: &World) -> Result<Audience, MindsError> {
        Ok(match self {
            KnowhowAudience::Public => Audience::Public,
            KnowhowAudience::Friends => Audience::Friends,
            KnowhowAudience::Club => match &world.club {
                Some(c) => Audience::Club(c.club.clone()),
                None => {
                    return Err(MindsError::Runtime(
                        "policy.audience = \"club\" but the world has no club".into(),
                    ));
                }
            },
        })
    }
}

impl fmt::Display for KnowhowAudience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for KnowhowAudience {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        KnowhowAudience::ALL
            .into_iter()
            .find(|a| a.as_str() == raw)
            .ok_or_else(|| format!("{raw:?} is not public, friends or club"))
    }
}

impl TryFrom<String> for KnowhowAudience {
    type Error = String;

    fn try_from(raw: String) -> Result<Self, Self::Error> {
        // Serde's message has no field path: the field is named here.
        raw.parse().map_err(|e| format!("policy.audience: {e}"))
    }
}

/// Stores `audience` as `mind`'s node setting, at the mind's clock. The
/// node's default (`public`) is left unset, as on a node that never set
/// it: the setting is one of the config rows the core shows its model, so
/// a public world stays exactly as it was before the setting existed.
pub(crate) async fn apply(mind: &Mind, audience: Audience) -> Result<(), MindError> {
    if audience == KNOWHOW_AUDIENCE {
        return Ok(());
    }
    let now = mind.clock.now().unix_ms();
    mind.db
        .write(move |s: &Store| set_knowhow_audience(s, &audience, now))
        .await
        .map_err(|e| mind.db_err(e))?
        .map_err(|e| mind.db_err(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_as_written_and_a_bad_one_names_the_field() {
        for a in KnowhowAudience::ALL {
            assert_eq!(a.as_str().parse::<KnowhowAudience>(), Ok(a));
            assert_eq!(a.to_string(), a.as_str());
        }
        let e = KnowhowAudience::try_from("Public".to_owned()).unwrap_err();
        assert!(e.starts_with("policy.audience: "), "{e}");
        assert_eq!(KnowhowAudience::default(), KnowhowAudience::Public);
    }

    #[test]
    fn only_club_gives_the_world_a_club_of_every_mind() {
        assert_eq!(KnowhowAudience::Public.club(4), None);
        assert_eq!(KnowhowAudience::Friends.club(4), None);
        let c = KnowhowAudience::Club.club(4).unwrap();
        assert_eq!((c.name.as_str(), c.members), (MINDS_CLUB_NAME, 4));
    }
}
