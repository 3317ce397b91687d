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
            plan: None,
        })
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
        let sigma0 = self.noise_multiplier * self.clip;
        let lattice = Lattice::for_release(self.clip, Norm::L2, d, sigma0)?;
        let sigma = (self.noise_multiplier * lattice.effective_sensitivity(self.clip)).next_up();
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
