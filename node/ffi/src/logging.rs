//! The node's log for an app's developer: with `PORFIRY_LOG` set (a
//! `tracing` filter such as `info` or `porfiry_mesh=debug`), the first node
//! started in the process writes its log to standard error (adb logcat shows
//! it for a debuggable Android app). Unset, nothing is installed and an app
//! may install its own subscriber.

use std::sync::Once;

/// The environment variable holding the filter.
pub const LOG_ENV: &str = "PORFIRY_LOG";

static INIT: Once = Once::new();

/// Installs the stderr log once, if `PORFIRY_LOG` asks for it.
pub(crate) fn init_from_env() {
    INIT.call_once(|| {
        let Ok(filter) = std::env::var(LOG_ENV) else {
            return;
        };
        let filter = tracing_subscriber::EnvFilter::try_new(&filter)
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        // Another subscriber already set by the app wins.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .try_init();
    });
}
