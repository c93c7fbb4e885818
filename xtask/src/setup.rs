//! `cargo xtask setup`: probe, plan, say what will be installed and why,
//! then install it (or, with `--dry-run`, only say it). The installing is
//! behind [`Installer`] so the printing and the dry run are tested without
//! touching the machine.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::plan::{self, Purpose, Step};
use crate::{install, models, old_binary, probe};

/// Carries out a plan's steps.
pub trait Installer {
    /// Installs every step, in order; `model_dir` receives the models.
    fn install(&mut self, steps: &[Step], model_dir: &Path) -> Result<()>;
}

/// Makes this machine ready for `purpose` (prints to stdout).
pub fn setup(purpose: Purpose, dry_run: bool) -> Result<()> {
    let model_dir = models::cache_dir_from_env()?;
    let old = old_binary::binary_path(&old_binary::cache_dir_from_env()?, old_binary::OLD_COMMIT);
    let steps = plan::plan(purpose, &probe::probe(&model_dir, &old));
    apply(
        purpose,
        &steps,
        dry_run,
        &model_dir,
        &mut std::io::stdout(),
        &mut install::System,
    )
}

/// Prints one line per step (what, how, why), then installs them unless
/// `dry_run`. Nothing missing prints nothing unless `dry_run`, which says so.
pub fn apply(
    purpose: Purpose,
    steps: &[Step],
    dry_run: bool,
    model_dir: &Path,
    out: &mut impl Write,
    installer: &mut impl Installer,
) -> Result<()> {
    let name = format!("{purpose:?}").to_lowercase();
    if steps.is_empty() {
        if dry_run {
            writeln!(out, "nothing is missing for `cargo xtask {name}`")?;
        }
        return Ok(());
    }
    let verb = if dry_run { "missing" } else { "== installing" };
    for step in steps {
        writeln!(out, "{verb} {step}")?;
    }
    if steps.iter().any(|s| matches!(s, Step::FetchModel(_))) {
        writeln!(out, "   (models go to {})", model_dir.display())?;
    }
    if dry_run {
        writeln!(
            out,
            "{} missing for `cargo xtask {name}`; `cargo xtask setup --for {name}` installs them",
            steps.len()
        )?;
        return Ok(());
    }
    out.flush()?;
    installer.install(steps, model_dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Model;

    /// Records what it was asked to install.
    #[derive(Default)]
    struct Recorder(Vec<Step>);

    impl Installer for Recorder {
        fn install(&mut self, steps: &[Step], _: &Path) -> Result<()> {
            self.0.extend_from_slice(steps);
            Ok(())
        }
    }

    fn steps() -> Vec<Step> {
        vec![
            Step::Apt {
                package: "chromium-driver",
                why: "browser tests",
            },
            Step::FetchModel(Model::Gemma),
        ]
    }

    fn run(steps: &[Step], dry_run: bool) -> (String, Vec<Step>) {
        let mut out = Vec::new();
        let mut recorder = Recorder::default();
        apply(
            Purpose::Test,
            steps,
            dry_run,
            Path::new("/cache"),
            &mut out,
            &mut recorder,
        )
        .unwrap();
        (String::from_utf8(out).unwrap(), recorder.0)
    }

    #[test]
    fn dry_run_prints_the_missing_and_installs_nothing() {
        let (text, installed) = run(&steps(), true);
        assert!(installed.is_empty());
        assert!(
            text.contains("missing chromium-driver (apt-get install; browser tests)"),
            "{text}"
        );
        assert!(text.contains("models go to /cache"), "{text}");
        assert!(text.contains("2 missing for `cargo xtask test`"), "{text}");
        assert!(!text.contains("== installing"), "{text}");
    }

    #[test]
    fn a_real_run_announces_each_step_then_installs_them_all() {
        let (text, installed) = run(&steps(), false);
        assert_eq!(installed, steps());
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("== installing chromium-driver"),
            "{text}"
        );
        assert!(lines[1].starts_with("== installing Gemma 3 270M"), "{text}");
    }

    #[test]
    fn nothing_missing_says_so_on_a_dry_run_and_is_silent_otherwise() {
        let (text, installed) = run(&[], true);
        assert_eq!(text, "nothing is missing for `cargo xtask test`\n");
        assert!(installed.is_empty());
        let (text, installed) = run(&[], false);
        assert_eq!(text, "");
        assert!(installed.is_empty());
    }
}
