//! The DP-SGD step loop (module doc of [`super`], steps 1–4), on one thread or on three.
//!
//! A step's Poisson batch and its noise depend neither on the data nor on the parameters, so
//! they can be drawn ahead. The steps alternate between two random streams: even steps draw from
//! the caller's [`Noise`], odd steps from a fork of it (an independent stream: another OS handle,
//! or a ChaCha20 stream keyed from the seeded one), each with its own share of the run's charged
//! steps ([`NoiseStep::split_off`]). With threads, a drawing thread draws (batch, noise) for the
//! steps ahead while the caller's thread computes the clipped gradient sum of each step in turn,
//! releases it with that step's noise and updates the parameters; when the drawing thread is
//! behind, the caller's thread draws its step itself from the other stream than the one being
//! drawn ([`SharedDraws`]), so both cores stay busy whichever part of a step is the longer.
//! Every stream is read in the same order either way, so the one-thread and threaded loops give
//! bit-identical models for a seeded source (tested); [`Threads`] chooses between them.

use super::nets::Net;
use super::shared_draws::{DrawPlan, SharedDraws, StopOnDrop};
use super::slices::{GoneOnDrop, SharedSlices, SliceWork, sliced_sum};
use crate::error::Result;
use crate::sampling::PoissonSampler;
use dpfair_privacy::Noise;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::SeqCst;

/// The noise step of DP-SGD: the only place a step's sum becomes releasable. The noise is drawn
/// before the sum exists (`draw`) and added to it once (`apply`).
pub(crate) trait NoiseStep: Send + Sized {
    type Draw: Send;
    /// The noise of the next step for a sum of `dim` coordinates.
    fn draw(&mut self, noise: &mut Noise, dim: usize) -> Result<Self::Draw>;
    /// Releases `sum` with `draw`.
    fn apply(draw: Self::Draw, sum: &mut [f64]) -> Result<()>;
    /// A handle for `steps` of this step source's remaining steps (which it gives up).
    fn split_off(&mut self, steps: u64) -> Result<Self>;
}

/// One random stream and the noise steps drawn from it.
pub(crate) struct Stream<'s, S> {
    pub step: &'s mut S,
    pub noise: &'s mut Noise,
}

/// Runs whose expected work (steps × expected batch) is at least this many examples use a drawing
/// thread; smaller runs do not repay starting it.
const THREADS_FROM: f64 = 20_000.0;
/// Steps the drawing thread may run ahead, per stream.
pub(crate) const AHEAD: usize = 8;

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

/// The public parameters of a run: N rows, sampling rate q, T steps, learning rate η, clip C.
#[derive(Clone, Copy)]
pub(crate) struct Schedule {
    /// The rows sampled from.
    pub n: usize,
    /// qN for the public N of the schedule: the step's divisor.
    pub expected_batch: f64,
    pub q: f64,
    pub steps: u64,
    pub learning_rate: f64,
    pub clip: f64,
}

impl Schedule {
    /// Whether a drawing thread repays starting it for this run: enough work, 2 cores or more,
    /// and not already on a rayon worker (fits run in parallel keep one thread each).
    fn threads_pay_off(&self) -> bool {
        self.steps as f64 * self.q * self.n as f64 >= THREADS_FROM
            && std::thread::available_parallelism().is_ok_and(|p| p.get() >= 2)
            && rayon::current_thread_index().is_none()
    }
}

/// The cores held by [`Threads::Auto`] runs in progress in this process: two by a threaded run,
/// one by a run on one thread. A run starts its drawing thread only when two cores are free,
/// and a threaded run's drawing thread leaves (its run goes on on one thread, with the same
/// model) as soon as the runs hold more cores than there are. So fits started together from
/// several threads (Python threads, a thread pool) do not oversubscribe the cores: the threaded
/// loop's threads wait for each other by spinning, which on a shared core wastes the time the
/// other fit needs (BENCHMARKS.md, "Fits in threads").
pub(crate) struct CoreClaims(AtomicUsize);

/// This process's claims.
static CORE_CLAIMS: CoreClaims = CoreClaims::new();

impl CoreClaims {
    pub(crate) const fn new() -> Self {
        CoreClaims(AtomicUsize::new(0))
    }

