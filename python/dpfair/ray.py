"""dpfair's statistics on Ray Data: each block folded on a worker, merged and released once.

`collect_ldp` collects LPCT's local-DP reports (files from `dpfair ldp privatize`, or Parquet
converted from them) and `fit_fair_regression` fits Xian et al.'s post-processing from scores
in Parquet (or any Ray dataset). Both run `dpfair.accumulators` on Ray workers
(`map_batches`): a worker folds its block into exact integer sums and returns their bytes; the
driver merges them and finalizes once, so noise is drawn once on the driver and a block Ray
recomputes after a failure never draws it again (docs/deploy.md, "At population scale").

Ray is not a dependency of the package: `pip install "ray[data]==2.60.*"`. The functions use
the Ray cluster this process is connected to (`ray.init(...)` first to choose one), or start a
local one. Every worker needs dpfair installed.

Example (a local cluster of two workers; `tree.json` and `reports/` from `dpfair ldp`):
    >>> import ray, dpfair.ray
    >>> ray.init(num_cpus=2)                                          # doctest: +SKIP
    >>> clf = dpfair.ray.collect_ldp(["reports/"], "tree.json")       # doctest: +SKIP
    >>> clf.ledger_["total"]["epsilon"]                               # doctest: +SKIP
    2.0
    >>> ds = ray.data.read_parquet("scores/")                         # doctest: +SKIP
    >>> reg = dpfair.ray.fit_fair_regression(                         # doctest: +SKIP
    ...     ds, score_column="score", sensitive="sex", groups=["F", "M"],
    ...     score_range=(0, 1), alpha=0.05, epsilon=1.0)

"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dpfair.accumulators import REPORT_SUFFIXES, FairRegressionCounts, LdpReports


def _ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise ImportError('dpfair.ray needs Ray Data: pip install "ray[data]==2.60.*"') from None
    return ray


def report_files(paths: Any) -> list:
    """The report files among `paths`, in name order.

    Files as given; directories searched recursively for `.arrow`, `.ipc`, `.csv` and
    `.parquet` files (so a partitioned Parquet data set works as it is).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(
                f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in REPORT_SUFFIXES
            )
            if not found:
                raise ValueError(f"{p}: no report files ({', '.join(REPORT_SUFFIXES)}) in it")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise ValueError(f"{p}: no such file or directory")
    return [str(f) for f in out]


class _Fold:
    """A Ray Data actor: folds each block it is given into one accumulator's bytes."""

    def __init__(self, fold: Any) -> None:
        self.fold = fold

    def __call__(self, batch: Any) -> dict:
        return {"state": [self.fold(batch)], "worker": [os.getpid()]}


def _gather(ray: Any, dataset: Any, fold: Any) -> list:
    """Run `fold` (a block → one accumulator's bytes) on every block of `dataset`.

    A pool of one actor (worker process) per CPU of the cluster folds the blocks, one block in
    flight per actor, so every worker takes part once there are as many blocks as workers. Each
    actor asks for half a CPU: the other half of the cluster stays free for the tasks that read
    the blocks (a pool holding every CPU would wait forever for its own input). Returns the
    parts' rows: `state` (bytes) and `worker` (the process id that folded it).
    """
    workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    pool = ray.data.ActorPoolStrategy(size=workers, max_tasks_in_flight_per_actor=1)
    return dataset.map_batches(
        _Fold,
        fn_constructor_args=(fold,),
        compute=pool,
        num_cpus=0.5,
        batch_size=None,
        batch_format="pyarrow",
    ).take_all()


def ldp_parts(reports: Any, partition: Any) -> list:
    """Each worker's part of the reports: `collect_ldp` before the merge.

    Rows with `state` (an `LdpReports`'s bytes) and `worker` (its process id); `reports` and
    `partition` as for `collect_ldp`.
    """
    ray = _ray()
    partition_json = LdpReports(partition)._partition_json
    if isinstance(reports, ray.data.Dataset):

        def fold(batch: Any) -> bytes:
            acc = LdpReports(partition_json)
            acc.update(batch)
            return acc.to_bytes()

        return _gather(ray, reports, fold)
    files = report_files(reports)

    def fold_files(batch: Any) -> bytes:
        acc = LdpReports(partition_json)
        for path in batch.column("path").to_pylist():
            acc.update_file(path)
        return acc.to_bytes()

    paths = ray.data.from_items([{"path": f} for f in files], override_num_blocks=len(files))
    return _gather(ray, paths, fold_files)


def collect_ldp(
    reports: Any, partition: Any, *, public_weight: float | None = None, guard: float = 3.0
) -> Any:
    """LPCT's classifier from local-DP reports collected on Ray.

    `reports`: report files or directories of them (`dpfair ldp privatize`'s Arrow IPC or CSV
    files, Parquet files converted from them; one Ray task per file, whose metadata must name
    the partition), or a `ray.data.Dataset` with the columns `row` and `bit` (then nothing
    checks that its reports were made for this partition: that is the caller's word).
    `partition`: the partition file (path or text), made with `--mechanism hadamard`; `guard`:
    LPCT's significance guard, as `dpfair ldp fit --guard` (0: the paper's estimates).
    Returns a fitted `dpfair.LPCTClassifier`, the model `dpfair ldp fit` writes from the same
    reports; its ledger records the n reports, each ε-LDP.
    """
    total = LdpReports(partition)
    for part in ldp_parts(reports, partition):
        total.merge(part["state"])
    return total.finalize(public_weight, guard)


def fair_regression_parts(
    dataset: Any,
    *,
    score_column: str,
    sensitive: str,
    groups: list,
    score_range: tuple,
    bins: int = 36,
) -> list:
    """Each worker's joint counts: `fit_fair_regression` before the merge.

    Rows with `state` (a `FairRegressionCounts`'s bytes) and `worker` (its process id).
    """
    ray = _ray()
    if not isinstance(dataset, ray.data.Dataset):
        dataset = ray.data.read_parquet(dataset)
    spec = dict(groups=list(groups), score_range=tuple(score_range), bins=bins)

    def fold(batch: Any) -> bytes:
        acc = FairRegressionCounts(score_column, sensitive, **spec)
        acc.update(batch)
        return acc.to_bytes()

    return _gather(ray, dataset.select_columns([score_column, sensitive]), fold)


def fit_fair_regression(
    dataset: Any,
    *,
    score_column: str,
    sensitive: str,
    groups: list,
    score_range: tuple,
    bins: int = 36,
    alpha: float = 0.0,
    epsilon: float = 1.0,
    session: Any = None,
) -> Any:
    """Xian et al.'s private fair post-processing of scores held in a Ray dataset.

    `dataset`: a `ray.data.Dataset`, or Parquet paths (read with `ray.data.read_parquet`),
    with the score column and the sensitive column. `groups` (public, declared),
    `score_range` (public) and `bins` fix the statistic; `alpha` and `epsilon` the release,
    charged to `session` (a `dpfair.PrivacySession`) or to a session of its own with OS
    noise. The counts are released once, on the driver. Returns a fitted
    `dpfair.PrivateFairRegressor`.
    """
    total = FairRegressionCounts(
        score_column, sensitive, groups=groups, score_range=score_range, bins=bins
    )
    parts = fair_regression_parts(
        dataset,
        score_column=score_column,
        sensitive=sensitive,
        groups=groups,
        score_range=score_range,
        bins=bins,
    )
    for part in parts:
        total.merge(part["state"])
    return total.finalize(alpha=alpha, epsilon=epsilon, session=session)
