//! `dpfair-experiments`: the papers' experiments (`dpfair reproduce`) and the demo
//! (`dpfair demo`), on one harness.
//!
//! * A [`Paper`] declares a [`Grid`] of settings (dataset, method, accounting, ε, δ, fairness
//!   level, method parameters) × repetitions, and runs one cell at a time.
//! * [`run`] executes the grid: repetitions in parallel (rayon, `--jobs`), a progress bar with ETA
//!   on stderr, each finished cell appended to `OUT/raw.csv` at once, so an interrupted run
//!   resumes where it stopped. It then aggregates (mean, std, Student-t 95 % interval) into
//!   `OUT/results.csv`, draws the paper's plots (SVG) and writes `OUT/report.md` with each paper
//!   number beside ours.
//! * [`papers::all`] is the registry; [`demo`] runs every method a paper offers to the demo.
//!
//! # How to add a paper
//!
//! 1. Create `crates/experiments/src/papers/<method>.rs` (e.g. `decoupled.rs`) with a unit struct implementing
//!    [`Paper`]:
//!
//!    ```ignore
//!    use crate::{Cell, Grid, Outcome, Paper, Params, Reference, Scale, Sweep, PlotSpec, Axis, Series};
//!    use crate::error::{Result, method_error};
//!
//!    pub struct Decoupled;
//!
//!    impl Paper for Decoupled {
//!        fn name(&self) -> &'static str { "decoupled" }            // dpfair reproduce decoupled
//!        fn description(&self) -> &'static str { "Ghoukasian & Asoodeh: Tables II–XIII" }
//!
//!        fn grid(&self, scale: Scale) -> Grid {
//!            let reps = match scale { Scale::Quick => 2, Scale::Full => 10 };
//!            Grid::new(reps, 100)                                   // seeds 100, 101, …
//!                .with(Sweep::new()
//!                    .datasets(["adult", "credit"])
//!                    .methods(["decoupled"])
//!                    .accounting(["strict", "paper"])
//!                    .epsilons([3.0, 9.0])
//!                    .deltas([1e-5]))
//!                .with(Sweep::new().datasets(["adult"]).methods(["dp-fermi"])
//!                    .epsilons([3.0]).params([Params::new().with("lambda", 0.5)]))
//!        }
//!
//!        fn run(&self, cell: &Cell) -> Result<Outcome> {
//!            let s = &cell.setting;                                // dataset, method, epsilon, …
//!            let data = crate::load_builtin(&s.dataset)?;         // cached per process
//!            let mut noise = cell.noise();                         // Noise::seeded(cell.seed)
//!            let mut ledger = dpfair_privacy::Ledger::new(
//!                dpfair_privacy::Budget::approx(s.epsilon, s.delta)?);
//!            // … split with cell.seed, fit with &mut ledger and &mut noise, evaluate …
//!            Ok(Outcome::new().metric("accuracy", 0.78).metric("dp_gap", 0.01).spent(&ledger)?)
//!        }
//!
//!        fn references(&self) -> Vec<Reference> {                 // for report.md
//!            vec![Reference::new("Table II", "adult", "decoupled", 3.0, "accuracy", 0.7763, 0.01)]
//!        }
//!
//!        fn plots(&self) -> Vec<PlotSpec> {
//!            vec![PlotSpec::new("adult.svg", "Adult", Axis::Epsilon, "accuracy", Series::Method)
//!                .for_dataset("adult")]
//!        }
//!    }
//!    ```
//!
//! 2. In `papers/mod.rs` add `pub mod <method>;` and `&<method>::<Method>,` to [`papers::all`].
//! 3. Run `dpfair reproduce <method> --quick --out /tmp/s` and read `/tmp/s/report.md`.
//!
//! Rules: `run` must be deterministic given the cell (all randomness from `cell.seed`; the same
//! seed is used for every setting of one repetition, so curves over ε or α share their data
//! splits). Use `f64::INFINITY` as ε and accounting `none` for non-private rows. Metric names are
//! free, but use `accuracy`, `error`, `mse`, `dp_gap`, `ks`, `unfairness_u` where they fit so
//! plots and the demo read alike. A failing cell is reported, not fatal, and is retried by the
//! next run.
//!
//! # How to add a method to `dpfair demo`
//!
//! Override [`Paper::demo`] in your paper file:
//!
//! ```ignore
//! fn demo(&self) -> Vec<DemoMethod> {
//!     vec![DemoMethod {
//!         name: "decoupled (Alg. 2)",
//!         task: "binary, 2 groups",
//!         epsilons: vec![1.0, 3.0, 9.0],
//!         run: |data, epsilon, seed| {
//!             let (train, test) = data.binary()?;        // shared synthetic data, no download
//!             // fit with Ledger::new(Budget::approx(epsilon, 1e-5)?) and Noise::seeded(seed)
//!             Ok(DemoResult::new("accuracy", 0.8, "DP difference", 0.02).spent(&ledger)?)
//!         },
//!     }]
//! }
//! ```
//!
//! [`demo::DemoData`] offers `binary()` (two-group logistic design), `fdp()` (Xue & Yu), `regression()`
//! (Xian et al. Law-like), `multiclass()` (Say et al.) and `lpct()` (Ma & Yang: public sample, then
//! private train/test), each a `(train, test)` pair generated once per demo.

pub mod aggregate;
pub mod demo;
pub mod error;
pub mod grid;
pub mod paper;
pub mod papers;
pub mod plot;
pub mod present;
pub mod raw;
pub mod report;
pub mod runner;
pub mod stats;
pub mod verdict;

pub use demo::{DemoData, DemoMethod, DemoResult, DemoSize};
pub use error::{ExpError, Result, method_error};
pub use grid::{Cell, Grid, Params, Setting, Sweep};
pub use paper::{Axis, Check, Outcome, Paper, PlotSpec, Reason, RefLine, Reference, Scale, Series};
pub use runner::{RunOptions, RunSummary, run};

use dpfair_data::builtin::{self, Builtin, DataDir};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

static DATA_DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
static LOADED: Mutex<Option<HashMap<String, Arc<Builtin>>>> = Mutex::new(None);

/// Set the data directory experiments load built-in data sets from (the CLI's `--data-dir`);
/// otherwise `DPFAIR_DATA_DIR`, else the user's cache directory. Only the first call counts.
pub fn set_data_dir(dir: Option<PathBuf>) {
    let _ = DATA_DIR.set(dir);
}

/// The built-in data set `name`, loaded once per process and shared between cells.
pub fn load_builtin(name: &str) -> Result<Arc<Builtin>> {
    if let Some(b) = LOADED
        .lock()
        .expect("not poisoned")
        .as_ref()
        .and_then(|m| m.get(name))
    {
        return Ok(b.clone());
    }
    let explicit = DATA_DIR.get().cloned().flatten();
    let dir = DataDir::resolve(explicit.as_deref())?;
    let b = Arc::new(builtin::load(name, &dir)?);
    LOADED
        .lock()
        .expect("not poisoned")
        .get_or_insert_with(HashMap::new)
        .insert(name.to_string(), b.clone());
    Ok(b)
}
