//! Private selection from private candidates: run a private training-and-scoring mechanism Q a
//! random number K of times and release only the best-scoring run (docs/tuning.md).
//!
//! K is geometric with mean m: after each run the search stops with probability γ = 1/m (drawn
//! from the release stream, never reported). Each run of Q picks its candidate uniformly at
//! random, and one bound covers every candidate (Papernot & Steinke 2022, §3.3). Then:
//!
//! * **pure ε** ([`RandomStopping::pure_cost`]): if Q is ε-DP the search is 3ε-DP, Liu & Talwar
//!   (2019), Theorem 3.4 — the η = 1 case of Papernot & Steinke (2022), Corollary 3, whose
//!   truncated negative binomial family gives (2 + η)ε;
//! * **Rényi DP** ([`RandomStopping::rdp_curve`]): if Q is (λ, ε_λ)-RDP at every order λ of a
//!   curve, the search is (λ, ε′_λ)-RDP with
//!   ε′_λ = ε_λ + (1 + η)·min_λ̂ [(1 − 1/λ̂)·ε_λ̂ + log(1/γ)/λ̂] + log(m)/(λ − 1), η = 1
//!   (Papernot & Steinke 2022, Theorem 2, minimised over the curve's orders λ̂), made monotone in
//!   λ afterwards (RDP is non-decreasing in the order).
//!
//! What may be released: the best run's output (its model and its noisy score). K, the
//! candidates that were drawn and the other runs' scores are not covered by the theorems
//! (knowing K undoes the amplification) and are kept secret.
//!
//! ```
//! use dpfair_privacy::selection::RandomStopping;
//! use dpfair_privacy::{Budget, Ledger, Noise};
//! let search = RandomStopping::new(5)?;
//! let mut noise = Noise::seeded(3);
//! let runs = search.draw_runs(&mut noise)?;
//! assert!(runs >= 1);
//! // Three times the cost of one run when the runs are pure ε-DP.
//! let mut ledger = Ledger::new(Budget::pure(1.5)?);
//! ledger.charge(search.entry("tuned model", search.pure_cost(0.5)?, 5))?;
//! assert!((ledger.total()?.epsilon - 1.5).abs() < 1e-12);
//! # Ok::<(), dpfair_privacy::PrivacyError>(())
//! ```

use crate::entropy::Noise;
use crate::error::{Result, invalid};
use crate::ledger::{Composition, Cost, Entry, Relation};
use rand::RngExt;

/// The largest mean number of runs accepted: far beyond any useful search, and it keeps
/// log(m) and the run count small.
pub const MAX_MEAN_RUNS: u64 = 10_000;

/// The geometric random stopping of Liu & Talwar (2019, Algorithm 2): run, then stop with
/// probability 1/m.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RandomStopping {
    mean_runs: u64,
}

impl RandomStopping {
    /// A search of mean `mean_runs` runs (at least 2; a single run is no search).
    pub fn new(mean_runs: u64) -> Result<Self> {
        if !(2..=MAX_MEAN_RUNS).contains(&mean_runs) {
            return Err(invalid(
                "mean_runs",
                format!("must be in 2..={MAX_MEAN_RUNS}, got {mean_runs}"),
            ));
        }
        Ok(RandomStopping { mean_runs })
    }

    /// The mean number of runs m.
    pub fn mean_runs(&self) -> u64 {
        self.mean_runs
    }

    /// The number of runs K ≥ 1, P(K = k) = γ(1 − γ)^(k−1) with γ = 1/m exactly: one uniform
    /// draw from {0, …, m − 1} per run, from the release stream (K must stay secret).
    pub fn draw_runs(&self, noise: &mut Noise) -> Result<usize> {
        let mut runs = 1usize;
        while noise.random_range(0..self.mean_runs) != 0 {
            runs += 1;
        }
        Ok(runs)
    }

    /// The search's cost when every run is `epsilon`-DP: 3ε (module docs).
    pub fn pure_cost(&self, epsilon: f64) -> Result<Cost> {
        if epsilon.is_nan() || epsilon <= 0.0 || epsilon.is_infinite() {
            return Err(invalid(
                "epsilon",
                format!("a run's ε must be finite and > 0, got {epsilon}"),
            ));
        }
        Ok(Cost::Pure {
            epsilon: 3.0 * epsilon,
        })
    }

