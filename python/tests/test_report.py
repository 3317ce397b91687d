"""`Model.report` and the estimators' `report`: the release report `dpfair report` writes, from
Python (docs/evaluation.md, "The release report"). The same model file and evaluation rows with
the same seeded noise give the CLI's JSON and HTML exactly; a fitted estimator's report holds
its ledger, schema and digest; without `epsilon` the rows are not read; the evaluation composes
with a session."""

from __future__ import annotations

import json
import subprocess
import warnings

import pandas as pd
import pytest
from conftest import BOUNDS, adult_like

import dpfair
from dpfair import _native


def _escaped(text):
    """`text` HTML-escaped as the report escapes it."""
    for raw, entity in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ('"', "&quot;"),
        ("'", "&#39;"),
    ):
        text = text.replace(raw, entity)
    return text


@pytest.fixture(scope="module")
def logistic(adult):
    """A dp-logistic classifier of the Adult-like rows, groups `sex`."""
    X, y = adult
    est = dpfair.DPLogisticRegression(epsilon=1.0, bounds=BOUNDS)
    return est.fit(X, y, sensitive_features="sex")


def _cli_model(binary, train, path):
    """A dp-logistic model of `train` (target income, groups sex) fitted by `dpfair fit`."""
    bounds = ",".join(f"{c}:{lo}:{hi}" for c, (lo, hi) in BOUNDS.items())
    subprocess.run(
        [binary, "fit", "dp-logistic", "--data", str(train), "--target", "income"]
        + ["--sensitive", "sex", "--categorical", "job", "--bounds", bounds]
        + ["--epsilon", "1", "--out", str(path)],
        check=True,
        capture_output=True,
    )


def test_python_writes_the_clis_report_for_the_same_model_and_rows(dpfair_bin, adult, tmp_path):
    X, y = adult
    train, rows = tmp_path / "train.csv", tmp_path / "eval.csv"
    X.assign(income=y).to_csv(train, index=False)
    Xe, ye = adult_like(1_000, 7)
    Xe.assign(income=ye).to_csv(rows, index=False)
    model = tmp_path / "model.json"
    _cli_model(dpfair_bin, train, model)
    # dp-logistic predicts deterministically, so the counts are equal; the release noise is
    # seeded alike on both sides (NOT PRIVATE: a test only).
    subprocess.run(
        [dpfair_bin, "report", str(model), "--evaluate", str(rows), "--epsilon", "0.7"]
        + ["--level", "0.9", "--insecure-seeded-noise", "11"]
        + ["--out", str(tmp_path / "cli.html"), "--json", str(tmp_path / "cli.json")],
        check=True,
        capture_output=True,
    )
    data = pd.read_csv(rows)
    session = dpfair.PrivacySession.insecure_seeded(0.7, seed=11)
    ours = _native.Model.load(str(model)).report(
        str(tmp_path / "py.html"),
        X=data.drop(columns="income"),
        y=data["income"],
        epsilon=0.7,
        level=0.9,
        session=session,
    )
    cli = json.loads((tmp_path / "cli.json").read_text())
    # Every field is compared: the report holds no file path, and no field differs.
    assert ours == cli
    assert json.loads((tmp_path / "py.json").read_text()) == cli
    assert cli["evaluation"]["status"] == "released"
    assert cli["evaluation"]["total"]["certified"] is False  # seeded: NOT PRIVATE
    assert (tmp_path / "py.html").read_text() == (tmp_path / "cli.html").read_text()
    # The release was charged to the session.
    assert session.remaining[0] == pytest.approx(0.0)


