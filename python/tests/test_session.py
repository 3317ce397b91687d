"""A PrivacySession: fits compose against one budget, and an overspend is refused before any
noise is drawn."""

from __future__ import annotations

import json

import pytest
from conftest import BOUNDS

import dpfair


def _fit(session, adult, epsilon):
    """A pure-ε fit (the fair-regression post-processor) charged to `session`."""
    X, _ = adult
    scores = ((X["age"] - 17) / 73).to_frame("score")
    return dpfair.PrivateFairRegressor(
        alpha=0.05, epsilon=epsilon, bins=10, score_range=(0, 1), session=session
    ).fit(scores, scores["score"], sensitive_features=X["sex"])


def test_fits_compose_and_an_overspend_is_refused(adult):
    session = dpfair.PrivacySession(epsilon=1.5)
    first = _fit(session, adult, 1.0)
    assert first.ledger_["total"]["epsilon"] == pytest.approx(1.0)
    assert session.ledger["total"]["epsilon"] == pytest.approx(1.0)
    entries = len(session.ledger["entries"])
    with pytest.raises(dpfair.BudgetExceededError, match="budget exceeded"):
        _fit(session, adult, 1.0)
    # Refused before the fit read its data: nothing was charged, nothing released.
    assert len(session.ledger["entries"]) == entries
    assert session.ledger["total"]["epsilon"] == pytest.approx(1.0)
    # What is left still fits, and the session's total is the sum (basic composition).
    _fit(session, adult, 0.5)
    assert session.ledger["total"]["epsilon"] == pytest.approx(1.5)
    assert session.remaining[0] == pytest.approx(0.0, abs=1e-9)


def test_an_approximate_dp_fit_in_a_session(adult):
    X, y = adult
    session = dpfair.PrivacySession(epsilon=1.0, delta=1e-4)
    est = dpfair.DPLogisticRegression(
        epsilon=1.0,
        epochs=2,
        substitution=True,
        session=session,
        bounds={"age": (17, 90), "hours": (1, 99)},
    ).fit(X, y, sensitive_features="sex")
    # The session converts at its own δ (10⁻⁴ ≥ the fit's 10⁻⁵): never more than the fit's ε.
    assert 0 < session.ledger["total"]["epsilon"] <= est.ledger_["total"]["epsilon"] + 1e-9


def test_budget_exceeded_is_a_value_error():
    assert issubclass(dpfair.BudgetExceededError, ValueError)


def test_bad_session_parameters():
    with pytest.raises(ValueError, match="epsilon"):
        dpfair.PrivacySession(epsilon=-1.0)
    with pytest.raises(ValueError, match="relation"):
        dpfair.PrivacySession(epsilon=1.0, relation="sideways")


def test_insecure_seeded_session_is_marked_not_private(adult):
    session = dpfair.PrivacySession.insecure_seeded(epsilon=1.0, seed=1)
    est = _fit(session, adult, 1.0)
    assert est.ledger_["private"] is False
    assert "NOT PRIVATE" in str(est.ledger_)


def test_private_bounds_are_paid_from_the_fit_budget(adult):
    X, y = adult
    # Private bounds are certified for replace-one neighbours: the fit must certify them too.
    est = dpfair.DPLogisticRegression(
        epsilon=1.0,
        epochs=2,
        substitution=True,
        coarse_bounds={"age": (0, 150), "hours": (0, 168)},
        bounds_share=0.1,
    ).fit(X, y, sensitive_features="sex")
    labels = [e["label"] for e in est.ledger_["entries"]]
    assert any("bounds of column `age`" in label for label in labels), labels
    assert any("bounds of column `hours`" in label for label in labels), labels
    assert est.ledger_["total"]["epsilon"] <= 1.0 + 1e-9


def test_paper_accounting_needs_an_unlimited_budget(adult):
    X, y = adult
    session = dpfair.PrivacySession(epsilon=10.0, delta=1e-3)
    est = dpfair.CDPFairClassifier(
        accounting="paper",
        frequencies=16,
        bounds={"age": (17, 90), "hours": (1, 99)},
        session=session,
    )
    with pytest.raises(dpfair.BudgetExceededError):
        est.fit(X, y, sensitive_features="sex")
    assert session.ledger["entries"] == []


