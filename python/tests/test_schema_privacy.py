"""Issue #38 ("Privacy at the edges"): the Python estimators learn schemas through the library's
one path, so no raw value of a private numeric column becomes schema information, the public
bounds are checked as the CLI checks them, and private rows read with a public schema print no
private value."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from estimator_cases import ALL, LPCT, fit_args, make

import dpfair

#: A fractional part no public value has: a raw value of `hours` would carry it into the model.
MARK = 0.123456789

#: A raw `hours` value in JSON, even rounded to six decimals: an integer part of 1 to 99, then
#: the mark. A bare "123456" also matched a model's own floats (0.012345679…: one failed CI run).
RAW_HOURS = re.compile(r"(?<![\d.])[1-9]\d?\.123456")


def _marked(X: pd.DataFrame) -> pd.DataFrame:
    X = X.copy()
    X["hours"] = X["hours"] + MARK
    return X


def _as_object(X):
    """Every column as dtype `object` (`df.astype(object)`)."""
    return X.astype(object) if isinstance(X, pd.DataFrame) else X


def _mixed(X):
    """Numeric columns as a mixed read gives them: strings and numbers, a `?` for a missing one."""
    if not isinstance(X, pd.DataFrame):
        return X
    X = X.astype(object)
    for col in X.columns:
        if isinstance(X[col].iloc[0], (int, float, np.integer, np.floating)):
            X[col] = [str(v) if i % 2 else v for i, v in enumerate(X[col])]
            X.loc[X.index[3], col] = "?"
    return X


@pytest.mark.parametrize("variant", [_as_object, _mixed])
@pytest.mark.parametrize("name", ALL)
def test_object_numeric_columns_put_no_raw_value_in_the_model(name, variant, adult, adult_public):
    X, y = adult
    Xp, yp = adult_public
    # Only the private rows are marked: LPCT's tree is built from its public rows, whose
    # values may appear in the model.
    X, y, kw = fit_args(name, _marked(X), y, (Xp, yp))
    if name in LPCT:
        kw["X_public"] = variant(kw["X_public"])
    est = make(name).fit(variant(X), y, **kw)
    text = est.model_.to_json()
    assert not RAW_HOURS.search(text), f"{name}: a raw value of a numeric column is in the model"
    features = json.loads(text)["schema"]["features"]
    numeric = [f for f in features if f.get("levels") is None]
    assert numeric, f"{name}: no numeric column in {features}"


def test_text_levels_are_capped_as_in_the_cli(adult):
    X, y = adult
    X = X.copy()
    X["note"] = [f"free text {i}" for i in range(len(X))]
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, bounds={"age": (17, 90)})
    with pytest.raises(ValueError, match="column `note` holds text with more than 100 distinct"):
        est.fit(X.drop(columns="hours"), y, sensitive_features="sex")


@pytest.mark.parametrize(
    "bounds",
    [{"hours": (99, 1)}, {"hours": (np.nan, 99)}, {"hours": (1, np.inf)}, {"hours": (5, 5)}],
)
@pytest.mark.parametrize("option", ["bounds", "coarse_bounds"])
def test_bad_bounds_are_refused_naming_the_column(bounds, option, adult):
    X, y = adult
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, **{option: bounds})
    with pytest.raises(ValueError, match=r"column `hours`: bounds \["):
        est.fit(X, y, sensitive_features="sex")


@pytest.mark.parametrize("name", LPCT)
def test_a_private_value_the_public_rows_lack_is_never_printed(name, adult, adult_public):
    # The private rows are read with the public rows' schema: a level or a label the public
    # rows lack is coded as a missing value, not an error carrying the private value.
    X, y = adult
    Xp, yp = adult_public
    X = X.copy()
    y = y.copy()
    X.loc[0, "job"] = "astronaut"
    y.iloc[1] = "unheard-of"
    est = make(name).fit(X, y, X_public=Xp, y_public=yp)
    text = est.model_.to_json()
    assert "astronaut" not in text and "unheard-of" not in text
    # Prediction on non-private input still names an unseen level.
    with pytest.raises(ValueError, match="was not seen"):
        est.predict(X.head(5))
