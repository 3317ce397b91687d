//! Data-independent failure behaviour at the library level (docs/privacy.md, "Failures and
//! messages"): on neighbouring data sets (same n, one row substituted) that make a group or a
//! class empty, or a group's labels one class, each method's `fit` succeeds on both, and the
//! ledger it writes into the model has the same entries (mechanism, relation, sensitivity,
//! scale, cost): the ledger is part of what a fit releases.
//!
//! The command-line test of the same name covers every command end to end (exit status and
//! message classes); this file adds the cases the command line cannot state (an empty class
//! with K fixed, DP-FERMI's strict mode) and the ledger comparison. Each case runs on
//! [`SEEDS`] seeds, so the random splits place the odd row in each part.

use dpfair::decoupled::{self, Accounting, BaseModel};
use dpfair::dp_fermi::{self as fermi, FermiConfig};
use dpfair::dp2dp;
use dpfair_data::synthetic::{Design, TwoGroupLogisticDesign};
use dpfair_data::{Dataset, Target};
use dpfair_privacy::{Budget, Entry, Ledger, Noise};

const SEEDS: u64 = 4;

/// 400 rows of the two-group design.
fn data() -> Dataset {
    TwoGroupLogisticDesign::default().generate(400, 11).unwrap()
}

/// `d` with every row in group 0, except row 0 in group 1 when `odd`.
fn empty_group(d: &Dataset, odd: bool) -> Dataset {
    let mut d = d.clone();
    let g = d.groups.as_mut().unwrap();
    for (i, c) in g.codes.iter_mut().enumerate() {
        *c = u32::from(odd && i == 0);
    }
    d
}

/// `d` with every label of group 1 set to 0, except the first group-1 row set to 1 when `odd`.
fn one_class_group(d: &Dataset, odd: bool) -> Dataset {
    let mut d = d.clone();
    let codes = d.groups.as_ref().unwrap().codes.clone();
    let first = codes.iter().position(|&c| c == 1).unwrap();
    if let Some(Target::Binary(y)) = &mut d.target {
        for (i, v) in y.iter_mut().enumerate() {
            if codes[i] == 1 {
                *v = u8::from(odd && i == first);
            }
        }
    }
    d
}

/// What a ledger entry says that must not depend on the data: label, mechanism, relation, cost
/// (to 9 significant digits: a cost recomputed from a released scale differs in the last bits)
/// and composition. Sensitivity, scale and note may follow a released value, e.g. DP2DP's
/// contribution bound √2/min π̄ or DP-FERMI's W-step bound from p̂.
fn shape(e: &Entry) -> String {
    let cost = format!("{:?}", e.cost);
    let cost: String = cost
        .split_inclusive([' ', ',', '}'])
        .map(|t| {
            let (num, rest) = t.split_at(t.trim_end_matches([' ', ',', '}']).len());
            match num.parse::<f64>() {
                Ok(v) => format!("{v:.8e}{rest}"),
                Err(_) => t.to_string(),
            }
        })
        .collect();
    format!(
        "{} | {} | {:?} | {cost} | {:?}",
        e.label, e.mechanism, e.relation, e.composition
    )
}

/// Fits `fit` on both neighbours of each pair with every seed; all must succeed with ledger
/// entries of equal [`shape`].
fn same_ledgers(
    what: &str,
    pairs: &[[Dataset; 2]],
    fit: impl Fn(&Dataset, &mut Ledger, &mut Noise) -> Result<(), String>,
) {
    for (p, pair) in pairs.iter().enumerate() {
        for seed in 0..SEEDS {
            let entries: Vec<Vec<String>> = pair
                .iter()
                .map(|d| {
                    let mut ledger = Ledger::unlimited();
                    fit(d, &mut ledger, &mut Noise::seeded(seed))
                        .unwrap_or_else(|e| panic!("{what}, pair {p}, seed {seed}: {e}"));
                    ledger.entries().iter().map(shape).collect()
                })
                .collect();
            assert_eq!(
                entries[0], entries[1],
                "{what}, pair {p}, seed {seed}: the ledgers differ"
            );
        }
    }
}

fn pairs(d: &Dataset) -> Vec<[Dataset; 2]> {
    vec![
        [empty_group(d, false), empty_group(d, true)],
        [one_class_group(d, false), one_class_group(d, true)],
    ]
}

