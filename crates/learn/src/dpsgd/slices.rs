//! A step's clipped gradient sum in slices of its batch, so that two threads can share it
//! (`super::pipeline`).
//!
//! The batch is cut into slices of [`SLICE_ROWS`] rows (the last may be shorter); each slice's
//! clipped sum is computed into a zeroed buffer and the slice sums are added to the step's sum in
//! slice order. The result depends only on the parameters, the batch and this rule, never on
//! which thread computed which slice, so one thread ([`sliced_sum`]) and two ([`SharedSlices`])
//! give the same bits. With two threads the summing thread posts the step and takes slices from
//! the front while the drawing thread, between its draws, takes slices from the back; at large
//! batches the sums are the longer part of a step, and this keeps both cores on them.

use super::nets::Net;
use super::shared_draws::lock;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Rows per slice: large enough that a slice's fixed costs (its zeroed buffer and the addition of
/// its sum, ≈ 2 × the number of parameters) are a few per cent of its rows' work, small enough
/// that a batch of 1,024 rows is shared in eighths.
pub(crate) const SLICE_ROWS: usize = 128;

/// A thread's scratch space for slice sums.
#[derive(Default)]
pub(crate) struct SliceWork {
    /// The net's own scratch space.
    net: Vec<f64>,
    /// One slice's sum.
    slice: Vec<f64>,
    /// The helper's copies of the posted step's parameters and of its slice's rows.
    params: Vec<f64>,
    rows: Vec<usize>,
}

/// The number of slices of a batch of `rows` rows.
fn slice_count(rows: usize) -> usize {
    rows.div_ceil(SLICE_ROWS)
}

/// Slice `k` of `batch`.
fn slice(batch: &[usize], k: usize) -> &[usize] {
    let start = k * SLICE_ROWS;
    &batch[start..(start + SLICE_ROWS).min(batch.len())]
}

/// The clipped sum of `rows` into `out` (zeroed first).
fn rows_sum(
    net: &dyn Net,
    params: &[f64],
    rows: &[usize],
    clip: f64,
    out: &mut Vec<f64>,
    net_work: &mut Vec<f64>,
) {
    out.clear();
    out.resize(params.len(), 0.0);
    net.clipped_grad_sum(params, rows, clip, out, net_work);
}

/// Slice `k`'s clipped sum into `work.slice`.
fn slice_sum(
    net: &dyn Net,
    params: &[f64],
    batch: &[usize],
    k: usize,
    clip: f64,
    work: &mut SliceWork,
) {
    rows_sum(
        net,
        params,
        slice(batch, k),
        clip,
        &mut work.slice,
        &mut work.net,
    );
}

/// `sum += part`, coordinate by coordinate.
fn add(sum: &mut [f64], part: &[f64]) {
    for (s, p) in sum.iter_mut().zip(part) {
        *s += p;
    }
}

/// The step's clipped sum on one thread: `sum` ← Σ_k (slice k's sum), in slice order.
pub(crate) fn sliced_sum(
    net: &dyn Net,
    params: &[f64],
    batch: &[usize],
    clip: f64,
    sum: &mut [f64],
    work: &mut SliceWork,
) {
    sum.fill(0.0);
    for k in 0..slice_count(batch.len()) {
        slice_sum(net, params, batch, k, clip, work);
        add(sum, &work.slice);
    }
}

/// The step being summed: copies of its parameters and batch for the helping thread, the slices
/// not yet taken (`front..back`), and the sums of the slices the helper took (`helped[k]`,
/// valid when `finished[k]`; the buffers are kept from step to step, so a step allocates
/// nothing).
#[derive(Default)]
struct Job {
    params: Vec<f64>,
    batch: Vec<usize>,
    front: usize,
    back: usize,
    helped: Vec<Vec<f64>>,
    finished: Vec<bool>,
}

