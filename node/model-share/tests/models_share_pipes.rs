//! The model server on in-memory pipes: its transfer cap refuses one more
//! as busy at once while the others run, and a slot frees when a transfer
//! ends; a refused friend gets no list.

use std::sync::Arc;
use std::time::Duration;

use libp2p::PeerId;
use libp2p::identity::Keypair;
use porfiry_model_share::catalog::SharedFile;
use porfiry_model_share::wire::{ErrorKind, ModelAnswer, ModelRequest, read_frame, write_frame};
use porfiry_model_share::{ModelServer, Served, SharedModels};
use porfiry_skills::SystemClock;
use tokio_util::compat::TokioAsyncReadCompatExt;

/// Bytes the pipe holds before a writer waits: far below the file, so a
/// transfer nobody reads holds its slot.
const PIPE_BYTES: usize = 1024;

/// A deadline for what happens at once on pipes.
const WAIT: Duration = Duration::from_secs(10);

fn server(dir: &std::path::Path, slots: usize, allowed: PeerId) -> (ModelServer, String) {
    let path = dir.join("m.gguf");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let files: Arc<dyn SharedModels> = Arc::new(vec![SharedFile {
        name: "m".into(),
        path: path.clone(),
        kind: "model",
    }]);
    let (sha, _) = porfiry_model_share::catalog::hash_file(&path).unwrap();
    let server = ModelServer::new(
        Keypair::generate_ed25519(),
        files,
        Arc::new(move |p: &PeerId| *p == allowed),
        Arc::new(SystemClock::utc()),
        slots,
    );
    (server, sha)
}

/// Starts serving one pipe from `peer`; the client's end and the task.
fn open(
    server: &ModelServer,
    peer: PeerId,
) -> (
    tokio_util::compat::Compat<tokio::io::DuplexStream>,
    tokio::task::JoinHandle<Served>,
) {
    let (client, theirs) = tokio::io::duplex(PIPE_BYTES);
    let server = server.clone();
    let task = tokio::spawn(async move { server.serve(peer, theirs.compat()).await });
    (client.compat(), task)
}

#[tokio::test]
async fn one_transfer_past_the_cap_is_refused_as_busy_and_a_slot_frees_when_one_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let friend = PeerId::random();
    let (server, sha) = server(tmp.path(), 2, friend);
    let fetch = ModelRequest::Fetch {
        name: "m".into(),
        sha256: sha,
        offset: 0,
    };
    // Two transfers nobody reads: each holds a slot.
    let mut held = Vec::new();
    for _ in 0..2 {
        let (mut pipe, task) = open(&server, friend);
        write_frame(&mut pipe, &fetch).await.unwrap();
        let answer: ModelAnswer = tokio::time::timeout(WAIT, read_frame(&mut pipe))
            .await
            .unwrap()
            .unwrap();
        assert!(
            matches!(answer, ModelAnswer::Sending { offset: 0, .. }),
            "{answer:?}"
        );
        held.push((pipe, task));
    }
    let (mut third, task) = open(&server, friend);
    write_frame(&mut third, &fetch).await.unwrap();
    let answer: ModelAnswer = read_frame(&mut third).await.unwrap();
    assert!(
        matches!(
            answer,
            ModelAnswer::Error {
                kind: ErrorKind::Busy,
                ..
            }
        ),
        "{answer:?}"
    );
    assert_eq!(task.await.unwrap(), Served::Refused(ErrorKind::Busy));

    // One hangs up: its transfer fails and its slot is free again.
    let (pipe, task) = held.pop().unwrap();
    drop(pipe);
    assert!(matches!(
        tokio::time::timeout(WAIT, task).await.unwrap().unwrap(),
        Served::Failed(_)
    ));
    let (mut fourth, _task) = open(&server, friend);
    write_frame(&mut fourth, &fetch).await.unwrap();
    let answer: ModelAnswer = read_frame(&mut fourth).await.unwrap();
    assert!(matches!(answer, ModelAnswer::Sending { .. }), "{answer:?}");
}

#[tokio::test]
async fn a_friend_without_permission_gets_no_list() {
    let tmp = tempfile::tempdir().unwrap();
    let (server, _) = server(tmp.path(), 1, PeerId::random());
    let (mut pipe, task) = open(&server, PeerId::random());
    write_frame(&mut pipe, &ModelRequest::List).await.unwrap();
    let answer: ModelAnswer = read_frame(&mut pipe).await.unwrap();
    assert!(
        matches!(
            answer,
            ModelAnswer::Error {
                kind: ErrorKind::NotPermitted,
                ..
            }
        ),
        "{answer:?}"
    );
    assert_eq!(
        task.await.unwrap(),
        Served::Refused(ErrorKind::NotPermitted)
    );
}