#[test]
fn dp2dp_runs_on_an_empty_group_and_an_empty_class() {
    let d = data();
    // K = 3 declared, class 2 absent or on row 0 only.
    let three = |odd: bool| {
        let mut d = d.clone();
        let Some(Target::Binary(y)) = &d.target else {
            unreachable!()
        };
        let mut labels: Vec<u32> = y.iter().map(|&v| u32::from(v)).collect();
        if odd {
            labels[0] = 2;
        }
        d.target = Some(Target::Multiclass { k: 3, labels });
        d
    };
    let mut all = pairs(&d);
    all.push([three(false), three(true)]);
    let cfg = dp2dp::Config {
        epsilon: 1.0,
        iterations: 20,
        ..dp2dp::Config::default()
    };
    same_ledgers("dp2dp", &all, |d, l, n| {
        dp2dp::fit(&cfg, d, l, n)
            .map(drop)
            .map_err(|e| e.to_string())
    });
}

#[test]
fn decoupled_runs_on_an_empty_group_and_one_class_labels() {
    let d = data();
    // One-class labels over the whole data set: all 1 against one 0.
    let all_ones = |odd: bool| {
        let mut d = d.clone();
        d.target = Some(Target::Binary(
            (0..d.n_rows())
                .map(|i| u8::from(!(odd && i == 0)))
                .collect(),
        ));
        d
    };
    let mut all = pairs(&d);
    all.push([all_ones(false), all_ones(true)]);
    let cfg = decoupled::Config {
        epsilon: 3.0,
        training: decoupled::Training {
            epochs: Some(3),
            ..Default::default()
        },
        ..decoupled::Config::default()
    };
    same_ledgers("decoupled", &all, |d, l, n| {
        decoupled::fit(&cfg, d, l, n)
            .map(drop)
            .map_err(|e| e.to_string())
    });
}

/// The streamed fit (training rows capped at 150 of 400 and collected from batches of 64 rows,
/// D counted batch by batch): the same ledger on neighbours, and the model of the fit on the
/// rows held whole with the same seeds.
#[test]
fn decoupled_streamed_runs_on_an_empty_group_and_one_class_labels() {
    let d = data();
    let cfg = decoupled::Config {
        epsilon: 3.0,
        base_rows: 150,
        training: decoupled::Training {
            epochs: Some(3),
            ..Default::default()
        },
        ..decoupled::Config::default()
    };
    let batches = |d: &Dataset| -> Vec<Dataset> {
        (0..d.n_rows())
            .step_by(64)
            .map(|s| d.select(&(s..(s + 64).min(d.n_rows())).collect::<Vec<_>>()))
            .collect()
    };
    let streamed = |d: &Dataset, l: &mut Ledger, n: &mut Noise| {
        let seed = n.public_u64();
        let plan = decoupled::SplitPlan::new(d.n_rows(), cfg.post_fraction, cfg.base_rows, seed)?;
        let parts = batches(d);
        let feed = |sink: &mut dyn FnMut(&Dataset) -> decoupled::Result<()>| {
            parts.iter().try_for_each(sink)
        };
        let training = decoupled::collect_training(&plan, feed)?;
        decoupled::fit_parts(&cfg, &plan, &training, None, l, n, feed)
    };
    same_ledgers("decoupled streamed", &pairs(&d), |d, l, n| {
        streamed(d, l, n).map(drop).map_err(|e| e.to_string())
    });
    for seed in 0..2 {
        let fit = |f: &dyn Fn(&mut Ledger, &mut Noise) -> decoupled::Result<decoupled::Model>| {
            let mut ledger = Ledger::new(Budget::approx(3.0, 1e-5).unwrap());
            f(&mut ledger, &mut Noise::seeded(seed)).unwrap()
        };
        let whole = fit(&|l, n| decoupled::fit(&cfg, &d, l, n));
        assert_eq!(fit(&|l, n| streamed(&d, l, n)), whole);
        assert_eq!((whole.runs[0].rows, whole.post_rows), (150, 250));
    }
}

