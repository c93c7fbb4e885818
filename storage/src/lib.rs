//! Porfiry's node storage: one SQLite file per node holding the HMP
//! cognitive-core tables (seed 003), the friends list and the replicated,
//! signed items.
//!
//! Open it with [`Store::create`] (`porfiry init`) or [`Store::open`]
//! (everything else). Every table has a typed row struct; the shared
//! add / get / list / update / delete operations come from [`Record`], and
//! table-specific operations (read marks, pins, process status, friends,
//! items) are methods on [`Store`]. Times are Unix milliseconds passed in
//! by the caller (`now_ms`); this crate never reads the clock.
//!
//! ```
//! use porfiry_storage::{DB_FILE_NAME, DiaryEntry, ListQuery, Note, Store};
//!
//! let dir = tempfile::tempdir()?;
//! let store = Store::create(dir.path().join(DB_FILE_NAME))?;
//! let id = store.add(&Note { text: "hello".into(), ..Default::default() }, 1_000)?;
//! store.notes_mark_read(id, true, 1_001)?;
//! assert!(store.notes_recent(10)?[0].row.read);
//!
//! let entry = store.add(&DiaryEntry { text: "a thought".into(), ..Default::default() }, 1_002)?;
//! store.set_pinned::<DiaryEntry>(entry, true, 1_003)?;
//! let pinned = store.list::<DiaryEntry>(&ListQuery { pinned: Some(true), ..Default::default() })?;
//! assert_eq!(pinned.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A process with several threads and async callers (a running node) shares
//! the file through [`db::Db`], the database actor: one writer thread, a few
//! reader threads, bounded queues and async answers.

pub mod db;
mod record;

mod casefold;
mod clubs;
mod conversations;
mod crud;
mod devices;
pub mod disk;
mod error;
mod extensions;
mod goals;
mod graph;
mod invitations;
mod item_batch;
mod item_pages;
mod items;
pub mod limits;
mod llm;
mod memory;
mod migrations;
pub mod mind;
mod note_feed;
mod notes;
mod peer_names;
mod peers;
mod processes;
mod published;
mod query;
pub mod recover;
mod responses;
mod settings;
mod store;
mod strategies;
mod tags;
mod users;
mod values;

pub use clubs::ClubChangeRow;
pub use conversations::{
    CHAT_ROLES, ChatLine, ChatSessionRow, KeptTurnRecord, MAX_CHAT_SESSION_BYTES,
};
pub use devices::DeviceStatementRow;
pub use error::{Result, StorageError};
pub use extensions::{AgentScript, AgentTable, ExternalAccount, ExternalService};
pub use goals::{Goal, Task};
pub use graph::{Concept, Link};
pub use invitations::{
    Invitation, InvitationKind, MAX_INVITATION_NAME_BYTES, MAX_OPEN_INVITATIONS, NewInvitation,
};
pub use item_pages::MAX_PAGE_IDS;
pub use items::{Inserted, StoredItem};
pub use llm::{
    LlmConfig, LlmEntry, MAX_PRESENCE_PENALTY, MAX_TEMPERATURE, SECRET_CONFIG_KEYS, Taught,
};
pub use memory::{DiaryEntry, MemoryEntry};
pub use migrations::{APPLICATION_ID, SCHEMA_VERSION, TABLES};
pub use note_feed::FeedQuery;
pub use notes::{Note, NoteFilter};
pub use peer_names::{MAX_FRIEND_NAME_CHARS, check_friend_name, same_name};
pub use peers::{Friend, PeerPermissions, Reputation, check_groups, check_peer_id};
pub use processes::{ProcessEntry, TickRecord};
pub use published::{Merged, Publishable};
pub use query::ListQuery;
pub use record::{Pinnable, Record, Stored, Tagged, check_tags};
pub use responses::{
    Concentration, MAX_EMOTION_STRENGTH, MAX_VALIDATOR_RATING, MatchMode, RecentResponse,
    ValidatorVote, parse_emotion, vote_key,
};
pub use settings::{Identity, MAX_CONFIG_KEY_BYTES, SystemPrompt};
pub use store::{DB_FILE_NAME, Store};
pub use strategies::{Rating, StagnationStrategy, ThinkingMethod};
pub use users::{User, UserGroup};
pub use values::{NoteSource, PeerStatus, ProcessStatus, Progress, Sharing, TagSource};
