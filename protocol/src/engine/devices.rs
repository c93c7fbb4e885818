//! The engine's share of a person's devices: who may hand us a `devices`
//! item, applying device statements to the engine's [`DeviceBook`], the
//! driver replacing the book (`set_devices`), and what a new device sets
//! in motion (a connected friend that just became a device is reconciled
//! at once, so it gets the person's memory). A device that an unlink cuts
//! off keeps what it has; it gets nothing more.
//!
//! Order: a statement is taken only once the book holds the ones that make
//! it ours (a new device gets `link(server, laptop)` only after
//! `link(server, phone)` made the server its device), and the person's
//! records only once their author is a device. Catch-up sends in time
//! order, so a catch-up sends the statements first, and a statement that
//! arrives before the ones that explain it is parked (at most
//! [`MAX_PARKED_STATEMENTS`]) and taken again each time the book grows.

use std::collections::{BTreeSet, VecDeque};

use super::Engine;
use super::input::ReceivedItem;
use super::output::{Output, RejectReason};
use crate::devices::{DeviceBook, DeviceError, DeviceStatement, MAX_DEVICE_STATEMENTS};
use crate::item::audience::Audience;
use crate::item::body::Body;
use crate::item::verified::VerifiedItem;
use crate::policy::device_could_come_from;
use crate::wire::Announce;

/// Statements kept while they wait for the ones that make them ours: as
/// many as a book holds, so a whole person's history fits (a new device
/// can get every statement before the one that names it), while a friend
/// that sends made-up statements of its own can make us keep no more than
/// that (the oldest goes first), a few hundred kilobytes.
pub const MAX_PARKED_STATEMENTS: usize = MAX_DEVICE_STATEMENTS;

/// Statements waiting for the book to grow: (sender, item as received).
#[derive(Debug, Default)]
pub(super) struct Parked {
    items: VecDeque<(String, ReceivedItem)>,
}

impl Engine {
    /// The devices this engine routes `devices` items to.
    pub fn devices(&self) -> &DeviceBook {
        &self.devices
    }

    /// Replaces the device book (the driver built it from its stored
    /// statements, or a link was just made over a stream). Connected
    /// friends that became devices are reconciled now. Refused if the book
    /// was made for another node.
    pub fn set_devices(
        &mut self,
        now_ms: u64,
        devices: DeviceBook,
    ) -> Result<Vec<Output>, DeviceError> {
        if devices.local() != &*self.local {
            return Err(DeviceError::NotLocal(devices.local().to_owned()));
        }
        let before = self.device_set();
        self.devices = devices;
        let mut out = Vec::new();
        self.devices_joined(now_ms, &before, &mut out);
        if self.devices.devices().any(|d| !before.contains(d)) {
            self.retry_parked(now_ms, &mut out);
        }
        self.request_wake(&mut out);
        Ok(out)
    }

    /// Why a `devices` item may not be taken from `sender` (`None`:
    /// published here), if it may not. A device statement is judged by the
    /// book as it would be with the statement in it: a link makes its
    /// sides devices, and an unlink is still news to the side it ends.
    pub(super) fn device_refusal(
        &self,
        sender: Option<&str>,
        item: &VerifiedItem,
    ) -> Option<RejectReason> {
        if *item.audience() != Audience::Devices {
            return None;
        }
        let trial;
        let book = match item.body() {
            Body::DeviceLink(statement) => {
                let mut with = self.devices.clone();
                if let Err(e) = with.insert(statement) {
                    return Some(RejectReason::BadDeviceLink(e));
                }
                trial = with;
                &trial
            }
            _ => &self.devices,
        };
        let sender = sender?;
        device_could_come_from(&self.local, &item.route(0, None), sender, book)
            .err()
            .map(|_| RejectReason::NotADevice)
    }

    /// Applies an accepted device statement to the book; connected friends
    /// that became devices are reconciled now.
    pub(super) fn apply_device_statement(
        &mut self,
        now_ms: u64,
        statement: &DeviceStatement,
        out: &mut Vec<Output>,
    ) {
        let before = self.device_set();
        // Checked (on a copy) before the item was accepted.
        if self.devices.insert(statement).is_ok() {
            self.devices_joined(now_ms, &before, out);
            if self.devices.devices().any(|d| !before.contains(d)) {
                self.retry_parked(now_ms, out);
            }
        }
    }

    /// Takes the parked statements again, as if they arrived now: those
    /// the grown book makes ours are accepted (and may grow it further,
    /// taking the rest again in turn), the others are parked again.
    fn retry_parked(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        let parked = std::mem::take(&mut self.parked.items);
        for (sender, received) in parked {
            if self.index.contains(&received.item.id()) {
                continue;
            }
            self.receive_one(now_ms, &sender, received, false, out);
        }
    }

    /// Keeps a statement refused as not (yet) ours, to take it again when
    /// the book grows.
    pub(super) fn park_statement(&mut self, sender: &str, hops: u8, item: &VerifiedItem) {
        let parked = &mut self.parked.items;
        if parked.iter().any(|(_, r)| r.item.id() == item.id()) {
            return;
        }
        if parked.len() >= MAX_PARKED_STATEMENTS {
            parked.pop_front();
        }
        parked.push_back((
            sender.to_owned(),
            ReceivedItem {
                hops,
                item: item.clone(),
            },
        ));
    }

    /// How many statements wait for the book to grow.
    pub fn parked_statements(&self) -> usize {
        self.parked.items.len()
    }

    /// Orders a catch-up's items so that the device statements go first:
    /// the receiver takes the person's records only from devices, so the
    /// links that make the sender one must arrive before them.
    pub(super) fn statements_first(&self, items: &mut [Announce]) {
        items.sort_by_key(|a| {
            !self
                .index
                .get(&a.id)
                .is_some_and(|m| m.route().device_statement)
        });
    }

    fn device_set(&self) -> BTreeSet<String> {
        self.devices.devices().map(str::to_owned).collect()
    }

    /// Starts a catch-up session toward each connected friend that is a
    /// device now and was not in `before`.
    fn devices_joined(&mut self, now_ms: u64, before: &BTreeSet<String>, out: &mut Vec<Output>) {
        let joined: Vec<String> = self
            .connected_peers()
            .filter(|p| self.devices.is_device(p) && !before.contains(*p))
            .map(str::to_owned)
            .collect();
        for peer in joined {
            if let Some(p) = self.peers.get_mut(&peer) {
                // A session already running misses the person's items: run
                // the next one as soon as this one ends.
                p.next_resync_ms = p.next_resync_ms.min(now_ms);
            }
            self.start_outbound_sync(now_ms, &peer, out);
        }
    }
}
