//! Model sharing between two real nodes (`Node::spawn`, real data dirs,
//! real TCP on loopback): a friend without permission is refused and
//! nothing is written; a pull cut halfway keeps its partial file and the
//! next pull resumes it; a corrupted byte is refused and deleted; a
//! metered phone holds its pull until it is not; a node that does not
//! share says so.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::net::{Multiaddr, PeerId, Profile};
use porfiry_mesh::{Node, NodeConfig, NodeHandle, NodeJoin};
use porfiry_model_share::{
    ModelPullError, PullConditions, PullEvent, PullTarget, Registered, Unmetered, pull_from_friend,
    register_pulled, set_share_models, start_model_sharing,
};
use porfiry_skills::llm::BoxFuture;
use porfiry_storage::LlmEntry;
use tokio::sync::watch;

/// How long a link may take on loopback before the test fails: it takes
/// milliseconds; 30 s only trips on a real hang on a loaded 2-core machine.
const DEADLINE: Duration = Duration::from_secs(30);

/// The shared file's size: a few MB, many 256 KiB chunks.
const FILE_BYTES: usize = 4 * 1024 * 1024;

/// Where the first pull is cut.
const CUT_AT: u64 = 1024 * 1024;

fn spawn(dir: &DataDir) -> (NodeHandle, NodeJoin) {
    let listen: Vec<Multiaddr> = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()];
    Node::spawn(NodeConfig::new(dir.clone(), Profile::Server, listen)).unwrap()
}

async fn address(node: &NodeHandle) -> String {
    let mut listening = node.listening();
    let list = listening.wait_for(|a| !a.is_empty()).await.unwrap();
    list[0].split("/p2p/").next().unwrap().to_owned()
}

/// Bytes no two tests share and no compressor shortens (xorshift).
fn bytes(seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..FILE_BYTES)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Writes `content` into `node`'s models folder and registers it as `name`.
async fn share(node: &NodeHandle, dir: &DataDir, name: &str, content: &[u8]) -> PathBuf {
    std::fs::create_dir_all(dir.models_dir()).unwrap();
    let path = dir.models_dir().join(format!("{name}.gguf"));
    std::fs::write(&path, content).unwrap();
    let row = LlmEntry {
        name: name.into(),
        endpoint: format!("file:{}", path.display()),
        model: name.into(),
        ..Default::default()
    };
    node.db()
        .write(move |s| s.add(&row, 1))
        .await
        .unwrap()
        .unwrap();
    path
}

