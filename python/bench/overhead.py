"""Python overhead against the Rust library, side by side in one command.

For each repetition, runs the Rust example `fit_adult` (CSV loader, then `pipeline::fit`; the
fit's CPU time is timed inside) and then the same fit from Python on a pandas DataFrame of the
same file (`est.fit(X, y, sensitive_features="9")`, CPU time of the whole call: input
conversion, one-hot coding, the fit and the fitted attributes). Both run in a seeded session with
the same seed, so they draw the same noise: the script checks that the two model files have the
same digest (the same work was done). CPU time, not wall clock: the machine is shared.

Run from the repository root, after `cargo build --release -p dpfair-python --example fit_adult`
and `maturin develop --release` (in python/):

    DPFAIR_DATA_DIR=../shared/datasets python python/bench/overhead.py dp-logistic 5
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

import dpfair

BOUNDS = {
    "0": (17, 90),
    "2": (0, 1_500_000),
    "4": (1, 16),
    "10": (0, 99_999),
    "11": (0, 4356),
    "12": (1, 99),
}
REPO = Path(__file__).resolve().parents[2]


def adult() -> tuple:
    """Raw UCI Adult as the CLI reads it: columns named by position, rows with `?` dropped."""
    path = Path(os.environ.get("DPFAIR_DATA_DIR", "../shared/datasets")) / "adult.data"
    df = pd.read_csv(path, header=None, skipinitialspace=True, na_values="?").dropna()
    df.columns = [str(c) for c in df.columns]
    return df.drop(columns="14"), df["14"]


def python_fit(method: str, X: pd.DataFrame, y: pd.Series) -> tuple:
    """CPU seconds of one Python fit, and its model file's digest."""
    session = dpfair.PrivacySession.insecure_seeded(epsilon=1.0, delta=1e-5, seed=1)
    if method == "dp-logistic":
        est = dpfair.DPLogisticRegression(
            epsilon=1.0, substitution=True, bounds=BOUNDS, session=session
        )
    else:
        est = dpfair.CDPFairClassifier(epsilon=1.0, delta=1e-5, bounds=BOUNDS, session=session)
    t0 = time.process_time()
    est.fit(X, y, sensitive_features="9")
    cpu = time.process_time() - t0
    return cpu, json.loads(est.model_.to_json())["digest"]


def rust_fit(method: str) -> tuple:
    """CPU seconds of one library fit (timed inside the Rust example), and its digest."""
    exe = REPO / "target" / "release" / "examples" / "fit_adult"
    out = subprocess.run([str(exe), method, "1"], check=True, capture_output=True, text=True)
    _, cpu, _, digest = out.stdout.split()
    return float(cpu), digest


def main() -> None:
    """Alternate Rust and Python fits and print the medians (module docs)."""
    method = sys.argv[1] if len(sys.argv) > 1 else "dp-logistic"
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    X, y = adult()
    rust, python = [], []
    for _ in range(reps):
        r_cpu, r_digest = rust_fit(method)
        p_cpu, p_digest = python_fit(method, X, y)
        if r_digest != p_digest:
            sys.exit(f"the two fits differ: Rust {r_digest}, Python {p_digest}")
        rust.append(r_cpu)
        python.append(p_cpu)
    r, p = statistics.median(rust), statistics.median(python)
    print(f"{method} on Adult ({len(X)} rows), {reps} repetitions, same model digest")
    print(f"Rust library fit, CPU s:  median {r:.4f}  all {[round(v, 4) for v in rust]}")
    print(f"Python fit, CPU s:        median {p:.4f}  all {[round(v, 4) for v in python]}")
    print(f"Python overhead: {100 * (p - r) / r:+.1f}% of the library fit")


if __name__ == "__main__":
    main()
