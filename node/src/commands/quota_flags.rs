//! `porfiry run`'s quota flags: how many items one author may make this node
//! hold (`porfiry_protocol::engine::Quotas`; the defaults and their reasons
//! are there). A stranger is an author who is neither a friend nor a fellow
//! member of one of this node's clubs.

use clap::Args;
use porfiry_protocol::engine::{
    DEFAULT_QUOTA_FRIEND_ITEMS, DEFAULT_QUOTA_STRANGER_ITEMS,
    DEFAULT_STRANGER_ITEMS_PER_LINK_MINUTE, DEFAULT_STRANGERS_KEPT, Quotas,
};

/// The quota flags.
#[derive(Debug, Clone, Args)]
pub struct QuotaArgs {
    /// Items one friend (or club fellow) may have held here; past it their
    /// new items are refused and counted (`porfiry status`).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_QUOTA_FRIEND_ITEMS, value_parser = clap::value_parser!(u32).range(1..))]
    pub quota_friend_items: u32,
    /// Items one stranger (an author a friend relays to us) may have held
    /// here.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_QUOTA_STRANGER_ITEMS, value_parser = clap::value_parser!(u32).range(0..))]
    pub quota_stranger_items: u32,
    /// Strangers' public items kept in all; past it the oldest goes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STRANGERS_KEPT, value_parser = clap::value_parser!(u32).range(0..))]
    pub quota_strangers_kept: u32,
    /// Strangers' items one friend's link may bring per minute; past it
    /// they wait for a later catch-up.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STRANGER_ITEMS_PER_LINK_MINUTE, value_parser = clap::value_parser!(u32).range(1..))]
    pub quota_stranger_rate: u32,
}

impl Default for QuotaArgs {
    /// The flags' defaults (the engine's constants).
    fn default() -> QuotaArgs {
        QuotaArgs {
            quota_friend_items: DEFAULT_QUOTA_FRIEND_ITEMS,
            quota_stranger_items: DEFAULT_QUOTA_STRANGER_ITEMS,
            quota_strangers_kept: DEFAULT_STRANGERS_KEPT,
            quota_stranger_rate: DEFAULT_STRANGER_ITEMS_PER_LINK_MINUTE,
        }
    }
}

impl QuotaArgs {
    /// The engine's budgets: the items from the flags, the bytes at their
    /// defaults.
    pub fn quotas(&self) -> Quotas {
        Quotas {
            friend_items: self.quota_friend_items,
            stranger_items: self.quota_stranger_items,
            strangers_kept: self.quota_strangers_kept,
            stranger_items_per_link_minute: self.quota_stranger_rate,
            ..Quotas::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        quota: QuotaArgs,
    }

    #[test]
    fn the_flags_set_the_engines_budgets_and_default_to_its_constants() {
        let q = Cli::parse_from(["x"]).quota.quotas();
        assert_eq!(q, Quotas::default());
        assert_eq!(QuotaArgs::default().quotas(), Quotas::default());
        let q = Cli::parse_from([
            "x",
            "--quota-friend-items",
            "5000",
            "--quota-stranger-items",
            "20",
            "--quota-strangers-kept",
            "300",
            "--quota-stranger-rate",
            "120",
        ])
        .quota
        .quotas();
        assert_eq!(
            (
                q.friend_items,
                q.stranger_items,
                q.strangers_kept,
                q.stranger_items_per_link_minute
            ),
            (5_000, 20, 300, 120)
        );
        assert!(
            Cli::try_parse_from(["x", "--quota-friend-items", "0"]).is_err(),
            "a friend must be able to send something"
        );
        assert!(Cli::try_parse_from(["x", "--quota-stranger-items", "-1"]).is_err());
    }
}