    /// Cores for a run among `cores`: two if it wants them (`want_two`: a drawing thread would
    /// pay off) and two are free, else one. Held until the claim drops.
    pub(crate) fn claim(&self, cores: usize, want_two: bool) -> CoreClaim<'_> {
        let two = want_two
            && self
                .0
                .fetch_update(SeqCst, SeqCst, |held| {
                    (held + 2 <= cores).then_some(held + 2)
                })
                .is_ok();
        if !two {
            self.0.fetch_add(1, SeqCst);
        }
        CoreClaim {
            claims: self,
            held: AtomicUsize::new(if two { 2 } else { 1 }),
            cores,
        }
    }
}

/// The cores one run holds ([`CoreClaims::claim`]).
pub(crate) struct CoreClaim<'c> {
    claims: &'c CoreClaims,
    held: AtomicUsize,
    cores: usize,
}

impl CoreClaim<'_> {
    /// Whether the run holds two cores (it may start a drawing thread).
    pub(crate) fn threaded(&self) -> bool {
        self.held.load(SeqCst) == 2
    }

    /// For the drawing thread: whether it should leave because the runs in progress hold more
    /// cores than there are; if so, gives its core back (the run goes on on one thread).
    pub(crate) fn leave_if_crowded(&self) -> bool {
        if self.claims.0.load(SeqCst) <= self.cores {
            return false;
        }
        if self.held.compare_exchange(2, 1, SeqCst, SeqCst).is_ok() {
            self.claims.0.fetch_sub(1, SeqCst);
        }
        true
    }
}

impl Drop for CoreClaim<'_> {
    fn drop(&mut self) {
        self.claims.0.fetch_sub(self.held.load(SeqCst), SeqCst);
    }
}

/// Whether DP-SGD draws its batches and noise on a thread of their own ([`super::DpSgdConfig::threads`]).
/// Every setting trains the same model (bit for bit from a seeded source): the random streams
/// are read in the same order; only where the draws run differs.
///
/// ```
/// use dpfair_learn::dpsgd::Threads;
/// use dpfair_learn::{DpSgdConfig, fit_dp_sgd};
/// use dpfair_privacy::{Budget, Ledger, Noise, Relation};
///
/// let x = ndarray::Array2::from_shape_fn((400, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 11.0);
/// let y: Vec<u32> = (0..400).map(|i| (i % 3 == 0) as u32).collect();
/// let fit = |threads| {
///     let cfg = DpSgdConfig { epochs: 30, expected_batch: 50, threads, ..Default::default() };
///     // DP-SGD's accountants certify add/remove neighbours: a ledger for that relation.
///     let mut ledger = Ledger::for_relation(Budget::approx(1.0, 1e-5).unwrap(), Relation::AddRemove);
///     // Seeded noise for the comparison only: a private fit uses `Noise::os()`.
///     fit_dp_sgd(&cfg, x.view(), &y, 2, &mut ledger, &mut Noise::seeded(3)).unwrap().model
/// };
/// assert_eq!(fit(Threads::One), fit(Threads::Producers));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Threads {
    /// A drawing thread when it pays off: enough expected work (steps × expected batch ≥ 20,000
    /// examples), at least 2 cores, not already on a rayon worker (fits run in parallel keep one
    /// thread each), and two cores free of this process's other `Auto` runs; the drawing thread
    /// leaves when runs started later crowd the cores (the pipeline's core claims; BENCHMARKS.md,
    /// "Fits in threads").
    #[default]
    Auto,
    /// Everything on the caller's thread.
    One,
    /// Always a drawing thread beside the caller's, whatever the size of the run.
    Producers,
}

/// Runs the schedule's steps on `net` from `params`.
pub(crate) fn train<S: NoiseStep>(
    threads: Threads,
    net: &dyn Net,
    params: &mut [f64],
    schedule: &Schedule,
    step: &mut S,
    noise: &mut Noise,
) -> Result<()> {
    // Held for the whole run (Auto only; an explicit choice is the caller's).
    let claim = match threads {
        Threads::Auto => {
            let cores = std::thread::available_parallelism().map_or(1, |p| p.get());
            Some(CORE_CLAIMS.claim(cores, schedule.threads_pay_off()))
        }
        _ => None,
    };
    let threads = match threads {
        Threads::Auto if claim.as_ref().is_some_and(|c| c.threaded()) => Threads::Producers,
        Threads::Auto => Threads::One,
        chosen => chosen,
    };
    let leave = || claim.as_ref().is_some_and(|c| c.leave_if_crowded());
    run_steps(threads, net, params, schedule, step, noise, &leave)
}

