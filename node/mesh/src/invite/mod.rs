//! One-line invitations (issue 12): `porfiry invite` makes a code holding
//! this node's peer id, addresses and a one-time secret; `porfiry join CODE`
//! on another node presents the secret over `/porfiry/invite/1`, and the
//! inviter's daemon, which admits that one stranger as a guest for the
//! invitation protocol only (see [`crate::net::gate`]), makes it a friend.
//!
//! Files by job: [`code`] (the code's encoding), [`secret`] (making,
//! hashing and judging secrets), [`rate`] (attempt limits), [`wire`] (the
//! stream's bytes), [`redeem`] (the inviter's transaction), [`service`]
//! (the daemon side), [`duration`] (`--valid-for` values), [`make`] (a new
//! invitation and its code) and [`present`] (the joiner's exchange).

pub mod code;
pub mod duration;
pub mod make;
pub mod present;
pub(crate) mod rate;
pub(crate) mod redeem;
pub mod secret;
pub mod service;
pub mod wire;

pub use code::{CodeError, InviteCode, Secret};
pub use make::{InvitationRequest, MakeError, make_invitation};
pub use present::{JOIN_TIMEOUT, PresentError, present_invitation};
pub use redeem::{Redeemed, redeem};
pub use secret::Refusal;
pub use service::InviteService;
