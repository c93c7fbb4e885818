//! Named limits and defaults of the simulator, each with the reason for its
//! number.

/// Most nodes in one scenario: every node holds a whole engine and store in
/// memory; 100,000 is the scale issue 11 asks to study (a whole city of
/// clubs and families) and, at the city workload, stays within 8 GiB.
pub const MAX_NODES: usize = 100_000;

/// Events between two looks at the progress bar: often enough for a smooth
/// bar (a city run processes millions of events a second), rare enough that
/// reading the clock costs nothing measurable.
pub const PROGRESS_EVERY_EVENTS: u64 = 1 << 16;

/// Most items one scenario may publish: each is signed up front and every
/// delivery is verified, so 100,000 bounds a run to minutes, not hours.
pub const MAX_ITEMS: usize = 100_000;

/// Longest virtual run: 30 days covers any churn or catch-up pattern worth
/// simulating and keeps `u64` millisecond arithmetic far from overflow.
pub const MAX_DURATION_MS: u64 = 30 * 24 * 3_600_000;

/// Virtual time 0 as a Unix time in ms (2025-06-15): items carry a realistic
/// `created_ms`, and the same scenario always signs the same bytes.
pub const EPOCH_MS: u64 = 1_750_000_000_000;

/// Tries at drawing a connected random regular graph before giving up: one
/// try succeeds with high probability for the sizes we use, 1,000 makes a
/// failure mean "impossible shape", not "bad luck".
pub const MAX_GRAPH_ATTEMPTS: usize = 1_000;

/// Points in the time series when the scenario does not set `sample_ms`:
/// 200 points draw a smooth curve and keep the CSV small.
pub const DEFAULT_SAMPLES: u64 = 200;

/// Fewest milliseconds between two time-series samples: finer points only
/// add CSV rows, not insight, and bound the events a long run schedules.
pub const MIN_SAMPLE_MS: u64 = 100;

/// Rule violations (deliveries to non-entitled nodes) and missing deliveries
/// listed by name in the report; the counts are always exact, the lists are
/// for a first look.
pub const MAX_LISTED_VIOLATIONS: usize = 20;

/// Events one run may process before it stops: a runaway loop (an engine
/// that keeps waking itself) ends with a clear report instead of hanging.
pub const MAX_EVENTS: u64 = 200_000_000;
