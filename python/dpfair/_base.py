"""The scikit-learn estimator protocol shared by every dpfair estimator, without sklearn.

`__init__` stores hyper-parameters only; `get_params` / `set_params` read them from the
signature (so `sklearn.base.clone` and `Pipeline` work); `fit` converts the inputs (see
`dpfair._input`), fits through the Rust library in a privacy session, and sets the fitted
attributes (ending in `_`); `predict` applies the model's stored schema to new inputs.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, ClassVar

import numpy as np

from dpfair import _native
from dpfair._input import Frame, _label_text, original_labels, to_frame
from dpfair._ledger import Ledger


class PrivacyWarning(UserWarning):
    """A private fit's result is weak in a way its released values show (dpfair's warnings)."""


class ConstantModelWarning(PrivacyWarning):
    """The held-out check replaced the fitted model by a constant (`constant_` says which)."""


class DPFairEstimator:
    """Base class: the sklearn protocol and the fit/predict plumbing (module docs).

    Subclasses set `_method` (the library method's name, as in `dpfair fit METHOD`),
    `_regression` for a real-valued target, and implement `_native_params`.
    """

    _method: ClassVar[str] = ""
    _regression: ClassVar[bool] = False

    # -- the sklearn protocol -------------------------------------------------------------

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

        With `deep`, a nested estimator's (`base`) are included as `base__name`, as sklearn does.
        """
        out = {name: getattr(self, name) for name in self._get_param_names()}
        if deep:
            for name, value in list(out.items()):
                if isinstance(value, DPFairEstimator):
                    out.update({f"{name}__{k}": v for k, v in value.get_params().items()})
        return out

    def set_params(self, **params: Any) -> DPFairEstimator:
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
            if not isinstance(target, DPFairEstimator):
                raise ValueError(f"`{outer}` is not an estimator: cannot set {sorted(sub)}")
            target.set_params(**sub)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        changed = [
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if not (k in defaults and _same(defaults[k], v))
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "model_")

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

        tags = Tags(
            estimator_type="regressor" if self._regression else "classifier",
            target_tags=TargetTags(required=True),
        )
        if self._regression:
            tags.regressor_tags = RegressorTags()
        else:
            tags.classifier_tags = ClassifierTags(multi_class=False)
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        # Missing values are filled by the library's public rule (docs/privacy.md).
        tags.input_tags.allow_nan = True
        return tags

    # -- fitting --------------------------------------------------------------------------

    def _native_params(self) -> dict:
        """The library's params for this method, by the library's names."""
        raise NotImplementedError

    def _coding(self) -> dict:
        """How the target is coded (`pos_label`, the task)."""
        pos_label = getattr(self, "pos_label", None)

        def declared(name: str) -> list | None:
            levels = getattr(self, name, None)
            return None if levels is None else [_label_text(v) for v in levels]

        return {
            "positive": None if pos_label is None else _label_text(pos_label),
            "task": "regression" if self._regression else None,
            "groups": declared("groups"),
            "classes": declared("classes"),
        }

    def _fit_frame(self, frame: Frame, public: Frame | None = None) -> Any:
        session = getattr(self, "session", None)
        native_session = None if session is None else session._native
        return _native.fit(
            self._method,
            self._native_params(),
            frame,
            self._coding(),
            native_session,
            getattr(self, "random_state", None),
            public,
        )

    def fit(self, X: Any, y: Any, sensitive_features: Any = None) -> DPFairEstimator:
        """Fit on features `X`, target `y` and the groups `sensitive_features`.

        `sensitive_features` is an array-like or the name of a column of X. Returns `self`.
        """
        frame = to_frame(X, y, sensitive_features, regression=self._regression)
        self._set_fitted(self._fit_frame(frame), y, frame)
        return self

    def _set_fitted(self, model: Any, y: Any, frame: Frame | None = None) -> None:
        self.model_ = model
        self._ledger = None
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
        self._set_constant(model, warn=y is not None)

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
        return self.model_.predict(frame, seed)

    def predict(self, X: Any, sensitive_features: Any = None) -> np.ndarray:
        """Predicted labels (in `classes_`), or values for a regressor.

        Methods whose rule depends on the group need the groups here too: `sensitive_features`,
        or, when it is not given, X's column of the name the groups had at fit time.
        """
        out = self._predict_native(X, sensitive_features, getattr(self, "random_state", None))
        if "values" in out:
            return np.asarray(out["values"])
        return self.classes_[np.asarray(out["classes"], dtype=np.intp)]

    # -- model files ----------------------------------------------------------------------

    def save(self, path: Any) -> None:
        """Write the model file (`dpfair predict --model PATH` reads it)."""
        self._check_fitted()
        self.model_.save(str(path))


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
