//! The private search (`dpfair::tune`, docs/tuning.md): its ledger entries and the theorem
//! behind it, what it releases, and its refusals. The empirical audit of the selection itself is
//! `private_selection_passes_at_three_times_a_run_and_a_fixed_run_count_is_caught` in the
//! privacy crate's `tests/audit.rs`.

use dpfair::data::Loaded;
use dpfair::estimators::{DpLogistic, Lpct, example_data, example_schema};
use dpfair::pipeline::Scaling;
use dpfair::tune::{Chosen, Search, tune};
use dpfair::{Error, Params, Session};
use dpfair_privacy::Cost;

fn loaded(n: usize, seed: u64) -> Loaded {
    Loaded::in_memory(example_data(n, 2, seed), example_schema(2))
}

/// Pure-DP candidates (LPCT's ε-LDP reports): the constant classes' two parallel releases at
/// 15 % of ε, each run at the rest over 3 and one pure entry of 3 × that, so the ledger's total
/// is the budget exactly (Liu & Talwar 2019, Thm 3.4, and basic composition).
#[test]
fn pure_candidates_cost_three_runs_and_the_total_is_the_budget() {
    let public = example_data(600, 2, 11);
    let candidates = [2u32, 4]
        .map(|d| Lpct::params(public.clone()).epsilon(1.5).depth(d).check())
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let mut data = loaded(3_000, 12);
    let mut session = Session::insecure_seeded(1.5, 0.0, 3).unwrap();
    let tuned = tune(
        &candidates,
        &mut data,
        &Scaling::None,
        &mut session,
        &Search::default(),
    )
    .unwrap();
    let entries = session.ledger().entries();
    assert_eq!(entries.len(), 3, "{entries:?}");
    let pure = |e: &dpfair_privacy::Entry, want: f64| matches!(e.cost, Cost::Pure { epsilon } if (epsilon - want).abs() < 1e-12);
    assert!(pure(&entries[0], 1.275), "{entries:?}");
    assert!(
        pure(&entries[1], 0.225) && pure(&entries[2], 0.225),
        "{entries:?}"
    );
    assert!((session.ledger().total().unwrap().epsilon - 1.5).abs() < 1e-12);
    assert!((tuned.selection.run_epsilon - 0.425).abs() < 1e-12);
    assert!(tuned.selection.rule.contains("Liu & Talwar"));
    assert_eq!(tuned.selection.selection_rows, 600);
    assert_eq!(tuned.selection.candidates.len(), 2);
    // The chosen run predicts every row; the file records the selection.
    let out = tuned.predict(&data.dataset, session.noise()).unwrap();
    assert_eq!(out.classes().unwrap().len(), 3_000);
    let file = tuned.to_model_file(example_schema(2)).unwrap();
    assert_eq!(file.selection.as_ref(), Some(&tuned.selection));
    assert_eq!(file.ledger.entries().len(), 3);
}

