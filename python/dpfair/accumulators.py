"""Mergeable exact statistics for distributed engines (docs/deploy.md, "At population scale").

A worker folds its part of the data into an accumulator (`update` with pyarrow record batches,
or `update_file`), sends `to_bytes()` — the exact integer state and the configuration it was
accumulated for — to the driver, which `merge`s every part into one accumulator and calls
`finalize` once. Integers add exactly, so any split of the data, merged in any order, gives
the same statistic bit for bit as one pass on one machine.

Noise is drawn once, in `finalize` on the driver, never per part: an engine that recomputes a
lost part gets the same integers and draws nothing (drawing per part would let a recomputed
part release a second, independent noisy copy — the hazard Tumult Analytics documents for
Spark). `finalize` runs once per accumulator, and a part accumulated for another
configuration (another LDP partition, ε, groups or bins) is refused by `merge`, naming what
differs.

* `LdpReports`: Hadamard local-DP reports for one LPCT partition (`dpfair ldp partition` /
  `ldp privatize`), finalized into an LPCT classifier (the reports are already private: the
  ledger records them, no noise is drawn).
* `FairRegressionCounts`: Xian et al.'s group × score-bin counts, finalized by one ε-DP
  release into a `PrivateFairRegressor`.

`dpfair.ray` runs them on Ray Data; any engine that can ship bytes to a driver can do the same.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from dpfair import _native

#: The file name endings `LdpReports.update_file` reads.
REPORT_SUFFIXES = (".arrow", ".ipc", ".csv", ".parquet")


def _table(batch: Any) -> Any:
    """A pyarrow Table of `batch` (a RecordBatch, a Table or a dict of arrays)."""
    import pyarrow as pa

    if isinstance(batch, pa.Table):
        return batch
    if isinstance(batch, pa.RecordBatch):
        return pa.Table.from_batches([batch])
    return pa.table(batch)


def _column(table: Any, name: str) -> Any:
    if name not in table.column_names:
        raise ValueError(f"the batch has no column `{name}` (it has {table.column_names})")
    return table.column(name)


class _Mergeable:
    """What every accumulator shares: its bytes, and merging a part or a part's bytes."""

    _native: Any

    def merge(self, other: Any) -> None:
        """Add another part (an accumulator, or its `to_bytes()`); refuses a mismatched one."""
        if isinstance(other, _Mergeable):
            self._native.merge(other._native)
        else:
            self._native.merge_bytes(bytes(other))

    def to_bytes(self) -> bytes:
        """The exact integer state and the configuration it was accumulated for (JSON text)."""
        return self._native.to_bytes()


