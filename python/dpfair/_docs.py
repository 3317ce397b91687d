"""The estimators' numpydoc `Parameters` sections, built from their signatures.

Each entry's type and default are read from `__init__`'s signature (so `help()` shows the
default a fit really uses, and the text cannot drift from the code); the words come from the
class's own entries, else from `COMMON` (the hyper-parameters several estimators share). A
parameter without words is an error at import.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any, Callable

COMMON = {
    "epsilon": "ε of the fit: what its ledger's total spends (a session's budget permitting).",
    "delta": "δ of the fit.",
    "alpha": "The disparity level the fairness constraint allows (0: exact parity).",
    "accounting": (
        '"strict" (every release accounted and certified) or "paper" (the paper\'s procedure; '
        "the ledger records what it really spends)."
    ),
    "eta_model": (
        "The estimate of each group's regression function: \"kernel\" (the paper's, in a "
        'public random-feature basis), "logistic" (output-perturbed, the group as a feature), '
        '"dp-sgd" (DP-SGD logistic regression with the group as a feature) or "auto" '
        "(DP-SGD under strict accounting, the kernel under the paper's; docs/choosing.md)."
    ),
    "frequencies": "Random frequencies of the public kernel basis.",
    "bounds": (
        "Public bounds {column: (lo, hi)} of numeric features: clipped and scaled to [0, 1] "
        "with them, free. None: private bounds (module docs)."
    ),
    "coarse_bounds": "Wide public ranges {column: (lo, hi)} the private bounds are found in.",
    "bounds_share": "The share of ε spent on the private bounds of columns without `bounds`.",
    "unscaled": "Leave every feature as it is (no bounds, no scaling).",
    "pos_label": (
        "The positive class of a binary target. None: the larger label (numerically for "
        "numbers, else in string order)."
    ),
    "groups": "The sensitive groups (public), in code order. None: those found in the data.",
    "classes": "The target's classes (public), in code order. None: those found in the data.",
    "check_fraction": (
        "The share of rows held out for the check against a constant model (0: no check; "
        'docs/privacy.md, "The held-out check").'
    ),
    "session": ("A dpfair.PrivacySession the fit is charged to. None: a session of the fit's own."),
    "random_state": (
        "Seeds the public randomness only (splits, bases, a randomized predictor's draws); "
        "release noise always comes from the operating system."
    ),
    "n_jobs": (
        "Threads a fit may use, as in scikit-learn: None or 1, one (two fits in two Python "
        "threads then share two cores); -1 or k >= 2, the cores the library finds useful "
        "(DP-SGD's drawing thread, the kernel and tree builders' pools). The model is the same."
    ),
}


def _type(annotation: Any) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return "object" if text in ("Any", "") else text.replace(" | ", " or ")


def parameters(**specific: str) -> Callable[[type], type]:
    """Add a `Parameters` section to the class's docstring (before its `Example:`)."""

    def decorate(cls: type) -> type:
        lines = ["Parameters", "----------"]
        for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
            text = specific.get(p.name, COMMON.get(p.name))
            if text is None:
                raise TypeError(f"{cls.__name__}: no documentation for parameter `{p.name}`")
            lines.append(f"{p.name} : {_type(p.annotation)}, default={p.default!r}")
            lines += textwrap.wrap(text, 92, initial_indent="    ", subsequent_indent="    ")
        section = "".join(f"    {line}\n" if line else "\n" for line in lines)
        doc = cls.__doc__ or ""
        at = doc.find("    Example:")
        cls.__doc__ = doc + "\n" + section if at < 0 else doc[:at] + section + "\n" + doc[at:]
        return cls

    return decorate