/// A step's slices shared by the summing thread ([`SharedSlices::sum`]) and a helping thread
/// ([`SharedSlices::help`]).
pub(crate) struct SharedSlices<'n> {
    net: &'n dyn Net,
    clip: f64,
    job: Mutex<Job>,
    /// The posted step has slices left for the helper (a hint read without the lock).
    open: AtomicBool,
    /// Slices the helper has finished for the posted step.
    finished: AtomicUsize,
    /// The helper has left (done, or unwinding): the summing thread no longer waits for it.
    helper_gone: AtomicBool,
}

impl<'n> SharedSlices<'n> {
    pub fn new(net: &'n dyn Net, clip: f64) -> Self {
        SharedSlices {
            net,
            clip,
            job: Mutex::new(Job::default()),
            open: AtomicBool::new(false),
            finished: AtomicUsize::new(0),
            helper_gone: AtomicBool::new(false),
        }
    }

    /// The summing thread: the step's clipped sum into `sum`, the same bits as [`sliced_sum`].
    /// Slices are taken from the front; those the helper took are waited for, and added in
    /// their place in the slice order.
    pub fn sum(&self, params: &[f64], batch: &[usize], sum: &mut [f64], work: &mut SliceWork) {
        let n = slice_count(batch.len());
        if n < 2 {
            return sliced_sum(self.net, params, batch, self.clip, sum, work);
        }
        {
            let mut job = lock(&self.job);
            job.params.clear();
            job.params.extend_from_slice(params);
            job.batch.clear();
            job.batch.extend_from_slice(batch);
            job.front = 0;
            job.back = n;
            job.finished.clear();
            job.finished.resize(n, false);
            if job.helped.len() < n {
                job.helped.resize_with(n, Vec::new);
            }
            self.finished.store(0, Ordering::SeqCst);
            self.open.store(true, Ordering::SeqCst);
        }
        sum.fill(0.0);
        let front = loop {
            let k = {
                let mut job = lock(&self.job);
                if job.front == job.back {
                    self.open.store(false, Ordering::SeqCst);
                    break job.front;
                }
                job.front += 1;
                job.front - 1
            };
            slice_sum(self.net, params, batch, k, self.clip, work);
            add(sum, &work.slice);
        };
        // The helper took slices front..n and finishes each it took.
        let mut spins = 0u32;
        while self.finished.load(Ordering::SeqCst) < n - front
            && !self.helper_gone.load(Ordering::SeqCst)
        {
            spins += 1;
            if spins.is_multiple_of(1024) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        let job = lock(&self.job);
        for k in front..n {
            if job.finished[k] {
                add(sum, &job.helped[k]);
            } else {
                // Only when the helper left without finishing it: the same sum, here.
                slice_sum(self.net, params, batch, k, self.clip, work);
                add(sum, &work.slice);
            }
        }
    }

    /// The helping thread: computes one slice of the posted step, if one is left; returns
    /// whether it did.
    pub fn help(&self, work: &mut SliceWork) -> bool {
        if !self.open.load(Ordering::SeqCst) {
            return false;
        }
        let k = {
            let mut job = lock(&self.job);
            if job.front == job.back {
                return false;
            }
            job.back -= 1;
            let k = job.back;
            work.params.clear();
            work.params.extend_from_slice(&job.params);
            work.rows.clear();
            work.rows.extend_from_slice(slice(&job.batch, k));
            k
        };
        let w = &mut *work;
        rows_sum(
            self.net,
            &w.params,
            &w.rows,
            self.clip,
            &mut w.slice,
            &mut w.net,
        );
        {
            let mut job = lock(&self.job);
            job.helped[k].clear();
            job.helped[k].extend_from_slice(&work.slice);
            job.finished[k] = true;
        }
        self.finished.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// The helping thread, however it leaves: the summing thread stops waiting for it.
    pub fn helper_gone(&self) {
        self.helper_gone.store(true, Ordering::SeqCst);
    }
}

/// Calls [`SharedSlices::helper_gone`] when dropped (however the helping thread leaves).
pub(crate) struct GoneOnDrop<'a, 'n>(pub &'a SharedSlices<'n>);

impl Drop for GoneOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.helper_gone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpsgd::compact::CompactRows;
    use crate::dpsgd::nets::LogisticNet;
    use crate::testutil::blobs;

    /// A logistic net that sleeps in every slice on the summing thread (so that the helper
    /// always finds slices to take) and panics on a thread named "panics" (a helper that dies
    /// with a slice taken).
    struct SlowNet<'a>(LogisticNet<'a>);

