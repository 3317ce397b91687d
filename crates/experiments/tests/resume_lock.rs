//! Runs into one folder are exclusive and resuming is idempotent: two concurrent runs
//! no longer duplicate every cell and leave "116 missing" forever; a cell with a row cut out is
//! recomputed once and then counts as finished.

use dpfair_data::lock::{FolderLock, LOCK_FILE};
use dpfair_experiments::{
    Cell, ExpError, Grid, Outcome, Paper, PlotSpec, Reference, Result, RunOptions, Scale, Sweep,
    run,
};
use std::sync::atomic::{AtomicUsize, Ordering};

/// 2 methods × 2 ε × 3 repetitions = 12 cells with three metrics each.
struct Small {
    calls: AtomicUsize,
}

impl Paper for Small {
    fn name(&self) -> &'static str {
        "small"
    }
    fn description(&self) -> &'static str {
        "a deterministic small experiment"
    }
    fn grid(&self, _scale: Scale) -> Grid {
        Grid::new(3, 5).with(
            Sweep::new()
                .methods(["m1", "m2"])
                .epsilons([1.0, 2.0])
                .deltas([1e-5]),
        )
    }
    fn run(&self, cell: &Cell) -> Result<Outcome> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let v = cell.setting.epsilon + cell.repetition as f64;
        Ok(Outcome::new()
            .metric("a", v)
            .metric("b", 2.0 * v)
            .metric("c", cell.seed as f64))
    }
    fn references(&self) -> Vec<Reference> {
        Vec::new()
    }
    fn plots(&self) -> Vec<PlotSpec> {
        Vec::new()
    }
}

fn small() -> Small {
    Small {
        calls: AtomicUsize::new(0),
    }
}

fn options(dir: &std::path::Path) -> RunOptions {
    let mut o = RunOptions::new(dir, Scale::Quick);
    o.progress = false;
    o.jobs = Some(1);
    o
}

fn data_lines(raw: &str) -> Vec<&str> {
    raw.lines().skip(1).collect()
}

#[test]
fn a_second_run_into_a_locked_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path()).unwrap();
    let held = FolderLock::acquire(dir.path()).unwrap();
    let err = run(&small(), &options(dir.path())).unwrap_err();
    assert!(matches!(err, ExpError::Locked(_)), "{err}");
    assert!(
        err.to_string().contains("in use by another dpfair run"),
        "{err}"
    );
    assert!(
        !dir.path().join("raw.csv").exists(),
        "the refused run wrote"
    );
    drop(held);
    let s = run(&small(), &options(dir.path())).unwrap();
    assert_eq!((s.ran, s.missing), (12, 0));
    assert!(
        !dir.path().join(LOCK_FILE).exists(),
        "the lock was not released"
    );
}

#[test]
fn concurrent_runs_into_one_folder_never_duplicate_cells() {
    let dir = tempfile::tempdir().unwrap();
    let p = small();
    let outcomes: Vec<Result<_>> = std::thread::scope(|s| {
        let a = s.spawn(|| run(&p, &options(dir.path())));
        let b = s.spawn(|| run(&p, &options(dir.path())));
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    // One run did the work; the other was refused or (if it started after) resumed everything.
    let done: Vec<_> = outcomes.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert!(!done.is_empty());
    for r in &outcomes {
        if let Err(e) = r {
            assert!(matches!(e, ExpError::Locked(_)), "{e}");
        }
    }
    let raw = std::fs::read_to_string(dir.path().join("raw.csv")).unwrap();
    assert_eq!(data_lines(&raw).len(), 12 * 3, "{raw}");
    let again = run(&p, &options(dir.path())).unwrap();
    assert_eq!((again.ran, again.resumed, again.missing), (0, 12, 0));
}

/// The state two unlocked runs left behind: every row twice. The next run reconciles it: nothing
/// missing, nothing recomputed, each row once, results complete.
#[test]
fn duplicated_rows_are_reconciled_without_recomputing() {
    let dir = tempfile::tempdir().unwrap();
    let p = small();
    run(&p, &options(dir.path())).unwrap();
    let raw_path = dir.path().join("raw.csv");
    let raw = std::fs::read_to_string(&raw_path).unwrap();
    let rows = data_lines(&raw).join("\n") + "\n";
    std::fs::write(&raw_path, raw.clone() + &rows).unwrap();
    p.calls.store(0, Ordering::Relaxed);
    let s = run(&p, &options(dir.path())).unwrap();
    assert_eq!((s.ran, s.resumed, s.missing), (0, 12, 0));
    assert_eq!(s.reconciled_rows, 36);
    assert_eq!(p.calls.load(Ordering::Relaxed), 0);
    assert_eq!(std::fs::read_to_string(&raw_path).unwrap(), raw);
    let results = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    assert!(results.lines().count() > 1, "results.csv is empty");
}

/// A cell with one of its rows cut out (by hand or by a crash) is recomputed once; the rerun's
/// rows complete it, and the run after that has nothing missing ("1 missing" stayed forever).
#[test]
fn a_cell_missing_one_row_is_recomputed_once_and_then_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let p = small();
    run(&p, &options(dir.path())).unwrap();
    let raw_path = dir.path().join("raw.csv");
    let raw = std::fs::read_to_string(&raw_path).unwrap();
    let mut lines: Vec<&str> = raw.lines().collect();
    lines.remove(2); // the second metric of the first cell
    std::fs::write(&raw_path, lines.join("\n") + "\n").unwrap();
    p.calls.store(0, Ordering::Relaxed);
    let s = run(&p, &options(dir.path())).unwrap();
    assert_eq!((s.ran, s.resumed, s.missing), (1, 11, 0));
    assert_eq!(p.calls.load(Ordering::Relaxed), 1);
    let s = run(&p, &options(dir.path())).unwrap();
    assert_eq!((s.ran, s.resumed, s.missing), (0, 12, 0));
    let fixed = std::fs::read_to_string(&raw_path).unwrap();
    assert_eq!(data_lines(&fixed).len(), 36);
}

/// Garbage lines (e.g. two writers' rows interleaved mid-line) are dropped, not fatal: the run
/// recomputes what they held and converges.
#[test]
fn malformed_lines_are_dropped_and_the_run_converges() {
    let dir = tempfile::tempdir().unwrap();
    let p = small();
    run(&p, &options(dir.path())).unwrap();
    let raw_path = dir.path().join("raw.csv");
    let raw = std::fs::read_to_string(&raw_path).unwrap();
    let mut lines: Vec<String> = raw.lines().map(String::from).collect();
    lines[4] = format!("{}{}", &lines[4][..20], &lines[7][10..]);
    std::fs::write(&raw_path, lines.join("\n") + "\n").unwrap();
    let s = run(&p, &options(dir.path())).unwrap();
    assert_eq!(s.missing, 0);
    assert!(s.ran >= 1, "{s:?}");
    let s = run(&p, &options(dir.path())).unwrap();
    assert_eq!(
        (s.ran, s.resumed, s.missing, s.reconciled_rows),
        (0, 12, 0, 0)
    );
}

/// An interrupted run reports its missing cells (the CLI turns them into a non-zero exit).
#[test]
fn an_incomplete_run_reports_missing_cells() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path());
    o.max_cells = Some(5);
    let s = run(&small(), &o).unwrap();
    assert_eq!((s.ran, s.missing), (5, 7));
}
