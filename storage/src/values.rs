//! Small typed values stored as text columns: note sources, process and
//! peer statuses, goal / task progress, and a note's sharing choice. Each
//! has the exact spelling its column's CHECK constraint allows.

use std::fmt;
use std::str::FromStr;

use porfiry_protocol::Audience;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::StorageError;

/// Defines a fieldless enum stored as one of a fixed set of words.
macro_rules! text_enum {
    (
        $(#[$meta:meta])* $name:ident, $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name { $( $(#[$vmeta])* $variant ),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored word.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }

        impl FromStr for $name {
            type Err = StorageError;
            fn from_str(s: &str) -> Result<Self, StorageError> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(StorageError::invalid(
                        $what,
                        format!("{s:?}: expected one of {}", [$($text),+].join(", ")),
                    )),
                }
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> { Ok(self.as_str().into()) }
        }

        impl FromSql for $name {
            fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
                v.as_str()?.parse().map_err(|e: StorageError| FromSqlError::Other(Box::new(e)))
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

text_enum! {
    /// Who wrote a note (HMP `notes.source`).
    NoteSource, "note source" {
        /// The human user.
        #[default]
        User = "user",
        /// The agent's LLM.
        Llm = "llm",
        /// A command line call.
        Cli = "cli",
        /// The node itself (events, reports).
        System = "system",
    }
}

text_enum! {
    /// State of an external process (HMP `process_log.status`).
    ProcessStatus, "process status" {
        /// Running or finished well.
        #[default]
        Ok = "ok",
        /// Finished with a warning.
        Warning = "warning",
        /// Failed.
        Error = "error",
        /// Ran out of time.
        Timeout = "timeout",
        /// Its target was unreachable.
        Offline = "offline",
        /// Handled by the LLM; no longer shown in context 2.
        Close = "close",
    }
}

text_enum! {
    /// What this node knows of a peer's state (`agent_peers.status`).
    PeerStatus, "peer status" {
        /// Never seen connected.
        #[default]
        Unknown = "unknown",
        /// Connected now.
        Online = "online",
        /// Seen before, not connected now.
        Offline = "offline",
        /// Known, but its items are not trusted.
        Untrusted = "untrusted",
        /// Refused: never connect, never send.
        Blacklisted = "blacklisted",
    }
}

text_enum! {
    /// Progress of a goal or task.
    Progress, "status" {
        /// Not started.
        #[default]
        Open = "open",
        /// Being worked on.
        InProgress = "in_progress",
        /// Achieved.
        Done = "done",
        /// Given up.
        Cancelled = "cancelled",
    }
}

text_enum! {
    /// A table whose tags `tag_stats` counts ("tags stats --source=…").
    TagSource, "tag source" {
        /// diary_entries
        #[default]
        Diary = "diary",
        /// concepts
        Concepts = "concepts",
        /// links
        Links = "links",
        /// goals
        Goals = "goals",
        /// tasks
        Tasks = "tasks",
        /// notes (local tags)
        Notes = "notes",
        /// llm_memory
        Memory = "memory",
    }
}

/// Who a note is for: kept on this node, or published as an item to an
/// [`Audience`]. Stored as `private` or the audience's text form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Sharing {
    /// Local only; never becomes an item.
    #[default]
    Private,
    /// Published to this audience.
    Shared(Audience),
}

impl fmt::Display for Sharing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sharing::Private => f.write_str("private"),
            Sharing::Shared(a) => a.fmt(f),
        }
    }
}

impl FromStr for Sharing {
    type Err = StorageError;
    fn from_str(s: &str) -> Result<Self, StorageError> {
        if s == "private" {
            return Ok(Sharing::Private);
        }
        s.parse()
            .map(Sharing::Shared)
            .map_err(|e| StorageError::invalid("audience", format!("{e}; or private")))
    }
}

impl ToSql for Sharing {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.to_string()))
    }
}

impl FromSql for Sharing {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        v.as_str()?
            .parse()
            .map_err(|e: StorageError| FromSqlError::Other(Box::new(e)))
    }
}

impl Serialize for Sharing {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Sharing {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_unknown_words_are_refused() {
        for s in ProcessStatus::ALL {
            assert_eq!(s.as_str().parse::<ProcessStatus>().unwrap(), *s);
        }
        for s in PeerStatus::ALL {
            assert_eq!(s.to_string().parse::<PeerStatus>().unwrap(), *s);
        }
        let err = "running".parse::<ProcessStatus>().unwrap_err().to_string();
        assert!(err.contains("running") && err.contains("timeout"), "{err}");
        assert!("User".parse::<NoteSource>().is_err());
    }

    #[test]
    fn sharing_text_form() {
        assert_eq!("private".parse::<Sharing>().unwrap(), Sharing::Private);
        assert_eq!(
            "group:family".parse::<Sharing>().unwrap(),
            Sharing::Shared(Audience::Group("family".into()))
        );
        assert_eq!(Sharing::Shared(Audience::Public).to_string(), "public");
        assert!("everyone".parse::<Sharing>().is_err());
        let json = serde_json::to_string(&Sharing::Shared(Audience::Friends)).unwrap();
        assert_eq!(json, "\"friends\"");
    }
}
