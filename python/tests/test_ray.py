"""dpfair's statistics on Ray Data (`dpfair.ray`) with a local cluster of two worker processes:
LDP reports in many files (Arrow IPC and a partitioned Parquet data set) and fair regression's
counts from partitioned Parquet give, bit for bit, the single-machine accumulator's statistic
and, with the same seeded (test-only) noise, the same model; parts for another partition or
configuration are refused.

Skipped (and saying so) without Ray or the `dpfair` binary. Run by `.ci/engine`.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ray = pytest.importorskip("ray", reason='Ray is not installed (pip install "ray[data]==2.60.*")')

import dpfair  # noqa: E402
import dpfair.ray as dray  # noqa: E402
from dpfair.accumulators import FairRegressionCounts, LdpReports  # noqa: E402

EPSILON = 2.0


@pytest.fixture(scope="module")
def cluster():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
    )
    # The test data are kilobytes: without this, Ray Data bundles blocks below 1 MB into one
    # input, and a single worker gets everything (real report files are megabytes).
    ray.data.DataContext.get_current().target_min_block_size = 1
    yield
    ray.shutdown()


def _design(n: int, seed: int) -> pd.DataFrame:
    """x ∈ [0,1]², P(y = 1 | x) = 0.5 + 0.4·sin(2πx1)·cos(2πx2) (bench/ldp_scale.sh's design)."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.uniform(size=n), rng.uniform(size=n)
    eta = 0.5 + 0.4 * np.sin(2 * np.pi * x1) * np.cos(2 * np.pi * x2)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": (rng.uniform(size=n) < eta).astype(int)})


def _run(binary, *args):
    subprocess.run([binary, *map(str, args)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def ldp(dpfair_bin, tmp_path_factory):
    """A depth-4 Hadamard partition, 4 × 5,000 reports: two Arrow files, two converted to a
    partitioned Parquet data set (several row groups each), and a file for another partition."""
    d = tmp_path_factory.mktemp("ldp")
    _design(2000, 1).to_csv(d / "public.csv", index=False)
    _design(5000, 2).to_csv(d / "private.csv", index=False)
    for name, depth in (("tree.json", 4), ("other.json", 3)):
        _run(
            dpfair_bin,
            "ldp",
            "partition",
            "--public",
            d / "public.csv",
            "--target",
            "y",
            "--depth",
            depth,
            "--epsilon",
            EPSILON,
            "--mechanism",
            "hadamard",
            "--out",
            d / name,
        )
    reports = d / "reports"
    (reports / "parquet").mkdir(parents=True)
    arrow = []
    for i in range(1, 5):
        out = d / f"r{i}.arrow"
        _run(
            dpfair_bin,
            "ldp",
            "privatize",
            "--partition",
            d / "tree.json",
            "--data",
            d / "private.csv",
            "--out",
            out,
        )
        arrow.append(out)
        if i <= 2:
            (reports / out.name).write_bytes(out.read_bytes())
        else:
            table = pa.ipc.open_file(out).read_all()
            shard = reports / "parquet" / f"shard={i}"
            shard.mkdir()
            pq.write_table(table, shard / f"r{i}.parquet", row_group_size=1500)
    _run(
        dpfair_bin,
        "ldp",
        "privatize",
        "--partition",
        d / "other.json",
        "--data",
        d / "private.csv",
        "--out",
        d / "foreign.arrow",
    )
    _run(
        dpfair_bin,
        "ldp",
        "fit",
        "--partition",
        d / "tree.json",
        "--reports",
        *arrow,
        "--out",
        d / "cli_model.json",
    )
    return d


def _model_part(model_json: str) -> dict:
    return json.loads(model_json)["model"]


def test_ldp_reports_on_ray_workers_match_one_machine_and_the_cli(cluster, ldp):
    one = LdpReports(ldp / "tree.json")
    for i in range(1, 5):
        assert one.update_file(ldp / f"r{i}.arrow") == 5000
    parts = dray.ldp_parts(ldp / "reports", ldp / "tree.json")
    assert len(parts) == 4, "one part per file"
    # Folded on the cluster's workers, not in this process. Which worker takes a file is Ray's
    # choice: on a loaded machine one worker may take all four (seen at load average 9), so the
    # test checks what dpfair guarantees: any split of the files merges to the one-machine state.
    assert os.getpid() not in {p["worker"] for p in parts}
    merged = LdpReports(ldp / "tree.json")
    for p in parts:
        merged.merge(p["state"])
    assert merged.n_reports == 20000
    assert merged.state() == one.state()
    clf = dray.collect_ldp(ldp / "reports", ldp / "tree.json")
    assert isinstance(clf, dpfair.LPCTClassifier)
    cli = (ldp / "cli_model.json").read_text()
    # The reports are already private: the model is a function of the integer sums.
    assert _model_part(clf.model_.to_json()) == _model_part(cli)
    assert clf.ledger_["total"]["epsilon"] == pytest.approx(EPSILON)
    assert clf.ledger_["entries"][0]["note"].startswith("20000 users, one ε-LDP report")
    # The ledger is the CLI's too.
    assert json.loads(clf.model_.to_json())["ledger"] == json.loads(cli)["ledger"]


def test_reports_for_another_partition_are_refused(cluster, ldp):
    acc = LdpReports(ldp / "tree.json")
    with pytest.raises(ValueError, match="another partition"):
        acc.update_file(ldp / "foreign.arrow")
    assert acc.n_reports == 0
    with pytest.raises(Exception, match="another partition"):
        dray.collect_ldp([ldp / "r1.arrow", ldp / "foreign.arrow"], ldp / "tree.json")
    other = LdpReports(ldp / "other.json")
    other.update_file(ldp / "foreign.arrow")
    with pytest.raises(ValueError, match="cannot merge a part accumulated for"):
        acc.merge(other.to_bytes())
    with pytest.raises(ValueError, match="not the bytes of a dpfair accumulator"):
        acc.merge(b"\x00garbage")
    acc.update_file(ldp / "r1.arrow")
    with pytest.raises(ValueError, match="guard: must be finite and ≥ 0"):
        acc.finalize(guard=-1.0)  # refused before the release: the next call still releases
    acc.finalize()
    with pytest.raises(ValueError, match="already released"):
        acc.finalize()


GROUPS = ["a", "b", "c"]
SPEC = dict(groups=GROUPS, score_range=(0.0, 1.5), bins=12)


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    """6,000 scores of three groups in a Parquet data set partitioned into four shards."""
    rng = np.random.default_rng(5)
    g = rng.choice(GROUPS, size=6000, p=[0.5, 0.3, 0.2])
    s = rng.uniform(size=6000) + 0.25 * (g == "b") + 0.5 * (g == "c")
    df = pd.DataFrame({"score": s, "grp": g, "shard": rng.integers(0, 4, size=6000)})
    root = tmp_path_factory.mktemp("scores") / "data"
    pq.write_to_dataset(
        pa.Table.from_pandas(df, preserve_index=False), root, partition_cols=["shard"]
    )
    return df, root


def test_fair_regression_counts_on_ray_workers_match_one_machine(cluster, scores):
    df, root = scores
    one = FairRegressionCounts("score", "grp", **SPEC)
    one.update(pa.Table.from_pandas(df[["score", "grp"]], preserve_index=False))
    parts = dray.fair_regression_parts(
        ray.data.read_parquet(str(root)).repartition(4),
        score_column="score",
        sensitive="grp",
        **SPEC,
    )
    # Folded on the cluster's workers, not in this process. (Which worker takes a block is
    # Ray's choice: a fold of 1,500 scores ends before the next block is handed out, so one
    # worker may take them all.)
    assert os.getpid() not in {p["worker"] for p in parts}
    assert len(parts) == 4
    merged = FairRegressionCounts("score", "grp", **SPEC)
    for p in parts:
        merged.merge(p["state"])
    assert merged.counts() == one.counts()
    assert sum(one.counts()) == 6000

    def seeded():
        return dpfair.PrivacySession.insecure_seeded(1.0, seed=11)

    reg = dray.fit_fair_regression(
        str(root),
        score_column="score",
        sensitive="grp",
        alpha=0.05,
        epsilon=1.0,
        session=seeded(),
        **SPEC,
    )
    ref = one.finalize(alpha=0.05, epsilon=1.0, session=seeded())
    assert _model_part(reg.model_.to_json()) == _model_part(ref.model_.to_json())
    assert reg.ledger_["total"]["epsilon"] == pytest.approx(1.0)
    out = reg.predict(df[["score"]].head(5), sensitive_features=df["grp"].head(5))
    assert out.shape == (5,)


def test_mismatched_counts_and_undeclared_groups_are_refused(scores):
    df, _ = scores
    a = FairRegressionCounts("score", "grp", **SPEC)
    b = FairRegressionCounts("score", "grp", groups=GROUPS, score_range=(0.0, 1.5), bins=10)
    with pytest.raises(ValueError, match="bins = 10"):
        a.merge(b.to_bytes())
    with pytest.raises(ValueError, match="group `z`"):
        a.update(pa.table({"score": [0.5, 0.2], "grp": ["a", "z"]}))
    assert sum(a.counts()) == 0
