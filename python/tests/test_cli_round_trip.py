"""Model files are shared with the CLI: a model saved from Python predicts with `dpfair predict`
on the same CSV columns, and a model fitted by `dpfair fit` predicts from Python. Skipped (and
saying so) when the `dpfair` binary is not built."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest
from conftest import BOUNDS
from estimator_cases import ALL, REGRESSORS, fit_args, make, predict_input, predict_kwargs

import dpfair


def _cli_predict(binary, model, csv, out, seed):
    subprocess.run(
        [
            binary,
            "predict",
            "--model",
            str(model),
            "--data",
            str(csv),
            "--out",
            str(out),
            "--seed",
            str(seed),
        ],
        check=True,
        capture_output=True,
    )
    return pd.read_csv(out, dtype={"prediction": str})


@pytest.mark.parametrize("name", ALL)
def test_python_model_predicts_with_the_cli(name, dpfair_bin, adult, adult_public, tmp_path):
    X, y = adult
    Xf, yf, kw = fit_args(name, X, y, adult_public)
    est = make(name, random_state=1).fit(Xf, yf, **kw)
    path = tmp_path / "model.json"
    est.save(path)
    test = predict_input(name, X).head(300)
    if "sex" not in test.columns:
        test = test.assign(sex=X["sex"].head(300))
    csv = tmp_path / "test.csv"
    test.to_csv(csv, index=False)
    # The same seed for a randomized predictor's draws: Python's random_state, the CLI's --seed.
    cli = _cli_predict(dpfair_bin, path, csv, tmp_path / "pred.csv", est.random_state)
    ours = est.predict(test, **predict_kwargs(name, test))
    if name in REGRESSORS:
        assert cli["prediction"].astype(float).tolist() == pytest.approx(list(ours), abs=1e-9)
    else:
        assert cli["prediction"].tolist() == [str(v) for v in ours]
    # And the file reads back in Python as the same model.
    again = dpfair.load(path)
    assert type(again) is type(est)
    assert again.model_.to_json() == est.model_.to_json()


def test_cli_model_predicts_from_python(dpfair_bin, adult, tmp_path):
    X, y = adult
    data = X.assign(income=y)
    csv = tmp_path / "train.csv"
    data.to_csv(csv, index=False)
    model = tmp_path / "cli.json"
    bounds = ",".join(f"{c}:{lo}:{hi}" for c, (lo, hi) in BOUNDS.items())
    subprocess.run(
        [
            dpfair_bin,
            "fit",
            "cdp-fair",
            "--data",
            str(csv),
            "--target",
            "income",
            "--sensitive",
            "sex",
            "--categorical",
            "job",
            "--bounds",
            bounds,
            "--epsilon",
            "1",
            "--frequencies",
            "64",
            "--out",
            str(model),
        ],
        check=True,
        capture_output=True,
    )
    est = dpfair.load(model)
    assert isinstance(est, dpfair.CDPFairClassifier)
    assert list(est.classes_) == ["<=50K", ">50K"]
    pred = est.predict(X, sensitive_features="sex")
    cli = _cli_predict(dpfair_bin, model, csv, tmp_path / "pred.csv", 0)
    assert cli["prediction"].tolist() == list(pred)
    # The same schema as a Python fit on the DataFrame learns (levels, classes, groups).
    ours = dpfair.CDPFairClassifier(frequencies=64, bounds=BOUNDS).fit(
        X, y, sensitive_features="sex"
    )
    assert ours.model_.feature_names == est.model_.feature_names
    assert ours.model_.class_labels == est.model_.class_labels
    assert ours.model_.sensitive == est.model_.sensitive
