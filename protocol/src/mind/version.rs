//! The version vector of one mind record: for each device of the person
//! that ever wrote the record, how many versions of it that device wrote.
//!
//! A device writing a new version takes the vectors of every version it
//! holds, merges them (the pointwise maximum) and bumps its own counter, so
//! `a.compare(&b) == Before` means exactly "whoever wrote `b` had seen `a`".
//! Two versions neither of which saw the other are `Concurrent`: they were
//! written apart, and [`super::merge`] decides between them.
//!
//! On the wire a vector is a CBOR map from device peer id text to an
//! unsigned counter, in the byte order of the peer ids (a `BTreeMap`), so
//! one vector always encodes to the same bytes. A counter is never 0 (a
//! device that never wrote is left out), no device appears twice, and there
//! are at most [`MAX_DEVICES_PER_PERSON`] entries; a map breaking any of
//! these is refused while decoding, before it is stored.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::ItemError;

/// Most devices in one record's vector. A person has a phone, a laptop and
/// a home server, and replaces one every year or two; only the devices that
/// wrote this record appear in its vector, so 32 lasts decades, while it
/// bounds a vector at about 2 KiB (32 peer ids of 52 bytes and counters),
/// a small share of the 64 KiB envelope, and every comparison at 32 steps.
pub const MAX_DEVICES_PER_PERSON: usize = 32;

/// How two versions are related by their vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Causality {
    /// The same vector (the same version, or a device that wrote twice
    /// without bumping, e.g. restored from an old backup).
    Equal,
    /// `self` happened before `other`: `other`'s writer had seen it.
    Before,
    /// `self` happened after `other`: `self`'s writer had seen it.
    After,
    /// Neither writer had seen the other's version: written apart.
    Concurrent,
}

/// A bounded map from device peer id to the number of versions of one
/// record that device wrote. See the module comment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub struct VersionVector(BTreeMap<String, u64>);

impl VersionVector {
    /// The empty vector (no device has written).
    pub fn new() -> VersionVector {
        VersionVector(BTreeMap::new())
    }

    /// How many versions `device` wrote (0 if it never did).
    pub fn get(&self, device: &str) -> u64 {
        self.0.get(device).copied().unwrap_or(0)
    }

    /// The devices and their counters, in peer id byte order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(d, c)| (d.as_str(), *c))
    }

    /// How many devices appear.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no device has written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How `self` relates to `other` (see [`Causality`]).
    pub fn compare(&self, other: &VersionVector) -> Causality {
        let mut less = false;
        let mut greater = false;
        for device in self.0.keys().chain(other.0.keys()) {
            match self.get(device).cmp(&other.get(device)) {
                Ordering::Less => less = true,
                Ordering::Greater => greater = true,
                Ordering::Equal => {}
            }
            if less && greater {
                return Causality::Concurrent;
            }
        }
        match (less, greater) {
            (false, false) => Causality::Equal,
            (true, false) => Causality::Before,
            (false, true) => Causality::After,
            (true, true) => Causality::Concurrent,
        }
    }

    /// Takes the pointwise maximum with `other`, so the result is `After`
    /// or `Equal` to both. Refused, leaving `self` unchanged, when the
    /// union would name more than [`MAX_DEVICES_PER_PERSON`] devices.
    pub fn merge(&mut self, other: &VersionVector) -> Result<(), ItemError> {
        let new_devices = other.0.keys().filter(|d| !self.0.contains_key(*d)).count();
        let count = self.0.len() + new_devices;
        if count > MAX_DEVICES_PER_PERSON {
            return Err(too_many(count));
        }
        for (device, &counter) in &other.0 {
            let mine = self.0.entry(device.clone()).or_insert(0);
            *mine = (*mine).max(counter);
        }
        Ok(())
    }

    /// Counts one more version written by `device`. Refused, leaving `self`
    /// unchanged, when `device` is new and the vector is full, or when its
    /// counter is already `u64::MAX`.
    pub fn bump(&mut self, device: &str) -> Result<(), ItemError> {
        let current = self.get(device);
        if current == 0 && self.0.len() >= MAX_DEVICES_PER_PERSON {
            return Err(too_many(self.0.len() + 1));
        }
        let next = current
            .checked_add(1)
            .ok_or_else(|| ItemError::VersionCounterOverflow(device.to_owned()))?;
        self.0.insert(device.to_owned(), next);
        Ok(())
    }

    /// Checks what decoding checks, for a vector built in code: at most
    /// [`MAX_DEVICES_PER_PERSON`] devices, each a canonical ed25519 peer id
    /// with a counter above 0.
    pub fn check(&self) -> Result<(), ItemError> {
        if self.0.len() > MAX_DEVICES_PER_PERSON {
            return Err(too_many(self.0.len()));
        }
        for (device, &counter) in &self.0 {
            if counter == 0 {
                return Err(ItemError::ZeroVersionCounter(device.clone()));
            }
            if !crate::item::audience::valid_peer_id(device) {
                return Err(ItemError::BadDevice(device.clone()));
            }
        }
        Ok(())
    }
}