class LdpReports(_Mergeable):
    """Hadamard LDP reports for one LPCT partition, as exact per-row integer sums.

    `partition` is the partition file (`dpfair ldp partition --mechanism hadamard`'s
    TREE.json): its path, or its text. Reports come as record batches with the columns `row`
    (unsigned integers) and `bit` (Boolean), as `dpfair ldp privatize` writes them, or as whole
    files (`update_file`: Arrow IPC, CSV, or Parquet converted from an Arrow report file); a
    file's metadata must name this partition (its digest), mechanism and ε.

    Example (`tree.json` and the report files from `dpfair ldp partition|privatize`):
        >>> from dpfair.accumulators import LdpReports
        >>> part = LdpReports("tree.json")                  # doctest: +SKIP
        >>> part.update_file("reports/r1.arrow")            # on a worker  # doctest: +SKIP
        1000000
        >>> total = LdpReports("tree.json")                 # on the driver  # doctest: +SKIP
        >>> total.merge(part.to_bytes())                    # doctest: +SKIP
        >>> clf = total.finalize()                          # an LPCTClassifier  # doctest: +SKIP

    """

    def __init__(self, partition: Any) -> None:
        text = str(partition)
        if not text.lstrip().startswith("{"):
            text = Path(partition).read_text()
        self._partition_json = text
        self._native = _native.LdpReports(text)

    def update(self, batch: Any) -> None:
        """Fold in a batch of reports (a pyarrow RecordBatch or Table: `row`, `bit`).

        A batch whose schema carries dpfair's report metadata is checked against the partition.
        """
        table = _table(batch)
        meta = table.schema.metadata or {}
        if b"dpfair.format" in meta:
            self.check_metadata(meta)
        rows = _column(table, "row")
        bits = _column(table, "bit")
        if rows.null_count or bits.null_count:
            raise ValueError("reports: a missing value in `row` or `bit`")
        self._native.update(
            rows.to_numpy(zero_copy_only=False), bits.to_numpy(zero_copy_only=False)
        )

    def check_metadata(self, metadata: dict) -> None:
        """Refuse a report file's schema metadata that is not for this partition, mechanism, ε."""
        decoded = {
            (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
            for k, v in metadata.items()
        }
        self._native.check_metadata(decoded)

    def update_file(self, path: Any) -> int:
        """Fold in a report file; returns the number of reports it held.

        Arrow IPC (`.arrow`, `.ipc`) and CSV files are read by the library (one record batch at
        a time); Parquet files (written from an Arrow report file, keeping its metadata) with
        pyarrow, batch by batch. Errors name the file.
        """
        path = os.fspath(path)
        if not path.lower().endswith(".parquet"):
            return self._native.update_file(path)
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        try:
            self.check_metadata(f.schema_arrow.metadata or {})
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        n = 0
        for batch in f.iter_batches(batch_size=1 << 20, columns=["row", "bit"]):
            self.update(batch)
            n += batch.num_rows
        return n

    @property
    def n_reports(self) -> int:
        """The number of reports folded in."""
        return self._native.n_reports

    @property
    def partition_digest(self) -> str:
        """The partition's digest (`sha256:…`), which every report file carries."""
        return self._native.partition_digest

    def state(self) -> tuple:
        """The exact state: per Hadamard row, the number of reports and of +1 bits."""
        return self._native.state()

    def finalize(self, public_weight: float | None = None, guard: float = 3.0) -> Any:
        """LPCT's classifier from the reports (Ma & Yang, eq. (8)), once.

        The partition's public counts are weighted by `public_weight` (λ; default Theorem 4's);
        a leaf keeps its own estimate only when it is `guard` standard deviations from 1/2,
        else takes its nearest such ancestor's, as `dpfair ldp fit --guard` and
        `LPCTClassifier(guard=...)` do (0: the paper's estimates).
        Returns a fitted `dpfair.LPCTClassifier` whose ledger records the n reports, each
        ε-LDP; its model file is the one `dpfair ldp fit` writes from the same reports.
        """
        from dpfair import _fitted_estimator

        return _fitted_estimator(
            self._native.finalize(public_weight, guard), "the collected reports"
        )


class FairRegressionCounts(_Mergeable):
    """Fair regression's exact joint counts (Xian et al., Algorithm 1 lines 4–6), mergeable.

    Rows come as record batches with the score column and the sensitive column; `groups` is
    the public group set (declared: a value outside it is an error naming it), `score_range`
    the public `(lo, hi)` and `bins` the number of equal bins on it. Rows with a missing score
    or group are skipped (as the CLI drops them; how many is private and not reported).

    Example:
        >>> import pyarrow as pa
        >>> from dpfair import PrivacySession
        >>> from dpfair.accumulators import FairRegressionCounts
        >>> def counts():
        ...     return FairRegressionCounts("score", "sex", groups=["F", "M"],
        ...                                 score_range=(0.0, 1.0), bins=4)
        >>> a, b = counts(), counts()                      # two workers' parts
        >>> a.update(pa.table({"score": [0.1, 0.9], "sex": ["F", "M"]}))
        >>> b.update(pa.table({"score": [0.4, 0.6], "sex": ["M", "M"]}))
        >>> total = counts()                               # the driver
        >>> for part in (a, b):
        ...     total.merge(part.to_bytes())
        >>> total.counts()
        [1, 0, 0, 0, 0, 1, 1, 1]
        >>> reg = total.finalize(alpha=0.1, epsilon=1.0, session=PrivacySession(1.0))
        >>> reg.ledger_["total"]["epsilon"]
        1.0

    """

    def __init__(
        self,
        score_column: str,
        sensitive: str,
        *,
        groups: list,
        score_range: tuple,
        bins: int = 36,
    ) -> None:
        self.score_column = score_column
        self.sensitive = sensitive
        self.groups = [str(g) for g in groups]
        lo, hi = score_range
        self._native = _native.JointCounts(
            score_column, sensitive, self.groups, float(lo), float(hi), int(bins)
        )

    def update(self, batch: Any) -> None:
        """Count the rows of a pyarrow RecordBatch or Table (or a dict of arrays)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        table = _table(batch)
        scores = _column(table, self.score_column)
        groups = _column(table, self.sensitive)
        present = pc.and_(pc.is_valid(scores), pc.is_valid(groups))
        if len(scores) and pc.sum(present).as_py() != len(scores):
            scores, groups = scores.filter(present), groups.filter(present)
        if not pa.types.is_string(groups.type):
            groups = pc.cast(groups, pa.string())
        codes = pc.index_in(groups, value_set=pa.array(self.groups))
        if codes.null_count:
            bad = groups.filter(pc.is_null(codes))[0].as_py()
            raise ValueError(
                f"the data has group `{bad}` in `{self.sensitive}`, which is not among the "
                f"declared groups {self.groups}"
            )
        self._native.update(
            np.ascontiguousarray(pc.cast(scores, pa.float64()).to_numpy(), dtype=np.float64),
            np.ascontiguousarray(codes.to_numpy(), dtype=np.uint32),
        )

    def counts(self) -> list:
        """The exact counts, group-major (`counts[a * bins + j]`)."""
        return self._native.counts()

    def finalize(self, *, alpha: float = 0.0, epsilon: float = 1.0, session: Any = None) -> Any:
        """Release the counts once (ε-DP, exact discrete Laplace) and post-process them.

        The release is charged to `session` (a `dpfair.PrivacySession`), or to a session of its
        own with noise from the OS CSPRNG. Returns a fitted `dpfair.PrivateFairRegressor`
        predicting from the score column and the sensitive column.
        """
        from dpfair import _fitted_estimator

        native_session = None if session is None else session._native
        model = self._native.finalize(float(alpha), float(epsilon), native_session)
        return _fitted_estimator(model, "the merged counts")
