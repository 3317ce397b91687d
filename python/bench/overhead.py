"""Python overhead against the Rust library, side by side in one command.

In alternating blocks, runs the Rust example `fit_adult` (one warm process per block, fits timed
inside) from two starting points, and then the same fit from Python on a pandas DataFrame of the
same file, with its text columns as read and as `category` (`est.fit(X, y,
sensitive_features="9")`, CPU time of the whole call: input conversion, factorizing, one-hot
coding, the fit, the model file and the fitted attributes). The library's two starting points:

* `loaded`: the data set the CSV loader built (coded and one-hot, untimed); timed: the fit alone;
* `columns`: the columns in memory as a DataFrame holds them (numbers and strings); timed: the
  library's factorize, `Frame::learn` (the data set), the fit and the model file: the work a
  Python fit on a DataFrame asks of the library.

Every fit runs in a seeded session with the same seed, so all draw the same noise: the script
checks that every model file has the same digest (the same work was done). CPU time, not wall
clock: the machine is shared.

Run from the repository root, after `cargo build --release -p dpfair-python --example fit_adult`
and `maturin develop --release` (in python/); the second argument is the number of blocks (5
fits per side per block, alternating):

    DPFAIR_DATA_DIR=../shared/datasets python python/bench/overhead.py dp-logistic 6
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


def rust_fits(method: str, reps: int, start: str) -> list:
    """CPU seconds and model digest of `reps` library fits in one warm process.

    `start` is `loaded` or `columns` (module docs); each fit is timed inside the Rust example.
    """
    exe = REPO / "target" / "release" / "examples" / "fit_adult"
    out = subprocess.run(
        [str(exe), method, str(reps), start], check=True, capture_output=True, text=True
    )
    fits = []
    for line in out.stdout.splitlines():
        _, cpu, _, digest = line.split()
        fits.append((float(cpu), digest))
    return fits


def as_categories(X: pd.DataFrame, y: pd.Series) -> tuple:
    """The same frame with every text column as pandas `category` (codes read directly)."""
    X = X.copy()
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]):
            X[c] = X[c].astype("category")
    return X, y.astype("category")


def main() -> None:
    """Alternate blocks of library and Python fits and print the medians (module docs)."""
    method = sys.argv[1] if len(sys.argv) > 1 else "dp-logistic"
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    per_block = 5
    X, y = adult()
    inputs = {
        "text columns as read (pandas `str`)": (X, y),
        "text columns as `category`": as_categories(X, y),
    }
    starts = {
        "from the loaded data set (fit only)": "loaded",
        "from columns in memory (factorize, data set, fit, model file)": "columns",
    }
    rust = {name: [] for name in starts}
    python = {name: [] for name in inputs}
    # Warm both sides up (page faults of the first fit, lazy imports), untimed.
    for start in starts.values():
        rust_fits(method, 1, start)
    for XX, yy in inputs.values():
        python_fit(method, XX, yy)
    want = None
    for _ in range(blocks):
        for name, start in starts.items():
            for cpu, digest in rust_fits(method, per_block, start):
                rust[name].append(cpu)
                want = want or digest
                if digest != want:
                    sys.exit(f"the two library fits differ: {want}, {digest}")
        for name, (XX, yy) in inputs.items():
            for _ in range(per_block):
                cpu, digest = python_fit(method, XX, yy)
                if digest != want:
                    sys.exit(f"the two fits differ: Rust {want}, Python {digest}")
                python[name].append(cpu)
    print(
        f"{method} on Adult ({len(X)} rows), {blocks} blocks of {per_block} fits per side, "
        f"same model digest; pandas {pd.__version__}"
    )
    for name, cpus in rust.items():
        print(
            f"Rust library, {name}, CPU s: median {statistics.median(cpus):.4f} "
            f"(quartiles {quartiles(cpus)})"
        )
    for name, cpus in python.items():
        p = statistics.median(cpus)
        against = ", ".join(
            f"{100 * (p - statistics.median(r)) / statistics.median(r):+.1f}% against {start}"
            for r, start in zip(rust.values(), starts.values())
        )
        print(f"Python fit, {name}, CPU s: median {p:.4f} (quartiles {quartiles(cpus)}): {against}")


def quartiles(values: list) -> str:
    """The lower and upper quartiles, rounded."""
    q = statistics.quantiles(values, n=4)
    return f"{q[0]:.4f}–{q[2]:.4f}"


if __name__ == "__main__":
    main()
