//! A real headless Chromium for the family page's tests, driven through
//! chromedriver (WebDriver) with fantoccini: started on a free loopback
//! port with a fresh profile and the flags this closed network needs, and
//! the lookups the tests use — controls by their accessible name (a
//! `<label>`'s text or an `aria-label`), never by CSS layout.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};

/// Longest a test waits for something to show on a page: far above what a
/// page on loopback needs, so only a real fault trips it.
pub const PAGE_DEADLINE: Duration = Duration::from_secs(30);

/// What `.ci/run` installs (Debian's packages).
const INSTALL: &str = "apt-get install -y chromium chromium-driver";

fn tool(env: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default));
    assert!(
        path.exists(),
        "{} not found (set {env} or install it: {INSTALL})",
        path.display()
    );
    path
}

/// A browser session and the chromedriver behind it.
pub struct Browser {
    /// The WebDriver session.
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium `width` × `height`.
    pub async fn start(width: u32, height: u32) -> Browser {
        let chromium = tool("CHROMIUM", "/usr/bin/chromium");
        let chromedriver = tool("CHROMEDRIVER", "/usr/bin/chromedriver");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile = tempfile::tempdir().expect("a profile dir");
        let caps = serde_json::json!({
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        });
        let caps = caps.as_object().expect("an object").clone();
        let url = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(e) if start.elapsed() < PAGE_DEADLINE => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("no WebDriver session from chromedriver: {e}"),
            }
        };
        Browser {
            client,
            driver,
            _profile: profile,
        }
    }

    /// Ends the session and chromedriver.
    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }

    /// The control labelled `label` (by its `<label for>`).
    pub async fn labelled(&self, label: &str) -> Element {
        self.wait_for(&format!(
            "//*[@id=//label[normalize-space()='{label}']/@for]"
        ))
        .await
    }

    /// Selects the option `value` in the control labelled `label`. The page
    /// may draw the control again just after it is found (when the friends
    /// and groups it lists arrive), which leaves the element found stale; it
    /// is then found again, until [`PAGE_DEADLINE`].
    pub async fn select(&self, label: &str, value: &str) {
        let deadline = Instant::now() + PAGE_DEADLINE;
        loop {
            match self.labelled(label).await.select_by_value(value).await {
                Ok(()) => return,
                Err(e) if e.is_stale_element_reference() && Instant::now() < deadline => {}
                Err(e) => panic!("selecting {value} in {label}: {e}"),
            }
        }
    }

    /// The button named `name` (its text or `aria-label`).
    pub async fn button(&self, name: &str) -> Element {
        self.wait_for(&format!(
            "//button[normalize-space()='{name}' or @aria-label='{name}']"
        ))
        .await
    }

    /// Waits for an element matching `xpath`.
    pub async fn wait_for(&self, xpath: &str) -> Element {
        self.client
            .wait()
            .at_most(PAGE_DEADLINE)
            .for_element(Locator::XPath(xpath))
            .await
            .unwrap_or_else(|e| panic!("no element {xpath}: {e}"))
    }

    /// The text of the first element matching `xpath`, once there is one.
    /// The page redraws its lists as the node's events arrive, so an element
    /// found a moment ago may be stale when read: it is then found again,
    /// until [`PAGE_DEADLINE`].
    pub async fn text_of(&self, xpath: &str) -> String {
        let deadline = Instant::now() + PAGE_DEADLINE;
        loop {
            match self.wait_for(xpath).await.text().await {
                Ok(text) => return text,
                Err(e) if e.is_stale_element_reference() && Instant::now() < deadline => {}
                Err(e) => panic!("reading {xpath}: {e}"),
            }
        }
    }

    /// The text of the element holding `text` inside the element with `id`
    /// (see [`Browser::text_of`] for why it may be found more than once).
    pub async fn text_within(&self, id: &str, text: &str) -> String {
        self.text_of(&format!("//*[@id='{id}']//*[contains(., '{text}')]"))
            .await
    }

    /// Waits for an element holding `text`, inside the element with `id`.
    pub async fn wait_text(&self, id: &str, text: &str) -> Element {
        self.wait_for(&format!("//*[@id='{id}']//*[contains(., '{text}')]"))
            .await
    }

    /// The page's whole visible text.
    pub async fn body_text(&self) -> String {
        self.client
            .find(Locator::Css("body"))
            .await
            .expect("a body")
            .text()
            .await
            .expect("its text")
    }

    /// Saves a screenshot as `name` under `$PORFIRY_SCREENSHOT_DIR`, when set.
    pub async fn screenshot(&self, name: &str) {
        let Some(dir) = std::env::var_os("PORFIRY_SCREENSHOT_DIR") else {
            return;
        };
        let png = self.client.screenshot().await.expect("a screenshot");
        std::fs::write(PathBuf::from(dir).join(name), png).expect("write the screenshot");
    }
}