def test_random_state_never_seeds_the_release_noise(adult):
    """random_state repeats public choices only: two fits with it still draw fresh OS noise
    (their models differ), while an insecure seeded session repeats the noise exactly."""
    X, y = adult

    def weights(session=None):
        est = dpfair.DPLogisticRegression(
            epsilon=1.0,
            epochs=2,
            substitution=True,
            random_state=1,
            session=session,
            bounds={"age": (17, 90), "hours": (1, 99)},
        ).fit(X, y, sensitive_features="sex")
        return json.loads(est.model_.to_json())["model"]

    assert weights() != weights()
    seeded = [
        weights(dpfair.PrivacySession.insecure_seeded(epsilon=1.0, delta=1e-4, seed=5))
        for _ in range(2)
    ]
    assert seeded[0] == seeded[1]


def test_default_scaling_is_private_bounds_as_in_the_cli(adult):
    """Without `bounds`, the numeric columns get private bounds, charged to the fit's budget
    (at least `bounds_share`, raised on small data); `unscaled=True` spends nothing on them."""
    X, y = adult
    est = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2).fit(X, y, sensitive_features="sex")
    labels = [e["label"] for e in est.ledger_["entries"]]
    for column in ("age", "hours"):
        assert any(f"bounds of column `{column}`" in label for label in labels), labels
    assert est.ledger_["total"]["epsilon"] <= 1.0 + 1e-9
    raw = dpfair.DPLogisticRegression(epsilon=1.0, epochs=2, unscaled=True)
    raw.fit(X, y, sensitive_features="sex")
    assert not any("bounds of column" in e["label"] for e in raw.ledger_["entries"])
    with pytest.raises(ValueError, match="unscaled"):
        dpfair.DPLogisticRegression(unscaled=True, bounds={"age": (17, 90)}).fit(
            X, y, sensitive_features="sex"
        )


def test_eta_model_and_parity_level_reach_the_library(adult):
    X, y = adult
    est = dpfair.CDPFairClassifier(eta_model="logistic", frequencies=16, bounds=BOUNDS)
    est.fit(X, y, sensitive_features="sex")
    assert "logistic" in est.model_.to_json()
    with pytest.raises(ValueError, match="eta_model"):
        dpfair.CDPFairClassifier(eta_model="forest").fit(X, y, sensitive_features="sex")
    with pytest.raises(ValueError, match="alpha"):
        dpfair.DecoupledFairClassifier(alpha=-1.0).fit(X, y, sensitive_features="sex")


def test_decoupled_flips_reach_the_library(adult):
    # `flips` chooses which group the post-processing moves (docs/deviations.md,
    # decoupled-fewest-changes); both rules fit, and a wrong name is refused naming it.
    X, y = adult
    for flips in ("fewest-changes", "midpoint"):
        est = dpfair.DecoupledFairClassifier(flips=flips, bounds=BOUNDS, random_state=1)
        est.fit(X, y, sensitive_features="sex")
        assert "p_keep" in est.model_.to_json()
        assert est.get_params()["flips"] == flips
    with pytest.raises(ValueError, match="flips"):
        dpfair.DecoupledFairClassifier(flips="both").fit(X, y, sensitive_features="sex")


def _add_remove_fit(X, y, **kw):
    session = dpfair.PrivacySession.insecure_seeded(1.0, 1e-5, seed=3, relation="add-remove")
    return dpfair.DPLogisticRegression(
        epsilon=1.0, epochs=2, substitution=False, session=session, bounds=BOUNDS, **kw
    ).fit(X, y)


def test_add_remove_stores_the_same_schedule_at_n_and_n_plus_one(adult):
    """Under add/remove-one neighbours n is private (docs/privacy.md, "The row count under
    add/remove"): with a declared size the stored configuration and ledger costs are equal on
    n rows and on n + 1 rows; without one, a noisy count is the ledger's first entry."""
    X, y = adult
    X = X.drop(columns="sex")
    small = _add_remove_fit(X.iloc[:2000], y.iloc[:2000], public_rows=2000)
    big = _add_remove_fit(X.iloc[:2001], y.iloc[:2001], public_rows=2000)
    config = [json.loads(m.model_.config_json()) for m in (small, big)]
    assert config[0] == config[1]
    costs = [[(e["label"], e["cost"]) for e in m.ledger_["entries"]] for m in (small, big)]
    assert costs[0] == costs[1]
    released = _add_remove_fit(X.iloc[:2000], y.iloc[:2000])
    first = released.ledger_["entries"][0]
    assert first["label"].startswith("the row count") and first["relation"] == "add-remove"
    with pytest.raises(ValueError, match="public_rows"):
        dpfair.DPLogisticRegression(public_rows=100).fit(X.iloc[:200], y.iloc[:200])
