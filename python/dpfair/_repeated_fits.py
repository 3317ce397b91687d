"""Warn when scikit-learn's model-selection tools fit a private estimator repeatedly.

`cross_val_score`, `GridSearchCV` and their kin clone an estimator and fit each clone on
overlapping subsets of the same rows. Each fit spends its ε; without a shared
`dpfair.PrivacySession` nothing adds the fits up, and the privacy loss of the whole search is
(under basic composition) the sum over the fits, which no ledger shows. `warn_if_repeated`
detects the tool from the call stack (its frames live in `sklearn.model_selection`, in the
calling process or in a joblib worker) and warns once per tool and estimator class, naming
`dpfair.PrivateSearchCV`, which searches privately at one fit's cost.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from dpfair._warnings import BudgetWarning

#: Public functions of `sklearn.model_selection` that fit an estimator several times.
_TOOLS = (
    "cross_val_score",
    "cross_validate",
    "cross_val_predict",
    "learning_curve",
    "validation_curve",
    "permutation_test_score",
)


def sklearn_tool() -> str | None:
    """The scikit-learn model-selection tool on the call stack (`None`: none).

    A search's frames carry `self` (its class name is the tool: `GridSearchCV`,
    `RandomizedSearchCV`, `HalvingGridSearchCV`, …); a function's name is the tool otherwise.
    The outermost such frame wins. A worker process of `n_jobs > 1` sees only
    `_fit_and_score`, reported as "a scikit-learn model-selection tool".
    """
    found = None
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("sklearn.model_selection"):
            owner = frame.f_locals.get("self")
            name = frame.f_code.co_name
            if owner is not None and type(owner).__name__.endswith("SearchCV"):
                found = type(owner).__name__
            elif name in _TOOLS:
                found = name
            elif found is None:
                found = "a scikit-learn model-selection tool"
        frame = frame.f_back
    return found


def warn_if_repeated(estimator: Any) -> None:
    """Warn (`BudgetWarning`) when a model-selection tool fits `estimator` without a session.

    The warning says what each fit spends and how to count the fits against one budget. The
    default warnings filter shows it once per tool and estimator class.
    """
    if getattr(estimator, "session", None) is not None:
        return
    tool = sklearn_tool()
    if tool is None:
        return
    name = type(estimator).__name__
    epsilon = getattr(estimator, "epsilon", None)
    spend = "its epsilon" if epsilon is None else f"epsilon = {epsilon:g}"
    warnings.warn(
        BudgetWarning(
            f"{name} is being fitted by {tool} without a dpfair.PrivacySession: every fit "
            f"spends {spend} on overlapping rows of the same data, and nothing adds them up "
            "(k fits spend k times as much). Pass session=dpfair.PrivacySession(epsilon=...) "
            "to charge every fit to one budget (the fit that would overspend is refused "
            "before it draws noise; n_jobs must then be 1), or score on public or exact "
            "data you may use freely. To search hyper-parameters privately, use "
            "dpfair.PrivateSearchCV: the whole search spends one fit's epsilon"
        ),
        stacklevel=3,
    )
