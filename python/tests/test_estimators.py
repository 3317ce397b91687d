"""Every estimator on a pandas DataFrame with a text sensitive column and a text target: fit,
predict, ledger, and Fairlearn's MetricFrame against dpfair.metrics on the predictions."""

from __future__ import annotations

import numpy as np
import pytest
from estimator_cases import (
    ALL,
    LPCT,
    REGRESSORS,
    fit_args,
    make,
    predict_input,
    predict_kwargs,
    real_target,
)
from fairlearn.metrics import MetricFrame, selection_rate

import dpfair
from dpfair.metrics import demographic_parity_difference, group_report


@pytest.fixture(scope="module")
def fitted(adult, adult_public):
    X, y = adult
    out = {}
    for name in ALL:
        Xf, yf, kw = fit_args(name, X, y, adult_public)
        out[name] = make(name, random_state=7).fit(Xf, yf, **kw)
    return out


@pytest.mark.parametrize("name", ALL)
def test_fit_predict_and_ledger(name, fitted, adult):
    X, y = adult
    est = fitted[name]
    pred = est.predict(predict_input(name, X), **predict_kwargs(name, X))
    assert pred.shape == (len(X),)
    if name in REGRESSORS:
        assert np.isfinite(pred).all()
    else:
        assert set(pred) <= set(est.classes_)
        assert len(est.classes_) >= 2
    ledger = est.ledger_
    # The fit never spends more than its parameters say (ε of the whole fit; LPCT: per holder).
    assert 0 < ledger["total"]["epsilon"] <= est.epsilon * (1 + 1e-9)
    assert ledger["private"] is True
    assert ledger["entries"], "a private fit records its releases"
    assert "ε" in str(ledger) or "epsilon" in str(ledger)


def test_text_target_classes_are_the_original_labels(fitted):
    est = fitted["CDPFairClassifier"]
    assert list(est.classes_) == ["<=50K", ">50K"]
    assert list(est.groups_) == ["Female", "Male"]
    assert est.sensitive_feature_name_ == "sex"
    assert list(est.feature_names_in_) == ["age", "hours", "job", "sex"]