def test_a_fitted_estimators_report_holds_its_ledger_schema_and_digest(adult, tmp_path):
    X, y = adult
    clf = dpfair.CDPFairClassifier(epsilon=1.0, bounds=BOUNDS).fit(X, y, sensitive_features="sex")
    out = tmp_path / "r.html"
    report = clf.report(out)
    html = out.read_text()
    saved = json.loads((tmp_path / "r.json").read_text())
    assert report == saved
    entries = clf.ledger_["entries"]
    assert [r["label"] for r in report["releases"]] == [e["label"] for e in entries]
    assert len(entries) > 0
    for e in entries:
        assert _escaped(e["label"]) in html
    assert report["method"]["name"] == "cdp-fair" and "Xue & Yu" in report["method"]["description"]
    schema = report["schema"]
    assert [f["name"] for f in schema["features"]] == ["age", "hours", "job"]
    assert schema["features"][2]["levels"] == ["clerical", "craft", "sales"]
    assert schema["sensitive"]["name"] == "sex"
    assert schema["sensitive"]["groups"] == ["Female", "Male"]
    assert schema["target"]["classes"] == ["<=50K", ">50K"]
    digest = json.loads(clf.model_.to_json())["digest"]
    assert digest.startswith("sha256:")
    assert report["digest"] == {"value": digest, "verified": True}
    for heading in ("Public schema", "The fit's releases", "Model file", "Private evaluation"):
        assert f"<h2>{heading}" in html, heading
    assert digest in html and "<code>sex</code>" in html and "<code>job</code>" in html
    assert report["total"]["certified"] is True
    assert report["evaluation"] == {"status": "not-requested"}


def test_without_epsilon_the_rows_are_not_read(logistic, tmp_path):
    clf = logistic
    # Not a table at all: reading it would fail, so a report that succeeds did not read it.
    with pytest.warns(UserWarning, match="were not read"):
        report = clf.report(tmp_path / "r.html", X=object(), y=object())
    assert report["evaluation"] == {"status": "needs-epsilon"}
    html = (tmp_path / "r.html").read_text()
    assert "an evaluation needs <code>--epsilon E</code>" in html
    assert "selection_rate" not in html and "The evaluation's release" not in html
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clf.report(tmp_path / "plain.html")["evaluation"]["status"] == "not-requested"


def test_the_evaluation_composes_with_a_session_and_is_refused_over_budget(logistic, tmp_path):
    clf = logistic
    Xe, ye = adult_like(800, 3)
    session = dpfair.PrivacySession(epsilon=1.0)
    report = clf.report(tmp_path / "a.html", X=Xe, y=ye, epsilon=0.6, session=session)
    assert session.remaining[0] == pytest.approx(0.4)
    assert len(session.ledger["entries"]) == 1
    ev = report["evaluation"]
    assert ev["status"] == "released" and ev["total"]["certified"] is True
    assert [g["group"] for g in ev["report"]["by_group"]] == ["Female", "Male"]
    # 0.6 more than the 0.4 left: refused before any noise, and nothing written.
    with pytest.raises(dpfair.BudgetExceededError):
        clf.report(tmp_path / "b.html", X=Xe, y=ye, epsilon=0.6, session=session)
    assert not (tmp_path / "b.html").exists()
    assert session.remaining[0] == pytest.approx(0.4)


@pytest.mark.filterwarnings("ignore::dpfair.ConstantModelWarning")
def test_bad_requests_are_named(logistic, adult, tmp_path):
    clf, (X, y) = logistic, adult
    out = tmp_path / "r.html"
    with pytest.raises(ValueError, match="epsilon=0"):
        clf.report(out, X=X, y=y, epsilon=0.0)
    with pytest.raises(ValueError, match="level=2"):
        clf.report(out, X=X, y=y, epsilon=1.0, level=2.0)
    with pytest.raises(ValueError, match="needs the evaluation rows"):
        clf.report(out, epsilon=1.0)
    with pytest.raises(ValueError, match="same file as out"):
        clf.report(out, json=out)
    with pytest.raises(ValueError, match="session= without epsilon="):
        clf.report(out, session=dpfair.PrivacySession(epsilon=1.0))
    reg = dpfair.DPLinearRegression(epsilon=1.0, target_range=(0, 100)).fit(
        X.drop(columns="sex"), X["hours"], sensitive_features=X["sex"]
    )
    with pytest.raises(ValueError, match=r"\[0, 100\]"):  # the model's own range, not another
        reg.model_.report(out, X=X, y=X["hours"], epsilon=1.0, target_range=(0, 50))
    assert not out.exists()


