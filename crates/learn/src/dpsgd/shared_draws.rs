//! The random streams of a threaded DP-SGD run, shared by a drawing thread and the summing
//! thread so that either can draw a step's batch and noise ([`super::pipeline`]).
//!
//! Each stream sits behind its own lock and is drawn in the order of its steps, by whichever
//! thread holds the lock; the drawn steps wait in the stream's queue. The drawing thread keeps
//! each queue up to [`super::pipeline::AHEAD`] steps ahead, always drawing the earliest step not
//! drawn yet. The summing thread takes its step from the queue; when the queue is empty it waits
//! for a draw under way on that stream (the lock) or, if none is, draws the step itself. So
//! neither core idles while the other has drawing left to do, and which thread draws a step
//! changes nothing: every stream is read in the same order as on one thread.

use super::pipeline::{NoiseStep, Stream};
use crate::error::Result;
use crate::sampling::PoissonSampler;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long the drawing thread, with its queues full, looks for work before it sleeps: a few
/// steps' time at large batches, where the summing thread posts a step's slices every ≈ 50 µs.
const SPIN: Duration = Duration::from_micros(200);

/// One step's draws: its Poisson batch and its noise (or the error that stopped the stream).
pub(crate) type StepDraw<D> = Result<(Vec<usize>, D)>;

/// A stream and how many of its steps are drawn and left.
struct Drawer<'s, S> {
    stream: Stream<'s, S>,
    drawn: u64,
    left: u64,
}

/// Drawn steps not yet taken, and batch buffers handed back.
struct Queue<D> {
    items: VecDeque<StepDraw<D>>,
    spare: Vec<Vec<usize>>,
}

/// One random stream, shared.
struct Shared<'s, S: NoiseStep> {
    drawer: Mutex<Drawer<'s, S>>,
    queue: Mutex<Queue<S::Draw>>,
}

/// What a step's draws need besides the stream: the sampler, the number of rows, the dimension
/// of the noise.
#[derive(Clone, Copy)]
pub(crate) struct DrawPlan<'p> {
    pub sampler: &'p PoissonSampler,
    pub n: usize,
    pub dim: usize,
}

/// The streams of a run, step t drawn from stream t mod k.
pub(crate) struct SharedDraws<'s, 'p, S: NoiseStep> {
    streams: Vec<Shared<'s, S>>,
    plan: DrawPlan<'p>,
    ahead: usize,
    /// Set when the summing thread stops (done, an error or a panic): the drawer stops.
    stop: AtomicBool,
    /// The drawer is (about to be) waiting for room in the queues.
    drawer_waits: AtomicBool,
    /// Steps in the queues, all streams.
    queued: AtomicUsize,
    room_lock: Mutex<()>,
    room: Condvar,
}

