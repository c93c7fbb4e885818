//! Real NATs, end to end: a relay R on the "internet", a home server H
//! behind home router A, a phone P behind router B (`nat_lab`), each a real
//! `porfiry run` inside its own network namespace. Nobody types an address
//! but the relay's: H and P know each other by peer id only.
//!
//! - Endpoint-independent NATs: P reaches H through R by itself, notes go
//!   both ways, and hole punching (DCUtR) makes the link direct. The phone
//!   listens nowhere, yet binds one port to dial from: TCP hole punching
//!   dials from the port the relay saw (see docs/architecture.md).
//! - The same NATs, the phone started with `--no-hole-punching`: its dials
//!   come from a fresh port each time, the punch cannot meet it, and the
//!   link stays relayed (and works).
//! - A symmetric NAT at B: the punch fails, the link stays relayed and
//!   notes still go both ways.
//! - The relay is killed and comes back: the links recover.
//! - The phone switches networks while it runs (its address changes and
//!   every connection it had dies): its links come back within seconds.
//!
//! Each prints its times: start to a working link (direct to R, relayed to
//! H, hole-punched to H) and a note's delivery on it. Where the kernel
//! refuses namespaces (not root, a container without the capability) or
//! `ip`/`nft` are missing, each test prints why and passes without running.

mod nat_lab;

use std::time::{Duration, Instant};

use nat_lab::{INET_TO_A, INET_TO_B, Lab, Nat, PHONE_SWITCHED};
use porfiry_protocol::NodeKey;
use porfiry_storage::Friend;
use porfiry_tests::mesh_node::{MeshNode, wait_for};

/// Where every node listens inside its namespace.
const PORT: u16 = 4001;

/// How long a link that must stay relayed is watched for a hole punch that
/// must not happen: behind endpoint-independent NATs the punch came within
/// a second of the relayed link (a phone was direct 116–169 ms after it
/// started; a laptop once took 0.8 s under load), so five is ample.
const PUNCH_WINDOW: Duration = Duration::from_secs(5);

/// Friends a phone has that are switched off, in the network-switch case:
/// a club member's phone holds a few hundred friends, most of them asleep,
/// and the switch makes every one of them due for a dial at once.
const OFFLINE_FRIENDS: u16 = 200;

/// `node`'s `status --json` link to `peer`: (`link`, `via`).
fn link_of(node: &MeshNode, peer: &MeshNode) -> (String, Option<String>) {
    let f = node.friend_status(&peer.peer_id);
    (
        f["link"].as_str().unwrap_or("").to_owned(),
        f["via"].as_str().map(str::to_owned),
    )
}

/// The lab, or `None` after printing why the test cannot run here.
fn lab(tag: &str, a: Nat, b: Nat) -> Option<Lab> {
    match Lab::build(tag, a, b) {
        Ok(lab) => Some(lab),
        Err(why) => {
            println!("skipped: network namespaces are not available here: {why}");
            None
        }
    }
}

/// R, H and P, all friends, started in their namespaces: R relays on the
/// "internet", H is a server behind A, P behind B is a phone (started with
/// `phone_flags` besides `--profile phone`), with `offline` more friends
/// besides, each at an address where nothing listens.
struct Family {
    r: MeshNode,
    h: MeshNode,
    p: MeshNode,
    /// When P started.
    p_started: Instant,
}

/// A failed test leaves the three logs in `$PORFIRY_NAT_LOGS/<test>/`.
impl Drop for Family {
    fn drop(&mut self) {
        let (Some(dir), true) = (
            std::env::var_os("PORFIRY_NAT_LOGS"),
            std::thread::panicking(),
        ) else {
            return;
        };
        let test = std::thread::current().name().unwrap_or("test").to_owned();
        let dir = std::path::PathBuf::from(dir).join(test);
        let _ = std::fs::create_dir_all(&dir);
        for n in [&self.r, &self.h, &self.p] {
            let items = n.store().item_counts_by_kind().unwrap_or_default();
            let log = format!("{}\nitems by kind: {items:?}\n", n.stderr());
            let _ = std::fs::write(dir.join(format!("{}.log", n.name)), log);
        }
    }
}

fn start_family(lab: &Lab, phone_flags: &[&str], offline: u16) -> Family {
    let listen = format!("/ip4/0.0.0.0/tcp/{PORT}");
    let mut r = MeshNode::init("R");
    let mut h = MeshNode::init("H");
    let mut p = MeshNode::init("P");
    r.cli_ok(&["friends", "add", &h.peer_id]);
    r.cli_ok(&["friends", "add", &p.peer_id]);
    let r_from_a = format!("/ip4/{INET_TO_A}/tcp/{PORT}/p2p/{}", r.peer_id);
    let r_from_b = format!("/ip4/{INET_TO_B}/tcp/{PORT}/p2p/{}", r.peer_id);
    h.cli_ok(&["friends", "add", &r.peer_id, &r_from_a]);
    h.cli_ok(&["friends", "add", &p.peer_id]);
    p.cli_ok(&["friends", "add", &r.peer_id, &r_from_b]);
    p.cli_ok(&["friends", "add", &h.peer_id]);
    add_offline_friends(&p, offline);
    r.run_in_netns(&lab.inet);
    h.run_in_netns(&lab.home);
    p.run_in_netns(&lab.phone);
    r.start(&["--relay", "--listen", &listen]);
    h.start(&["--listen", &listen]);
    h.wait_logged(&["relay slot reserved", &r.peer_id]);
    let p_started = Instant::now();
    p.start(&[&["--profile", "phone"], phone_flags].concat());
    Family { r, h, p, p_started }
}

