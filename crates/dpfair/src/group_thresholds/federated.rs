//! The group-thresholds classifier over sites that keep their rows (FDP-Fair's place for more
//! than two groups or another constraint; docs/fairness-constraints.md, "Over sites"), in the
//! shape of FDP-Fair's two rounds (Xue & Yu, Algorithm 1):
//!
//! 1. every site splits its rows into a training and a calibration half by a public seeded
//!    permutation, and fits step 1's `w̃^s` by DP-SGD on its training half at its whole
//!    `(ε, δ)`;
//! 2. the server averages the weights, each site weighted by its training rows (public), and
//!    broadcasts `w̃`;
//! 3. every site releases step 2's group × label × score-bin table of its calibration half under
//!    `w̃`, by the Laplace mechanism at its whole ε;
//! 4. the server adds the tables and chooses each group's rule from the sum (step 3).
//!
//! **Privacy.** Each site's two releases touch the disjoint halves of a data-independent split,
//! and the sites hold disjoint rows: one partition whose parts are (site, half), so the
//! federation's ledger totals every site's `(ε, δ)` (federated DP, as FDP-Fair's). The average
//! and the sum are post-processing.

use super::table::ReleasedCounts;
use super::{Config, Model, check, choose_from, fit_score, release_table};
use crate::error::{Error, Result};
use crate::plugin::split::random_split;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise, Partition};

/// The classifier over `sites`, site `s` drawing its split and noise from `noises[s]`; every
/// release charged to `ledger` in its (site, half) part (module docs).
///
/// ```
/// use dpfair::group_thresholds::{Config, federated::fit};
/// use dpfair_privacy::{Budget, Ledger, Noise, Relation};
/// let sites: Vec<_> = (0..3).map(|s| dpfair::estimators::example_data(1_500, 3, s)).collect();
/// let mut noises: Vec<Noise> = (0..3).map(Noise::seeded).collect();
/// let mut ledger = Ledger::for_relation(Budget::approx(1.0, 1e-6)?, Relation::Substitution);
/// let model = fit(&Config::default(), &sites, &mut noises, &mut ledger)?;
/// assert_eq!(ledger.entries().len(), 6); // each site: DP-SGD and its table
/// assert!(ledger.total()?.epsilon <= 1.0 + 1e-9);
/// assert_eq!(model.choice.rules.len(), 2); // one rule per group
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit(
    config: &Config,
    sites: &[Dataset],
    noises: &mut [Noise],
    ledger: &mut Ledger,
) -> Result<Model> {
    check(config)?;
    if sites.is_empty() || sites.len() != noises.len() {
        return Err(Error::invalid(
            "sites",
            format!("{} sites and {} noise sources", sites.len(), noises.len()),
        ));
    }
    let names: Vec<String> = (1..=sites.len())
        .flat_map(|s| {
            [
                format!("site{s}: training half"),
                format!("site{s}: calibration half"),
            ]
        })
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let parts = Partition::new(
        "sites × training / calibration halves (disjoint data)",
        &names,
        0,
    );
    // Round 1: each site's step 1 on its training half.
    let mut fitted = Vec::with_capacity(sites.len());
    let mut calibration = Vec::with_capacity(sites.len());
    for (s, (site, noise)) in sites.iter().zip(noises.iter_mut()).enumerate() {
        let n = site.n_rows();
        let (train, cal) = random_split(n, n.div_ceil(2), noise.public_u64());
        let train = site.select(&train);
        let mut model = None;
        ledger.in_part(&parts, 2 * s, |l| {
            model = Some(fit_score(config, &train, config.epsilon, l, noise));
            Ok(())
        })?;
        fitted.push((train.n_rows() as f64, model.expect("the closure ran")?));
        calibration.push(site.select(&cal));
    }
    let mut model = average(fitted)?;
    // Round 2: each site's table of its calibration half under the broadcast weights.
    let mut tables = Vec::with_capacity(sites.len());
    for (s, (cal, noise)) in calibration.iter().zip(noises.iter_mut()).enumerate() {
        let mut table = None;
        ledger.in_part(&parts, 2 * s + 1, |l| {
            table = Some(release_table(&model, cal, config.epsilon, l, noise));
            Ok(())
        })?;
        tables.push(table.expect("the closure ran")?);
    }
    choose_from(&mut model, ReleasedCounts::sum(&tables)?);
    Ok(model)
}