fn too_many(count: usize) -> ItemError {
    ItemError::TooManyEntries {
        field: "mind_record.vv",
        count,
        max: MAX_DEVICES_PER_PERSON,
    }
}

/// Reads the map entry by entry, refusing a repeated device, a zero counter
/// or more than [`MAX_DEVICES_PER_PERSON`] entries before holding them
/// (peer ids are checked by [`VersionVector::check`] with the body).
impl<'de> Deserialize<'de> for VersionVector {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VvVisitor;

        impl<'de> Visitor<'de> for VvVisitor {
            type Value = VersionVector;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a map of at most {MAX_DEVICES_PER_PERSON} device peer ids to counters above 0"
                )
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((device, counter)) = map.next_entry::<String, u64>()? {
                    if out.len() == MAX_DEVICES_PER_PERSON {
                        return Err(de::Error::invalid_length(out.len() + 1, &self));
                    }
                    if counter == 0 {
                        return Err(de::Error::custom(format!(
                            "counter of {device} is 0 (a device that never wrote is left out)"
                        )));
                    }
                    if out.insert(device.clone(), counter).is_some() {
                        return Err(de::Error::custom(format!("device {device} appears twice")));
                    }
                }
                Ok(VersionVector(out))
            }
        }

        deserializer.deserialize_map(VvVisitor)
    }
}

/// Written as `{device: counter, …}`, for logs.
impl fmt::Display for VersionVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (device, counter)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{device}: {counter}")?;
        }
        f.write_str("}")
    }
}

