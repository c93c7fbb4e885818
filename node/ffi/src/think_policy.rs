//! When a phone may think (pure, with the time passed in): the cognitive
//! core ticks only while the app's conditions allow it — plugged in, or in
//! the foreground with battery to spare; not over a metered connection when
//! the model is across the network — and within a per-hour tick budget, so
//! the person's battery and data plan come first.

use std::collections::VecDeque;

/// Below this battery level an unplugged phone does not think: the rest is
/// the person's (phones warn at 20 %; thinking stops well before).
pub const MIN_THINK_BATTERY_PERCENT: u8 = 30;

/// Ticks an hour when the app names no budget: one every 10 minutes, a
/// few minutes of a small model's work an hour at most.
pub const DEFAULT_THINK_TICKS_PER_HOUR: u32 = 6;

/// The most ticks an hour a phone may be given: one a minute; more is a
/// server's pace (the core's own pause is 30 s).
pub const MAX_THINK_TICKS_PER_HOUR: u32 = 60;

/// The window the budget counts ticks in.
pub const BUDGET_WINDOW_MS: u64 = 3_600_000;

/// What the app says about the phone now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhoneConditions {
    /// The app is on screen.
    pub foreground: bool,
    /// The phone is plugged in.
    pub charging: bool,
    /// Battery level, 0 to 100.
    pub battery_percent: u8,
    /// The connection is metered (mobile data).
    pub metered: bool,
}

/// Why the phone does not think now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The app set no budget (0 ticks an hour).
    Off,
    /// The app has not said what the phone's conditions are.
    NoConditions,
    /// Unplugged and in the background.
    Background,
    /// Unplugged with the battery under [`MIN_THINK_BATTERY_PERCENT`].
    Battery,
    /// Metered, and the model is across the network.
    Metered,
    /// The hour's ticks are spent; the next may run at this time (ms).
    Budget {
        /// When the oldest counted tick leaves the window.
        until_ms: u64,
    },
}

impl Hold {
    /// One word for the app: `off`, `no conditions`, `background`,
    /// `battery`, `metered`, `budget`.
    pub fn word(self) -> &'static str {
        match self {
            Hold::Off => "off",
            Hold::NoConditions => "no conditions",
            Hold::Background => "background",
            Hold::Battery => "battery",
            Hold::Metered => "metered",
            Hold::Budget { .. } => "budget",
        }
    }
}

/// The rules and what they count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThinkPolicy {
    per_hour: u32,
    /// The model is reached over the network (a server or a friend).
    network_model: bool,
    conditions: Option<PhoneConditions>,
    /// Start times of the ticks in the last hour, oldest first (at most
    /// `per_hour` of them).
    recent: VecDeque<u64>,
    /// One tick may run in the background (a push's `sync_now` wake):
    /// used by the next tick, or taken back when the sync ends.
    granted: bool,
}

impl ThinkPolicy {
    /// `per_hour` ticks an hour (0: never), for a model over the network
    /// or not; no conditions known yet.
    pub fn new(per_hour: u32, network_model: bool) -> Self {
        Self {
            per_hour,
            network_model,
            conditions: None,
            recent: VecDeque::new(),
            granted: false,
        }
    }

    /// Lets one tick run in the background (the OS woke the app for a
    /// sync); the other rules still hold.
    pub fn grant_one(&mut self) {
        self.granted = true;
    }

    /// Takes an unused grant back.
    pub fn revoke_grant(&mut self) {
        self.granted = false;
    }

    /// What the app says now.
    pub fn set_conditions(&mut self, conditions: PhoneConditions) {
        self.conditions = Some(conditions);
    }

    /// The conditions last said.
    pub fn conditions(&self) -> Option<PhoneConditions> {
        self.conditions
    }

    /// Counts a tick that started at `at_ms`.
    pub fn ticked(&mut self, at_ms: u64) {
        self.granted = false;
        self.recent.push_back(at_ms);
        while self.recent.len() > self.per_hour as usize {
            self.recent.pop_front();
        }
    }

    /// Ticks counted in the hour before `now_ms`.
    pub fn ticks_in_hour(&self, now_ms: u64) -> u32 {
        let since = now_ms.saturating_sub(BUDGET_WINDOW_MS);
        self.recent.iter().filter(|&&t| t > since).count() as u32
    }

    /// The ticks an hour.
    pub fn per_hour(&self) -> u32 {
        self.per_hour
    }

