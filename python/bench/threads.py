"""Two fits in two Python threads against one fit: timings for issue #42.

Fits release the GIL (`py.detach` around the library call), so two fits started from two
threads run on the two cores at once. For each estimator this script times, on synthetic data
sized so that one fit takes about a second, in alternating rounds:

* one fit alone (wall clock, and the process's CPU time over all threads);
* two fits of the same estimator, one per thread, started together (wall clock until both end).

and prints the ratio of the two walls. A fit that runs on one core gives a ratio near 1 on an
idle 2-core machine (2 if the GIL serialised them); a fit that keeps both cores busy (with
`n_jobs=-1` the DP-SGD learner draws its noise on the second core: CPU/wall about 1.8) cannot
go below its own CPU/wall, whatever the GIL does, and the table prints that figure beside it.
`--n-jobs` is the estimators' `n_jobs` (default None: one thread per fit, as scikit-learn).

    python python/bench/threads.py [--rounds 3] [--only NAME,...] [--n-jobs -1] [--epochs 5]

Needs the dpfair package (`maturin develop --release` in python/ for release timings) and numpy.
Noise comes from the operating system, as in a real fit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

import numpy as np

import dpfair


def data(n: int, seed: int = 0) -> tuple:
    """Synthetic rows: 6 features on [0, 1], a binary label, a binary group, a numeric target."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 6))
    g = (rng.uniform(size=n) < 0.4).astype(int)
    score = x[:, 0] + x[:, 1] - x[:, 2] + 0.3 * g + rng.normal(scale=0.3, size=n)
    return x, (score > 0.65).astype(int), g, score


def cases(n_jobs: int | None, epochs: int) -> dict:
    """Each estimator's name and a function that fits it once with `n_jobs`."""
    x, y, g, score = data(400_000)
    xp, yp, _, _ = data(20_000, seed=1)

    def fit(make, *args, **kwargs):
        return lambda: make().set_params(n_jobs=n_jobs).fit(*args, **kwargs)

    return {
        "DPLogisticRegression": fit(
            lambda: dpfair.DPLogisticRegression(unscaled=True, epochs=epochs), x, y
        ),
        "DPLinearRegression": fit(
            lambda: dpfair.DPLinearRegression(unscaled=True, target_range=(-2, 4)), x, score
        ),
        "CDPFairClassifier": fit(lambda: dpfair.CDPFairClassifier(unscaled=True), x, y, g),
        "FDPFairClassifier": fit(lambda: dpfair.FDPFairClassifier(unscaled=True), x, y, g),
        "DecoupledFairClassifier": fit(
            lambda: dpfair.DecoupledFairClassifier(unscaled=True), x, y, g
        ),
        "DP2DPClassifier": fit(lambda: dpfair.DP2DPClassifier(unscaled=True), x, y, g),
        "PrivateFairRegressor": fit(
            lambda: dpfair.PrivateFairRegressor(
                base=dpfair.DPLinearRegression(unscaled=True, target_range=(-2, 4))
            ),
            x,
            score,
            g,
        ),
        "LPCTClassifier": fit(lambda: dpfair.LPCTClassifier(), x, y, X_public=xp, y_public=yp),
    }


def one(run) -> tuple:
    """(wall, CPU) of one fit."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def two(run) -> float:
    """Wall clock of two fits in two threads started together."""
    start = threading.Barrier(3)

    def work():
        start.wait()
        run()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    start.wait()
    wall = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - wall


def main() -> None:
    """Time every estimator and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated estimator names")
    parser.add_argument("--n-jobs", type=int, default=None, help="the estimators' n_jobs")
    parser.add_argument("--epochs", type=int, default=5, help="DPLogisticRegression's epochs")
    args = parser.parse_args()
    only = {s for s in args.only.split(",") if s}
    print(f"load average at start: {os.getloadavg()[0]:.2f}; n_jobs = {args.n_jobs}")
    print("| estimator | one fit, wall s | its CPU/wall | two in threads, wall s | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name, run in cases(args.n_jobs, args.epochs).items():
        if only and name not in only:
            continue
        run()  # warm up (first-touch allocations, lazy imports)
        ones, cpus, twos = [], [], []
        for _ in range(args.rounds):
            w, c = one(run)
            ones.append(w)
            cpus.append(c)
            twos.append(two(run))
        w1, w2 = statistics.median(ones), statistics.median(twos)
        c1 = statistics.median(cpus)
        print(f"| {name} | {w1:.2f} | {c1 / w1:.2f} | {w2:.2f} | {w2 / w1:.2f} |", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
