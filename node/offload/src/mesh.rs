//! The offload logic on the mesh's real streams: [`StreamControl`] opens them
//! for a [`super::FriendLlm`], and [`serve_incoming`] answers every accepted one
//! with an [`OffloadServer`], one task per stream.

use super::client::{OffloadOpener, OffloadStream};
use super::server::OffloadServer;
use libp2p::PeerId;
use porfiry_mesh::net::{IncomingOffload, StreamControl};
use porfiry_skills::llm::BoxFuture;

impl OffloadOpener for StreamControl {
    fn open(&self, peer: PeerId) -> BoxFuture<'_, Result<OffloadStream, String>> {
        let mut control = self.clone();
        Box::pin(async move {
            StreamControl::open(&mut control, peer)
                .await
                .map(|s| Box::new(s) as OffloadStream)
                .map_err(|e| e.to_string())
        })
    }
}

/// Serves every offload stream friends open until the mesh stops; each stream
/// runs in its own task, so a long answer never holds up the next request (which
/// the server's capacity answers at once).
pub async fn serve_incoming(server: OffloadServer, mut incoming: IncomingOffload) {
    while let Some((peer, stream)) = incoming.next().await {
        let server = server.clone();
        tokio::spawn(async move {
            let served = server.serve(peer, stream).await;
            tracing::debug!(%peer, ?served, "offload stream done");
        });
    }
}
