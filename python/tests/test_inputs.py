"""Inputs: numpy (float64 read in place, other dtypes converted), pandas, polars and Arrow give
the same model; bad inputs raise ValueError/TypeError with the column and row named."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from conftest import BOUNDS

import dpfair
from dpfair import _native
from dpfair._input import to_frame


def _seeded(epsilon=1.0):
    return dpfair.PrivacySession.insecure_seeded(epsilon=epsilon, delta=1e-4, seed=11)


def _logistic(session=None):
    return dpfair.DPLogisticRegression(
        epsilon=1.0, epochs=2, substitution=True, bounds=BOUNDS, session=session
    )


def test_float64_c_contiguous_input_is_not_copied():
    X = np.random.default_rng(0).uniform(size=(100, 3))
    assert X.flags.c_contiguous and X.dtype == np.float64
    frame = to_frame(X)
    assert _native.numeric_block_address(frame) == X.__array_interface__["data"][0]
    # Fortran order and strided float64 are read in place too (views with strides).
    F = np.asfortranarray(X)
    assert _native.numeric_block_address(to_frame(F)) == F.__array_interface__["data"][0]


def test_float32_and_integer_inputs_are_converted():
    rng = np.random.default_rng(1)
    X32 = rng.uniform(size=(600, 2)).astype(np.float32)
    frame = to_frame(X32)
    assert frame.numeric.dtype == np.float64
    assert np.array_equal(frame.numeric, X32.astype(np.float64))
    y = (X32[:, 0] > 0.5).astype(np.int64)
    # Unscaled: no bounds at all (bounds too weak to help: below).
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, unscaled=True).fit(X32, y)
    assert est.classes_.tolist() == [0, 1] and est.predict(X32).dtype == y.dtype
    Xi = rng.integers(0, 10, size=(600, 2))
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, unscaled=True).fit(Xi, Xi[:, 0] > 4)
    assert est.classes_.tolist() == [False, True]


def test_bounds_no_better_than_a_guess_warn_and_fit():
    """Private bounds at too little ε per column for the rows (2 columns on 150 rows at ε = 1,
    replace-one so that n is public, docs/privacy.md "Feature bounds") warn with a
    BoundsWarning that names the fixes and the n that would suffice; the fit goes on."""
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(150, 2))
    y = (X[:, 0] > 0.5).astype(np.int64)
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, substitution=True)
    with pytest.warns(dpfair.BoundsWarning, match="no better than a guess.*suffice.*bounds="):
        est.fit(X, y)
    assert est.ledger_["total"]["epsilon"] <= 1.0 + 1e-9
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, bounds={"x0": (0, 1), "x1": (0, 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpfair.BoundsWarning)
        assert est.fit(X, y).ledger_["total"]["epsilon"] <= 1.0 + 1e-9


def test_pandas_polars_and_arrow_give_the_same_model(adult):
    X, y = adult
    fits = {}
    for kind, data in {
        "pandas": X,
        "polars": pl.from_pandas(X),
        "arrow": pa.Table.from_pandas(X, preserve_index=False),
    }.items():
        est = _logistic(_seeded()).fit(data, y, sensitive_features="sex")
        fits[kind] = est
    schema = {k: e.model_.feature_names for k, e in fits.items()}
    assert schema["pandas"] == ["age", "hours", "job=clerical", "job=craft", "job=sales"]
    assert schema["polars"] == schema["pandas"] == schema["arrow"]
    # Any object with __arrow_c_stream__ (here a one-shot record batch reader).
    reader = pa.Table.from_pandas(X, preserve_index=False).to_reader()
    fits["stream"] = _logistic(_seeded()).fit(reader, y, sensitive_features="sex")
    preds = {k: e.predict(X) for k, e in fits.items()}
    # Seeded sessions: the same noise, so the same model from every input type.
    for kind in ("polars", "arrow", "stream"):
        assert (preds[kind] == preds["pandas"]).all(), kind


def test_arrow_strings_factorize_as_pandas_does():
    """Text held as Arrow strings is factorized from its buffers natively: the same codes and
    distinct values (first-appearance order) as `pandas.factorize`, for 32- and 64-bit offsets,
    several chunks, sliced chunks (non-zero offset), empty and non-ASCII strings."""
    import pandas as pd

    from dpfair._input import _arrow_string_chunks, factorize

    rng = np.random.default_rng(5)
    # Values of up to 16 bytes are compared by their first 16; longer ones also byte by byte:
    # long values sharing their first 16 or 24 bytes, and 16-, 17-byte values, must stay apart.
    long = ["p" * 24 + tail for tail in ("1", "2", "22")] + ["q" * 16, "q" * 17, "q" * 15 + "r"]
    words = np.array(["", "a", "bb", "Ωmega", "a b", "zzz", *long], dtype=object)
    values = words[rng.integers(0, len(words), size=997)].tolist()
    parts = [values[:10], values[10:500], values[500:]]
    cases = {
        "string": pa.chunked_array(parts, type=pa.string()),
        "large_string": pa.chunked_array(parts, type=pa.large_string()),
        "sliced": pa.array(["x"] * 3 + values, type=pa.string()).slice(3),
        "pandas string[pyarrow]": pd.Series(values, dtype="string[pyarrow]"),
    }
    if hasattr(pd.Series(["a"], dtype="str").array, "__arrow_array__"):
        cases["pandas str"] = pd.Series(values, dtype="str")  # pandas 3's default text
    want_codes, want_uniques = pd.factorize(np.array(values, dtype=object))
    for kind, column in cases.items():
        assert _arrow_string_chunks(column) is not None, kind
        codes, uniques, texts = factorize(column, kind)
        assert codes.dtype == np.int64 and codes.tolist() == want_codes.tolist(), kind
        assert uniques == list(want_uniques) == texts, kind
    # Nulls and other types take the general path, which names the missing row.
    with_null = pa.array(["a", None, "b"])
    assert _arrow_string_chunks(with_null) is None
    assert factorize(with_null, "c")[0].tolist() == [0, -1, 1]
    assert _arrow_string_chunks(pa.array([1, 2])) is None
    python_strings = pd.Series(values, dtype="string[python]")
    assert _arrow_string_chunks(python_strings) is None
    assert factorize(python_strings, "c")[0].tolist() == want_codes.tolist()
    assert _arrow_string_chunks(np.array(["a", "b"])) is None


def test_missing_values_are_filled_and_infinities_refused(adult):
    # Missing values (NaN, None) are filled by the library's public rule, as in the CLI (issue
    # #38): the fit succeeds, whichever rows hold one; infinities are refused naming the row.
    X, y = adult
    bad = X.copy()
    bad.loc[5, "hours"] = np.nan
    bad = bad.astype({"job": object})
    bad.loc[7, "job"] = None
    assert _logistic().fit(bad, y, sensitive_features="sex").model_ is not None
    bad.loc[9, "hours"] = np.inf
    with pytest.raises(ValueError, match=r"column `hours`, row 9: not finite"):
        _logistic().fit(bad, y, sensitive_features="sex")


def test_mismatched_lengths(adult):
    X, y = adult
    with pytest.raises(ValueError, match="y has 2999 rows, X has 3000"):
        _logistic().fit(X, y[:-1], sensitive_features="sex")
    with pytest.raises(ValueError, match="sensitive_features has 10 rows, X has 3000"):
        _logistic().fit(X.drop(columns="sex"), y, sensitive_features=X["sex"][:10])


def test_unseen_group_and_level_at_predict(adult):
    X, y = adult
    est = dpfair.CDPFairClassifier(frequencies=64, bounds=BOUNDS).fit(
        X, y, sensitive_features="sex"
    )
    other = X.head(20).copy()
    other.loc[3, "sex"] = "Other"
    with pytest.raises(ValueError, match=r"column `sex`, row 3: a value that was not seen"):
        est.predict(other, sensitive_features="sex")
    other = X.head(20).copy()
    other.loc[4, "job"] = "pilot"
    with pytest.raises(ValueError, match=r"column `job`, row 4: a value that was not seen"):
        est.predict(other, sensitive_features="sex")
    # A column fit saw is missing: scikit-learn's message, before the model's schema is read.
    with pytest.raises(ValueError, match="seen at fit time, yet now missing:\n- hours"):
        est.predict(X.drop(columns="hours"), sensitive_features="sex")
    # A model read from a file has no fit-time columns: its schema names the missing one.
    loaded = dpfair._fitted_estimator(est.model_, "test")
    with pytest.raises(ValueError, match="column `hours` of the model's schema is missing"):
        loaded.predict(X.drop(columns="hours"), sensitive_features="sex")


def test_wrong_options(adult):
    X, y = adult
    with pytest.raises(ValueError, match="epsilon"):
        dpfair.CDPFairClassifier(epsilon=-1.0).fit(X, y, sensitive_features="sex")
    with pytest.raises(ValueError, match="`mechanism` = `magic`"):
        dpfair.DPLogisticRegression(mechanism="magic").fit(X, y, sensitive_features="sex")
    with pytest.raises(TypeError, match="`epochs`"):
        dpfair.DPLogisticRegression(epochs="many").fit(X, y, sensitive_features="sex")
    with pytest.raises(ValueError, match="bounds"):
        dpfair.CDPFairClassifier(bounds={"nope": (0, 1)}).fit(X, y, sensitive_features="sex")
    with pytest.raises(ValueError, match="not a column of X"):
        _logistic().fit(X, y, sensitive_features="gender")
    with pytest.raises(ValueError, match="X must be 2-D"):
        _logistic().fit(np.zeros(10), np.zeros(10))
    with pytest.raises(TypeError, match="X of type"):
        _logistic().fit("data.csv", y)
    with pytest.raises(ValueError, match="needs public rows"):
        dpfair.LPCTClassifier().fit(X, y)
    with pytest.raises(ValueError, match="one class|single class|two classes"):
        _logistic().fit(X, np.repeat("yes", len(X)), sensitive_features="sex")


def test_pos_label_sets_the_positive_class(adult):
    X, y = adult
    est = _logistic().set_params(pos_label="<=50K").fit(X, y, sensitive_features="sex")
    assert list(est.classes_) == [">50K", "<=50K"]
    with pytest.raises(ValueError, match="positive"):
        _logistic().set_params(pos_label="rich").fit(X, y, sensitive_features="sex")


def test_a_panic_never_reaches_python():
    # A model file that parses but is internally inconsistent is refused with an exception;
    # whatever happens inside, Python sees an exception, not an abort.
    with pytest.raises((ValueError, OSError)):
        _native.Model.from_json("{}", "empty.json")


def test_declared_groups_and_classes(adult):
    X, y = adult
    est = dpfair.CDPFairClassifier(
        frequencies=64, bounds=BOUNDS, groups=["Male", "Female"], classes=[">50K", "<=50K"]
    ).fit(X, y, sensitive_features="sex")
    assert list(est.groups_) == ["Male", "Female"]
    assert list(est.classes_) == [">50K", "<=50K"]
    with pytest.raises(ValueError, match=r"column `sex`, row \d+: a value that is not one of"):
        dpfair.CDPFairClassifier(frequencies=64, bounds=BOUNDS, groups=["Female"]).fit(
            X, y, sensitive_features="sex"
        )
