//! Where a reproduction's `--quick` time goes: runs every cell of `CELL_COST_PAPER`'s quick grid
//! (default `decoupled`) once, one cell at a time in grid order, and prints the CPU seconds of
//! the process (every thread a cell starts, e.g. DP-SGD's drawing thread) per (method,
//! accounting mode, data set) and in total, the largest cells first.
//! Repetition `CELL_COST_REP` (default 0) of each setting only, so the total is one
//! repetition's share of `reproduce NAME --quick`. Needs the real data:
//! `DPFAIR_DATA_DIR=/path/to/datasets cargo run --release -p dpfair-experiments --example
//! cell_cost`.

use dpfair_experiments::{Paper, Scale, papers};
use std::collections::BTreeMap;
use std::time::Instant;

/// CPU time of this process (user + system, all threads), from `/proc/self/stat` in clock
/// ticks (100 per second on Linux); `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::var("CELL_COST_PAPER").unwrap_or_else(|_| "decoupled".into());
    let rep: usize = std::env::var("CELL_COST_REP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let paper: &dyn Paper = *papers::all()
        .iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| format!("no paper `{name}`"))?;
    // One rayon thread: cells run one at a time, so the process's CPU time between two cells
    // is the cell's.
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()?;
    let cells: Vec<_> = paper
        .grid(Scale::Quick)
        .cells()
        .into_iter()
        .filter(|c| c.repetition == rep)
        .collect();
    let mut by_group: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    let mut largest: Vec<(f64, String)> = Vec::new();
    let wall = Instant::now();
    for cell in &cells {
        let t0 = cpu_seconds().unwrap_or(0.0);
        let w0 = Instant::now();
        let outcome = paper.run(cell);
        let cpu = cpu_seconds().unwrap_or(0.0) - t0;
        let s = &cell.setting;
        let key = format!("{} · {} · {}", s.method, s.accounting, s.dataset);
        let e = by_group.entry(key).or_default();
        e.0 += cpu;
        e.1 += 1;
        largest.push((
            cpu,
            format!(
                "{} · ε = {} · {} ({:.2} s wall{})",
                s.method,
                s.epsilon,
                s.params,
                w0.elapsed().as_secs_f64(),
                if outcome.is_err() { ", failed" } else { "" }
            ),
        ));
    }
    println!("{name} --quick, repetition {rep}: {} cells", cells.len());
    println!("| method · mode · data | cells | CPU s |\n|---|---|---|");
    for (k, (cpu, n)) in &by_group {
        println!("| {k} | {n} | {cpu:.2} |");
    }
    largest.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("\nlargest cells:");
    for (cpu, what) in largest.iter().take(8) {
        println!("  {cpu:.2} s  {what}");
    }
    let total: f64 = by_group.values().map(|v| v.0).sum();
    println!(
        "\ntotal CPU {total:.1} s, wall {:.1} s",
        wall.elapsed().as_secs_f64()
    );
    Ok(())
}
