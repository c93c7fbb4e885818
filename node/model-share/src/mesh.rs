//! Model sharing on the node's real streams: [`start_model_sharing`] takes
//! the node's `/porfiry/model/1` acceptor and answers every friend's stream
//! with a [`ModelServer`] over the node's registry and permissions, one
//! task per stream.

use std::sync::Arc;

use porfiry_skills::SystemClock;

use super::permission::DbPermissions;
use super::server::{ModelServer, RegistryModels};
use porfiry_mesh::net::{IncomingModelStreams, MeshError};
use porfiry_mesh::node::NodeHandle;

/// Serves every model stream friends open until the mesh stops.
pub async fn serve_models(server: ModelServer, mut incoming: IncomingModelStreams) {
    while let Some((peer, stream)) = incoming.next().await {
        let server = server.clone();
        tokio::spawn(async move {
            let served = server.serve(peer, stream).await;
            tracing::info!(%peer, ?served, "model stream done");
        });
    }
}

/// With `--share-models`: serves the node's registered model files to
/// friends allowed to pull them, until the mesh stops.
pub fn start_model_sharing(node: &NodeHandle) -> Result<tokio::task::JoinHandle<()>, MeshError> {
    let incoming = node.streams().accept_models()?;
    let server = ModelServer::with_default_slots(
        node.node_key().to_libp2p_keypair(),
        Arc::new(RegistryModels(node.db().clone())),
        Arc::new(DbPermissions(node.db().clone())),
        Arc::new(SystemClock::utc()),
    );
    tracing::info!("sharing registered model files with friends allowed to pull them");
    Ok(tokio::spawn(serve_models(server, incoming)))
}
