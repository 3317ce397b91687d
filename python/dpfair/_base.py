"""The scikit-learn estimator protocol shared by every dpfair estimator, without sklearn.

`__init__` stores hyper-parameters only; `get_params` / `set_params` read them from the
signature (so `sklearn.base.clone` and `Pipeline` work); `fit` converts the inputs (see
`dpfair._input`), fits through the Rust library in a privacy session, and sets the fitted
attributes (ending in `_`); `predict` applies the model's stored schema to new inputs.
"""

from __future__ import annotations

import inspect
import json
import warnings
from typing import Any, ClassVar

import numpy as np

from dpfair import _native
from dpfair._input import Frame, _label_text, original_labels, to_frame
from dpfair._ledger import Ledger
from dpfair._repeated_fits import warn_if_repeated
from dpfair._warnings import BoundsWarning, ConstantModelWarning, FairnessWarning


class Params:
    """The sklearn parameter protocol: `get_params`, `set_params` and `repr` from `__init__`."""

    @classmethod
    def _get_param_names(cls) -> list:
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        )

    def get_params(self, deep: bool = True) -> dict:
        """The hyper-parameters, by name.

        With `deep`, a nested estimator's (`base`, `estimator`) are included as `base__name`, as
        sklearn does.
        """
        out = {name: getattr(self, name) for name in self._get_param_names()}
        if deep:
            for name, value in list(out.items()):
                if isinstance(value, Params):
                    out.update({f"{name}__{k}": v for k, v in value.get_params().items()})
        return out

    def set_params(self, **params: Any) -> Any:
        """Set hyper-parameters by name (`base__name` for a nested estimator's).

        An unknown name is a `ValueError`.
        """
        valid = self._get_param_names()
        nested: dict = {}
        for name, value in params.items():
            outer, _, inner = name.partition("__")
            if outer not in valid:
                raise ValueError(
                    f"invalid parameter `{name}` for {type(self).__name__}; "
                    f"valid parameters: {', '.join(valid)}"
                )
            if inner:
                nested.setdefault(outer, {})[inner] = value
            else:
                setattr(self, name, value)
        for outer, sub in nested.items():
            target = getattr(self, outer)
            if not isinstance(target, Params):
                raise ValueError(f"`{outer}` is not an estimator: cannot set {sorted(sub)}")
            target.set_params(**sub)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        changed = [
            f"{k}={v!r}"
            for k, v in self.get_params(deep=False).items()
            if not (k in defaults and _same(defaults[k], v))
        ]
        return f"{type(self).__name__}({', '.join(changed)})"