    /// Why no tick may start at `now_ms`; `None`: one may.
    pub fn hold(&self, now_ms: u64) -> Option<Hold> {
        if self.per_hour == 0 {
            return Some(Hold::Off);
        }
        let Some(c) = self.conditions else {
            return Some(Hold::NoConditions);
        };
        if !c.charging && !c.foreground && !self.granted {
            return Some(Hold::Background);
        }
        if !c.charging && c.battery_percent < MIN_THINK_BATTERY_PERCENT {
            return Some(Hold::Battery);
        }
        if c.metered && self.network_model {
            return Some(Hold::Metered);
        }
        if self.ticks_in_hour(now_ms) >= self.per_hour {
            let since = now_ms.saturating_sub(BUDGET_WINDOW_MS);
            let oldest = self
                .recent
                .iter()
                .find(|&&t| t > since)
                .copied()
                .unwrap_or(now_ms);
            return Some(Hold::Budget {
                until_ms: oldest + BUDGET_WINDOW_MS,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AWAKE: PhoneConditions = PhoneConditions {
        foreground: true,
        charging: false,
        battery_percent: 80,
        metered: false,
    };

    #[test]
    fn nothing_is_allowed_until_the_app_says_the_conditions() {
        let mut p = ThinkPolicy::new(6, false);
        assert_eq!(p.hold(0), Some(Hold::NoConditions));
        p.set_conditions(AWAKE);
        assert_eq!(p.hold(0), None);
        assert_eq!(ThinkPolicy::new(0, false).hold(0), Some(Hold::Off));
    }

    #[test]
    fn battery_background_and_metered_hold_unless_plugged_in() {
        let mut p = ThinkPolicy::new(6, true);
        let at = |p: &mut ThinkPolicy, c: PhoneConditions| {
            p.set_conditions(c);
            p.hold(0)
        };
        let background = PhoneConditions {
            foreground: false,
            ..AWAKE
        };
        assert_eq!(at(&mut p, background), Some(Hold::Background));
        let low = PhoneConditions {
            battery_percent: MIN_THINK_BATTERY_PERCENT - 1,
            ..AWAKE
        };
        assert_eq!(at(&mut p, low), Some(Hold::Battery));
        let plugged = PhoneConditions {
            charging: true,
            foreground: false,
            battery_percent: 5,
            ..AWAKE
        };
        assert_eq!(
            at(&mut p, plugged),
            None,
            "plugged in, it thinks in the background"
        );
        let metered = PhoneConditions {
            metered: true,
            ..plugged
        };
        assert_eq!(at(&mut p, metered), Some(Hold::Metered));
        let mut local = ThinkPolicy::new(6, false);
        assert_eq!(
            at(&mut local, metered),
            None,
            "a model on the phone needs no data"
        );
    }

    #[test]
    fn a_sync_wake_grants_one_background_tick_within_the_other_rules() {
        let mut p = ThinkPolicy::new(6, false);
        p.set_conditions(PhoneConditions {
            foreground: false,
            ..AWAKE
        });
        assert_eq!(p.hold(0), Some(Hold::Background));
        p.grant_one();
        assert_eq!(p.hold(0), None);
        p.ticked(0);
        assert_eq!(p.hold(1), Some(Hold::Background), "one tick, not more");
        p.grant_one();
        p.set_conditions(PhoneConditions {
            foreground: false,
            battery_percent: 5,
            ..AWAKE
        });
        assert_eq!(p.hold(1), Some(Hold::Battery), "the battery still rules");
        p.revoke_grant();
        p.set_conditions(PhoneConditions {
            foreground: false,
            ..AWAKE
        });
        assert_eq!(p.hold(1), Some(Hold::Background));
    }

    #[test]
    fn the_budget_counts_the_last_hour_and_says_when_the_next_tick_may_run() {
        let mut p = ThinkPolicy::new(2, false);
        p.set_conditions(AWAKE);
        p.ticked(1_000);
        assert_eq!(p.hold(2_000), None);
        p.ticked(5_000);
        assert_eq!(
            p.hold(6_000),
            Some(Hold::Budget {
                until_ms: 1_000 + BUDGET_WINDOW_MS
            })
        );
        assert_eq!(p.ticks_in_hour(6_000), 2);
        assert_eq!(
            p.hold(1_000 + BUDGET_WINDOW_MS),
            None,
            "the first left the window"
        );
        for t in 0..100 {
            p.ticked(10_000 + t);
        }
        assert_eq!(p.recent.len(), 2, "only the budget's worth is kept");
    }
}
