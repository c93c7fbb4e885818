//! Router tests over in-process fakes of the agent and the node: auth,
//! errors, the wire format, sessions, streaming, keep-alive, cancellation,
//! one real loopback server, and the backup download over a real node.

mod backup;
mod devices;
mod events_in_order;
mod fakes;
mod friend_models;
mod loopback;
mod node_routes;
mod plain;
mod real_node;
mod streaming;
mod web_page;
