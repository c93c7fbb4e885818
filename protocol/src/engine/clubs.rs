//! The engine's share of clubs: who may hand us a club item, applying club
//! changes to the engine's [`ClubBook`], and what a change sets in motion
//! (a friend who just became a member is reconciled at once; a held club
//! item whose author turns out not to have been a member is dropped).

use super::Engine;
use super::output::{DeleteReason, Output, RejectReason};
use crate::club::{ClubBook, ClubChange, ClubRef};
use crate::item::audience::Audience;
use crate::item::body::Body;
use crate::item::id::ItemId;
use crate::item::verified::VerifiedItem;
use crate::policy::could_come_from;

impl Engine {
    /// The clubs this engine routes by.
    pub fn clubs(&self) -> &ClubBook {
        &self.clubs
    }

    /// Why a club item may not be taken from `sender` (`None`: published
    /// here), if it may not.
    pub(super) fn club_refusal(
        &self,
        sender: Option<&str>,
        item: &VerifiedItem,
    ) -> Option<RejectReason> {
        let Audience::Club(club) = item.audience() else {
            return None;
        };
        let author = item.author_peer_id();
        if let Body::ClubChange(change) = item.body()
            && let Err(e) = self
                .clubs
                .check(item.created_ms(), author, change)
                .and_then(|()| self.clubs.room_for(change))
        {
            return Some(RejectReason::BadClubChange(e));
        }
        let route = item.route(0, None);
        match sender {
            Some(sender) => could_come_from(&self.local, club, &route, sender, &self.clubs)
                .err()
                .map(|_| RejectReason::NotAClubMember),
            None => (!self.clubs.is_member_now(club, &self.local))
                .then_some(RejectReason::NotAClubMember),
        }
    }

    /// Applies an accepted club change (item `id`, by `author`, created at
    /// `created_ms`) to the book. Connected friends that became members are
    /// reconciled now, so they get the club's change history; held items of
    /// the club whose author was, it now turns out, not a member when it
    /// wrote them are dropped.
    pub(super) fn apply_club_change(
        &mut self,
        now_ms: u64,
        id: ItemId,
        created_ms: u64,
        author: &str,
        change: &ClubChange,
        out: &mut Vec<Output>,
    ) {
        let club = &change.club;
        let peers: Vec<String> = self.connected_peers().map(str::to_owned).collect();
        let before: Vec<bool> = peers
            .iter()
            .map(|p| self.clubs.is_member_now(club, p))
            .collect();
        // Room was checked before the item was accepted.
        if self.clubs.insert(id, created_ms, author, change).is_err() {
            return;
        }
        let joined: Vec<String> = peers
            .into_iter()
            .zip(before)
            .filter(|(p, was)| !was && self.clubs.is_member_now(club, p))
            .map(|(p, _)| p)
            .collect();
        for peer in joined {
            if let Some(p) = self.peers.get_mut(&peer) {
                // A session already running misses the history: run the
                // next one as soon as this one ends.
                p.next_resync_ms = p.next_resync_ms.min(now_ms);
            }
            self.start_outbound_sync(now_ms, &peer, out);
        }
        self.drop_items_of_non_members(club, out);
    }

    /// Drops held items of `club` whose author was not a member when it
    /// wrote them (a late change showed it).
    fn drop_items_of_non_members(&mut self, club: &ClubRef, out: &mut Vec<Output>) {
        let gone: Vec<ItemId> = self
            .index
            .iter()
            .filter(|(_, m)| {
                matches!(m.audience(), Audience::Club(c) if c == club)
                    && m.club_target().is_none()
                    && !self.clubs.is_member(club, m.author(), m.created_ms)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            self.index.remove(&id);
            out.push(Output::Delete {
                id,
                reason: DeleteReason::NotAClubMember,
            });
        }
    }
}