/// Serializes the vector as its map (used by [`super::record`]'s tests to
/// build refused encodings by hand).
#[cfg(test)]
pub(crate) fn raw(entries: &[(&str, u64)]) -> ciborium::Value {
    ciborium::Value::Map(
        entries
            .iter()
            .map(|(d, c)| (ciborium::Value::from(*d), ciborium::Value::from(*c)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vv(entries: &[(&str, u64)]) -> VersionVector {
        VersionVector(entries.iter().map(|(d, c)| ((*d).to_owned(), *c)).collect())
    }

    #[test]
    fn compare_tells_every_relation() {
        let a1 = vv(&[("a", 1)]);
        let a2 = vv(&[("a", 2)]);
        let b1 = vv(&[("b", 1)]);
        let a1b1 = vv(&[("a", 1), ("b", 1)]);
        assert_eq!(a1.compare(&a1.clone()), Causality::Equal);
        assert_eq!(VersionVector::new().compare(&a1), Causality::Before);
        assert_eq!(a1.compare(&a2), Causality::Before);
        assert_eq!(a2.compare(&a1), Causality::After);
        assert_eq!(a1.compare(&b1), Causality::Concurrent);
        assert_eq!(a2.compare(&a1b1), Causality::Concurrent);
        assert_eq!(a1b1.compare(&b1), Causality::After);
        assert_eq!(b1.compare(&a1b1), Causality::Before);
    }

    #[test]
    fn merge_is_the_pointwise_maximum_and_dominates_both() {
        let x = vv(&[("a", 3), ("b", 1)]);
        let y = vv(&[("b", 4), ("c", 2)]);
        let mut m = x.clone();
        m.merge(&y).unwrap();
        assert_eq!(m, vv(&[("a", 3), ("b", 4), ("c", 2)]));
        assert_eq!(m.compare(&x), Causality::After);
        assert_eq!(m.compare(&y), Causality::After);
        let mut same = x.clone();
        same.merge(&x).unwrap();
        assert_eq!(same, x);
    }

    #[test]
    fn bump_counts_one_more_version_of_its_device() {
        let mut v = VersionVector::new();
        v.bump("a").unwrap();
        v.bump("a").unwrap();
        v.bump("b").unwrap();
        assert_eq!((v.get("a"), v.get("b"), v.get("c")), (2, 1, 0));
        let before = v.clone();
        v.bump("b").unwrap();
        assert_eq!(before.compare(&v), Causality::Before);

        let mut max = vv(&[("a", u64::MAX)]);
        assert_eq!(
            max.bump("a"),
            Err(ItemError::VersionCounterOverflow("a".into()))
        );
        assert_eq!(max, vv(&[("a", u64::MAX)]));
    }

    #[test]
    fn the_device_bound_holds_for_bump_and_merge() {
        let names: Vec<String> = (0..=MAX_DEVICES_PER_PERSON)
            .map(|i| format!("d{i:02}"))
            .collect();
        let mut full = VersionVector::new();
        for n in &names[..MAX_DEVICES_PER_PERSON] {
            full.bump(n).unwrap();
        }
        let last = &names[MAX_DEVICES_PER_PERSON];
        let refused = Err(too_many(MAX_DEVICES_PER_PERSON + 1));
        assert_eq!(full.clone().bump(last), refused);
        // A device already present still counts on.
        full.bump(&names[0]).unwrap();
        let mut one = VersionVector::new();
        one.bump(last).unwrap();
        let before = full.clone();
        assert_eq!(full.merge(&one), refused);
        assert_eq!(full, before, "a refused merge changes nothing");
    }

    #[test]
    fn cbor_is_a_sorted_map_and_bad_maps_are_refused() {
        let v = vv(&[("b", 2), ("a", 1)]);
        let mut bytes = Vec::new();
        ciborium::into_writer(&v, &mut bytes).unwrap();
        // {"a": 1, "b": 2}, keys in byte order whatever the insertion order.
        assert_eq!(hex::encode(&bytes), "a2616101616202");
        let back: VersionVector = ciborium::from_reader(&bytes[..]).unwrap();
        assert_eq!(back, v);

        let decode = |value: ciborium::Value| value.deserialized::<VersionVector>();
        assert!(decode(raw(&[("a", 0)])).is_err(), "zero counter");
        assert!(
            decode(raw(&[("a", 1), ("a", 2)])).is_err(),
            "repeated device"
        );
        let many: Vec<(String, u64)> = (0..=MAX_DEVICES_PER_PERSON)
            .map(|i| (format!("d{i:02}"), 1))
            .collect();
        let many: Vec<(&str, u64)> = many.iter().map(|(d, c)| (d.as_str(), *c)).collect();
        assert!(decode(raw(&many)).is_err(), "too many devices");
        assert!(decode(raw(&many[..MAX_DEVICES_PER_PERSON])).is_ok());
    }

    #[test]
    fn check_wants_peer_ids_and_counters_above_zero() {
        let peer = crate::identity::NodeKey::from_seed([1; 32])
            .peer_id()
            .to_string();
        assert_eq!(vv(&[(&peer, 1)]).check(), Ok(()));
        assert_eq!(
            vv(&[("phone", 1)]).check(),
            Err(ItemError::BadDevice("phone".into()))
        );
        assert_eq!(
            vv(&[(&peer, 0)]).check(),
            Err(ItemError::ZeroVersionCounter(peer.clone()))
        );
    }

    #[test]
    fn display_lists_devices_in_order() {
        assert_eq!(vv(&[("b", 2), ("a", 1)]).to_string(), "{a: 1, b: 2}");
    }
}