/// Locks, ignoring poisoning: a panic on the other thread is re-raised when the thread scope
/// ends, and nothing is released before that.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<'s, 'p, S: NoiseStep> SharedDraws<'s, 'p, S> {
    /// Shares `streams` for `steps` steps, the drawer keeping at most `ahead` steps per queue.
    pub fn new(
        streams: impl IntoIterator<Item = Stream<'s, S>>,
        steps: u64,
        plan: DrawPlan<'p>,
        ahead: usize,
    ) -> Self {
        let streams: Vec<_> = streams.into_iter().collect();
        let k = streams.len() as u64;
        let streams = streams
            .into_iter()
            .enumerate()
            .map(|(p, stream)| Shared {
                drawer: Mutex::new(Drawer {
                    stream,
                    drawn: 0,
                    left: steps.saturating_sub(p as u64).div_ceil(k),
                }),
                queue: Mutex::new(Queue {
                    items: VecDeque::with_capacity(ahead),
                    spare: Vec::new(),
                }),
            })
            .collect();
        SharedDraws {
            streams,
            plan,
            ahead,
            stop: AtomicBool::new(false),
            drawer_waits: AtomicBool::new(false),
            queued: AtomicUsize::new(0),
            room_lock: Mutex::new(()),
            room: Condvar::new(),
        }
    }

    /// Draws the next step of the stream behind `d`.
    fn draw(&self, shared: &Shared<'s, S>, d: &mut Drawer<'s, S>) -> StepDraw<S::Draw> {
        let mut batch = lock(&shared.queue).spare.pop().unwrap_or_default();
        let Stream { step, noise } = &mut d.stream;
        self.plan
            .sampler
            .sample_into(noise, self.plan.n, &mut batch);
        let draw = step.draw(noise, self.plan.dim).map(|draw| (batch, draw));
        d.drawn += 1;
        // A stream stops at its first error.
        d.left = if draw.is_err() { 0 } else { d.left - 1 };
        draw
    }

    /// The summing thread: step `t`'s draws (steps are taken in order).
    pub fn take(&self, t: u64) -> StepDraw<S::Draw> {
        let shared = &self.streams[(t % self.streams.len() as u64) as usize];
        if let Some(item) = self.pop(shared) {
            return item;
        }
        // Nothing queued: wait for a draw under way on this stream, or draw the step here
        // (every earlier step of the stream has been taken, so the next one drawn is t).
        let mut d = lock(&shared.drawer);
        if let Some(item) = self.pop(shared) {
            return item;
        }
        debug_assert!(d.left > 0, "step {t} is one of the stream's steps");
        self.draw(shared, &mut d)
    }

    fn pop(&self, shared: &Shared<'s, S>) -> Option<StepDraw<S::Draw>> {
        let item = lock(&shared.queue).items.pop_front()?;
        self.queued.fetch_sub(1, Ordering::Relaxed);
        // The drawer set the flag before it last looked at the queues (see `wait_for_room`).
        if self.drawer_waits.load(Ordering::SeqCst) {
            let _g = lock(&self.room_lock);
            self.room.notify_one();
        }
        Some(item)
    }

    /// The summing thread: hands a used batch buffer back to step `t`'s stream.
    pub fn recycle(&self, t: u64, batch: Vec<usize>) {
        let shared = &self.streams[(t % self.streams.len() as u64) as usize];
        lock(&shared.queue).spare.push(batch);
    }

    /// The summing thread, on every exit: the drawer stops.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _g = lock(&self.room_lock);
        self.room.notify_one();
    }

    /// The drawing thread: draws ahead until [`SharedDraws::stop`]. `help` is other work of the
    /// run (a slice of the step being summed, `super::slices`), which returns whether it found
    /// any. Helping comes first while the queues hold at least half their steps (the draws are
    /// ahead: the sums are the longer part of a step), drawing first otherwise (the summing
    /// thread would draw its own steps and wait for the helped slices). With the queues full
    /// the thread looks for help or room for [`SPIN`] before it sleeps until a step is taken;
    /// with every stream drawn it keeps helping until the run stops. It leaves early when
    /// `leave` says so (checked between draws and slices, so it holds no step or slice then):
    /// the summing thread draws the remaining steps itself, in the same order.
    pub fn run_drawer(&self, mut help: impl FnMut() -> bool, leave: &dyn Fn() -> bool) {
        while !self.stop.load(Ordering::SeqCst) {
            if leave() {
                return;
            }
            if self.well_ahead() && help() {
                continue;
            }
            match self.earliest_with_room() {
                Earliest::Stream(p) => {
                    let shared = &self.streams[p];
                    let mut d = lock(&shared.drawer);
                    // The summing thread may have drawn it meanwhile: then look again.
                    if d.left == 0 || lock(&shared.queue).items.len() >= self.ahead {
                        continue;
                    }
                    let item = self.draw(shared, &mut d);
                    lock(&shared.queue).items.push_back(item);
                    self.queued.fetch_add(1, Ordering::Relaxed);
                }
                Earliest::Full => {
                    if !self.spin_for_work(&mut help) {
                        self.wait_for_room();
                    }
                }
                Earliest::Done => {
                    if !help() {
                        std::thread::yield_now();
                    }
                }
            }
        }
    }

    /// Whether the queues hold at least half the steps they can (a hint: read without the
    /// queues' locks).
    fn well_ahead(&self) -> bool {
        2 * self.queued.load(Ordering::Relaxed) >= self.ahead * self.streams.len()
    }

    /// Spins for up to [`SPIN`] until there is help to give (given here) or room to draw;
    /// returns whether either came.
    fn spin_for_work(&self, help: &mut impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        let mut round = 0u32;
        loop {
            if help() {
                return true;
            }
            round += 1;
            if round.is_multiple_of(64) {
                if !matches!(self.earliest_with_room(), Earliest::Full)
                    || self.stop.load(Ordering::SeqCst)
                {
                    return true;
                }
                if start.elapsed() >= SPIN {
                    return false;
                }
            }
            std::hint::spin_loop();
        }
    }

    /// The stream whose next step is the earliest of those not drawn yet, among the streams
    /// whose queues have room.
    fn earliest_with_room(&self) -> Earliest {
        let k = self.streams.len() as u64;
        let mut best: Option<(u64, usize)> = None;
        let mut done = true;
        for (p, shared) in self.streams.iter().enumerate() {
            // A stream the summing thread is drawing from is not done (and not the drawer's).
            let Ok(d) = shared.drawer.try_lock() else {
                done = false;
                continue;
            };
            if d.left == 0 {
                continue;
            }
            done = false;
            if lock(&shared.queue).items.len() < self.ahead {
                let next = p as u64 + k * d.drawn;
                if best.is_none_or(|(b, _)| next < b) {
                    best = Some((next, p));
                }
            }
        }
        match best {
            Some((_, p)) => Earliest::Stream(p),
            None if done => Earliest::Done,
            None => Earliest::Full,
        }
    }

    /// Sleeps until the summing thread takes a step (or stops). The flag is raised before the
    /// queues are looked at again, so a step taken after that look sees it and wakes us.
    fn wait_for_room(&self) {
        let g = lock(&self.room_lock);
        self.drawer_waits.store(true, Ordering::SeqCst);
        if matches!(self.earliest_with_room(), Earliest::Full) && !self.stop.load(Ordering::SeqCst)
        {
            drop(self.room.wait(g).unwrap_or_else(|e| e.into_inner()));
        }
        self.drawer_waits.store(false, Ordering::SeqCst);
    }
}

