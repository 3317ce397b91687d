//! The noise of DP-SGD (Abadi et al. 2016, Algorithm 1): each step adds N(0, (z·C)²) to every
//! coordinate of the sum of per-example gradients clipped to ℓ2 norm C, over a Poisson sample
//! with rate q. The whole run (T steps) is charged once, before any noise, as
//! `Cost::SubsampledGaussian { q, z, T, accountant }`.
//!
//! Relation: the accountants of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019;
//! PRV; GDP) are derived for add/remove neighbours, under which the clipped sum has ℓ2
//! sensitivity C. [`SubsampledGaussianRun::start`] records `Relation::AddRemove`, as Opacus and
//! dp_accounting certify; [`SubsampledGaussianRun::start_for`] with `Relation::Substitution`
//! charges the conversion (sensitivity 2C, i.e. the accountant at z/2) and records it.
//!
//! **Floating-point sums** (Casacuberta et al. 2022; `docs/privacy.md#floating-point`). The
//! clipped gradients and their sum are computed in `f64` by the learner, so the released sum is
//! not the exact sum, and two neighbouring data sets' computed sums can differ by more than the
//! exact sensitivity. [`SubsampledGaussianRun::with_float_sum_allowance`] calibrates the noise
//! to a sensitivity that covers it, for at most M summed terms of dimension d (u = 2^−53,
//! γ_k = k·u/(1 − k·u)):
//! * each computed clipped gradient has norm ≤ C·(1 + γ_{d+8}) (a norm of at most d squares, a
//!   square root, the clip factor and its products: d + 8 roundings is generous);
//! * any summation order (sequential, blocked, across threads) of m ≤ M terms is within
//!   γ_M·Σ‖g̃ᵢ‖ ≤ γ_M·M·C(1 + γ_{d+8}) of the exact sum, in ℓ2 (Higham 2002, §4.2, coordinate by
//!   coordinate);
//! * so neighbouring computed sums differ by at most Δ·(1 + γ_{d+8})·(1 + 2M·γ_M) (C ≤ Δ), the
//!   sensitivity the lattice rounding is then added to and σ = z·(that) is drawn for.
//!
//! The accounting is unchanged (the ratio σ/sensitivity is still z); the noise grows by the
//! factor (1 + γ_{d+8})(1 + 2Mγ_M) ≈ 1 + 2M²u: 2·10⁻⁷ at M = 30,000 rows, 2·10⁻⁴ at 10⁶.

use super::{entry, noisy_steps, positive, round_entry, to_lattice};
use crate::Noise;
use crate::accounting::{self, Accountant};
use crate::error::{Result, invalid};
use crate::ledger::{Cost, Ledger, Relation};
use crate::samplers::lattice::{Lattice, Norm};
use crate::samplers::{TableDiscreteGaussian, discrete_gaussian_fill};
use std::sync::Arc;

/// A DP-SGD run whose privacy cost was charged up front; hands out the noise of each step.
#[derive(Debug)]
pub struct SubsampledGaussianRun {
    label: String,
    noise_multiplier: f64,
    clip: f64,
    steps: u64,
    done: u64,
    /// M, the most terms a released sum adds (0: no floating-point allowance; module doc).
    float_terms: u64,
    /// The noise plan of the last step, reused while the dimension is unchanged.
    plan: Option<Plan>,
}

/// The fewest draws left in a run for which [`Plan`] builds a [`TableDiscreteGaussian`]: its
/// build (≈ 6 ms) costs about as much as 25,000 CKS20 draws (≈ 250 ns each) and it saves
/// ≈ 150 ns per draw, so from ≈ 40,000 draws on it pays; short runs (e.g. DP2DP's two-step
/// dual releases, drawn 40,000 times by its audit) keep [`discrete_gaussian_fill`].
const TABLE_MIN_DRAWS: u64 = 1 << 16;

/// How a sum of `dim` coordinates is released: its lattice, σ in lattice steps, and the exact
/// sampler for that σ, built once per run ([`TableDiscreteGaussian`]; `None` for short runs and
/// for a σ beyond its range, which take [`discrete_gaussian_fill`]).
#[derive(Clone, Debug)]
struct Plan {
    dim: usize,
    lattice: Lattice,
    sigma_steps: u64,
    sampler: Option<Arc<TableDiscreteGaussian>>,
}

impl Plan {
    /// `dim` independent draws of N_ℤ(0, σ²) in lattice steps.
    fn draw(&self, noise: &mut Noise) -> Result<Vec<i128>> {
        let mut draws = vec![0; self.dim];
        match &self.sampler {
            Some(table) => table.fill(noise, &mut draws),
            None => discrete_gaussian_fill(noise, self.sigma_steps, &mut draws)?,
        }
        Ok(draws)
    }
}

