//! The record sets against a real SQLite file: each family changes the
//! file as it should, refusals leave it intact, lists stay bounded.

mod agents;
mod diary;
mod extensions;
mod goals;
mod graph;
mod notes;
mod people;
mod registry;
mod reputation;
mod settings;
mod tags;