    /// The search's RDP curve over `orders` (each > 1, increasing) when one run's curve is
    /// `run` (Papernot & Steinke 2022, Theorem 2 with η = 1; module docs).
    pub fn rdp_curve(&self, orders: &[f64], run: &[f64]) -> Result<Vec<f64>> {
        if orders.len() != run.len() || orders.is_empty() {
            return Err(invalid(
                "orders",
                format!("{} orders for {} curve values", orders.len(), run.len()),
            ));
        }
        if orders.iter().any(|a| a.is_nan() || *a <= 1.0) || orders.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(invalid("orders", "orders must be > 1 and increasing"));
        }
        if run.iter().any(|e| e.is_nan() || *e < 0.0) {
            return Err(invalid("run", "RDP values must be ≥ 0"));
        }
        let m = self.mean_runs as f64;
        let log_inv_gamma = m.ln(); // γ = 1/m
        let eta = 1.0;
        let constant = (1.0 + eta)
            * orders
                .iter()
                .zip(run)
                .map(|(l, e)| (1.0 - 1.0 / l) * e + log_inv_gamma / l)
                .fold(f64::INFINITY, f64::min);
        let mut curve: Vec<f64> = orders
            .iter()
            .zip(run)
            .map(|(l, e)| e + constant + m.ln() / (l - 1.0))
            .collect();
        // Monotone in the order: a lower order's value is at most any higher order's.
        for i in (0..curve.len().saturating_sub(1)).rev() {
            curve[i] = curve[i].min(curve[i + 1]);
        }
        Ok(curve)
    }

    /// The two orders a search's (ε, δ) rests on, for one run's curve `run` over `orders`:
    /// λ̂, where the lift's constant (module docs) takes its minimum, and λ, the order at which
    /// the lifted curve converts to its smallest ε at `delta`. A bound on one run at these two
    /// orders alone gives the search the same ε ([`RandomStopping::rdp_curve`] on them).
    pub fn binding_orders(&self, orders: &[f64], run: &[f64], delta: f64) -> Result<[f64; 2]> {
        let lifted = self.rdp_curve(orders, run)?;
        let m = self.mean_runs as f64;
        let hat = orders
            .iter()
            .zip(run)
            .map(|(l, e)| ((1.0 - 1.0 / l) * e + m.ln() / l, *l))
            .fold(
                (f64::INFINITY, f64::NAN),
                |a, b| if b.0 < a.0 { b } else { a },
            )
            .1;
        let (_, at) = crate::accounting::rdp::rdp_to_dp_with_order(orders, &lifted, delta);
        if hat.is_nan() || at.is_nan() {
            return Err(invalid("run", "no finite order in the run's curve"));
        }
        Ok([hat, at])
    }

    /// The search's cost as an RDP cost over `orders` from one run's curve.
    pub fn rdp_cost(&self, orders: &[f64], run: &[f64]) -> Result<Cost> {
        Ok(Cost::Rdp {
            orders: orders.to_vec(),
            epsilons: self.rdp_curve(orders, run)?,
        })
    }

    /// The ledger entry of a search over `candidates` candidates with cost `cost` (from
    /// [`RandomStopping::pure_cost`] or [`RandomStopping::rdp_cost`]), certified for
    /// replace-one neighbours. The note names the theorem; it never holds K.
    pub fn entry(&self, label: &str, cost: Cost, candidates: usize) -> Entry {
        let theorem = match cost {
            Cost::Pure { .. } => "3 × one run's ε: Liu & Talwar 2019, Thm 3.4",
            _ => "RDP of one run lifted by Papernot & Steinke 2022, Thm 2 (η = 1)",
        };
        Entry {
            label: label.to_string(),
            mechanism: "private selection (random stopping)".into(),
            relation: Relation::Substitution,
            sensitivity: 1.0,
            norm: "none".into(),
            scale: 1.0 / self.mean_runs as f64,
            cost,
            composition: Composition::Sequential,
            note: Some(format!(
                "best of a geometric number of runs (mean {}), each a candidate drawn uniformly \
                 from {candidates}; {theorem}; scale = stopping probability",
                self.mean_runs
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::{default_orders, rdp_to_dp};
    use crate::ledger::{Budget, Ledger};

    #[test]
    fn the_number_of_runs_is_geometric_with_the_stated_mean() {
        // Mean and P(K = 1) over 20,000 draws: the standard errors are √(m(m−1)/N) ≈ 0.032 and
        // √(γ(1−γ)/N) ≈ 0.0028; the tolerances are five of them.
        let search = RandomStopping::new(5).unwrap();
        let mut noise = Noise::seeded(11);
        let draws: Vec<usize> = (0..20_000)
            .map(|_| search.draw_runs(&mut noise).unwrap())
            .collect();
        let mean = draws.iter().sum::<usize>() as f64 / draws.len() as f64;
        let ones = draws.iter().filter(|k| **k == 1).count() as f64 / draws.len() as f64;
        assert!((mean - 5.0).abs() < 0.16, "mean {mean}");
        assert!((ones - 0.2).abs() < 0.014, "P(K = 1) = {ones}");
    }

    #[test]
    fn pure_runs_cost_three_times_and_the_ledger_total_says_so() {
        let search = RandomStopping::new(10).unwrap();
        let mut ledger = Ledger::new(Budget::pure(3.0).unwrap());
        ledger
            .charge(search.entry("search", search.pure_cost(1.0).unwrap(), 4))
            .unwrap();
        assert_eq!(ledger.total().unwrap().epsilon, 3.0);
        assert!(search.pure_cost(f64::INFINITY).is_err());
    }

    /// Theorem 2 by hand at one point: a pure ε-DP run's curve min(ε, λε²/2) and m = 10; the
    /// formula's limit as the orders grow is 3ε (Corollary 3), which the converted total must
    /// approach from the RDP side without going below the run's own cost.
    #[test]
    fn the_rdp_lift_matches_theorem_2_by_hand() {
        let search = RandomStopping::new(10).unwrap();
        let orders = [2.0, 8.0, 32.0];
        let eps: f64 = 0.5;
        let run: Vec<f64> = orders
            .iter()
            .map(|l| eps.min(l * eps * eps / 2.0))
            .collect();
        let curve = search.rdp_curve(&orders, &run).unwrap();
        let c = 2.0
            * orders
                .iter()
                .zip(&run)
                .map(|(l, e)| (1.0 - 1.0 / l) * e + 10f64.ln() / l)
                .fold(f64::INFINITY, f64::min);
        let at_32 = run[2] + c + 10f64.ln() / 31.0;
        assert!((curve[2] - at_32).abs() < 1e-12);
        assert!(curve.windows(2).all(|w| w[0] <= w[1]));
        let orders = default_orders();
        let run: Vec<f64> = orders
            .iter()
            .map(|l| eps.min(l * eps * eps / 2.0))
            .collect();
        let total = rdp_to_dp(&orders, &search.rdp_curve(&orders, &run).unwrap(), 1e-6).unwrap();
        assert!(total > eps && total < 3.0 * eps + 1.0, "{total}");
    }

    /// A run's curve for the lift: a Laplace release keeps its own curve, an analytic Gaussian
    /// is restated as zCDP at its recorded σ, and an (ε, δ) entry of another kind is refused.
    #[test]
    fn a_run_ledger_yields_its_rdp_curve_or_names_the_entry_without_one() {
        use crate::mechanisms::{Gaussian, Laplace};
        let orders = [2.0, 4.0];
        let mut ledger = Ledger::unlimited();
        let mut noise = Noise::seeded(1);
        Laplace::from_epsilon(1.0, 0.5)
            .unwrap()
            .release(&mut ledger, &mut noise, "count", 3.0)
            .unwrap();
        let g = Gaussian::analytic(1.0, 1.0, 1e-6).unwrap();
        g.release(&mut ledger, &mut noise, "mean", 0.5).unwrap();
        let e = &ledger.entries()[1];
        let rho = e.sensitivity * e.sensitivity / (2.0 * e.scale * e.scale);
        let curve = ledger.rdp_curve(&orders).unwrap();
        for (l, c) in orders.iter().zip(&curve) {
            let laplace = 0.5f64.min(l * 0.25 / 2.0);
            assert!((c - (laplace + l * rho)).abs() < 1e-9, "{c} at {l}");
        }
        ledger
            .charge(Entry {
                cost: Cost::Approx {
                    epsilon: 0.1,
                    delta: 1e-9,
                },
                mechanism: "other".into(),
                ..ledger.entries()[0].clone()
            })
            .unwrap();
        let err = ledger.rdp_curve(&orders).unwrap_err().to_string();
        assert!(err.contains("count") && err.contains("Rényi"), "{err}");
    }

    /// A bound on one run at the two binding orders alone gives the search the same ε as the
    /// whole curve.
    #[test]
    fn the_binding_orders_alone_give_the_same_epsilon() {
        let search = RandomStopping::new(9).unwrap();
        let orders = default_orders();
        let run: Vec<f64> = orders.iter().map(|l| 0.3f64.min(l * 0.045)).collect();
        let delta = 1e-6;
        let whole = rdp_to_dp(&orders, &search.rdp_curve(&orders, &run).unwrap(), delta).unwrap();
        let binding = search.binding_orders(&orders, &run, delta).unwrap();
        let (at, part): (Vec<f64>, Vec<f64>) = orders
            .iter()
            .zip(&run)
            .filter(|(a, _)| binding.contains(a))
            .map(|(a, r)| (*a, *r))
            .unzip();
        let two = rdp_to_dp(&at, &search.rdp_curve(&at, &part).unwrap(), delta).unwrap();
        assert!(two <= whole * (1.0 + 1e-12), "{two} vs {whole}");
        assert!(two >= whole * (1.0 - 1e-12), "{two} vs {whole}");
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(RandomStopping::new(1).is_err());
        assert!(RandomStopping::new(MAX_MEAN_RUNS + 1).is_err());
        let search = RandomStopping::new(3).unwrap();
        assert!(search.rdp_curve(&[2.0], &[0.1, 0.2]).is_err());
        assert!(search.rdp_curve(&[1.0], &[0.1]).is_err());
        assert!(search.rdp_curve(&[3.0, 2.0], &[0.1, 0.2]).is_err());
    }
}