impl SubsampledGaussianRun {
    /// Charges `steps` steps of the Poisson-subsampled Gaussian (sampling rate q ∈ (0, 1], noise
    /// multiplier z > 0, clipping norm C > 0), converted by `accountant`, before any noise;
    /// certified for add/remove neighbours (the accountants' own relation).
    pub fn start(
        ledger: &mut Ledger,
        label: &str,
        sampling_rate: f64,
        noise_multiplier: f64,
        clip: f64,
        steps: u64,
        accountant: Accountant,
    ) -> Result<Self> {
        Self::start_for(
            Relation::AddRemove,
            ledger,
            label,
            sampling_rate,
            noise_multiplier,
            clip,
            steps,
            accountant,
        )
    }

    /// [`SubsampledGaussianRun::start`] certified for `relation`. For substitution, replacing one
    /// example moves the clipped sum by up to 2C, so the run is charged as the add/remove
    /// accountant at noise multiplier z/2 (sensitivity doubled,
    /// [`accounting::sgm_effective_noise_multiplier`]); the noise added is still σ = z·C.
    #[allow(clippy::too_many_arguments)]
    pub fn start_for(
        relation: Relation,
        ledger: &mut Ledger,
        label: &str,
        sampling_rate: f64,
        noise_multiplier: f64,
        clip: f64,
        steps: u64,
        accountant: Accountant,
    ) -> Result<Self> {
        if !(sampling_rate > 0.0 && sampling_rate <= 1.0) {
            return Err(invalid(
                "sampling_rate",
                format!("must be in (0, 1], got {sampling_rate}"),
            ));
        }
        positive("noise_multiplier", noise_multiplier)?;
        positive("clip", clip)?;
        if steps == 0 {
            return Err(invalid("steps", "must be ≥ 1"));
        }
        let charged = accounting::sgm_effective_noise_multiplier(noise_multiplier, relation);
        let (sensitivity, conversion) = match relation {
            Relation::AddRemove => (clip, "add/remove neighbours (the accountant's relation)"),
            Relation::Substitution => (
                2.0 * clip,
                "substitution: sensitivity 2C, charged as add/remove at z/2",
            ),
        };
        ledger.charge(entry(
            label,
            "dp-sgd (Poisson-subsampled Gaussian)",
            relation,
            sensitivity,
            Norm::L2.name(),
            noise_multiplier,
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier: charged,
                steps,
                accountant,
            },
            Some(format!(
                "{steps} steps; noise σ = z·(C + lattice rounding) per coordinate, z = {noise_multiplier}; {conversion}"
            )),
        ))?;
        Ok(SubsampledGaussianRun {
            label: label.to_string(),
            noise_multiplier,
            clip,
            steps,
            done: 0,
            float_terms: 0,
            plan: None,
        })
    }

    /// Calibrates the noise to the floating-point sum of at most `max_terms` clipped gradients
    /// (module doc: the sensitivity Δ·(1 + γ_{d+8})·(1 + 2M·γ_M)). `max_terms` must be public
    /// and bound every batch (the rows the batches are drawn from). Refused when the bound is
    /// useless (2M·γ_M ≥ ½, M ≳ 4.7·10⁷).
    pub fn with_float_sum_allowance(mut self, max_terms: u64) -> Result<Self> {
        if float_sum_factor(max_terms, 1).is_none() {
            return Err(invalid(
                "max_terms",
                format!("{max_terms} terms: the floating-point sum has no useful error bound"),
            ));
        }
        self.float_terms = max_terms;
        self.plan = None;
        Ok(self)
    }

    /// The clipping norm the noise is calibrated to for a sum of `d` coordinates: C, or
    /// C·(1 + γ_{d+8})·(1 + 2M·γ_M) with the floating-point allowance (module doc).
    pub fn calibrated_clip(&self, d: usize) -> Result<f64> {
        if self.float_terms == 0 {
            return Ok(self.clip);
        }
        let factor = float_sum_factor(self.float_terms, d).ok_or_else(|| {
            invalid(
                "dimension",
                format!("{d} coordinates: no useful rounding bound"),
            )
        })?;
        Ok(crate::accounting::outward::up(
            self.clip * factor,
            self.clip * factor,
            2,
        ))
    }

    /// Steps taken so far.
    pub fn steps_done(&self) -> u64 {
        self.done
    }

    /// Adds the step's noise to `sum` (the sum of clipped gradients), in place: each coordinate
    /// is rounded to a 2^k lattice and gets discrete Gaussian noise with σ = z·(C + rounding),
    /// so the noise multiplier charged at [`SubsampledGaussianRun::start`] holds exactly. Refuses
    /// step T + 1 and non-finite sums (leaving `sum` untouched).
    pub fn add_noise(&mut self, noise: &mut Noise, sum: &mut [f64]) -> Result<()> {
        self.check_step()?;
        let plan = self.plan(sum.len())?;
        // Refuse a non-finite sum before any noise is drawn or the step counted.
        to_lattice(&plan.lattice, sum)?;
        self.draw_step_noise(noise, sum.len())?.add_to(sum)
    }

    /// The noise of the next step for a sum of `dim` coordinates, drawn before the sum exists
    /// (it does not depend on the data), e.g. on another thread while the gradients are
    /// computed. Counts as the step: refuses step T + 1. [`StepNoise::add_to`] releases the sum
    /// with it exactly as [`SubsampledGaussianRun::add_noise`] would (same lattice, same σ, same
    /// random draws in the same order).
    pub fn draw_step_noise(&mut self, noise: &mut Noise, dim: usize) -> Result<StepNoise> {
        self.check_step()?;
        let plan = self.plan(dim)?;
        let draws = plan.draw(noise)?;
        self.done += 1;
        Ok(StepNoise {
            lattice: plan.lattice,
            draws,
        })
    }

    /// Moves `steps` of this run's remaining charged steps to a new handle of the same run (same
    /// label, z, C and lattice), e.g. for a second thread drawing the noise of every other step.
    /// Nothing is charged: between them the two handles draw at most the steps charged at
    /// [`SubsampledGaussianRun::start`]. Refuses more steps than remain.
    pub fn split_off(&mut self, steps: u64) -> Result<SubsampledGaussianRun> {
        let remaining = self.steps - self.done;
        if steps > remaining {
            return Err(invalid(
                "steps",
                format!(
                    "run `{}` has {remaining} charged steps left; {steps} cannot be split off",
                    self.label
                ),
            ));
        }
        self.steps -= steps;
        Ok(SubsampledGaussianRun {
            label: self.label.clone(),
            noise_multiplier: self.noise_multiplier,
            clip: self.clip,
            steps,
            done: 0,
            float_terms: self.float_terms,
            plan: self.plan.clone(),
        })
    }

    fn check_step(&self) -> Result<()> {
        if self.done >= self.steps {
            return Err(invalid(
                "steps",
                format!(
                    "run `{}` was charged for {} steps; step {} is refused",
                    self.label,
                    self.steps,
                    self.done + 1
                ),
            ));
        }
        Ok(())
    }

    /// The lattice, σ in lattice steps and sampler for a sum of `d` coordinates (public
    /// parameters only), reused while d is unchanged.
    fn plan(&mut self, d: usize) -> Result<Plan> {
        if let Some(plan) = &self.plan
            && plan.dim == d
        {
            return Ok(plan.clone());
        }
        let clip = self.calibrated_clip(d)?;
        let sigma0 = self.noise_multiplier * clip;
        let lattice = Lattice::for_release(clip, Norm::L2, d, sigma0)?;
        let sigma = (self.noise_multiplier * lattice.effective_sensitivity(clip)).next_up();
        let s = lattice.steps_ceil(sigma)?;
        let plan = Plan {
            dim: d,
            lattice,
            sigma_steps: s,
            // Short runs, and σ beyond the table's range (2^31 − 2 steps), take CKS20.
            sampler: if (self.steps - self.done).saturating_mul(d as u64) >= TABLE_MIN_DRAWS {
                TableDiscreteGaussian::new(s).ok().map(Arc::new)
            } else {
                None
            },
        };
        self.plan = Some(plan.clone());
        Ok(plan)
    }
}

