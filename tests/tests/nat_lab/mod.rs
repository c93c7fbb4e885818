//! A small internet in network namespaces, for tests that need real NATs:
//! an "internet" namespace, two home routers doing nftables masquerade, a
//! host behind each. Built with `ip netns` and veth pairs; every namespace
//! and link it made is removed when the [`Lab`] is dropped, and only the
//! addresses inside its own namespaces are used.
//!
//! ```text
//!   home 192.168.1.2 ── 192.168.1.1 nat_a 10.99.1.2 ── 10.99.1.1
//!                                                         inet (relay)
//!   phone 192.168.2.2 ── 192.168.2.1 nat_b 10.99.2.2 ── 10.99.2.1
//!
//!   after Lab::switch_phone_network, 192.168.2.2 gone:
//!   phone 192.168.3.2 ── 192.168.3.1 nat_c 10.99.3.2 ── 10.99.3.1
//! ```
//!
//! A router's mapping is endpoint-independent (`masquerade`, which keeps
//! the source port when it can) or symmetric (`masquerade random`: a new
//! port per connection, so a hole punched towards one peer is useless for
//! another). Both routers admit from outside only what belongs to a
//! connection from inside (`ct state established,related`) and drop the
//! rest without an answer (no RST, no ICMP), as home routers do: an answer
//! would kill the other side's half of a simultaneous open.
#![allow(dead_code)] // each test file uses a different part

use std::process::Command;

/// The "internet" side's address as the home router sees it.
pub const INET_TO_A: &str = "10.99.1.1";
/// The "internet" side's address as the phone's router sees it.
pub const INET_TO_B: &str = "10.99.2.1";

/// How a router maps connections out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nat {
    /// One outside port per inside port (hole punching can work).
    EndpointIndependent,
    /// A random outside port per connection (hole punching cannot work).
    Symmetric,
}

/// The namespaces of one test.
pub struct Lab {
    /// `inet`, `nat_a`, `home`, `nat_b`, `phone`, each prefixed.
    pub inet: String,
    pub nat_a: String,
    pub home: String,
    pub nat_b: String,
    pub phone: String,
    /// The phone's end of its link to router B.
    phone_lan: String,
    made: Vec<String>,
}

/// The phone's address behind router C after [`Lab::switch_phone_network`].
pub const PHONE_SWITCHED: &str = "192.168.3.2";

fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn nft(ns: &str, rules: &str) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("nft in {ns}: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("nft stdin")?
        .write_all(rules.as_bytes())
        .map_err(|e| format!("nft in {ns}: {e}"))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("nft in {ns}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "nft in {ns}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Lab {
    /// Builds the namespaces with NAT `a` at home and `b` at the phone's,
    /// or says why it cannot (not root, no `ip`/`nft`, namespaces refused):
    /// the caller skips the test with that reason. Once the first namespace
    /// is made, any failure is a fault in the lab and panics.
    pub fn build(tag: &str, a: Nat, b: Nat) -> Result<Lab, String> {
        // Short: interface names have at most 15 bytes.
        let p = format!("pf{}{tag}", std::process::id() % 100_000);
        let mut lab = Lab {
            inet: format!("{p}-inet"),
            nat_a: format!("{p}-nata"),
            home: format!("{p}-home"),
            nat_b: format!("{p}-natb"),
            phone: format!("{p}-phone"),
            phone_lan: format!("{p}pr"),
            made: Vec::new(),
        };
        for tool in ["ip", "nft"] {
            if Command::new(tool).arg("-V").output().is_err() {
                return Err(format!("`{tool}` is not installed"));
            }
        }
        run(&["ip", "netns", "add", &lab.inet])?;
        lab.made.push(lab.inet.clone());
        if let Err(e) = lab.wire(&p, a, b) {
            panic!("building the lab failed: {e}");
        }
        Ok(lab)
    }

    fn wire(&mut self, p: &str, a: Nat, b: Nat) -> Result<(), String> {
        for ns in [&self.nat_a, &self.home, &self.nat_b, &self.phone].map(|s| s.clone()) {
            self.namespace(ns)?;
        }
        run(&["ip", "-n", &self.inet, "link", "set", "lo", "up"])?;
        let (inet, nat_a, nat_b) = (self.inet.clone(), self.nat_a.clone(), self.nat_b.clone());
        let (_, a_up) = link(p, &inet, "10.99.1.1/24", &nat_a, "10.99.1.2/24", "a")?;
        let (_, b_up) = link(p, &inet, "10.99.2.1/24", &nat_b, "10.99.2.2/24", "b")?;
        let (a_lan, _) = link(
            p,
            &nat_a,
            "192.168.1.1/24",
            &self.home,
            "192.168.1.2/24",
            "h",
        )?;
        let (b_lan, _) = link(
            p,
            &nat_b,
            "192.168.2.1/24",
            &self.phone,
            "192.168.2.2/24",
            "p",
        )?;
        for (ns, via) in [(&self.home, "192.168.1.1"), (&self.phone, "192.168.2.1")] {
            run(&["ip", "-n", ns, "route", "add", "default", "via", via])?;
        }
        forward(&inet)?;
        router(&nat_a, a, INET_TO_A, &a_up, &a_lan)?;
        router(&nat_b, b, INET_TO_B, &b_up, &b_lan)
    }

    /// Makes namespace `ns`, with its loopback up, to be removed on drop.
    fn namespace(&mut self, ns: String) -> Result<(), String> {
        run(&["ip", "netns", "add", &ns])?;
        self.made.push(ns.clone());
        run(&["ip", "-n", &ns, "link", "set", "lo", "up"])
    }

    /// The phone moves to another network, as from Wi-Fi to mobile data:
    /// its address behind router B (192.168.2.2) goes away, taking its
    /// routes with it, and it comes up behind a new router C
    /// ([`PHONE_SWITCHED`], endpoint-independent NAT, its own uplink to
    /// the "internet"), so every connection it had is dead. Nothing tells
    /// the phone's friends; they only stop hearing from it.
    pub fn switch_phone_network(&mut self) {
        if let Err(e) = self.move_phone_behind_router_c() {
            panic!("switching the phone's network failed: {e}");
        }
    }

    fn move_phone_behind_router_c(&mut self) -> Result<(), String> {
        let p = self.inet.trim_end_matches("-inet").to_owned();
        let nat_c = format!("{p}-natc");
        let (inet, phone) = (self.inet.clone(), self.phone.clone());
        run(&[
            "ip",
            "-n",
            &phone,
            "addr",
            "del",
            "192.168.2.2/24",
            "dev",
            &self.phone_lan,
        ])?;
        self.namespace(nat_c.clone())?;
        let (_, c_up) = link(&p, &inet, "10.99.3.1/24", &nat_c, "10.99.3.2/24", "c")?;
        let phone_ip = format!("{PHONE_SWITCHED}/24");
        let (c_lan, _) = link(&p, &nat_c, "192.168.3.1/24", &phone, &phone_ip, "q")?;
        router(&nat_c, Nat::EndpointIndependent, "10.99.3.1", &c_up, &c_lan)?;
        run(&[
            "ip",
            "-n",
            &phone,
            "route",
            "add",
            "default",
            "via",
            "192.168.3.1",
        ])
    }
}

/// A veth pair `{p}{name}l` in `left` (address `l_ip`) and `{p}{name}r` in
/// `right` (`r_ip`), both up; returns their names.
fn link(
    p: &str,
    left: &str,
    l_ip: &str,
    right: &str,
    r_ip: &str,
    name: &str,
) -> Result<(String, String), String> {
    let (ln, rn) = (format!("{p}{name}l"), format!("{p}{name}r"));
    run(&[
        "ip", "link", "add", &ln, "type", "veth", "peer", "name", &rn,
    ])?;
    run(&["ip", "link", "set", &ln, "netns", left])?;
    run(&["ip", "link", "set", &rn, "netns", right])?;
    run(&["ip", "-n", left, "addr", "add", l_ip, "dev", &ln])?;
    run(&["ip", "-n", right, "addr", "add", r_ip, "dev", &rn])?;
    run(&["ip", "-n", left, "link", "set", &ln, "up"])?;
    run(&["ip", "-n", right, "link", "set", &rn, "up"])?;
    Ok((ln, rn))
}

/// Turns IPv4 forwarding on in `ns`.
fn forward(ns: &str) -> Result<(), String> {
    run(&[
        "ip",
        "netns",
        "exec",
        ns,
        "sysctl",
        "-q",
        "-w",
        "net.ipv4.ip_forward=1",
    ])
}

/// Makes `ns` a home router: default route to `via` on the "internet",
/// forwarding, `nat` out of `up`, and from outside only what answers a
/// connection from the LAN side `lan`.
fn router(ns: &str, nat: Nat, via: &str, up: &str, lan: &str) -> Result<(), String> {
    run(&["ip", "-n", ns, "route", "add", "default", "via", via])?;
    forward(ns)?;
    let how = match nat {
        Nat::EndpointIndependent => "masquerade",
        Nat::Symmetric => "masquerade random",
    };
    nft(
        ns,
        &format!(
            "table ip porfiry_nat {{\n\
             chain outward {{ type nat hook postrouting priority srcnat; oifname \"{up}\" {how}; }}\n\
             chain inward {{ type filter hook forward priority filter; policy drop;\n\
               ct state established,related accept; iifname \"{lan}\" accept; }}\n\
             chain router {{ type filter hook input priority filter;\n\
               iifname \"{up}\" ct state != {{ established, related }} drop; }}\n\
             }}\n"
        ),
    )
}

impl Drop for Lab {
    fn drop(&mut self) {
        // Deleting a namespace deletes its veth ends, and with them the peers.
        for ns in self.made.iter().rev() {
            if let Err(e) = run(&["ip", "netns", "del", ns]) {
                eprintln!("cleanup: {e}");
            }
        }
    }
}