    impl Net for SlowNet<'_> {
        fn n_params(&self) -> usize {
            self.0.n_params()
        }
        fn clipped_grad_sum(
            &self,
            params: &[f64],
            batch: &[usize],
            clip: f64,
            sum: &mut [f64],
            work: &mut Vec<f64>,
        ) {
            match std::thread::current().name() {
                Some("panics") => panic!("the helper dies with a slice taken"),
                Some("helper") => {}
                _ => std::thread::sleep(std::time::Duration::from_micros(200)),
            }
            self.0.clipped_grad_sum(params, batch, clip, sum, work)
        }
        fn example_grad(&self, params: &[f64], i: usize) -> Vec<f64> {
            self.0.example_grad(params, i)
        }
        fn example_loss(&self, params: &[f64], i: usize) -> f64 {
            self.0.example_loss(params, i)
        }
    }

    /// Steps of `batch_rows` rows summed with a helper thread named `helper_name` beside the
    /// summing thread; each sum compared, bit for bit, with the one-thread sum. Returns the number
    /// of slices the helper computed.
    fn shared_equals_one_thread(helper_name: &str, steps: usize, batch_rows: usize) -> usize {
        let (x, y) = blobs(3_000, 6, 3, 1.0, 8);
        let net = SlowNet(LogisticNet::new(CompactRows::new(x.view(), &y).unwrap(), 3));
        let shared = SharedSlices::new(&net, 0.7);
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let helper = std::thread::Builder::new()
                .name(helper_name.into())
                .spawn_scoped(scope, || {
                    let _gone = GoneOnDrop(&shared);
                    let mut work = SliceWork::default();
                    let mut helped = 0;
                    while !stop.load(Ordering::SeqCst) {
                        if shared.help(&mut work) {
                            helped += 1;
                        }
                    }
                    helped
                })
                .unwrap();
            let (mut sum, mut want) = (vec![0.0; 21], vec![0.0; 21]);
            let (mut work, mut alone) = (SliceWork::default(), SliceWork::default());
            for t in 0..steps {
                let params: Vec<f64> = (0..21).map(|j| ((j * 7 + t) as f64).sin()).collect();
                let batch: Vec<usize> =
                    (0..batch_rows).map(|i| (i * 13 + t * 31) % 3_000).collect();
                shared.sum(&params, &batch, &mut sum, &mut work);
                sliced_sum(&net, &params, &batch, 0.7, &mut want, &mut alone);
                assert_eq!(sum, want, "step {t}");
                assert!(want.iter().any(|&v| v != 0.0));
            }
            stop.store(true, Ordering::SeqCst);
            helper.join().unwrap_or(usize::MAX)
        })
    }

    #[test]
    fn slices_shared_with_a_helper_give_the_one_thread_bits() {
        // 4.3 slices per step; the summing thread sleeps 200 µs per slice while the helper
        // spins, so the helper takes slices on (nearly) every step.
        let helped = shared_equals_one_thread("helper", 30, 550);
        assert!(
            helped > 0 && helped < usize::MAX,
            "the helper took {helped} slices"
        );
    }

    #[test]
    fn a_helper_that_dies_with_a_slice_taken_leaves_it_to_the_summing_thread() {
        // The helper panics inside its first slice; the summing thread sums it itself.
        let helped = shared_equals_one_thread("panics", 5, 550);
        assert_eq!(helped, usize::MAX, "the helper thread panicked");
    }

    #[test]
    fn slices_cover_the_batch_in_order() {
        let batch: Vec<usize> = (0..300).collect();
        assert_eq!(slice_count(300), 3);
        let joined: Vec<usize> = (0..3).flat_map(|k| slice(&batch, k).to_vec()).collect();
        assert_eq!(joined, batch);
        assert_eq!(slice(&batch, 2).len(), 300 - 2 * SLICE_ROWS);
        assert_eq!(slice_count(0), 0);
    }
}
