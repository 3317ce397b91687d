"""Shared fixtures: small synthetic data sets shaped like Adult (numeric and text features, a
text sensitive column, a text target), kept small so the whole suite runs in well under two
minutes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]


def adult_like(n: int, seed: int) -> tuple:
    """Features (age, hours numeric; job text), sex (text groups), income (text target)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], size=n, p=[0.4, 0.6])
    age = rng.integers(17, 91, size=n)
    hours = rng.integers(1, 100, size=n).astype(np.float64)
    job = rng.choice(["clerical", "craft", "sales"], size=n)
    score = (age - 17) / 73 + (hours / 99) + 0.35 * (sex == "Male") + 0.2 * (job == "sales")
    income = np.where(score + rng.normal(0, 0.25, size=n) > 1.0, ">50K", "<=50K")
    X = pd.DataFrame({"age": age, "hours": hours, "job": job, "sex": sex})
    return X, pd.Series(income, name="income")


BOUNDS = {"age": (17, 90), "hours": (1, 99)}


@pytest.fixture(scope="session")
def adult() -> tuple:
    return adult_like(3000, 1)


@pytest.fixture(scope="session")
def adult_public() -> tuple:
    return adult_like(800, 2)


@pytest.fixture(scope="session")
def dpfair_bin() -> str:
    """The `dpfair` binary (DPFAIR_BIN, or the workspace's target/{release,debug}); the CLI round
    trip tests are skipped, and say so, when it is not built."""
    candidates = [os.environ.get("DPFAIR_BIN"), shutil.which("dpfair")]
    candidates += [str(REPO / "target" / p / "dpfair") for p in ("debug", "release")]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    pytest.skip("skipped: no dpfair binary (build it with `cargo build -p dpfair-cli`)")
