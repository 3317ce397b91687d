//! The paper's **oracle selection** (`docs/deviations.md#lpct-hyperparameters-chosen-on-test-accuracy`): "for each model, we report the best result over its
//! parameter grids, with the best result determined based on the average result of [the]
//! replications" (Section 6.1; Section 7.2 likewise over 20 splits).
//!
//! A setting's cells are its replications, but the choice of configuration depends on all of
//! them. So the first cell of a setting to run scores **every** replication × configuration once
//! (memoised per process, sequentially: no rayon inside, so a worker never re-enters the memo it
//! is filling), picks the configuration with the best mean accuracy, and every cell then returns
//! its own replication's accuracy at that configuration. This is exactly the paper's protocol,
//! including its optimism: the selection sees the test sets it is scored on.

use crate::error::{ExpError, Result};
use crate::{Cell, Outcome};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// One configuration's test accuracy in one replication, and the values that describe it
/// (`("p", 3.0)`, `("lambda", 100.0)`, …), reported as metrics of the selected configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    pub config: Vec<(&'static str, f64)>,
    pub accuracy: f64,
}

/// Every configuration of one replication, in a fixed order, and the ε one fit spends (`None`:
/// non-private).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RepScores {
    pub scores: Vec<Scored>,
    pub spent: Option<f64>,
}

type Table = std::result::Result<Arc<Vec<RepScores>>, String>;
type Slot = Arc<OnceLock<Table>>;

static MEMO: Mutex<Option<HashMap<String, Slot>>> = Mutex::new(None);

fn slot(key: String) -> Slot {
    MEMO.lock()
        .expect("memo lock")
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_default()
        .clone()
}

/// The index of the configuration with the best mean accuracy over the replications (ties: the
/// first in grid order).
pub fn best_config(table: &[RepScores]) -> Result<usize> {
    let m = table.first().map_or(0, |r| r.scores.len());
    if m == 0 || table.iter().any(|r| r.scores.len() != m) {
        return Err(ExpError::Method(
            "oracle selection: replications scored different grids".into(),
        ));
    }
    let mean = |c: usize| table.iter().map(|r| r.scores[c].accuracy).sum::<f64>();
    Ok((0..m).fold(0, |best, c| if mean(c) > mean(best) { c } else { best }))
}

/// The cell's outcome under oracle selection over `reps` replications; `score(seed)` scores one
/// replication (seeds `cell.seed − cell.repetition + r`, r = 0..reps, as the grid assigns them).
pub fn select(
    cell: &Cell,
    reps: usize,
    score: impl Fn(u64) -> Result<RepScores>,
) -> Result<Outcome> {
    if cell.repetition >= reps {
        return Err(ExpError::Method(format!(
            "repetition {} outside the {reps} replications selected over",
            cell.repetition
        )));
    }
    let seed0 = cell.seed - cell.repetition as u64;
    let slot = slot(cell.setting.key("lpct"));
    let table = slot.get_or_init(|| {
        (0..reps)
            .map(|r| score(seed0 + r as u64))
            .collect::<Result<Vec<_>>>()
            .map(Arc::new)
            .map_err(|e| e.to_string())
    });
    let table = table.as_ref().map_err(|e| ExpError::Method(e.clone()))?;
    let best = best_config(table)?;
    let row = &table[cell.repetition];
    let chosen = &row.scores[best];
    let mut out = Outcome::new().metric("accuracy", chosen.accuracy);
    for (name, value) in &chosen.config {
        out = out.metric(name, *value);
    }
    Ok(match row.spent {
        Some(e) => out.spent_epsilon(e),
        None => out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(accs: &[f64]) -> RepScores {
        RepScores {
            scores: accs
                .iter()
                .enumerate()
                .map(|(i, &a)| Scored {
                    config: vec![("p", i as f64)],
                    accuracy: a,
                })
                .collect(),
            spent: Some(1.0),
        }
    }

    #[test]
    fn best_mean_wins_even_when_not_best_in_each_replication() {
        // Config 1 is best in replication 0 only; config 2 has the best mean (0.7 vs 0.65).
        let t = vec![rep(&[0.5, 0.9, 0.7]), rep(&[0.5, 0.4, 0.7])];
        assert_eq!(best_config(&t).unwrap(), 2);
        // Ties go to the first configuration.
        assert_eq!(best_config(&[rep(&[0.6, 0.6])]).unwrap(), 0);
        assert!(best_config(&[rep(&[0.6]), rep(&[0.6, 0.7])]).is_err());
    }
}