/// [`train`] with the threads chosen (`One` or `Producers`) and `leave` telling a drawing
/// thread when to leave.
pub(crate) fn run_steps<S: NoiseStep>(
    threads: Threads,
    net: &dyn Net,
    params: &mut [f64],
    schedule: &Schedule,
    step: &mut S,
    noise: &mut Noise,
    leave: &(dyn Fn() -> bool + Sync),
) -> Result<()> {
    let Schedule {
        n,
        expected_batch,
        q,
        steps,
        learning_rate,
        clip,
    } = *schedule;
    debug_assert_eq!(params.len(), net.n_params());
    let sampler = PoissonSampler::new(q)?;
    let update = Update {
        rate: learning_rate / expected_batch,
    };
    let loop_ = Loop {
        n,
        sampler: &sampler,
        steps,
        update: &update,
        clip,
    };
    if steps < 2 {
        return loop_.one_thread(net, params, &mut [Stream { step, noise }]);
    }
    let mut odd_noise = noise.fork();
    let mut odd_step = step.split_off(steps / 2)?;
    let mut streams = [
        Stream { step, noise },
        Stream {
            step: &mut odd_step,
            noise: &mut odd_noise,
        },
    ];
    if threads == Threads::Producers {
        loop_.threaded(net, params, &mut streams, leave)
    } else {
        loop_.one_thread(net, params, &mut streams)
    }
}

/// The fixed parts of a run of steps; step t draws from stream t mod (number of streams).
struct Loop<'l> {
    n: usize,
    sampler: &'l PoissonSampler,
    steps: u64,
    update: &'l Update,
    clip: f64,
}

impl Loop<'_> {
    fn one_thread<S: NoiseStep>(
        &self,
        net: &dyn Net,
        params: &mut [f64],
        streams: &mut [Stream<'_, S>],
    ) -> Result<()> {
        let mut batch = Vec::new();
        let mut sum = vec![0.0; params.len()];
        let mut work = SliceWork::default();
        for t in 0..self.steps {
            let s = &mut streams[(t % streams.len() as u64) as usize];
            self.sampler.sample_into(s.noise, self.n, &mut batch);
            let draw = s.step.draw(s.noise, sum.len())?;
            sliced_sum(net, params, &batch, self.clip, &mut sum, &mut work);
            S::apply(draw, &mut sum)?;
            self.update.apply(params, &sum);
        }
        Ok(())
    }

    /// A drawing thread beside this one, which sums the steps in order (module doc).
    fn threaded<S: NoiseStep>(
        &self,
        net: &dyn Net,
        params: &mut [f64],
        streams: &mut [Stream<'_, S>],
        leave: &(dyn Fn() -> bool + Sync),
    ) -> Result<()> {
        let dim = params.len();
        let plan = DrawPlan {
            sampler: self.sampler,
            n: self.n,
            dim,
        };
        let streams = streams.iter_mut().map(|s| Stream {
            step: &mut *s.step,
            noise: &mut *s.noise,
        });
        let draws = SharedDraws::new(streams, self.steps, plan, AHEAD);
        let slices = SharedSlices::new(net, self.clip);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // This thread's slices are summed here if it leaves before finishing them.
                let _gone = GoneOnDrop(&slices);
                let mut work = SliceWork::default();
                draws.run_drawer(|| slices.help(&mut work), leave);
            });
            // Stops the drawing thread however this thread leaves (done, an error, a panic).
            let _stop = StopOnDrop(&draws);
            let mut sum = vec![0.0; dim];
            let mut work = SliceWork::default();
            (0..self.steps).try_for_each(|t| {
                let (batch, draw) = draws.take(t)?;
                slices.sum(params, &batch, &mut sum, &mut work);
                S::apply(draw, &mut sum)?;
                self.update.apply(params, &sum);
                draws.recycle(t, batch);
                Ok(())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::CoreClaims;

    #[test]
    fn runs_claim_two_cores_when_free_and_crowded_drawers_leave() {
        let claims = CoreClaims::new();
        // Two cores: the first run holds both; the second holds one and crowds the first,
        // whose drawing thread then leaves and gives one back.
        let first = claims.claim(2, true);
        assert!(first.threaded());
        assert!(!first.leave_if_crowded(), "alone on its cores");
        let second = claims.claim(2, true);
        assert!(!second.threaded());
        assert!(first.leave_if_crowded() && !first.threaded());
        assert!(
            !second.leave_if_crowded(),
            "two runs on two cores: no longer crowded"
        );
        drop(first);
        drop(second);
        assert!(claims.claim(2, true).threaded(), "every core given back");
        assert!(
            !claims.claim(2, false).threaded(),
            "a run too small to pay off"
        );
        assert!(!claims.claim(1, true).threaded());
    }
}