#[test]
fn decoupled_per_group_base_is_refused_in_strict_mode_before_reading_data() {
    // The per-group DP-SGD runs would size their schedule by each group's private row count, so
    // strict accounting refuses them whatever the data (docs/privacy.md).
    let d = data();
    let cfg = decoupled::Config {
        epsilon: 3.0,
        base: BaseModel::Decoupled,
        ..decoupled::Config::default()
    };
    for pair in [
        [empty_group(&d, false), empty_group(&d, true)],
        [one_class_group(&d, false), one_class_group(&d, true)],
    ] {
        for data in &pair {
            let mut ledger = Ledger::new(Budget::approx(3.0, 1e-5).unwrap());
            let err = decoupled::fit(&cfg, data, &mut ledger, &mut Noise::seeded(1)).unwrap_err();
            assert!(
                err.to_string().contains("strict accounting refuses it"),
                "{err}"
            );
            assert!(ledger.entries().is_empty());
        }
    }
}

#[test]
fn strict_dp_fermi_runs_on_an_empty_group() {
    let d = data();
    let cfg = FermiConfig {
        epsilon: 3.0,
        batch: 64,
        epochs: 2,
        accounting: Accounting::Strict,
        ..FermiConfig::default()
    };
    same_ledgers("strict DP-FERMI", &pairs(&d), |d, l, n| {
        let Some(Target::Binary(y)) = &d.target else {
            unreachable!()
        };
        let g = &d.groups.as_ref().unwrap().codes;
        fermi::fit(&cfg, d.features.view(), g, y, l, n)
            .map(drop)
            .map_err(|e| e.to_string())
    });
}

#[test]
fn private_learners_fit_one_class_labels() {
    use dpfair_learn::{
        DpSgdConfig, OutputPerturbationConfig, fit_dp_sgd, fit_output_perturbation,
    };
    let d = data();
    let x = d.features.view();
    for odd in [false, true] {
        let y: Vec<u32> = (0..d.n_rows()).map(|i| u32::from(odd && i == 0)).collect();
        let sgd = DpSgdConfig {
            epochs: 2,
            ..DpSgdConfig::default()
        };
        fit_dp_sgd(
            &sgd,
            x,
            &y,
            2,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(1),
        )
        .unwrap();
        let op = OutputPerturbationConfig {
            epsilon: 5.0,
            ..OutputPerturbationConfig::default()
        };
        fit_output_perturbation(
            &op,
            x,
            &y,
            2,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(1),
        )
        .unwrap();
    }
}

/// The two-group pairs, and a pair with a third group declared that is empty in one data set
/// and holds row 0 only in the other.
fn pairs_with_a_third_group() -> Vec<[Dataset; 2]> {
    let d = data();
    let third = |odd: bool| {
        let mut d = d.clone();
        let g = d.groups.as_mut().unwrap();
        g.names.push("c".into());
        if odd {
            g.codes[0] = 2;
        }
        d
    };
    let mut all = pairs(&d);
    all.push([third(false), third(true)]);
    all
}

/// The group-thresholds classifier on the two-group pairs and on a third group that is empty
/// or holds row 0 only (K = 3 declared in both).
#[test]
fn group_thresholds_run_on_an_empty_group_and_one_class_labels() {
    use dpfair::group_thresholds::{self as gt, Constraint};
    let all = pairs_with_a_third_group();
    for constraint in [
        Constraint::DemographicParity,
        Constraint::EqualOpportunity,
        Constraint::EqualizedOdds,
    ] {
        let cfg = gt::Config {
            constraint,
            epochs: 3,
            ..gt::Config::default()
        };
        same_ledgers("group-thresholds", &all, |d, l, n| {
            gt::fit(&cfg, d, l, n).map(drop).map_err(|e| e.to_string())
        });
    }
}

/// The group-thresholds classifier over three sites (FDP-Fair's place for more groups) on the
/// same pairs, each data set dealt to the sites in contiguous blocks: the ledgers agree.
#[test]
fn federated_group_thresholds_run_on_an_empty_group_and_one_class_labels() {
    use dpfair::fdp_fair::simulate::contiguous_sites;
    use dpfair::group_thresholds::{self as gt, Constraint};
    let all = pairs_with_a_third_group();
    for constraint in [Constraint::DemographicParity, Constraint::EqualizedOdds] {
        let cfg = gt::Config {
            constraint,
            epochs: 3,
            ..gt::Config::default()
        };
        same_ledgers("federated group-thresholds", &all, |d, l, n| {
            let sites = contiguous_sites(d, 3).map_err(|e| e.to_string())?;
            let mut noises: Vec<Noise> = (0..3).map(|_| n.fork()).collect();
            gt::federated::fit(&cfg, &sites, &mut noises, l)
                .map(drop)
                .map_err(|e| e.to_string())
        });
    }
}
