//! The DP-SGD step loop (module doc of [`super`], steps 1–4), on one thread or on two.
//!
//! A step's Poisson batch and its noise do not depend on the data or on the parameters, so they
//! can be drawn ahead: with two threads, a producer draws (batch, noise) for step t + 1, t + 2, …
//! while the caller's thread computes the clipped gradient sum of step t, releases it with the
//! noise drawn for it and updates the parameters. The producer draws from the same [`Noise`] in
//! the same order as the one-thread loop (batch of step 1, noise of step 1, batch of step 2, …),
//! so both loops give bit-identical models for a seeded source (tested).

use super::nets::Net;
use crate::error::Result;
use crate::sampling::PoissonSampler;
use dpfair_privacy::Noise;
use std::sync::mpsc;

/// The noise step of DP-SGD: the only place a step's sum becomes releasable. The noise is drawn
/// before the sum exists (`draw`) and added to it once (`apply`).
pub(crate) trait NoiseStep: Send {
    type Draw: Send;
    /// The noise of the next step for a sum of `dim` coordinates.
    fn draw(&mut self, noise: &mut Noise, dim: usize) -> Result<Self::Draw>;
    /// Releases `sum` with `draw`.
    fn apply(draw: Self::Draw, sum: &mut [f64]) -> Result<()>;
}

/// Steps whose expected work (steps × expected batch) is at least this many examples run with a
/// producer thread; smaller runs do not repay starting one.
const TWO_THREADS_FROM: f64 = 20_000.0;
/// Steps the producer may run ahead.
const AHEAD: usize = 8;

/// The plain SGD step θ ← θ − (η/(qN))·(noisy sum) (division by the expected batch size).
struct Update {
    rate: f64,
}

impl Update {
    fn apply(&self, params: &mut [f64], sum: &[f64]) {
        for (p, g) in params.iter_mut().zip(sum) {
            *p -= self.rate * g;
        }
    }
}

/// Runs `steps` DP-SGD steps on `net` from `params`, with expected batch q·n.
#[allow(clippy::too_many_arguments)]
pub(crate) fn train<S: NoiseStep>(
    net: &mut dyn Net,
    params: &mut [f64],
    n: usize,
    q: f64,
    steps: u64,
    learning_rate: f64,
    clip: f64,
    step: &mut S,
    noise: &mut Noise,
) -> Result<()> {
    let two_threads = steps > 1
        && steps as f64 * q * n as f64 >= TWO_THREADS_FROM
        && std::thread::available_parallelism().is_ok_and(|p| p.get() >= 2);
    train_on(
        two_threads,
        net,
        params,
        n,
        q,
        steps,
        learning_rate,
        clip,
        step,
        noise,
    )
}

/// [`train`] on one thread or with a producer thread, as asked.
#[allow(clippy::too_many_arguments)]
pub(crate) fn train_on<S: NoiseStep>(
    two_threads: bool,
    net: &mut dyn Net,
    params: &mut [f64],
    n: usize,
    q: f64,
    steps: u64,
    learning_rate: f64,
    clip: f64,
    step: &mut S,
    noise: &mut Noise,
) -> Result<()> {
    debug_assert_eq!(params.len(), net.n_params());
    let sampler = PoissonSampler::new(q)?;
    let update = Update {
        rate: learning_rate / (q * n as f64),
    };
    if two_threads {
        train_two_threads(net, params, n, &sampler, steps, &update, clip, step, noise)
    } else {
        let mut batch = Vec::new();
        let mut sum = vec![0.0; params.len()];
        for _ in 0..steps {
            sampler.sample_into(noise, n, &mut batch);
            let draw = step.draw(noise, sum.len())?;
            sum.fill(0.0);
            net.clipped_grad_sum(params, &batch, clip, &mut sum);
            S::apply(draw, &mut sum)?;
            update.apply(params, &sum);
        }
        Ok(())
    }
}

/// The loop of [`train`] with a producer thread drawing batches and noise (module doc).
#[allow(clippy::too_many_arguments)]
fn train_two_threads<S: NoiseStep>(
    net: &mut dyn Net,
    params: &mut [f64],
    n: usize,
    sampler: &PoissonSampler,
    steps: u64,
    update: &Update,
    clip: f64,
    step: &mut S,
    noise: &mut Noise,
) -> Result<()> {
    let dim = params.len();
    let (ahead_tx, ahead_rx) = mpsc::sync_channel::<Result<(Vec<usize>, S::Draw)>>(AHEAD);
    // Used batch buffers go back to the producer.
    let (spent_tx, spent_rx) = mpsc::channel::<Vec<usize>>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for _ in 0..steps {
                let mut batch = spent_rx.try_recv().unwrap_or_default();
                sampler.sample_into(noise, n, &mut batch);
                let next = step.draw(noise, dim).map(|draw| (batch, draw));
                let failed = next.is_err();
                // A closed channel means the consumer stopped on an error of its own.
                if ahead_tx.send(next).is_err() || failed {
                    return;
                }
            }
        });
        // Owned here, so that an early return closes the channel and the producer stops.
        let ahead_rx = ahead_rx;
        let mut sum = vec![0.0; dim];
        for _ in 0..steps {
            let (batch, draw) = ahead_rx
                .recv()
                .expect("the producer sends one item per step or an error")?;
            sum.fill(0.0);
            net.clipped_grad_sum(params, &batch, clip, &mut sum);
            S::apply(draw, &mut sum)?;
            update.apply(params, &sum);
            // The producer may have finished its steps and left: then the buffer is just dropped.
            let _ = spent_tx.send(batch);
        }
        Ok(())
    })
}