/// (1 + γ_{d+8})·(1 + 2M·γ_M), rounded up, or `None` when 2M·γ_M ≥ ½ (module doc).
fn float_sum_factor(max_terms: u64, d: usize) -> Option<f64> {
    use crate::accounting::outward::{gamma, up};
    let g_sum = gamma(max_terms)?;
    let g_row = gamma(d as u64 + 8)?;
    let spread = up(
        2.0 * max_terms as f64 * g_sum,
        2.0 * max_terms as f64 * g_sum,
        2,
    );
    (spread < 0.5).then(|| up((1.0 + g_row) * (1.0 + spread), 2.0, 4))
}

/// One step's discrete Gaussian noise, in lattice steps, drawn ahead of its sum by
/// [`SubsampledGaussianRun::draw_step_noise`]. Used once: [`StepNoise::add_to`] consumes it.
#[derive(Debug)]
pub struct StepNoise {
    lattice: Lattice,
    draws: Vec<i128>,
}

impl StepNoise {
    /// Releases `sum` in place: rounds each coordinate to the lattice and adds this step's noise.
    /// Refuses a sum of another dimension and non-finite sums (leaving `sum` untouched).
    pub fn add_to(self, sum: &mut [f64]) -> Result<()> {
        if sum.len() != self.draws.len() {
            return Err(invalid(
                "values",
                format!(
                    "the step noise has {} coordinates, the sum {}",
                    self.draws.len(),
                    sum.len()
                ),
            ));
        }
        // Every coordinate is rounded and noised (in the draws' buffer) before any is written.
        let mut noisy = self.draws;
        for (i, (z, &v)) in noisy.iter_mut().zip(sum.iter()).enumerate() {
            *z = noisy_steps(round_entry(&self.lattice, i, v)?, *z)?;
        }
        for (s, &k) in sum.iter_mut().zip(&noisy) {
            *s = self.lattice.value(k);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Budget;

    /// The floating-point allowance (module doc) is applied: the calibrated clip is
    /// C·(1 + γ_{d+8})(1 + 2Mγ_M) (recomputed here from the formula, not a constant), the noise
    /// σ of a step grows by that factor (up to the lattice rounding, < 10⁻⁶ relative here), and
    /// a run without it keeps C. Useless bounds are refused.
    #[test]
    fn float_sum_allowance_is_applied() {
        let u = f64::EPSILON / 2.0;
        let gamma = |k: f64| k * u / (1.0 - k * u);
        for (m, d) in [(30_000u64, 10usize), (1_000_000, 200), (10_000_000, 3)] {
            let plain = run(10);
            let mut with = run(10).with_float_sum_allowance(m).unwrap();
            assert_eq!(plain.calibrated_clip(d).unwrap(), 0.7);
            let factor = (1.0 + gamma(d as f64 + 8.0)) * (1.0 + 2.0 * m as f64 * gamma(m as f64));
            let c = with.calibrated_clip(d).unwrap();
            assert!(c >= 0.7 * factor, "M {m}: {c} < {}", 0.7 * factor);
            assert!(c <= 0.7 * factor * (1.0 + 1e-12), "M {m}");
            let mut plain = plain;
            let sigma = |r: &mut SubsampledGaussianRun| {
                let p = r.plan(d).unwrap();
                p.sigma_steps as f64 * p.lattice.spacing()
            };
            let ratio = sigma(&mut with) / sigma(&mut plain);
            assert!(
                (ratio / factor - 1.0).abs() < 1e-6,
                "M {m}: σ ratio {ratio} vs {factor}"
            );
        }
        assert!(run(1).with_float_sum_allowance(1 << 40).is_err());
    }

    fn run(steps: u64) -> SubsampledGaussianRun {
        let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-5).unwrap());
        SubsampledGaussianRun::start(&mut ledger, "t", 0.1, 1.1, 0.7, steps, Accountant::Rdp)
            .unwrap()
    }

