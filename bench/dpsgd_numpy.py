"""DP-SGD for logistic regression in numpy, float32, with the closed-form per-example gradient
norm |p_i - y_i| * ||[x_i; 1]|| (no per-example gradient matrix): the fused vectorised baseline of
`crates/learn/benches/dpsgd_throughput.rs`, on the same Adult-shaped design (22,610 x 102: 6
numeric columns, 8 categorical variables one-hot into 96), clipping 1.5, noise multiplier 1,
Poisson sampling with one uniform per row per step, Gaussian noise in floating point (numpy's
samplers are not exact; this is a speed reference only). Prints one JSON line per repetition with
wall-clock and CPU time (time.process_time: all threads of the process).

    python3 -m venv target/bench-venv && target/bench-venv/bin/pip install numpy
    target/bench-venv/bin/python bench/dpsgd_numpy.py --n 22610 --batch 256 --epochs 20 --reps 5
"""
import argparse
import json
import time

import numpy as np


def adult_shaped(n, rng):
    x = np.zeros((n, 102), dtype=np.float32)
    x[:, :6] = (rng.random((n, 6)) + rng.random((n, 6)) + rng.random((n, 6)) - 1.5) * 2.0
    for c in range(8):
        level = rng.integers(0, 12, n)
        x[np.arange(n), 6 + 12 * c + level] = 1.0
    score = -1.0 + x[:, :6] @ np.array([0.5, -0.5] * 3, dtype=np.float32)
    y = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(np.float32)
    return x, y


def fit(x, y, batch, epochs, clip, z, lr, rng):
    n, d = x.shape
    k = -(-n // min(batch, n))
    q = 1.0 / k
    aug_norm = np.sqrt((x.astype(np.float64) ** 2).sum(axis=1) + 1.0).astype(np.float32)
    w = np.zeros(d, dtype=np.float32)
    b = np.float32(0.0)
    scale = np.float32(lr / (q * n))
    for _ in range(epochs * k):
        idx = np.flatnonzero(rng.random(n, dtype=np.float32) < q)
        xb = x[idx]
        r = 1.0 / (1.0 + np.exp(-(xb @ w + b))) - y[idx]
        c = np.minimum(np.float32(1.0), np.float32(clip) / (np.abs(r) * aug_norm[idx] + 1e-6))
        cr = (c * r).astype(np.float32)
        gw = cr @ xb + rng.standard_normal(d, dtype=np.float32) * np.float32(z * clip)
        gb = cr.sum() + np.float32(rng.standard_normal() * z * clip)
        w -= scale * gw
        b -= scale * gb
    return w, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=22_610)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    x, y = adult_shaped(args.n, np.random.default_rng(1))
    for rep in range(args.reps):
        rng = np.random.default_rng(100 + rep)
        c0, t0 = time.process_time(), time.perf_counter()
        w, b = fit(x, y, args.batch, args.epochs, 1.5, 1.0, 0.01, rng)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        acc = float(((x @ w + b > 0) == (y > 0.5)).mean())
        ex = args.n * args.epochs
        print(json.dumps({
            "impl": "numpy-f32", "n": args.n, "batch": args.batch, "epochs": args.epochs,
            "rep": rep, "wall_s": round(wall, 4), "cpu_s": round(cpu, 2),
            "examples_per_s": round(ex / wall), "examples_per_cpu_s": round(ex / cpu) if cpu > 0 else None,
            "train_accuracy": round(acc, 4), "numpy": np.__version__,
        }), flush=True)


if __name__ == "__main__":
    main()
