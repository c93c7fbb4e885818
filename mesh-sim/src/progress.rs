//! The progress bar of a long run: virtual time simulated out of the
//! scenario's duration, with events per second. It stays hidden for the
//! first second (a quick run prints nothing extra) and draws on stderr only
//! when stderr is a terminal, so `result.json`, pipes and CI logs are clean.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before its bar appears: shorter runs need none.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// A bar over virtual milliseconds that appears once a run has taken
/// [`SHOW_AFTER`].
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// A hidden bar for a run of `duration_ms` virtual milliseconds.
    pub fn new(duration_ms: u64) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(duration_ms), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {percent:>3}% of simulated time, {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
        }
    }

    /// The run has reached virtual time `now_ms` after `events` events.
    pub fn update(&mut self, now_ms: u64, events: u64) {
        if !self.shown && self.started.elapsed() >= SHOW_AFTER {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        self.bar.set_position(now_ms);
        if self.shown {
            self.bar.set_message(format!("{events} events"));
        }
    }

    /// Whether the bar has become visible (to a terminal, if there is one).
    pub fn shown(&self) -> bool {
        self.shown
    }

    /// Removes the bar from the terminal.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_until_a_second_has_passed_then_shown() {
        let mut p = Progress::new(1_000);
        p.update(10, 1);
        assert!(!p.shown(), "a run under a second shows no bar");
        p.started -= SHOW_AFTER;
        p.update(500, 2);
        assert!(p.shown());
        assert_eq!(p.bar.position(), 500);
        p.finish();
    }
}