    #[test]
    fn noise_drawn_ahead_releases_what_add_noise_releases() {
        let sum: Vec<f64> = (0..37).map(|i| (i as f64 - 18.0) * 0.37).collect();
        let mut direct = sum.clone();
        run(1)
            .add_noise(&mut Noise::seeded(8), &mut direct)
            .unwrap();
        let mut ahead = sum.clone();
        let draw = run(1).draw_step_noise(&mut Noise::seeded(8), 37).unwrap();
        draw.add_to(&mut ahead).unwrap();
        assert_eq!(ahead, direct);
        assert_ne!(ahead, sum);
    }

    /// Long runs draw from the table sampler, short ones from CKS20; either way noise drawn
    /// ahead releases what `add_noise` releases.
    #[test]
    fn long_runs_use_the_table_and_release_the_same_way() {
        let sum: Vec<f64> = (0..100).map(|i| (i as f64 - 50.0) * 0.01).collect();
        let mut long = run(1000);
        let mut direct = sum.clone();
        long.add_noise(&mut Noise::seeded(4), &mut direct).unwrap();
        assert!(long.plan.as_ref().unwrap().sampler.is_some());
        let mut ahead = sum.clone();
        let mut long = run(1000);
        long.draw_step_noise(&mut Noise::seeded(4), 100)
            .unwrap()
            .add_to(&mut ahead)
            .unwrap();
        assert_eq!(ahead, direct);
        assert_ne!(ahead, sum);
        let mut short = run(2);
        short.draw_step_noise(&mut Noise::seeded(4), 100).unwrap();
        assert!(short.plan.as_ref().unwrap().sampler.is_none());
    }

    #[test]
    fn a_refused_sum_is_left_untouched() {
        let mut r = run(2);
        let mut noise = Noise::seeded(9);
        let mut sum = vec![1.0, 2.0, f64::NAN, 4.0];
        let before = sum.clone();
        let err = r
            .draw_step_noise(&mut noise, 4)
            .unwrap()
            .add_to(&mut sum)
            .unwrap_err();
        assert!(err.to_string().contains("entry 2"), "{err}");
        assert_eq!(sum[..2], before[..2]);
        assert!(sum[2].is_nan() && sum[3] == 4.0);
        let wrong_dim = r.draw_step_noise(&mut noise, 3).unwrap().add_to(&mut sum);
        assert!(wrong_dim.is_err());
    }
}
