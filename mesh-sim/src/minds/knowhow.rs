//! What a mind does with know-how besides what its core does: the scripted
//! model shares an own strategy once its core's ratings say it worked,
//! adopts the best-rated strategy a friend shared (a copy of its own, rated
//! at home; the core also applies received strategies by itself, since the
//! item carries the mechanism), and — for an
//! adversary — shares a useless strategy and keeps rating it +3. Everything
//! the model writes goes through its commands and the toolset; only the
//! adversary's rating is written straight into its database.

use porfiry_storage::{ListQuery, StagnationStrategy, Store};

use super::mind::{Mind, MindError, StepOut};
use super::scenario::Policy;

/// How often an adversary rates its useless strategy +3 again, in its own
/// ticks: once a simulated hour at ten-minute ticks, enough to outweigh
/// the honest ratings that reach its friends, few enough not to flood.
const ADVERSARY_RATING_TICKS: u64 = 6;

/// The name every adversary's useless strategy starts with.
pub(crate) const TRICK_PREFIX: &str = "Trick of mind ";

impl Mind {
    /// Own strategies whose mean rating reached the policy's bar are written
    /// again as shared, and the local copy deleted (the toolset has no
    /// update for strategies).
    pub(super) async fn share_what_worked(&mut self, policy: &Policy) -> Result<(), MindError> {
        if self.unshared.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = self.unshared.iter().map(|(n, _)| n.clone()).collect();
        let rated = self
            .db
            .read(
                move |s: &Store| -> porfiry_storage::Result<Vec<(String, i64, Option<f64>)>> {
                    let rows = s.list::<StagnationStrategy>(&ListQuery::recent(
                        porfiry_storage::limits::MAX_LIST_LIMIT,
                    ))?;
                    let mut out = Vec::new();
                    for r in rows {
                        if r.row.origin_author.is_none() && names.contains(&r.row.name) {
                            let target = format!("stagnation_strategies:{}", r.id);
                            let mean = s.rating_summary(&target)?.map(|(m, _)| m);
                            out.push((r.row.name, r.id, mean));
                        }
                    }
                    Ok(out)
                },
            )
            .await
            .map_err(|e| self.db_err(e))?
            .map_err(|e| self.db_err(e))?;
        for (name, id, mean) in rated {
            if mean.is_some_and(|m| m >= policy.share_at_rating) {
                let Some(&(_, n)) = self.unshared.iter().find(|(x, _)| *x == name) else {
                    continue;
                };
                let mut state = self.policy_state();
                state.commands.push(strategy_command(&name, n, "shared"));
                state.commands.push(format!("strategies_delete|{id}"));
                drop(state);
                self.unshared.retain(|(x, _)| *x != name);
            }
        }
        Ok(())
    }

    /// Writes a copy of the best-rated friend's strategy not adopted yet
    /// (ratings as they reached this mind), if one is rated well enough.
    pub(super) async fn adopt(&mut self, policy: &Policy) -> Result<Option<String>, MindError> {
        let bar = policy.adopt_at_rating;
        let seen = self.adopted.clone();
        let best = self
            .db
            .read(
                move |s: &Store| -> porfiry_storage::Result<Option<(String, String)>> {
                    let rows = s.list::<StagnationStrategy>(&ListQuery::recent(
                        porfiry_storage::limits::MAX_LIST_LIMIT,
                    ))?;
                    let mut best: Option<(f64, String, String)> = None;
                    for r in rows {
                        let Some(item) = r.row.origin_item_id else {
                            continue;
                        };
                        if seen.contains(&r.row.name) {
                            continue;
                        }
                        let Some((mean, _)) = s.rating_summary(&item.to_string())? else {
                            continue;
                        };
                        if mean >= bar && best.as_ref().is_none_or(|(m, _, _)| mean > *m) {
                            best = Some((mean, r.row.name, r.row.class));
                        }
                    }
                    Ok(best.map(|(_, name, class)| (name, class)))
                },
            )
            .await
            .map_err(|e| self.db_err(e))?
            .map_err(|e| self.db_err(e))?;
        if let Some((name, class)) = best {
            self.policy_state().commands.push(format!(
                "strategies_add|{name}|{class}|1|a friend's way out of a loop|meta_analysis||local"
            ));
            self.adopted.insert(name.clone());
            return Ok(Some(name));
        }
        Ok(None)
    }

    /// An adversary's doing: on its first step it writes its useless
    /// strategy, shared (through its model and the toolset, as any mind);
    /// every [`ADVERSARY_RATING_TICKS`] it writes a shareable +3 rating of
    /// that strategy's item straight into its database — the toolset's
    /// `ratings_add` never shares a rating, a tampered node does not care —
    /// which its own publishing pass then signs and sends.
    pub(super) async fn cheat(&mut self, at: u64, out: &mut StepOut) -> Result<(), MindError> {
        let name = format!("{TRICK_PREFIX}{}", self.index);
        if self.steps == 0 {
            self.policy_state().commands.push(format!(
                "strategies_add|{name}|internal_restructuring|1|works every time|meta_analysis||shared"
            ));
            out.invented.push((name, 0.0));
            return Ok(());
        }
        if !self.steps.is_multiple_of(ADVERSARY_RATING_TICKS) {
            return Ok(());
        }
        self.db
            .write(move |s: &Store| -> porfiry_storage::Result<()> {
                let rows = s.list::<StagnationStrategy>(&ListQuery::recent(
                    porfiry_storage::limits::MAX_LIST_LIMIT,
                ))?;
                let item = rows
                    .into_iter()
                    .find(|r| r.row.name == name && r.row.origin_author.is_none())
                    .and_then(|r| r.row.item_id);
                if let Some(item) = item {
                    s.add(
                        &porfiry_storage::Rating {
                            target: item.to_string(),
                            score: 3,
                            comment: "works every time".into(),
                            shareable: true,
                            ..Default::default()
                        },
                        at,
                    )?;
                }
                Ok(())
            })
            .await
            .map_err(|e| self.db_err(e))?
            .map_err(|e| self.db_err(e))
    }
}

/// The `strategies_add` line of an own strategy: cheap (cost 1) and of the
/// class repeated thoughts are diagnosed as, with a mechanism that always
/// applies.
pub(crate) fn strategy_command(name: &str, n: u64, sharing: &str) -> String {
    let mechanism = if n.is_multiple_of(2) {
        "rationale"
    } else {
        "meta_analysis"
    };
    format!(
        "strategies_add|{name}|internal_restructuring|1|what got me out of a loop|{mechanism}||{sharing}"
    )
}