/// `count` friends of `node` that are switched off: each at a port of R's
/// where nothing listens (refused at once), never connected; they count
/// in every redial, and reach R's relay as circuits it cannot carry.
fn add_offline_friends(node: &MeshNode, count: u16) {
    let store = node.store();
    for n in 0..count {
        let mut seed = [0x0f; 32];
        seed[..2].copy_from_slice(&n.to_be_bytes());
        let friend = Friend {
            peer_id: NodeKey::from_seed(seed).peer_id().to_string(),
            addresses: vec![format!("/ip4/{INET_TO_B}/tcp/{}", 20_000 + n)],
            ..Friend::default()
        };
        store.add_friend(&friend, 1).expect("friend added");
    }
}

/// Posts a friends-only note on `from` and returns how long `to` took to
/// hold it. A note posted on the phone leaves at the phone's next poll of
/// its notes (every 5 s), so P→H times hold up to 5 s of waiting.
fn deliver(from: &MeshNode, to: &MeshNode, text: &str) -> Duration {
    let posted = Instant::now();
    from.post("friends", text);
    wait_for(&format!("{} to get {text:?}", to.name), || {
        to.has_note(from, text)
    });
    posted.elapsed()
}

#[test]
fn behind_two_home_nats_the_phone_reaches_the_server_and_hole_punching_makes_it_direct() {
    let Some(lab) = lab("e", Nat::EndpointIndependent, Nat::EndpointIndependent) else {
        return;
    };
    let f = start_family(&lab, &[], 0);
    f.p.wait_logged(&["friend connected", &f.r.peer_id]);
    let to_relay = f.p_started.elapsed();
    f.p.wait_logged(&["friend connected", &f.h.peer_id]);
    let to_server = f.p_started.elapsed();
    let relayed_note = deliver(&f.h, &f.p, "from behind NAT A");
    // The punch is timed before the phone's note: a phone picks up a note
    // the CLI wrote at its next poll of the notes (5 s), which would hide it.
    let deadline = Instant::now() + Duration::from_secs(45);
    while link_of(&f.p, &f.h).0 != "direct" {
        if Instant::now() > deadline {
            let punch = |n: &MeshNode| {
                n.stderr()
                    .lines()
                    .filter(|l| l.contains("hole") || l.contains("dcutr") || l.contains("circuit"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            panic!(
                "P's link to H never became direct: {:?}\nH: {}\nP: {}",
                link_of(&f.p, &f.h),
                punch(&f.h),
                punch(&f.p)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let punched = f.p_started.elapsed();
    assert_eq!(link_of(&f.h, &f.p).0, "direct");
    assert!(
        f.h.logged(&["hole punched", &f.p.peer_id]) || f.p.logged(&["hole punched", &f.h.peer_id])
    );
    let direct_note = deliver(&f.h, &f.p, "through the punched hole");
    let back = deliver(&f.p, &f.h, "from behind NAT B");
    println!(
        "endpoint-independent NATs: P→R direct {to_relay:?}, P→H relayed {to_server:?}, \
         hole-punched {punched:?} after P started; note H→P {relayed_note:?} (first link), \
         H→P {direct_note:?} and P→H {back:?} once direct"
    );
}

#[test]
fn behind_a_symmetric_nat_the_link_stays_relayed_and_works() {
    let Some(lab) = lab("s", Nat::EndpointIndependent, Nat::Symmetric) else {
        return;
    };
    let f = start_family(&lab, &[], 0);
    f.p.wait_logged(&["friend connected", &f.h.peer_id]);
    let to_server = f.p_started.elapsed();
    let there = deliver(&f.h, &f.p, "to the phone behind a symmetric NAT");
    let back = deliver(&f.p, &f.h, "from the phone behind a symmetric NAT");
    stays_relayed(&f);
    println!(
        "symmetric NAT at B: P→H relayed {to_server:?} after P started; \
         note H→P {there:?}, P→H {back:?}"
    );
}

#[test]
fn a_phone_with_no_port_to_dial_from_stays_relayed_behind_the_same_nats() {
    let Some(lab) = lab("n", Nat::EndpointIndependent, Nat::EndpointIndependent) else {
        return;
    };
    let f = start_family(&lab, &["--no-hole-punching"], 0);
    f.p.wait_logged(&["friend connected", &f.h.peer_id]);
    let to_server = f.p_started.elapsed();
    let there = deliver(&f.h, &f.p, "to a phone that punches no hole");
    let back = deliver(&f.p, &f.h, "from a phone that punches no hole");
    stays_relayed(&f);
    println!(
        "endpoint-independent NATs, --no-hole-punching: P→H relayed {to_server:?} \
         after P started; note H→P {there:?}, P→H {back:?}"
    );
}

/// Where the NATs allow it the punch comes within a second of the relayed
/// link; here P's link to H must stay relayed through R all through
/// `PUNCH_WINDOW` (DCUtR may try and fail, or find no address worth
/// trying), and no hole is punched.
fn stays_relayed(f: &Family) {
    let until = Instant::now() + PUNCH_WINDOW;
    while Instant::now() < until {
        assert_eq!(
            link_of(&f.p, &f.h),
            ("relayed".to_owned(), Some(f.r.peer_id.clone()))
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(!f.h.logged(&["hole punched", &f.p.peer_id]));
    assert!(!f.p.logged(&["hole punched", &f.h.peer_id]));
}

#[test]
fn when_the_relay_dies_and_comes_back_the_links_recover() {
    let Some(lab) = lab("k", Nat::EndpointIndependent, Nat::Symmetric) else {
        return;
    };
    let mut f = start_family(&lab, &[], 0);
    f.p.wait_logged(&["friend connected", &f.h.peer_id]);
    deliver(&f.h, &f.p, "before the relay died");
    f.r.kill();
    wait_for("P to see H gone with the relay", || {
        link_of(&f.p, &f.h).0 == "not connected"
    });
    let listen = format!("/ip4/0.0.0.0/tcp/{PORT}");
    let back = Instant::now();
    f.r.start(&["--relay", "--listen", &listen]);
    let reserved = f.h.logged_count(&["relay slot reserved", &f.r.peer_id]);
    wait_for("H to hold a new slot at R", || {
        f.h.logged_count(&["relay slot reserved", &f.r.peer_id]) > reserved
    });
    wait_for("P's link to H to come back through R", || {
        link_of(&f.p, &f.h).0 == "relayed"
    });
    let recovered = back.elapsed();
    let note = deliver(&f.h, &f.p, "after the relay came back");
    println!("relay restarted: P→H relayed again {recovered:?} later; note H→P {note:?}");
}

#[test]
fn when_the_phone_switches_networks_its_links_come_back_within_seconds() {
    let Some(mut lab) = lab("w", Nat::EndpointIndependent, Nat::EndpointIndependent) else {
        return;
    };
    let f = start_family(&lab, &[], OFFLINE_FRIENDS);
    let all = format!("friends={}", OFFLINE_FRIENDS + 2);
    f.p.wait_logged(&["starting node", &all]);
    f.p.wait_logged(&["friend connected", &f.h.peer_id]);
    wait_for("P's link to H to become direct", || {
        link_of(&f.p, &f.h).0 == "direct"
    });
    deliver(&f.h, &f.p, "before the switch");
    let links = |n: &MeshNode, to: &MeshNode| n.logged_count(&["friend connected", &to.peer_id]);
    let (to_h, to_r) = (links(&f.p, &f.h), links(&f.p, &f.r));
    let switched = Instant::now();
    lab.switch_phone_network();
    wait_for("P to link to R again", || links(&f.p, &f.r) > to_r);
    let to_relay = switched.elapsed();
    wait_for("P to link to H again", || links(&f.p, &f.h) > to_h);
    let to_server = switched.elapsed();
    // H's direct link to the old address was dead: H closed it and the
    // phone's first relayed one, and hole punching made the phone's next
    // one direct again.
    wait_for("P's link to H to become direct again", || {
        link_of(&f.p, &f.h).0 == "direct" && link_of(&f.h, &f.p).0 == "direct"
    });
    let punched = switched.elapsed();
    assert!(f.h.logged(&["came back through a relay", &f.p.peer_id]));
    // H learnt the phone's new address from what it told its friends: the
    // one behind router C, and no longer the one behind B.
    let told = |n: &MeshNode| n.friend_status(&f.p.peer_id)["told_addresses"].to_string();
    wait_for("H to hold the phone's new address", || {
        told(&f.h).contains(&format!("/{PHONE_SWITCHED}/"))
    });
    let learned = switched.elapsed();
    assert!(!told(&f.h).contains("/192.168.2.2/"), "{}", told(&f.h));
    let there = deliver(&f.h, &f.p, "after the switch");
    let back = deliver(&f.p, &f.h, "from the switched phone");
    // Two links made (the first closed by H), not a loop of them.
    assert_eq!(links(&f.p, &f.h), to_h + 2, "{}", f.p.stderr());
    println!(
        "phone switched networks: P→R again {to_relay:?}, P→H again {to_server:?}, \
         direct again {punched:?}, H told the new address {learned:?} after the switch; \
         note H→P {there:?}, P→H {back:?}"
    );
}
