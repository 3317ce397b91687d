"""`PrivateMetricFrame`: a private group report, shaped like Fairlearn's `MetricFrame`.

Every number comes from one charged release of the group × label × prediction counts and its
post-processing (see `dpfair.metrics.private_group_report` and docs/evaluation.md).
"""

from __future__ import annotations

import json
import math
from typing import Any

from dpfair._ledger import Ledger

#: The per-group metrics, in column order (Fairlearn's names).
METRICS = ["count", "accuracy", "selection_rate", "true_positive_rate", "false_positive_rate"]
#: The metrics with a between-group difference and ratio.
RATES = METRICS[1:]
#: Fairlearn's between-group fairness figures.
DISPARITIES = [
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
]


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:
        return None
    return pd


def _value(figure: dict) -> float:
    """A figure's point value; NaN when its noisy denominator is 0 (as Fairlearn's NaN)."""
    v = figure["value"]
    return math.nan if v is None else float(v)


def _interval(figure: dict) -> tuple:
    return (float(figure["lower"]), float(figure["upper"]))


class PrivateMetricFrame:
    """A private group report with intervals, shaped like Fairlearn's `MetricFrame`.

    Attributes:
        by_group: point values per declared group (rows) and metric (columns): a pandas
            DataFrame when pandas is installed, else a dict of dicts. NaN where the group's
            noisy denominator is 0.
        overall: point values over all rows (a pandas Series, or a dict).
        by_group_interval: the intervals, shaped like `by_group`, each cell `(lower, upper)`.
        overall_interval: the intervals of `overall`.
        level: the intervals' level (e.g. 0.95); each figure's own, not simultaneous.
        epsilon: the ε of the one release; `relation`: its neighbouring relation.
        ledger_: the release's ledger (one entry).

    `difference()` / `ratio()` give Fairlearn's between-group max − min and min / max per rate,
    `difference_interval()` / `ratio_interval()` their intervals, `disparities` the
    demographic-parity, equalized-odds and equal-opportunity figures with intervals.

    """

    def __init__(self, native: Any) -> None:
        self._native = native
        self._report = json.loads(native.report_json())
        r = self._report
        self.level = float(r["level"])
        self.epsilon = float(r["epsilon"])
        self.relation = r["relation"]
        self.noisy_counts = list(r["noisy_counts"])
        self.groups = [row["group"] for row in r["by_group"]]
        self.ledger_ = Ledger(native)
        points = {row["group"]: {m: _value(row[m]) for m in METRICS} for row in r["by_group"]}
        intervals = {row["group"]: {m: _interval(row[m]) for m in METRICS} for row in r["by_group"]}
        overall = {m: _value(r["overall"][m]) for m in METRICS}
        overall_iv = {m: _interval(r["overall"][m]) for m in METRICS}
        pd = _pandas()
        if pd is None:
            self.by_group: Any = points
            self.by_group_interval: Any = intervals
            self.overall: Any = overall
            self.overall_interval: Any = overall_iv
        else:
            index = pd.Index(self.groups, name="group")
            self.by_group = pd.DataFrame([points[g] for g in self.groups], index=index)[METRICS]
            self.by_group_interval = pd.DataFrame([intervals[g] for g in self.groups], index=index)[
                METRICS
            ]
            self.overall = pd.Series(overall)[METRICS]
            self.overall_interval = pd.Series(overall_iv)[METRICS]

    def _per_rate(self, key: str, as_interval: bool) -> Any:
        out = {m: (_interval if as_interval else _value)(self._report[key][m]) for m in RATES}
        pd = _pandas()
        return out if pd is None else pd.Series(out)[RATES]

    def difference(self) -> Any:
        """Per rate, max − min over the groups (Fairlearn's `MetricFrame.difference()`)."""
        return self._per_rate("difference", False)

    def ratio(self) -> Any:
        """Per rate, min / max over the groups (Fairlearn's `MetricFrame.ratio()`)."""
        return self._per_rate("ratio", False)

    def difference_interval(self) -> Any:
        """Per rate, the interval of `difference()` (groups' intervals at level/K jointly)."""
        return self._per_rate("difference", True)

    def ratio_interval(self) -> Any:
        """Per rate, the interval of `ratio()`."""
        return self._per_rate("ratio", True)

    @property
    def disparities(self) -> Any:
        """Fairlearn's fairness figures (rows) with `value`, `lower`, `upper` (columns)."""
        d = self._report["disparities"]
        rows = {
            name: {
                "value": _value(d[name]),
                "lower": _interval(d[name])[0],
                "upper": _interval(d[name])[1],
            }
            for name in DISPARITIES
        }
        pd = _pandas()
        return rows if pd is None else pd.DataFrame.from_dict(rows, orient="index")

    def interval(self, metric: str, group: str | None = None) -> tuple:
        """The `(lower, upper)` interval of a metric of `group` (None: overall) or a disparity.

        `metric` is one of the per-group metrics or a disparity such as
        `"demographic_parity_difference"` (then `group` is not used).
        """
        if metric in DISPARITIES:
            return _interval(self._report["disparities"][metric])
        if metric not in METRICS:
            raise ValueError(f"metric `{metric}`: expected one of {METRICS + DISPARITIES}")
        if group is None:
            return _interval(self._report["overall"][metric])
        for row in self._report["by_group"]:
            if row["group"] == str(group):
                return _interval(row[metric])
        raise ValueError(f"group `{group}` is not a declared group ({self.groups})")

    def to_dict(self) -> dict:
        """The whole report as the CLI's `--out` JSON writes it under `report`."""
        return json.loads(self._native.report_json())

    def __str__(self) -> str:
        return self._native.render()

    def __repr__(self) -> str:
        return (
            f"PrivateMetricFrame({len(self.groups)} groups, ε={self.epsilon:g}, "
            f"{self.relation}, {self.level:.0%} intervals)"
        )