async fn connected(node: &NodeHandle, friend: &str) {
    tokio::time::timeout(DEADLINE, async {
        loop {
            let s = node.status().await.unwrap();
            if s.friends.iter().any(|f| f.peer_id == friend && f.connected) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the friends connect");
}

/// Every file in a folder (none if it does not exist).
fn files_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Pulls, stopping after `stop_at` bytes when given; the events heard.
async fn pull(
    phone: &NodeHandle,
    target: &PullTarget,
    conditions: &dyn PullConditions,
    stop_at: Option<u64>,
) -> (
    Result<porfiry_model_share::PulledModel, ModelPullError>,
    Vec<PullEvent>,
) {
    let heard = Mutex::new(Vec::new());
    let mut on_event = |e: PullEvent| {
        let stop = matches!(e, PullEvent::Received { at, .. } if stop_at.is_some_and(|s| at >= s));
        heard.lock().unwrap().push(e);
        if stop {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let streams = phone.streams();
    let result = pull_from_friend(&streams, target, conditions, &mut on_event).await;
    (result, heard.into_inner().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permitted_friend_pulls_resumes_after_a_cut_and_a_corrupted_byte_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (home_dir, phone_dir) = (
        DataDir::new(tmp.path().join("home")),
        DataDir::new(tmp.path().join("phone")),
    );
    let (home, home_join) = spawn(&home_dir);
    let (phone, phone_join) = spawn(&phone_dir);
    let content = bytes(7);
    share(&home, &home_dir, "tiny", &content).await;
    let sharing = start_model_sharing(&home).unwrap();
    phone
        .add_friend(home.peer_id(), vec![address(&home).await], vec![])
        .await
        .unwrap();
    home.add_friend(phone.peer_id(), vec![], vec![])
        .await
        .unwrap();
    connected(&phone, home.peer_id()).await;
    let home_peer: PeerId = home.peer_id().parse().unwrap();
    let phone_peer: PeerId = phone.peer_id().parse().unwrap();
    let target = PullTarget {
        friend: home_peer,
        name: "tiny".into(),
        models_dir: phone_dir.models_dir(),
    };

    // Not allowed yet: refused, and nothing is written.
    let (refused, heard) = pull(&phone, &target, &Unmetered, None).await;
    let e = refused.unwrap_err();
    assert!(matches!(e, ModelPullError::NotPermitted { .. }), "{e}");
    assert!(
        e.to_string().contains("does not share its models with you"),
        "{e}"
    );
    assert!(heard.is_empty());
    assert!(files_in(&phone_dir.models_dir()).is_empty());

    home.db()
        .write(move |s| set_share_models(s, &phone_peer, true, 2))
        .await
        .unwrap()
        .unwrap();

    // An unknown name says what is shared.
    let unknown = PullTarget {
        name: "huge".into(),
        ..target.clone()
    };
    let e = pull(&phone, &unknown, &Unmetered, None)
        .await
        .0
        .unwrap_err();
    assert!(e.to_string().contains("it shares: tiny"), "{e}");

    // Cut after a quarter: the partial file holds what came.
    let (cut, heard) = pull(&phone, &target, &Unmetered, Some(CUT_AT)).await;
    let (at, part) = match cut.unwrap_err() {
        ModelPullError::Cut {
            at, total, part, ..
        } => {
            assert_eq!(total, FILE_BYTES as u64);
            (at, part)
        }
        other => panic!("not a cut: {other}"),
    };
    assert!(at >= CUT_AT && at < FILE_BYTES as u64, "{at}");
    assert_eq!(
        heard[0],
        PullEvent::Started {
            bytes: FILE_BYTES as u64,
            from: 0
        }
    );
    assert_eq!(std::fs::metadata(&part).unwrap().len(), at);
    assert!(!phone_dir.models_dir().join("tiny.gguf").exists());

    // The same pull again resumes there and keeps a verified file.
    let (pulled, heard) = pull(&phone, &target, &Unmetered, None).await;
    let pulled = pulled.unwrap();
    assert_eq!(pulled.resumed_from, at);
    assert!(!pulled.already_here);
    assert_eq!(
        heard[0],
        PullEvent::Started {
            bytes: FILE_BYTES as u64,
            from: at
        }
    );
    assert_eq!(
        heard.last(),
        Some(&PullEvent::Received {
            at: FILE_BYTES as u64,
            total: FILE_BYTES as u64
        })
    );
    assert_eq!(std::fs::read(&pulled.path).unwrap(), content);
    assert!(!part.exists());
    assert_eq!(pulled.listed.node, home.peer_id());
    let (path, friend) = (pulled.path.clone(), home.peer_id().to_owned());
    let registered = phone
        .db()
        .write(move |s| register_pulled(s, "tiny", &path, &friend, 3))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(registered, Registered::Added { main: true });
    // Pulled again: already here, nothing fetched.
    let (again, heard) = pull(&phone, &target, &Unmetered, None).await;
    assert!(again.unwrap().already_here);
    assert!(heard.is_empty());

    // A byte corrupted in the partial file: every byte comes, the hash
    // differs, the file is refused and deleted.
    share(&home, &home_dir, "tiny2", &bytes(11)).await;
    let second = PullTarget {
        name: "tiny2".into(),
        ..target.clone()
    };
    let (cut, _) = pull(&phone, &second, &Unmetered, Some(CUT_AT)).await;
    let ModelPullError::Cut { part, .. } = cut.unwrap_err() else {
        panic!("not a cut");
    };
    let mut held = std::fs::read(&part).unwrap();
    held[1000] ^= 0x01;
    std::fs::write(&part, &held).unwrap();
    let e = pull(&phone, &second, &Unmetered, None).await.0.unwrap_err();
    assert!(matches!(e, ModelPullError::Corrupt { .. }), "{e}");
    assert!(!part.exists());
    assert!(!phone_dir.models_dir().join("tiny2.gguf").exists());

    // The permission revoked: refused at once.
    home.db()
        .write(move |s| set_share_models(s, &phone_peer, false, 4))
        .await
        .unwrap()
        .unwrap();
    let e = pull(&phone, &second, &Unmetered, None).await.0.unwrap_err();
    assert!(matches!(e, ModelPullError::NotPermitted { .. }), "{e}");
    assert_eq!(files_in(&phone_dir.models_dir()), ["tiny.gguf"]);

    // The phone does not share: the home node hears so.
    let back = PullTarget {
        friend: phone_peer,
        name: "tiny".into(),
        models_dir: home_dir.models_dir(),
    };
    let streams = home.streams();
    let e = pull_from_friend(&streams, &back, &Unmetered, &mut |_| {
        ControlFlow::Continue(())
    })
    .await
    .unwrap_err();
    assert!(matches!(e, ModelPullError::NotShared(_)), "{e}");
    assert!(e.to_string().contains("--share-models"), "{e}");

    sharing.abort();
    home.shutdown();
    phone.shutdown();
    home_join.await.unwrap();
    phone_join.await.unwrap();
}

/// A phone's connection as the app reports it.
struct Phone {
    metered: watch::Sender<bool>,
}

impl PullConditions for Phone {
    fn metered(&self) -> bool {
        *self.metered.borrow()
    }
    fn changed(&self) -> BoxFuture<'_, ()> {
        let mut seen = self.metered.subscribe();
        Box::pin(async move {
            let _ = seen.changed().await;
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metered_phone_holds_its_pull_until_it_is_on_wifi() {
    let tmp = tempfile::tempdir().unwrap();
    let (home_dir, phone_dir) = (
        DataDir::new(tmp.path().join("home")),
        DataDir::new(tmp.path().join("phone")),
    );
    let (home, home_join) = spawn(&home_dir);
    let (phone, phone_join) = spawn(&phone_dir);
    share(&home, &home_dir, "tiny", &bytes(3)).await;
    let sharing = start_model_sharing(&home).unwrap();
    phone
        .add_friend(home.peer_id(), vec![address(&home).await], vec![])
        .await
        .unwrap();
    home.add_friend(phone.peer_id(), vec![], vec![])
        .await
        .unwrap();
    let phone_peer: PeerId = phone.peer_id().parse().unwrap();
    home.db()
        .write(move |s| set_share_models(s, &phone_peer, true, 2))
        .await
        .unwrap()
        .unwrap();
    connected(&phone, home.peer_id()).await;
    let target = PullTarget {
        friend: home.peer_id().parse().unwrap(),
        name: "tiny".into(),
        models_dir: phone_dir.models_dir(),
    };
    let conditions = Phone {
        metered: watch::channel(true).0,
    };
    let heard = Mutex::new(Vec::new());
    let mut on_event = |e: PullEvent| {
        if e == PullEvent::Held {
            // Nothing was written while held; then the phone is on Wi-Fi.
            assert!(files_in(&phone_dir.models_dir()).is_empty());
            conditions.metered.send_replace(false);
        }
        heard.lock().unwrap().push(e);
        ControlFlow::Continue(())
    };
    let streams = phone.streams();
    let pulled = pull_from_friend(&streams, &target, &conditions, &mut on_event)
        .await
        .unwrap();
    let heard = heard.into_inner().unwrap();
    assert_eq!(heard[0], PullEvent::Held);
    assert!(matches!(heard[1], PullEvent::Started { from: 0, .. }));
    assert_eq!(std::fs::read(&pulled.path).unwrap(), bytes(3));

    sharing.abort();
    home.shutdown();
    phone.shutdown();
    home_join.await.unwrap();
    phone_join.await.unwrap();
}