/// The sites' step-1 models averaged with weights proportional to their training rows; the
/// noise standard deviation of the average from theirs (independent noises).
fn average(fitted: Vec<(f64, Model)>) -> Result<Model> {
    let total: f64 = fitted.iter().map(|(n, _)| n).sum();
    let mut iter = fitted.into_iter();
    let Some((n0, mut model)) = iter.next() else {
        return Err(Error::invalid("sites", "no sites"));
    };
    let share = n0 / total;
    model.weights.iter_mut().for_each(|w| *w *= share);
    let mut variance = (share * model.noise_sd).powi(2);
    for (n, site) in iter {
        let share = n / total;
        if site.weights.len() != model.weights.len() {
            return Err(Error::InvalidData(format!(
                "a site's scorer has {} weights, the first site's {}",
                site.weights.len(),
                model.weights.len()
            )));
        }
        model
            .weights
            .iter_mut()
            .zip(&site.weights)
            .for_each(|(w, v)| *w += share * v);
        variance += (share * site.noise_sd).powi(2);
    }
    model.noise_sd = variance.sqrt();
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group_thresholds::Constraint;
    use dpfair_privacy::{Budget, Relation};

    /// Every site's two releases sit in its own two parts, so the federation's total is one
    /// site's (ε, δ) however many sites there are; the rules meet the released gap.
    #[test]
    fn each_site_spends_its_budget_once_on_each_half() {
        for count in [1, 4] {
            let sites: Vec<Dataset> = (0..count)
                .map(|s| crate::estimators::example_data(1_200, 3, 10 + s as u64))
                .collect();
            let mut noises: Vec<Noise> = (0..count).map(|s| Noise::seeded(20 + s as u64)).collect();
            let config = Config {
                constraint: Constraint::EqualOpportunity,
                epsilon: 2.0,
                ..Config::default()
            };
            let mut ledger =
                Ledger::for_relation(Budget::approx(2.0, 1e-6).unwrap(), Relation::Substitution);
            let model = fit(&config, &sites, &mut noises, &mut ledger).unwrap();
            assert_eq!(ledger.entries().len(), 2 * count);
            let total = ledger.total().unwrap();
            assert!(
                total.epsilon <= 2.0 + 1e-9 && total.epsilon > 1.9,
                "{total:?}"
            );
            assert!(model.choice.released_gap <= config.level + 1e-9);
        }
    }

    /// Sites of different sizes weigh by their training rows.
    #[test]
    fn the_average_weighs_sites_by_their_training_rows() {
        let site = |w: f64, sd: f64| Model {
            weights: vec![w, 2.0 * w],
            groups: vec!["a".into(), "b".into()],
            bins: 10,
            constraint: Constraint::DemographicParity,
            level: 0.1,
            attribute_epsilon: None,
            choice: crate::group_thresholds::Choice {
                rules: Vec::new(),
                band: [0.0; 2],
                released_accuracy: 0.0,
                released_gap: 0.0,
            },
            noise_sd: sd,
        };
        let m = average(vec![(100.0, site(1.0, 0.3)), (300.0, site(5.0, 0.1))]).unwrap();
        assert_eq!(m.weights, vec![4.0, 8.0]);
        let sd = ((0.25f64 * 0.3).powi(2) + (0.75f64 * 0.1).powi(2)).sqrt();
        assert!((m.noise_sd - sd).abs() < 1e-12);
        assert!(
            average(vec![
                (1.0, site(1.0, 0.0)),
                (
                    1.0,
                    Model {
                        weights: vec![1.0],
                        ..site(1.0, 0.0)
                    }
                )
            ])
            .is_err()
        );
    }
}
