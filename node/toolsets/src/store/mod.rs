//! The record command families of seed 003 as toolsets over the node's
//! SQLite file: one file per family, all built on [`set::StoreSet`] (routing
//! and failures), [`records`] (generic list / read / add / update / delete /
//! pin over any table, bounded pages) and [`parse`] (arguments). Their texts
//! are in `toolsets::texts::{store, store_replies}`.
//!
//! Every tool states its effect: reads are `Read`, changes to local tables
//! `Write`, and what leaves the node (befriending, notes published to an
//! audience) `Network`. Times come from the call's context, never the clock.

mod agents;
mod concepts;
mod config;
mod diary;
mod extensions;
mod goals;
mod graph;
mod identity;
mod knowhow;
mod links;
mod memory;
mod notes;
mod parse;
mod people;
mod records;
mod reputation;
mod set;
mod tags;
mod tasks;
#[cfg(test)]
mod testkit;

use porfiry_skills::{RegistryError, ToolsetRegistry};

use super::StoreTools;

#[cfg(test)]
use records::{MAX_LIST_LINES, MAX_READ_CHARS};

/// Registers every record set (diary, concepts, links, goals, tasks, tags,
/// reputation, notes, memory, identity, config, agents, scripts, tables,
/// strategies, methods, ratings, services, accounts, users, groups) in
/// `registry`.
pub fn register_store_sets(
    registry: &mut ToolsetRegistry,
    tools: &StoreTools,
) -> Result<(), RegistryError> {
    let sets = [
        diary::set(tools),
        concepts::set(tools),
        links::set(tools),
        goals::set(tools),
        tasks::set(tools),
        tags::set(tools),
        reputation::set(tools),
        notes::set(tools),
        memory::set(tools),
        identity::set(tools),
        config::set(tools),
        agents::set(tools),
        extensions::scripts(tools),
        extensions::tables(tools),
        knowhow::strategies(tools),
        knowhow::methods(tools),
        knowhow::ratings(tools),
        extensions::services(tools),
        extensions::accounts(tools),
        people::users(tools),
        people::groups(tools),
    ];
    for set in sets {
        registry.register(set)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