class DPFairEstimator(Params):
    """Base class: the sklearn protocol and the fit/predict plumbing (module docs).

    Subclasses set `_method` (the library method's name, as in `dpfair fit METHOD`),
    `_regression` for a real-valued target, and implement `_native_params`.
    """

    _method: ClassVar[str] = ""
    _regression: ClassVar[bool] = False
    _multi_class: ClassVar[bool] = False

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "model_")

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

        tags = Tags(
            estimator_type="regressor" if self._regression else "classifier",
            target_tags=TargetTags(required=True),
        )
        # poor_score: a private fit on the checks' few dozen rows is mostly noise.
        if self._regression:
            tags.regressor_tags = RegressorTags(poor_score=True)
        else:
            tags.classifier_tags = ClassifierTags(multi_class=self._multi_class, poor_score=True)
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        # Missing values are filled by the library's public rule (docs/privacy.md).
        tags.input_tags.allow_nan = True
        return tags

    # -- fitting --------------------------------------------------------------------------

    def _native_params(self) -> dict:
        """The library's params for this method, by the library's names."""
        raise NotImplementedError

    def _coding(self, frame: Frame) -> dict:
        """How the target of `frame` is coded: `pos_label`, declared levels and the task.

        The task is the estimator's: a regression, or classes (binary for at most two
        classes, declared or found in `frame`'s target, else multi-class), never inferred
        from the values as the CSV loader does.
        """
        pos_label = getattr(self, "pos_label", None)

        def declared(name: str) -> list | None:
            levels = getattr(self, name, None)
            return None if levels is None else [_label_text(v) for v in levels]

        classes = declared("classes")
        if self._regression:
            task = "regression"
        else:
            task = "binary" if self._n_classes(frame) <= 2 else "multiclass"
        return {
            "positive": None if pos_label is None else _label_text(pos_label),
            "task": task,
            "groups": declared("groups"),
            "classes": classes,
        }

    def _n_classes(self, frame: Frame) -> int:
        """The number of classes: declared (`classes`), else found in `frame`'s target."""
        declared = getattr(self, "classes", None)
        if declared is not None:
            return len(declared)
        return 0 if frame.target_labels is None else len(frame.target_labels[1])

    def _fit_input(
        self, X: Any, y: Any, sensitive_features: Any = None, classes_from_y: bool = True
    ) -> Frame:
        """The frame of a fit, its input checked as scikit-learn checks a fit's.

        `y` is required; one row is too few; a binary-only classifier refuses more than two
        classes (before the library is called, with scikit-learn's wording) unless the classes
        come from elsewhere (`classes_from_y=False`: LPCT's public rows).
        """
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        frame = to_frame(X, y, sensitive_features, regression=self._regression)
        if frame.n_rows < 2:
            raise ValueError(f"{name}: X has 1 sample (n_samples=1); a fit needs more rows")
        if classes_from_y:
            self._check_binary(frame)
        return frame

    def _check_binary(self, frame: Frame) -> None:
        """A binary-only classifier refuses more than two classes in `frame`'s target."""
        if not (self._regression or self._multi_class) and self._n_classes(frame) > 2:
            raise ValueError(
                f"Only binary classification is supported. {type(self).__name__} got "
                f"{self._n_classes(frame)} classes in y (DP2DPClassifier is multi-class)."
            )

    def _fit_frame(self, frame: Frame, public: Frame | None = None) -> Any:
        """Fit on `frame` (LPCT: with the public rows `public`, whose target is coded)."""
        session = getattr(self, "session", None)
        native_session = None if session is None else session._native
        warn_if_repeated(self)
        return _native.fit(
            self._method,
            self._native_params(),
            frame,
            self._coding(frame if public is None else public),
            native_session,
            getattr(self, "random_state", None),
            public,
            getattr(self, "n_jobs", None),
        )

    def fit(self, X: Any, y: Any, sensitive_features: Any = None) -> DPFairEstimator:
        """Fit on features `X`, target `y` and the groups `sensitive_features`.

        `sensitive_features` is an array-like or the name of a column of X. Returns `self`.
        """
        frame = self._fit_input(X, y, sensitive_features)
        self._set_fitted(self._fit_frame(frame), y, frame)
        return self

    def _set_fitted(self, model: Any, y: Any, frame: Frame | None = None) -> None:
        self.model_ = model
        self._ledger = None
        # X's columns as fit saw them (predict checks its input against them); a model read
        # from a file has none: its schema checks the columns it reads.
        self._fit_columns = None if frame is None else (frame.columns, frame.named_columns)
        if frame is not None:
            self.n_features_in_ = len(frame.columns)
            if frame.named_columns:
                self.feature_names_in_ = np.array(frame.columns, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        labels = model.class_labels
        if labels:
            if y is None:
                self.classes_ = np.array(labels)
            else:
                known = frame.target_labels if frame is not None else None
                self.classes_ = original_labels(y, labels, known)
        sensitive = model.sensitive
        if sensitive is not None:
            self.sensitive_feature_name_, groups = sensitive
            self.groups_ = np.array(groups, dtype=object)
        if y is not None:
            # What the fit said about its private bounds (public numbers only), first: it
            # explains a constant model, which warns next.
            for line in model.fit_warnings:
                text = line.removeprefix("warning: ")
                warnings.warn(BoundsWarning(f"{type(self).__name__}: {text}"), stacklevel=3)
        self._set_constant(model, warn=y is not None)
        self._set_fairness(model, warn=y is not None)

    def _set_fairness(self, model: Any, warn: bool) -> None:
        """Set `fairness_estimate_` and warn when the fit's own estimate misses its target.

        `fairness_estimate_` is a dict (`measure`, `target`, `estimate`, `met`) from released
        values only, for the methods whose releases give one (FDP-Fair, the decoupled
        classifier), else `None`; a missed target warns (`FairnessWarning`), as `dpfair fit`
        prints "met: false".
        """
        found = model.fairness
        if found is None:
            self.fairness_estimate_ = None
            return
        measure, target, estimate, met = found
        self.fairness_estimate_ = {
            "measure": measure,
            "target": target,
            "estimate": estimate,
            "met": met,
        }
        if warn and not met:
            warnings.warn(
                FairnessWarning(
                    f"{type(self).__name__}: the fit's own private estimate of its {measure} is "
                    f"{estimate:.4f}, above the target {target:g}; new data may differ from it "
                    "by noise and sampling error (fairness_estimate_ holds it)"
                ),
                stacklevel=4,
            )

    def _set_constant(self, model: Any, warn: bool) -> None:
        """Set `constant_` and warn when the fit ended with a constant.

        `constant_` is what the held-out check replaced the model by (a class of `classes_`, or a
        regressor's value), else `None`; a fit that ends with a constant warns
        (`ConstantModelWarning`), as `dpfair fit` says so in one line.
        """
        chosen = model.constant
        if chosen is None:
            self.constant_ = None
            return
        code, value = chosen
        self.constant_ = value if code is None else self.classes_[code]
        if warn:
            warnings.warn(
                ConstantModelWarning(
                    f"{type(self).__name__}: the held-out check found the fitted model no "
                    f"better than always predicting {self.constant_!r}, and the model predicts "
                    'that constant (docs/privacy.md, "The held-out check"); more rows, a '
                    "larger epsilon or public bounds may give one that is"
                ),
                stacklevel=4,
            )

    @property
    def ledger_(self) -> Ledger:
        """The privacy ledger of the fit (`dpfair._ledger.Ledger`), read from the model file.

        Built on first access (the fit itself does not need it), then kept.
        """
        if "model_" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__} is not fitted yet: it has no ledger_")
        if self.__dict__.get("_ledger") is None:
            self._ledger = Ledger(self.model_)
        return self._ledger

    def summary(self) -> str:
        """What the fit released and what that says, in a few lines (as `dpfair fit` prints).

        The privacy spent (the ledger's total and its neighbouring relation), the held-out
        check's choice, and the fairness target with the fit's own private estimate of its
        measure where the method releases one (`fairness_estimate_`). Read from released
        values and public settings only, so it may be published with the model.
        """
        self._check_fitted()
        ledger = self.ledger_
        total = ledger["total"]
        lines = [
            f"{type(self).__name__} ({self.model_.method}): privacy spent "
            f"ε = {total['epsilon']:.6g}, δ = {total['delta']:.6g} for {ledger['relation']}"
            + ("" if ledger["private"] else " (NOT PRIVATE: seeded noise)")
        ]
        check = json.loads(self.model_.to_json()).get("check")
        if check is None:
            lines.append("held-out check: none ran")
        else:
            where = "public rows" if check.get("public") else "held-out rows"
            verdict = (
                "kept the model (it beat always predicting one class)"
                if self.constant_ is None
                else f"the model was no better than always predicting {self.constant_!r}, "
                "and predicts that constant"
            )
            lines.append(f"held-out check on {check['rows']} {where}: {verdict}")
        # The fairness level's name: alpha, rho (DP2DP) or level (with its `constraint`).
        level = next((n for n in ("alpha", "rho", "level") if hasattr(self, n)), None)
        target = None if level is None else getattr(self, level)
        measure = getattr(self, "constraint", None)
        estimate = getattr(self, "fairness_estimate_", None)
        if estimate is not None:
            verdict = "met" if estimate["met"] else "MISSED"
            lines.append(
                f"fairness: {estimate['measure']} = {estimate['estimate']:.4f} against the "
                f"target {estimate['target']:g}: {verdict} (the fit's own private estimate; new "
                "data differ from it by noise and sampling)"
            )
        elif target is not None and "sensitive_feature_name_" in self.__dict__:
            lines.append(
                f"fairness: targets {measure + ' within ' if measure else ''}{target:g}; the fit "
                "releases no estimate of its measure "
                "(dpfair.metrics.private_group_report measures it privately on held-out rows)"
            )
        else:
            lines.append("fairness: no target (a privacy-only method)")
        return "\n".join(lines)

    # -- prediction -----------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise _not_fitted(self)

    def _predict_native(self, X: Any, sensitive_features: Any, seed: Any = None) -> dict:
        self._check_fitted()
        sensitive = self.model_.sensitive
        columns = getattr(X, "columns", None)
        if columns is None:
            columns = getattr(X, "column_names", [])
        if sensitive_features is None and sensitive is not None and sensitive[0] in columns:
            # As `dpfair predict` does: the group column is read from X when it is there.
            sensitive_features = sensitive[0]
        frame = to_frame(X, None, sensitive_features)
        self._check_columns(frame)
        return self.model_.predict(frame, seed)

    def _check_columns(self, frame: Frame) -> None:
        """X's columns at predict against fit's, with scikit-learn's messages.

        Named columns (DataFrames, tables) must be fit's, in fit's order; the group column
        may be there or not (it is never a feature). Unnamed ones (arrays, lists) must be as
        many as at fit. A mix of the two warns, as scikit-learn does.
        """
        fitted = self.__dict__.get("_fit_columns")
        if fitted is None:
            return
        seen, seen_named = fitted
        name = type(self).__name__
        if frame.named_columns and not seen_named:
            warnings.warn(
                f"X has feature names, but {name} was fitted without feature names",
                UserWarning,
                stacklevel=4,
            )
        elif seen_named and not frame.named_columns:
            warnings.warn(
                f"X does not have valid feature names, but {name} was fitted with feature names",
                UserWarning,
                stacklevel=4,
            )
        if seen_named and frame.named_columns:
            group = getattr(self, "sensitive_feature_name_", None)
            before = [c for c in seen if c != group]
            now = [c for c in frame.columns if c != group]
            if before != now:
                raise ValueError(_names_message(before, now))
        elif len(frame.columns) != len(seen):
            raise ValueError(
                f"X has {len(frame.columns)} features, but {name} is expecting "
                f"{len(seen)} features as input."
            )

    def predict(self, X: Any, sensitive_features: Any = None) -> np.ndarray:
        """Predicted labels (in `classes_`), or values for a regressor.

        Methods whose rule depends on the group need the groups here too: `sensitive_features`,
        or, when it is not given, X's column of the name the groups had at fit time.
        """
        out = self._predict_native(X, sensitive_features, getattr(self, "random_state", None))
        if "values" in out:
            return np.asarray(out["values"])
        return self.classes_[np.asarray(out["classes"], dtype=np.intp)]

    def score(
        self, X: Any, y: Any, sensitive_features: Any = None, sample_weight: Any = None
    ) -> float:
        """Accuracy of `predict(X)` against `y` (a classifier), or R² (a regressor).

        As scikit-learn's `ClassifierMixin.score` and `RegressorMixin.score` (so
        `cross_val_score(est, X, y)` needs no `scoring=`), with `sensitive_features` as in
        `predict` and optional `sample_weight`. Scoring spends no privacy budget, but its
        result is computed from `y` as given: it is not a private release.
        """
        pred = self.predict(X, sensitive_features)
        truth = np.asarray(y)
        if truth.ndim == 2 and truth.shape[1] == 1:
            truth = truth[:, 0]
        if truth.shape != pred.shape:
            raise ValueError(f"y has {len(truth)} rows, X has {len(pred)}")
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if weights is not None and weights.shape != pred.shape:
            raise ValueError(f"sample_weight has {len(weights)} rows, X has {len(pred)}")
        if not self._regression:
            return float(np.average(truth == pred, weights=weights))
        truth = truth.astype(np.float64)
        mean = np.average(truth, weights=weights)
        w = np.ones_like(truth) if weights is None else weights
        residual = float(np.sum(w * (truth - pred) ** 2))
        total = float(np.sum(w * (truth - mean) ** 2))
        if total == 0.0:  # a constant y: scikit-learn's r2_score (force_finite)
            return 1.0 if residual == 0.0 else 0.0
        return 1.0 - residual / total

    # -- model files ----------------------------------------------------------------------

    def save(self, path: Any) -> None:
        """Write the model file (`dpfair predict --model PATH` reads it)."""
        self._check_fitted()
        self.model_.save(str(path))

    def report(
        self,
        out: Any,
        json: Any = None,
        X: Any = None,
        y: Any = None,
        sensitive_features: Any = None,
        epsilon: float | None = None,
        level: float = 0.95,
        session: Any = None,
        *,
        groups: list | None = None,
        target_range: tuple | None = None,
        audit: Any = None,
    ) -> dict:
        """Write the model's release report: the HTML and JSON `dpfair report` writes.

        `out` is the HTML file (self-contained: no script, no network; printable) and `json` the
        JSON file with the same content (default: `out` with the extension `.json`). Both hold
        the method and its paper, the public schema, the fit's ledger and total, the model file's
        digest, the held-out check and the fit's own fairness estimate (docs/evaluation.md, "The
        release report"). Returns the report as a dict (the JSON file's content).

        With evaluation rows `X`, `y` (and `sensitive_features`, or X's column of the model's
        sensitive attribute) and a budget `epsilon`, a binary classifier's predictions on them
        are counted per group × label × prediction and released once at ε = `epsilon` (as
        `dpfair.metrics.private_group_report`): every figure with an interval at `level`, and the
        release's own ledger. It is spent in `session` when given (composing with what was spent
        there), else in a budget of its own. Without `epsilon` the rows are not read: the report
        says an evaluation needs a budget, and a warning says so too. Other models are evaluated
        as `dpfair report` evaluates them: multi-class (DP2DP), a regressor (its model's target
        range, or `target_range=(lo, hi)`), or a model without a sensitive attribute (LPCT:
        `groups=[...]` declares the evaluation's groups). `audit` is the path of a
        `dpfair audit METHOD --json` output for this model's method, shown beside the ledger.

        Example:
            >>> import os, tempfile
            >>> import numpy as np, pandas as pd, dpfair
            >>> rng = np.random.default_rng(0)
            >>> X = pd.DataFrame({"a": rng.uniform(size=4000), "b": rng.uniform(size=4000),
            ...                   "sex": rng.choice(["F", "M"], 4000)})
            >>> y = (X["a"] + X["b"] > 1).astype(int)
            >>> clf = dpfair.DPLogisticRegression(epsilon=1.0)
            >>> clf = clf.fit(X[:3000], y[:3000], sensitive_features="sex")
            >>> folder = tempfile.TemporaryDirectory()
            >>> out = os.path.join(folder.name, "report.html")
            >>> report = clf.report(out, X=X[3000:], y=y[3000:], epsilon=0.5)
            >>> report["evaluation"]["status"], report["evaluation"]["total"]["epsilon"]
            ('released', '0.5')
            >>> report["schema"]["sensitive"]["groups"], report["digest"]["verified"]
            (['F', 'M'], True)
            >>> os.path.exists(out), os.path.exists(os.path.join(folder.name, "report.json"))
            (True, True)
            >>> folder.cleanup()

        """
        self._check_fitted()
        return self.model_.report(
            str(out),
            None if json is None else str(json),
            X,
            y,
            sensitive_features,
            epsilon,
            level,
            session,
            groups=groups,
            target_range=None if target_range is None else tuple(target_range),
            audit=None if audit is None else str(audit),
        )


def _names_message(before: list, now: list) -> str:
    """scikit-learn's message for feature names that differ from fit's."""
    if sorted(before) == sorted(now):
        return (
            "The feature names should match those that were passed during fit.\n"
            "Feature names must be in the same order as they were in fit.\n"
        )
    unseen = [c for c in now if c not in before]
    missing = [c for c in before if c not in now]
    message = "The feature names should match those that were passed during fit.\n"
    if unseen:
        message += "Feature names unseen at fit time:\n" + "".join(f"- {c}\n" for c in unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n"
        message += "".join(f"- {c}\n" for c in missing)
    return message


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return a is b


def _not_fitted(est: Any) -> Exception:
    try:
        from sklearn.exceptions import NotFittedError
    except ImportError:  # pragma: no cover - sklearn is optional
        NotFittedError = ValueError  # noqa: N806
    return NotFittedError(f"this {type(est).__name__} is not fitted yet: call fit before predict")