@pytest.mark.parametrize("name", [n for n in ALL if n not in LPCT and n not in REGRESSORS])
def test_predict_proba_rows_are_distributions(name, fitted, adult):
    X, _ = adult
    est = fitted[name]
    try:
        p = est.predict_proba(X, sensitive_features=X["sex"])
    except AttributeError:
        pytest.skip(f"skipped: {name}'s model has no probabilities")
    assert p.shape == (len(X), len(est.classes_))
    assert np.all(p >= 0) and np.allclose(p.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", [n for n in ALL if n not in REGRESSORS])
def test_fairlearn_metricframe_equals_dpfair_metrics(name, fitted, adult):
    X, y = adult
    est = fitted[name]
    pred = est.predict(predict_input(name, X), **predict_kwargs(name, X))
    sex = X["sex"]
    if name == "DP2DPClassifier":
        _, y_true, _ = fit_args(name, X, y, None)
        mf = MetricFrame(
            metrics={"accuracy": lambda t, p: float(np.mean(t == p))},
            y_true=y_true,
            y_pred=pred,
            sensitive_features=sex,
        )
        ours = group_report(y_true, pred, sensitive_features=sex, task="multiclass")
        for g in ("Female", "Male"):
            assert ours.by_group[g]["accuracy"] == pytest.approx(
                mf.by_group["accuracy"][g], abs=1e-12
            )
        return
    pos = ">50K"
    sr = lambda t, p: selection_rate(t, p, pos_label=pos)  # noqa: E731
    mf = MetricFrame(
        metrics={"accuracy": lambda t, p: float(np.mean(t == p)), "selection_rate": sr},
        y_true=y,
        y_pred=pred,
        sensitive_features=sex,
    )
    ours = group_report(y, pred, sensitive_features=sex, task="binary", pos_label=pos)
    for g in ("Female", "Male"):
        assert ours.by_group[g]["accuracy"] == pytest.approx(mf.by_group["accuracy"][g], abs=1e-12)
        assert ours.by_group[g]["selection_rate"] == pytest.approx(
            mf.by_group["selection_rate"][g], abs=1e-12
        )
    assert demographic_parity_difference(
        y, pred, sensitive_features=sex, pos_label=pos
    ) == pytest.approx(mf.difference()["selection_rate"], abs=1e-12)


def test_regressor_ks_metric_matches_scipy(fitted, adult):
    from scipy.stats import ks_2samp

    X, _ = adult
    est = fitted["PrivateFairRegressor"]
    out = est.predict(predict_input("PrivateFairRegressor", X), sensitive_features=X["sex"])
    a, b = out[X["sex"].to_numpy() == "Female"], out[X["sex"].to_numpy() == "Male"]
    ours = dpfair.metrics.ks_statistical_parity(None, out, sensitive_features=X["sex"])
    assert ours == pytest.approx(ks_2samp(a, b).statistic, abs=1e-12)


@pytest.mark.parametrize("name", ["DPLinearRegression", "PrivateFairRegressor+base"])
def test_regressors_from_features_agree_with_fairlearn_and_beat_the_constant(
    name, adult, adult_public
):
    from sklearn.metrics import mean_squared_error

    X, income = adult
    y = real_target(X)
    # Seeded release noise (not private: the OS-noise fits are the `fitted` fixture's). With OS
    # noise the held-out check chose the released mean over DPLinearRegression in 63 of 1,000
    # fits, whose MSE is then Var(y) or more: the test failed about 1 run in 16. Seed 2 keeps
    # both models (of seeds 0-99, 3 failed, as OS noise would).
    Xf, yf, kw = fit_args(name, X, income, adult_public)
    session = dpfair.PrivacySession.insecure_seeded(1.0, 1e-4, seed=2)
    est = make(name, random_state=7, session=session).fit(Xf, yf, **kw)
    assert est.constant_ is None, est.constant_
    pred = est.predict(X, sensitive_features=X["sex"])
    mf = MetricFrame(
        metrics={"mse": mean_squared_error}, y_true=y, y_pred=pred, sensitive_features=X["sex"]
    )
    ours = group_report(y, pred, sensitive_features=X["sex"], task="regression")
    for g in ("Female", "Male"):
        assert ours.by_group[g]["mse"] == pytest.approx(mf.by_group["mse"][g], rel=1e-12)
    # Better than predicting the mean: the linear signal (variance ≈ 0.2) dwarfs the noise at
    # n = 3,000, ε = 1 with two scaled features and one text column (σ·√p against ‖Xᵀy‖ ≈ n·0.4).
    # The fair one pays for parity (the groups differ by 0.35: at most 0.175² per row).
    parity_cost = 0.175**2 if name == "PrivateFairRegressor+base" else 0.0
    assert float(mf.overall["mse"]) < np.var(y) + parity_cost, (mf.overall["mse"], np.var(y))
    if name == "PrivateFairRegressor+base":
        ks = dpfair.metrics.ks_statistical_parity(None, pred, sensitive_features=X["sex"])
        # α = 0.05, 20 bins; the histogram's noise on 1,500 rows at ε = 1 and DKW sampling
        # error on ~1,200 and ~1,800 rows per group (≈ 0.05 each at β = 10⁻³).
        assert ks < 0.2, ks
        # Without the post-processor the groups' predictions differ.
        # The base's release, the post-processor's and the fit rows' mean (the check's fallback,
        # 20 % of ε) in the fit part; the held-out check's one (the model's paired gain over
        # that mean, docs/privacy.md "The held-out check") in the other, in parallel: ε = 1 in
        # total.
        base = est.ledger_["entries"]
        assert len(base) == 4 and est.ledger_["total"]["epsilon"] == pytest.approx(1.0)
        check = [e for e in base if e["label"].startswith("held-out check: the model's gain")]
        assert [e["cost"] for e in check] == [{"unit": "pure", "epsilon": pytest.approx(1.0)}]
        fallback = [e for e in base if e["label"].startswith("held-out check's fallback")]
        assert [e["cost"] for e in fallback] == [{"unit": "pure", "epsilon": pytest.approx(0.2)}]


def test_chained_regressor_refuses_settings_it_would_ignore(adult):
    X, _ = adult
    y = real_target(X)
    for base, match in [
        (dpfair.DPLinearRegression(epsilon=2.0), "epsilon"),
        (dpfair.DPLinearRegression(target_range=(0, 1)), "target_range"),
        (dpfair.DPLinearRegression(coarse_target_range=(0, 9)), "coarse_target_range"),
    ]:
        est = dpfair.PrivateFairRegressor(score_range=(0, 3), base=base)
        with pytest.raises(ValueError, match=match):
            est.fit(X, y, sensitive_features="sex")
    with pytest.raises(TypeError, match="DPLinearRegression"):
        dpfair.PrivateFairRegressor(score_range=(0, 3), base=object()).fit(
            X, y, sensitive_features="sex"
        )
    # Nested parameters, as sklearn's grid search sets them.
    est = dpfair.PrivateFairRegressor(base=dpfair.DPLinearRegression())
    est.set_params(base__ridge=5.0)
    assert est.base.ridge == 5.0 and est.get_params()["base__ridge"] == 5.0


def test_groups_are_read_from_x_when_not_given(fitted, adult):
    X, _ = adult
    est = fitted["CDPFairClassifier"]
    assert (est.predict(X) == est.predict(X, sensitive_features=X["sex"])).all()


def test_pickled_estimator_predicts_alike(fitted, adult):
    import pickle

    X, _ = adult
    est = fitted["DPLogisticRegression"]
    again = pickle.loads(pickle.dumps(est))
    assert again.model_.to_json() == est.model_.to_json()
    assert (again.predict(X) == est.predict(X)).all()


@pytest.mark.parametrize("cls", [dpfair.LPCTClassifier, dpfair.LPCTPruneClassifier])
def test_lpct_guard_defaults_to_the_clis(cls):
    """The significance guard is on by default at the CLI's z = 3 (`--guard`), `guard=0` is the
    paper's rule (no guard in the fit's configuration), and a negative z is refused by name."""
    import json

    rng = np.random.default_rng(11)
    Xp = rng.uniform(size=(300, 2))
    yp = (Xp[:, 0] > 0.5).astype(int)
    X = rng.uniform(size=(2000, 2))
    y = (X[:, 0] > 0.5).astype(int)
    fit = {"X_public": Xp, "y_public": yp}
    default = cls(epsilon=2.0).fit(X, y, **fit)
    assert json.loads(default.model_.config_json())["guard"] == 3.0
    paper = cls(epsilon=2.0, guard=0).fit(X, y, **fit)
    assert json.loads(paper.model_.config_json())["guard"] is None
    custom = cls(epsilon=2.0, guard=1.5).fit(X, y, **fit)
    assert json.loads(custom.model_.config_json())["guard"] == 1.5
    with pytest.raises(ValueError, match="guard"):
        cls(epsilon=2.0, guard=-1.0).fit(X, y, **fit)


def test_held_out_check_is_in_the_ledger_and_can_be_turned_off(adult):
    # CDP-Fair holds out 10 % of its rows and chooses, in parallel with the fit, between the
    # model and the fit rows' most frequent class (released in the fit part at 5 % of ε): one
    # entry in its own part. check_fraction=0 fits on every row with no such entry.
    X, y = adult
    label = "held-out check: the model or the fit rows' most frequent class (correct predictions)"
    for fraction, expected in [(None, 1), (0.0, 0)]:
        est = dpfair.CDPFairClassifier(epsilon=1.0, check_fraction=fraction, random_state=3)
        est.fit(X, y, sensitive_features="sex")
        entries = [e for e in est.ledger_["entries"] if e["label"] == label]
        assert len(entries) == expected
        assert est.ledger_["total"]["epsilon"] <= 1.0 + 1e-9
    with pytest.raises(ValueError, match="check_fraction"):
        dpfair.CDPFairClassifier(check_fraction=0.9).fit(X, y, sensitive_features="sex")


def _find(obj, key):
    """The first value stored under `key` anywhere in a JSON document."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        children = obj.values()
    elif isinstance(obj, list):
        children = obj
    else:
        return None
    for child in children:
        found = _find(child, key)
        if found is not None:
            return found
    return None


def test_dp2dp_aims_margin_z_sampling_deviations_below_rho(adult):
    """`margin_z` sets how far below ρ the dual ascent aims (docs/deviations.md,
    dp2dp-sampling-margin): 0 aims at ρ itself, the default one standard deviation s of a
    difference of the two groups' rates on the pool, s = √(Σ 1/(4 N π̄_s)), below it."""
    import json
    import math

    X, y = adult
    Xf, y3, kw = fit_args("DP2DPClassifier", X, y, None)

    def model(**extra):
        est = make("DP2DPClassifier", random_state=3, **extra).fit(Xf, y3, **kw)
        return json.loads(est.model_.to_json())

    assert _find(model(margin_z=0.0), "aimed_rho") == pytest.approx(0.05)
    doc = model()
    n, pi = _find(doc, "n_pool"), _find(doc, "pi")
    s = math.sqrt(sum(1.0 / (4.0 * n * p) for p in pi))
    assert _find(doc, "aimed_rho") == pytest.approx(max(0.05 - s, 0.0))
    with pytest.raises(ValueError, match="margin_z"):
        make("DP2DPClassifier", margin_z=-1.0).fit(Xf, y3, **kw)


def test_fair_regression_on_scores_spends_nothing_on_feature_bounds():
    """Scores are clipped to the public score range, as `dpfair fit fair-regression --scores`
    does: no private bounds are estimated for the score column (they took up to a quarter of ε
    and refused small data), and predictions stay in the score range."""
    rng = np.random.default_rng(5)
    g = rng.choice(["a", "b"], size=40)
    scores = rng.uniform(size=40) + 0.3 * (g == "b")
    reg = dpfair.PrivateFairRegressor(alpha=0.05, score_range=(0, 1.3), bins=8)
    reg.fit(scores.reshape(-1, 1), scores, sensitive_features=g)
    labels = [e["label"] for e in reg.ledger_["entries"]]
    assert not any(label.startswith("feature bounds") for label in labels), labels
    out = reg.predict(scores.reshape(-1, 1), sensitive_features=g)
    assert out.min() >= 0 and out.max() <= 1.3


def test_a_version_1_model_file_loads_with_an_unverified_warning(tmp_path):
    """A file written before digests reads, but `load` says it is unverified; the one-character
    downgrade of a file that carries a digest is refused (docs/privacy.md, "Model files")."""
    import json

    rng = np.random.default_rng(6)
    g = rng.choice(["a", "b"], size=200)
    scores = rng.uniform(size=200)
    reg = dpfair.PrivateFairRegressor(score_range=(0, 1), bins=4)
    reg.fit(scores.reshape(-1, 1), scores, sensitive_features=g)
    text = json.loads(reg.model_.to_json())
    downgraded = dict(text, version=1)
    (tmp_path / "down.json").write_text(json.dumps(downgraded))
    with pytest.raises(ValueError, match="edited `version`"):
        dpfair.load(tmp_path / "down.json")
    old = {k: v for k, v in downgraded.items() if k != "digest"}
    (tmp_path / "v1.json").write_text(json.dumps(old))
    with pytest.warns(UserWarning, match="unverified"):
        dpfair.load(tmp_path / "v1.json")


def test_a_constant_model_warns_and_says_which_constant():
    """Labels without signal: the held-out check replaces the model by a class, `fit` warns with
    a `PrivacyWarning` subclass and `constant_` names the class; a kept model has `None`."""
    rng = np.random.default_rng(8)
    X = rng.uniform(size=(3000, 2))
    unit = {"x0": (0, 1), "x1": (0, 1)}  # public bounds
    y = np.where(rng.uniform(size=3000) < 0.7, "no", "yes")  # no signal: the majority wins
    # Seeded noise: the test repeats exactly (a tie keeps the model with probability ≤ 1 %).
    session = dpfair.PrivacySession.insecure_seeded(10.0, 1e-4, seed=4)
    with pytest.warns(dpfair.ConstantModelWarning, match="no better than always predicting"):
        est = dpfair.DPLogisticRegression(epsilon=0.05, bounds=unit, session=session).fit(X, y)
    assert issubclass(dpfair.ConstantModelWarning, dpfair.PrivacyWarning)
    assert issubclass(dpfair.PrivacyWarning, UserWarning)
    assert est.constant_ in ("no", "yes")
    assert set(est.predict(X)) == {est.constant_}
    signal = (X[:, 0] > 0.5).astype(int)
    kept = dpfair.DPLogisticRegression(epsilon=2.0, bounds=unit, session=session).fit(X, signal)
    assert kept.constant_ is None