/// (ε, δ) candidates (DP-SGD): one Rényi-DP entry beside the constant classes' share, whose total
/// at the session's δ is at most the budget; the run's ε is below ε/3 (the lift's logarithmic
/// terms and the conversion).
#[test]
fn rdp_candidates_spend_at_most_the_budget() {
    let candidates = [0.1, 1.0]
        .map(|lr| {
            DpLogistic::params()
                .epsilon(2.0)
                .substitution(true)
                .epochs(3)
                .learning_rate(lr)
                .check()
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let mut data = loaded(2_000, 5);
    let mut session = Session::insecure_seeded(2.0, 1e-5, 4).unwrap();
    let tuned = tune(
        &candidates,
        &mut data,
        &Scaling::None,
        &mut session,
        &Search::default(),
    )
    .unwrap();
    let entries = session.ledger().entries();
    assert_eq!(entries.len(), 3);
    assert!(matches!(entries[0].cost, Cost::Rdp { .. }));
    let total = session.ledger().total().unwrap();
    assert!(total.epsilon <= 2.0 && total.epsilon > 1.5, "{total:?}");
    assert!(tuned.selection.run_epsilon < 2.0 / 3.0);
    assert!(tuned.selection.rule.contains("Papernot & Steinke"));
    // What the search releases never holds the number of runs.
    let note = entries[0].note.clone().unwrap();
    assert!(note.contains("mean 6") && note.contains("from 2"), "{note}");
}

/// On labels independent of the features (90 % ones) no model beats always predicting 1 on new
/// rows, and a model is released only when its noisy count beats the constant's by one standard
/// deviation of their difference: at ε = 2 on 400 selection rows the constant won 19 of these
/// 20 seeded searches (a model still wins when the best of a few noisy scores clears that
/// margin). The test asks for at least 15 of 20: were each search to release a model with
/// probability 0.16 (one standard deviation's tail), more than 5 of 20 would happen with
/// probability about 0.2, so the bound is loose enough to survive a change of stream yet fails
/// if the margin is dropped (the constant then won 8 of 20). When the constant wins, the class is
/// the fit rows' most frequent one.
#[test]
fn the_constant_classes_compete_and_win_on_labels_without_signal() {
    let mut constants = 0;
    for seed in 0..20u64 {
        let mut data = loaded(2_000, 40 + seed);
        if let Some(dpfair::data::Target::Binary(y)) = &mut data.dataset.target {
            for (i, v) in y.iter_mut().enumerate() {
                *v = u8::from(i % 10 != 0);
            }
        }
        let candidates = [DpLogistic::params()
            .epsilon(2.0)
            .substitution(true)
            .epochs(2)
            .check()
            .unwrap()];
        let mut session = Session::insecure_seeded(2.0, 1e-5, seed).unwrap();
        let tuned = tune(
            &candidates,
            &mut data,
            &Scaling::None,
            &mut session,
            &Search::default(),
        )
        .unwrap();
        match &tuned.chosen {
            Chosen::Constant { class, .. } => {
                assert_eq!(*class, 1);
                assert!(tuned.selection.chose_constant());
                constants += 1;
            }
            Chosen::Model(_) => assert!(!tuned.selection.chose_constant()),
        }
    }
    assert!(
        constants >= 15,
        "the constant won {constants} of 20 searches"
    );
}

#[test]
fn bad_searches_are_refused_before_any_noise() {
    let est = |eps: f64| {
        DpLogistic::params()
            .epsilon(eps)
            .substitution(true)
            .check()
            .unwrap()
    };
    let run = |candidates: &[DpLogistic], data: &mut Loaded, search: &Search| {
        let mut session = Session::new(1.0, 1e-5).unwrap();
        let out = tune(candidates, data, &Scaling::None, &mut session, search).map(|_| ());
        assert!(session.ledger().entries().is_empty());
        out.unwrap_err()
    };
    let mut data = loaded(1_000, 1);
    let e = run(&[est(1.0), est(0.5)], &mut data, &Search::default());
    assert!(e.to_string().contains("same ε"), "{e}");
    let e = run(&[], &mut data, &Search::default());
    assert!(e.to_string().contains("at least one candidate"), "{e}");
    let tiny = Search {
        selection_fraction: 0.01,
        ..Search::default()
    };
    let e = run(&[est(1.0)], &mut data, &tiny);
    assert!(e.to_string().contains("selection rows"), "{e}");
    let add_remove = DpLogistic::params()
        .epsilon(1.0)
        .substitution(false)
        .check()
        .unwrap();
    let e = run(&[add_remove], &mut data, &Search::default());
    assert!(e.to_string().contains("replace-one"), "{e}");
    let mut real = loaded(1_000, 2);
    real.dataset.target = Some(dpfair::data::Target::Real(vec![0.5; 1_000]));
    assert!(matches!(
        run(&[est(1.0)], &mut real, &Search::default()),
        Error::InvalidData(_)
    ));
}
