//! The cost of `dpfair reproduce fdp-fair --full`, measured on its grid at `FULL_COST_REPS`
//! repetitions instead of 200: every shared fit (FDP-Fair's rounds, CDP-Fair's S1) is per
//! repetition and per ε, so the cost is linear in the repetitions, and with `FULL_COST_EPS=e`
//! (keep only the settings at ε = e, plus the non-private ones) every (seed, N, S, mode) still
//! shares its fits across its whole α, ρ* or C_ω sweep (and, without `FULL_COST_EPS`, a seed's fits across ε) as at `--full`. The estimate is this run's
//! CPU time × (cells of the full grid / cells run); `FULL_COST_METHODS=cdp-fair,fdp-fair` keeps
//! only those methods' settings (the scale factor is then that part's, not the grid's). Prints CPU seconds (user + system of this
//! process, from /proc/self/stat) and wall time. Needs the data for Figures 6–7:
//! `DPFAIR_DATA_DIR=/path/to/datasets FULL_COST_REPS=1 FULL_COST_EPS=1 cargo run --release
//! -p dpfair-experiments --example fdp_fair_full_cost`.

use dpfair_experiments::aggregate::Summary;
use dpfair_experiments::papers::fdp_fair::FdpFairPaper;
use dpfair_experiments::{Cell, Check, Grid, Outcome, Paper, RunOptions, Scale, run};

/// The full grid at fewer repetitions, optionally at one ε and for some methods only.
struct FewerRepetitions(usize, Option<f64>, Option<Vec<String>>);

impl Paper for FewerRepetitions {
    fn name(&self) -> &'static str {
        FdpFairPaper.name()
    }
    fn description(&self) -> &'static str {
        "fdp-fair --full grid at fewer repetitions (cost measurement)"
    }
    fn grid(&self, _scale: Scale) -> Grid {
        let mut g = FdpFairPaper.grid(Scale::Full);
        g.repetitions = self.0;
        g.repetition_overrides.clear();
        if let Some(e) = self.1 {
            g.settings
                .retain(|s| s.epsilon == e || s.epsilon.is_infinite());
        }
        if let Some(methods) = &self.2 {
            g.settings.retain(|s| methods.contains(&s.method));
        }
        g
    }
    fn run(&self, cell: &Cell) -> dpfair_experiments::Result<Outcome> {
        FdpFairPaper.run(cell)
    }
    fn schedule(&self, pending: &mut Vec<Cell>) {
        FdpFairPaper.schedule(pending)
    }
    fn checks(&self, rows: &[Summary]) -> Vec<Check> {
        FdpFairPaper.checks(rows)
    }
}

/// User + system CPU seconds of this process.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name (which is in parentheses): utime is the 14th field.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn main() {
    if std::env::var_os("DPFAIR_DATA_DIR").is_none() {
        eprintln!("error: needs DPFAIR_DATA_DIR, the folder holding the data files");
        std::process::exit(2);
    }
    let reps: usize = std::env::var("FULL_COST_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let dir = std::env::var("FULL_COST_OUT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir().join("fdp_fair_full_cost"));
    let eps: Option<f64> = std::env::var("FULL_COST_EPS")
        .ok()
        .and_then(|v| v.parse().ok());
    let methods: Option<Vec<String>> = std::env::var("FULL_COST_METHODS")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let full_cells = FewerRepetitions(200, None, methods.clone())
        .grid(Scale::Full)
        .cells()
        .len();
    let paper = FewerRepetitions(reps, eps, methods);
    let cells = paper.grid(Scale::Full).cells().len();
    let (cpu0, wall0) = (cpu_seconds(), std::time::Instant::now());
    let mut opts = RunOptions::new(&dir, Scale::Full);
    opts.jobs = Some(2);
    opts.progress = false;
    let s = run(&paper, &opts).expect("run");
    let (cpu, wall) = (cpu_seconds() - cpu0, wall0.elapsed().as_secs_f64());
    let scale = full_cells as f64 / cells as f64;
    println!(
        "{cells} cells ({} ran, {} resumed, {} failed) at {reps} repetitions, ε = {eps:?}: \
         {cpu:.1} CPU s, {wall:.1} s wall; the full grid (these methods) has {full_cells} cells (× {scale:.1}): \
         ≈ {:.2} CPU hours",
        s.ran,
        s.resumed,
        s.failed.len(),
        cpu * scale / 3600.0
    );
    assert!(s.failed.is_empty(), "{:?}", s.failed);
}