enum Earliest {
    Stream(usize),
    /// Every stream with steps left has a full queue (or is being drawn by the summing thread).
    Full,
    Done,
}

/// Calls [`SharedDraws::stop`] when dropped (however the summing thread leaves).
pub(crate) struct StopOnDrop<'a, 's, 'p, S: NoiseStep>(pub &'a SharedDraws<'s, 'p, S>);

impl<S: NoiseStep> Drop for StopOnDrop<'_, '_, '_, S> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpsgd::NoNoise;
    use dpfair_privacy::Noise;

    /// Each step's batch, drawn by `take` with or without a drawing thread beside it.
    fn batches(with_drawer: bool, steps: u64) -> Vec<Vec<usize>> {
        let sampler = PoissonSampler::new(0.1).unwrap();
        let plan = DrawPlan {
            sampler: &sampler,
            n: 300,
            dim: 4,
        };
        let (mut even, mut odd) = (Noise::seeded(9), Noise::seeded(10));
        let (mut s0, mut s1) = (NoNoise::default(), NoNoise::default());
        let streams = [
            Stream {
                step: &mut s0,
                noise: &mut even,
            },
            Stream {
                step: &mut s1,
                noise: &mut odd,
            },
        ];
        let draws = SharedDraws::new(streams, steps, plan, 3);
        std::thread::scope(|scope| {
            if with_drawer {
                scope.spawn(|| draws.run_drawer(|| false, &|| false));
            }
            let _stop = StopOnDrop(&draws);
            (0..steps)
                .map(|t| {
                    let (batch, ()) = draws.take(t).unwrap();
                    let out = batch.clone();
                    draws.recycle(t, batch);
                    out
                })
                .collect()
        })
    }

    #[test]
    fn every_step_arrives_in_order_whoever_draws_it() {
        // Without a drawing thread the summing thread draws every step itself; with one, each
        // step is drawn by either. Each stream is read in step order either way: the same batches
        // as drawing the streams in turn on one thread.
        let steps = 41;
        let sampler = PoissonSampler::new(0.1).unwrap();
        let (mut even, mut odd) = (Noise::seeded(9), Noise::seeded(10));
        let want: Vec<Vec<usize>> = (0..steps)
            .map(|t| {
                let noise = if t % 2 == 0 { &mut even } else { &mut odd };
                sampler.sample(noise, 300)
            })
            .collect();
        assert_eq!(batches(false, steps), want);
        for _ in 0..20 {
            assert_eq!(batches(true, steps), want);
        }
    }
}
