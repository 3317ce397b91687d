"""Fairness metrics under Fairlearn's names, the group report, and its private version.

The numbers come from dpfair's fairness crate (the ones `dpfair evaluate` prints). Every
function here except `private_group_report` is exact and **not private**: use them on test data
you may show, or on predictions whose release you have accounted for. To publish figures about
private rows use `private_group_report` (one charged release, intervals; docs/evaluation.md).

Binary predictions are compared with `pos_label` (1 by default, as in Fairlearn; give the
positive label of a text target, e.g. `pos_label=">50K"`). Groups are the distinct values of
`sensitive_features` (any labels).

Example:
    >>> import numpy as np
    >>> from dpfair.metrics import demographic_parity_difference
    >>> y_pred = np.array([1, 0, 1, 1, 0, 0])
    >>> groups = np.array(["a", "a", "a", "b", "b", "b"])
    >>> round(demographic_parity_difference(None, y_pred, sensitive_features=groups), 4)
    0.3333

"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpfair import _native
from dpfair._input import _as_numpy_1d, labels_as_text
from dpfair._private_frame import PrivateMetricFrame

__all__ = [
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "multiclass_unfairness",
    "ks_statistical_parity",
    "group_report",
    "GroupReport",
    "private_group_report",
    "PrivateMetricFrame",
]


def _groups(sensitive_features: Any, n: int) -> tuple[np.ndarray, list]:
    """Group codes (uint32) and names, names in sorted order."""
    labels = labels_as_text(sensitive_features, "sensitive_features")
    if len(labels) != n:
        raise ValueError(f"sensitive_features has {len(labels)} rows, y_pred has {n}")
    names, codes = np.unique(np.array(labels, dtype=object), return_inverse=True)
    return codes.astype(np.uint32), [str(v) for v in names]


def _binary(y: Any, pos_label: Any, what: str) -> np.ndarray:
    """0/1 indicators of `y == pos_label`."""
    arr = _as_numpy_1d(y, what)
    return np.ascontiguousarray(arr == pos_label, dtype=np.uint8)


def _check_method(method: str) -> None:
    if method not in ("between_groups", "to_overall"):
        raise ValueError(f"method `{method}`: expected `between_groups` or `to_overall`")


def _parity(
    y_pred: Any, sensitive_features: Any, method: str, pos_label: Any, between: Any, overall: Any
) -> float:
    """A demographic-parity measure: `between` groups or each group `overall`."""
    _check_method(method)
    pred = _binary(y_pred, pos_label, "y_pred")
    codes, _ = _groups(sensitive_features, len(pred))
    return (between if method == "between_groups" else overall)(pred, codes)


def demographic_parity_difference(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: str = "between_groups",
    pos_label: Any = 1,
) -> float:
    """Largest gap in selection rate P(ŷ = pos_label | group): between groups or to overall.

    `y_true` is not used (Fairlearn's signature).
    """
    return _parity(
        y_pred,
        sensitive_features,
        method,
        pos_label,
        _native.demographic_parity_difference,
        _native.demographic_parity_difference_to_overall,
    )


def demographic_parity_ratio(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    method: str = "between_groups",
    pos_label: Any = 1,
) -> float:
    """Smallest ratio of selection rates: min / max between groups, or each to overall."""
    return _parity(
        y_pred,
        sensitive_features,
        method,
        pos_label,
        _native.demographic_parity_ratio,
        _native.demographic_parity_ratio_to_overall,
    )


def equal_opportunity_difference(
    y_true: Any, y_pred: Any, *, sensitive_features: Any, pos_label: Any = 1
) -> float:
    """Largest gap between groups in true positive rate P(ŷ = pos | y = pos, group)."""
    true = _binary(y_true, pos_label, "y_true")
    pred = _binary(y_pred, pos_label, "y_pred")
    codes, _ = _groups(sensitive_features, len(pred))
    return _native.equal_opportunity_difference(true, pred, codes)


def equalized_odds_difference(
    y_true: Any, y_pred: Any, *, sensitive_features: Any, pos_label: Any = 1
) -> float:
    """The larger of the gaps in true positive rate and in false positive rate between groups.

    The false positive rate gap is the true positive rate gap of the negatives (the rows with
    `y_true != pos_label`, with their labels flipped).
    """
    true = _binary(y_true, pos_label, "y_true")
    pred = _binary(y_pred, pos_label, "y_pred")
    codes, _ = _groups(sensitive_features, len(pred))
    tpr_gap = _native.equal_opportunity_difference(true, pred, codes)
    fpr_gap = _native.equal_opportunity_difference(1 - true, pred, codes)
    return max(tpr_gap, fpr_gap)


def multiclass_unfairness(y_true: Any, y_pred: Any, *, sensitive_features: Any) -> float:
    """Max over classes k and pairs of groups of |P(ŷ = k | s) − P(ŷ = k | s')|.

    Multi-class demographic parity, as DP2DP measures it. Classes are the distinct values of
    `y_pred` and `y_true` (when given).
    """
    pred = _as_numpy_1d(y_pred, "y_pred")
    pool = pred if y_true is None else np.concatenate([pred, _as_numpy_1d(y_true, "y_true")])
    classes = np.unique(pool)
    codes_pred = np.searchsorted(classes, pred).astype(np.uint32)
    codes, _ = _groups(sensitive_features, len(pred))
    return _native.multiclass_unfairness(codes_pred, len(classes), codes)


def ks_statistical_parity(y_true: Any, y_pred: Any, *, sensitive_features: Any) -> float:
    """Largest Kolmogorov–Smirnov distance between the groups' distributions of `y_pred`.

    Fair regression's unfairness.
    """
    pred = np.ascontiguousarray(_as_numpy_1d(y_pred, "y_pred"), dtype=np.float64)
    codes, _ = _groups(sensitive_features, len(pred))
    return _native.ks_statistical_parity(pred, codes)


class GroupReport:
    """Each metric overall and per group, like Fairlearn's `MetricFrame`.

    Binary: `accuracy`, `selection_rate`, `true_positive_rate`; multi-class: `accuracy` and
    `rate(label)` per class; regression: `mse`, `mean_prediction`. A metric without rows in a
    group (a true positive rate without positives) is `None`.
    """

    def __init__(self, metrics: list, rows: list) -> None:
        self.metrics = list(metrics)
        self.by_group = {g: dict(zip(self.metrics, vals)) for g, _, vals in rows[:-1]}
        self.sizes = {g: n for g, n, _ in rows}
        self.overall = dict(zip(self.metrics, rows[-1][2]))
        self._rows = rows

    def difference(self, metric: str | None = None) -> Any:
        """Max − min over the groups where the metric is defined (one metric, or a dict)."""
        if metric is None:
            return {m: self.difference(m) for m in self.metrics}
        values = [r[metric] for r in self.by_group.values() if r[metric] is not None]
        return max(values) - min(values) if values else None

    def to_pandas(self) -> Any:
        """The per-group table as a pandas DataFrame indexed by group."""
        import pandas as pd

        return pd.DataFrame(self.by_group).T[self.metrics]

    def __str__(self) -> str:
        width = max([len("overall"), len("group")] + [len(g) for g in self.by_group])
        head = f"{'group':<{width}} {'n':>8}" + "".join(
            f" {m:>{max(10, len(m))}}" for m in self.metrics
        )
        lines = [head]
        for g, n, vals in self._rows:
            cells = "".join(
                f" {('n/a' if v is None else f'{v:.6f}'):>{max(10, len(m))}}"
                for m, v in zip(self.metrics, vals)
            )
            lines.append(f"{g:<{width}} {n:>8}{cells}")
        return "\n".join(lines)

    __repr__ = __str__


def group_report(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    task: str | None = None,
    pos_label: Any = 1,
) -> GroupReport:
    """The group report (see `GroupReport`).

    `task`: `binary`, `multiclass` or `regression` (default: regression for float
    predictions, binary for two labels, else multi-class).
    """
    true = _as_numpy_1d(y_true, "y_true")
    pred = _as_numpy_1d(y_pred, "y_pred")
    if len(true) != len(pred):
        raise ValueError(f"y_true has {len(true)} rows, y_pred has {len(pred)}")
    if task is None:
        classes = np.unique(np.concatenate([true, pred]))
        if pred.dtype.kind == "f" and len(classes) > 2:
            task = "regression"
        else:
            task = "binary" if len(classes) <= 2 else "multiclass"
    codes, names = _groups(sensitive_features, len(pred))
    labels: list = []
    if task == "binary":
        t = _binary(true, pos_label, "y_true").astype(np.float64)
        p = _binary(pred, pos_label, "y_pred").astype(np.float64)
    elif task == "multiclass":
        classes = np.unique(np.concatenate([true, pred]))
        t = np.searchsorted(classes, true).astype(np.float64)
        p = np.searchsorted(classes, pred).astype(np.float64)
        labels = [str(c) for c in classes]
    elif task == "regression":
        t = np.ascontiguousarray(true, dtype=np.float64)
        p = np.ascontiguousarray(pred, dtype=np.float64)
    else:
        raise ValueError(f"task `{task}`: expected binary, multiclass or regression")
    metrics, rows = _native.group_report(task, t, p, codes, names, labels)
    return GroupReport(metrics, rows)


def _declared_groups(sensitive_features: Any, groups: Any) -> list:
    """The declared group names: `groups`, else a pandas Categorical's categories."""
    if groups is None:
        dtype = getattr(sensitive_features, "dtype", None)
        categories = getattr(dtype, "categories", None)
        if categories is None:
            raise ValueError(
                "groups: declare the groups of sensitive_features (e.g. groups=['F', 'M']) or "
                "pass a pandas Categorical whose categories are the groups; a private report "
                "never reads the set of groups from the private rows"
            )
        groups = list(categories)
    names = [str(g) for g in groups]
    if len(names) < 2:
        raise ValueError(f"groups: a group report needs at least 2 declared groups, got {names}")
    if len(set(names)) != len(names):
        raise ValueError(f"groups: a group is declared twice in {names}")
    return names


def private_group_report(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    epsilon: float,
    groups: Any = None,
    level: float = 0.95,
    session: Any = None,
    pos_label: Any = 1,
) -> PrivateMetricFrame:
    """A private group report with intervals: `MetricFrame`'s figures you may publish.

    The counts of group × true label × prediction (binary: `== pos_label` or not) are released
    once with exact discrete Laplace noise at privacy budget `epsilon` (pure ε-DP, one ledger
    entry; sensitivity 2 for replace-one neighbours, 1 for add/remove), and every figure is
    derived from them: per group and overall the count, accuracy, selection rate, true and false
    positive rates, and Fairlearn's demographic-parity, equalized-odds and equal-opportunity
    differences and ratios. Each has an interval at `level` covering both the noise and the
    sampling of the rows (docs/evaluation.md).

    Parameters
    ----------
    y_true : array-like
        True labels; `pos_label` is the positive class, any other value negative.
    y_pred : array-like
        Predicted labels, coded like `y_true`.
    sensitive_features : array-like
        The group of each row (any labels; compared as text with `groups`).
    epsilon : float
        The privacy budget of the one release (pure ε-DP; finite, > 0).
    groups : list, optional
        The declared groups, in order (default: the categories of a pandas Categorical
        `sensitive_features`). Never read from the rows: a declared group without rows gets a
        wide interval, and a row outside them is an error.
    level : float, default 0.95
        The level of every interval, in (0, 1): each figure's own, not simultaneous.
    session : dpfair.PrivacySession, optional
        The release is spent against its budget (composing with the fits made in it;
        `BudgetExceededError` before any noise when ε is more than is left) and uses its
        relation and noise. Without one, the release has a budget of its own, ε, for
        replace-one neighbours, with the operating system's noise.
    pos_label : default 1
        The positive label of `y_true` and `y_pred`.

    Returns
    -------
    PrivateMetricFrame

    Example:
        >>> import numpy as np
        >>> import dpfair
        >>> from dpfair.metrics import private_group_report
        >>> rng = np.random.default_rng(0)
        >>> y = rng.integers(0, 2, 4_000)
        >>> y_hat = np.where(rng.random(4_000) < 0.8, y, 1 - y)
        >>> sex = rng.choice(["F", "M"], 4_000)
        >>> session = dpfair.PrivacySession(epsilon=1.0)
        >>> mf = private_group_report(
        ...     y, y_hat, sensitive_features=sex, groups=["F", "M"], epsilon=0.5, session=session
        ... )
        >>> lo, hi = mf.interval("accuracy")
        >>> bool(lo < 0.8 < hi)
        True
        >>> len(mf.ledger_["entries"]), session.remaining[0]
        (1, 0.5)

    """
    true = _binary(y_true, pos_label, "y_true")
    pred = _binary(y_pred, pos_label, "y_pred")
    if len(true) != len(pred):
        raise ValueError(f"y_true has {len(true)} rows, y_pred has {len(pred)}")
    names = _declared_groups(sensitive_features, groups)
    labels = labels_as_text(sensitive_features, "sensitive_features")
    if len(labels) != len(pred):
        raise ValueError(f"sensitive_features has {len(labels)} rows, y_pred has {len(pred)}")
    index = {name: code for code, name in enumerate(names)}
    codes = np.empty(len(labels), dtype=np.uint32)
    for row, label in enumerate(labels):
        code = index.get(label)
        if code is None:
            # The value itself is not echoed: it is private data.
            raise ValueError(
                f"sensitive_features, row {row}: a value that is not one of the declared groups"
            )
        codes[row] = code
    native = _native.private_group_report(
        true,
        pred,
        codes,
        names,
        float(epsilon),
        float(level),
        None if session is None else session._native,
    )
    return PrivateMetricFrame(native)
