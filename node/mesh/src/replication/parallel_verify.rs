//! Batch signature verification spread over the machine's cores: a frame
//! of items is split into one part per core,
//! each part batch-verified on its own thread, the results joined in
//! order. Verifying is the largest single cost of receiving an item
//! (about 25 µs of a 316-byte note's 40 µs, `catch_up_10k`); on a
//! two-core machine the second core otherwise idles while one verifies.

use std::num::NonZeroUsize;
use std::sync::OnceLock;

use porfiry_protocol::{ItemError, VerifiedItem, verify_batch};

/// Fewest envelopes worth splitting: starting a thread costs tens of µs,
/// verifying 128 items a few ms, so below 256 one thread does it all.
pub const PARALLEL_VERIFY_MIN: usize = 256;

/// Most threads one verification uses: a phone or a family server has 2–8
/// cores, and one frame's work (at most a 1 MiB message) split further
/// gains little while taking every core from the database writer.
pub const MAX_VERIFY_THREADS: usize = 4;

/// [`verify_batch`] over `envelopes`, split over up to
/// [`MAX_VERIFY_THREADS`] cores; result `i` belongs to `envelopes[i]`.
pub fn verify_parallel(envelopes: &[&[u8]], now_ms: u64) -> Vec<Result<VerifiedItem, ItemError>> {
    if envelopes.len() < PARALLEL_VERIFY_MIN {
        return verify_batch(envelopes, now_ms);
    }
    verify_split(envelopes, now_ms, verify_threads())
}

/// Threads a large verification uses, looked up once: on Linux
/// `available_parallelism` reads the cgroup files on every call, and this
/// runs for every received frame.
fn verify_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, NonZeroUsize::get)
            .min(MAX_VERIFY_THREADS)
    })
}

/// [`verify_parallel`] with `threads` parts at most.
fn verify_split(
    envelopes: &[&[u8]],
    now_ms: u64,
    threads: usize,
) -> Vec<Result<VerifiedItem, ItemError>> {
    if threads < 2 || envelopes.len() < PARALLEL_VERIFY_MIN {
        return verify_batch(envelopes, now_ms);
    }
    let per = envelopes.len().div_ceil(threads);
    let mut parts = envelopes.chunks(per);
    let first = parts.next().unwrap_or_default();
    std::thread::scope(|s| {
        let others: Vec<_> = parts
            .map(|part| {
                std::thread::Builder::new()
                    .name("porfiry-verify-part".into())
                    .spawn_scoped(s, move || verify_batch(part, now_ms))
                    // No thread to be had: this part is verified here below.
                    .map_err(|_| part)
            })
            .collect();
        let mut out = verify_batch(first, now_ms);
        for other in others {
            match other {
                Ok(handle) => match handle.join() {
                    Ok(results) => out.extend(results),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(part) => out.extend(verify_batch(part, now_ms)),
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::{Audience, NodeKey, sign};
    use porfiry_storage::Note;

    use super::*;
    use crate::sharing::publish::note_draft;

    const NOW: u64 = 1_750_000_000_000;

    fn envelopes(n: usize) -> Vec<Vec<u8>> {
        let key = NodeKey::from_seed([3; 32]);
        (0..n)
            .map(|i| {
                let row = Note {
                    text: format!("note {i}"),
                    ..Default::default()
                };
                let draft = note_draft(&row, &Audience::Friends, NOW - 1_000 + i as u64);
                sign(&key, &draft).unwrap().envelope_bytes().to_vec()
            })
            .collect()
    }

    /// Each result as the item's id or the error's text.
    fn verdicts(results: Vec<Result<VerifiedItem, ItemError>>) -> Vec<String> {
        results
            .into_iter()
            .map(|r| match r {
                Ok(item) => item.id().to_string(),
                Err(e) => format!("error: {e}"),
            })
            .collect()
    }

    #[test]
    fn a_split_verification_gives_every_verdict_in_order() {
        let mut all = envelopes(3 * PARALLEL_VERIFY_MIN);
        // A forged signature in the last part, garbage in the second.
        let last = all.len() - 2;
        let tail = all[last].len() - 1;
        all[last][tail] ^= 1;
        all[PARALLEL_VERIFY_MIN + 7] = b"not an envelope".to_vec();
        let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
        let split = verdicts(verify_split(&refs, NOW, 3));
        assert_eq!(split, verdicts(verify_batch(&refs, NOW)));
        assert_eq!(split.len(), refs.len());
        assert!(split[last].starts_with("error"), "{}", split[last]);
        assert!(split[PARALLEL_VERIFY_MIN + 7].starts_with("error"));
        let bad = split.iter().filter(|v| v.starts_with("error")).count();
        assert_eq!(bad, 2, "every other item verifies");
    }

    #[test]
    fn few_items_or_one_core_verify_in_one_batch() {
        let all = envelopes(PARALLEL_VERIFY_MIN - 1);
        let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
        let one = verdicts(verify_batch(&refs, NOW));
        assert_eq!(verdicts(verify_split(&refs, NOW, 4)), one);
        assert_eq!(verdicts(verify_split(&refs, NOW, 1)), one);
        assert_eq!(verdicts(verify_parallel(&[], NOW)), Vec::<String>::new());
    }
}
