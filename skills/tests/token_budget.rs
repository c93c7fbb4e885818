//! Prompt size in real tokens (tiktoken cl100k), per state, against seed §10's
//! budget: core + catalogue + index ≤ 350 tokens, one active set ≤ 400. This
//! is a size check, not a timing one; run with `--nocapture` to see counts.

mod common;

use common::media_only;
use std::sync::LazyLock;

use porfiry_skills::Language;
use tiktoken_rs::CoreBPE;

static BPE: LazyLock<CoreBPE> = LazyLock::new(|| tiktoken_rs::cl100k_base().unwrap());

fn count(text: &str) -> usize {
    BPE.encode_with_special_tokens(text).len()
}

#[test]
fn the_phone_setup_fits_the_seed_budget_in_both_languages() {
    for lang in [Language::En, Language::Ru] {
        let tb = media_only(lang);
        let idle = tb.prompt().build(&[]);
        let active = tb.prompt().build(&["media"]);
        let (idle_tokens, active_tokens) = (count(&idle), count(&active));
        println!(
            "{lang}: state 1 = {idle_tokens} tokens, state 3 (media active) = {active_tokens} tokens"
        );
        assert!(
            idle_tokens <= 350,
            "{lang}: state 1 has {idle_tokens} tokens"
        );
        assert!(
            active_tokens <= 400,
            "{lang}: state 3 has {active_tokens} tokens"
        );
    }
}

#[test]
fn each_catalogue_line_and_tool_line_stays_terse() {
    let tb = media_only(Language::En);
    for line in tb.prompt().build(&["media"]).lines() {
        assert!(
            count(line) <= 30,
            "line too long for a small model: {line:?}"
        );
    }
}