@pytest.mark.filterwarnings("ignore::dpfair.ConstantModelWarning")
def test_a_regressors_evaluation_is_its_mse_and_ks(adult, tmp_path):
    X, _ = adult
    reg = dpfair.DPLinearRegression(epsilon=1.0, target_range=(0, 100)).fit(
        X.drop(columns=["sex", "hours"]), X["hours"], sensitive_features=X["sex"]
    )
    report = reg.report(tmp_path / "r.html", X=X, y=X["hours"], epsilon=1.0)
    ev = report["evaluation"]
    assert ev["status"] == "released" and len(ev["releases"]) == 2
    r = ev["report"]
    assert r["kind"] == "regression" and r["range"] == [0.0, 100.0]
    mse, ks = r["squared_errors"]["mse"], r["ks"]
    # The hours are uniform on 1..99 and the features do not see them: any such predictor's
    # MSE is at least their variance (99² − 1)/12 ≈ 817. The interval covers the population
    # MSE at 95 % (conservatively); its upper end below 700 would need the 3,000 rows' squared
    # errors to fall ~4 standard errors short and the interval to miss as well.
    assert mse["lower"] <= mse["value"] <= mse["upper"] and mse["upper"] >= 700
    assert 0.0 <= ks["lower"] <= ks["upper"] <= 1.0
    html = (tmp_path / "r.html").read_text()
    assert "mean_squared_error" in html and "ks_distance" in html and "<svg" in html


def test_dp2dp_and_lpct_get_their_reports(adult, adult_public, tmp_path):
    X, y = adult
    dp2dp = dpfair.DP2DPClassifier(epsilon=2.0, bounds=BOUNDS).fit(X, y, sensitive_features="sex")
    r = dp2dp.report(tmp_path / "d.html", X=X, y=y, epsilon=1.0)["evaluation"]["report"]
    assert r["kind"] == "multiclass" and r["classes"] == ["<=50K", ">50K"]
    assert len(r["by_group"][0]["selection_rates"]) == 2
    u = r["unfairness"]
    assert 0.0 <= u["lower"] <= u["upper"] <= 1.0
    Xp, yp = adult_public
    lpct = dpfair.LPCTClassifier(epsilon=2.0).fit(
        X.drop(columns="sex"), y, X_public=Xp.drop(columns="sex"), y_public=yp
    )
    out = tmp_path / "l.html"
    # No sensitive attribute: the groups are declared (and the column named), never read.
    with pytest.raises(ValueError, match="groups="):
        lpct.model_.report(out, X=X, y=y, sensitive_features="sex", epsilon=1.0)
    # The estimator's report forwards the keyword arguments to its model's.
    report = lpct.report(
        out, X=X, y=y, sensitive_features="sex", epsilon=1.0, groups=["Female", "Male"]
    )
    r = report["evaluation"]["report"]
    assert r["kind"] == "groups"
    assert [g["group"] for g in r["by_group"]] == ["Female", "Male"]


def test_an_audit_of_the_models_method_is_shown(dpfair_bin, logistic, tmp_path):
    audit = tmp_path / "audit.json"
    audit.write_text(
        subprocess.run(
            [dpfair_bin, "audit", "lpct", "--quick", "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    # An audit of another method than the model's (dp-logistic) is refused, naming both.
    with pytest.raises(ValueError, match=r"`lpct`.*`dp-logistic`"):
        logistic.model_.report(tmp_path / "r.html", audit=audit)
    assert not (tmp_path / "r.html").exists()
    X_public, y_public = adult_like(800, 2)
    X, y = adult_like(2000, 5)
    lpct = dpfair.LPCTClassifier(epsilon=1.0).fit(
        X.drop(columns="sex"), y, X_public=X_public.drop(columns="sex"), y_public=y_public
    )
    report = lpct.model_.report(tmp_path / "l.html", audit=audit)
    findings = json.loads(audit.read_text())
    assert report["audit"]["method"] == "lpct" and report["audit"]["seed"] == 1
    shown = report["audit"]["findings"]
    assert [f["epsilon_lower"] for f in shown] == [f["epsilon_lower"] for f in findings]
    assert (
        "Privacy audit of the method (on generated neighbours)" in (tmp_path / "l.html").read_text()
    )
