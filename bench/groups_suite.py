"""More groups and other constraints: the group-thresholds classifier against Fairlearn.

Cases with a sensitive attribute of three or more groups (Adult income by race, 5 levels, and by
race x sex, 10 groups; Law first-year GPA by race, 5 levels; Credit default by age band, 4
levels), subsampled at `--sizes` rows and split 70/30 per repetition (the proxy suite's tidying:
rows with a missing value left out, rare text levels merged). For each constraint
(demographic parity, equal opportunity, equalized odds) at level 0.1 and epsilon = 2:

- the majority class of the training rows;
- dpfair's unconstrained private learner, `DPLogisticRegression`, at the same epsilon;
- `dpfair.GroupThresholdsClassifier` at the constraint, and CDP-Fair, the decoupled classifier and
  (demographic parity only) DP2DP at the constraint, which fit group thresholds for more than
  two groups (CDP-Fair on all rows, the others on their own splits);
- Fairlearn's ThresholdOptimizer at the same constraint (non-private), over scikit-learn's
  logistic regression on one-hot features.

Reported: held-out accuracy and the constraint's difference (Fairlearn's semantics: the
largest minus the smallest rate over the groups), mean and standard error over the repetitions,
and the difference's sampling tolerance: a simultaneous one-sided 95 % bound over the ordered
pairs of groups (Bonferroni, z at 1 - 0.05/(K(K-1))) on a difference of two proportions at the
test set's group sizes (for equal opportunity the groups' positives; equalized odds the larger
of the positives' and the negatives' bounds), taken over the worst pair. Scores are exact on the
test rows: a benchmark, not a release.

    DPFAIR_DATA_DIR=/path/to/datasets python bench/groups_suite.py [--reps 5] [--out table.md]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from statistics import NormalDist

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))
from proxy_suite import ADULT_COLUMNS, Case, mean_se, split, tidy  # noqa: E402

CONSTRAINTS = {
    "demographic-parity": "demographic_parity",
    "equal-opportunity": "true_positive_rate_parity",
    "equalized-odds": "equalized_odds",
}


def load_cases(data_dir: str) -> list:
    """The suite's data sets, each with a sensitive attribute of three or more groups."""
    adult = pd.read_csv(
        os.path.join(data_dir, "adult.data"), header=None, names=ADULT_COLUMNS,
        skipinitialspace=True, na_values="?",
    ).dropna()  # fmt: skip
    adult["income"] = (adult["income"] == ">50K").astype(int)
    adult["race x sex"] = adult["race"] + " " + adult["sex"]
    features = ["age", "workclass", "education", "education-num", "marital-status",
                "occupation", "relationship", "capital-gain", "capital-loss",
                "hours-per-week"]  # fmt: skip
    law = pd.read_csv(os.path.join(data_dir, "law_bar_pass.csv"))
    law = law.dropna(subset=["zfygpa", "lsat", "ugpa", "race1", "gender", "fam_inc", "tier"])
    law["above"] = (law["zfygpa"] > 0).astype(int)
    credit = pd.read_csv(os.path.join(data_dir, "credit_card_clients.csv"))
    credit["age band"] = pd.cut(
        credit["AGE"], [0, 29, 39, 49, 200], labels=["<30", "30s", "40s", "50+"]
    ).astype(str)
    return [
        Case("adult/income~race (5 groups)", adult, "income", "race", [*features, "sex"]),
        Case("adult/income~race×sex (10 groups)", adult, "income", "race x sex", features),
        Case("law/gpa~race (5 groups)", law, "above", "race1",
             ["lsat", "ugpa", "gender", "fam_inc", "tier", "fulltime"]),
        Case("credit/default~age band (4 groups)", credit, "default payment", "age band",
             ["LIMIT_BAL", "SEX", "EDUCATION", "PAY_0", "PAY_2", "PAY_3", "BILL_AMT1",
              "BILL_AMT2", "PAY_AMT1", "PAY_AMT2"]),
    ]  # fmt: skip


def difference(pred, y, groups, constraint: str) -> float:
    """Fairlearn's difference of the constraint's rate(s): the largest minus the smallest."""

    def gap(mask):
        rates = [pred[(groups == g) & mask].mean() for g in np.unique(groups)
                 if np.any((groups == g) & mask)]  # fmt: skip
        return float(max(rates) - min(rates))

    every = np.ones(len(y), dtype=bool)
    if constraint == "demographic-parity":
        return gap(every)
    if constraint == "equal-opportunity":
        return gap(y == 1)
    return max(gap(y == 1), gap(y == 0))


def tolerance(y, groups, constraint: str) -> float:
    """The module docs' simultaneous sampling bound on the constraint's difference."""
    levels = np.unique(groups)
    k = len(levels)
    z = NormalDist().inv_cdf(1 - 0.05 / max(k * (k - 1), 1))

    def bound(mask):
        sizes = sorted(max(int(np.sum((groups == g) & mask)), 1) for g in levels)
        return z * math.sqrt(1 / (4 * sizes[0]) + 1 / (4 * sizes[1]))

    every = np.ones(len(y), dtype=bool)
    if constraint == "demographic-parity":
        return bound(every)
    if constraint == "equal-opportunity":
        return bound(y == 1)
    return max(bound(y == 1), bound(y == 0))


def fairlearn_reference(xtr, ytr, gtr, xte, gte, constraint: str, seed: int):
    """Fairlearn's ThresholdOptimizer over logistic regression on one-hot features."""
    from fairlearn.postprocessing import ThresholdOptimizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    xtr_d = pd.get_dummies(xtr, dtype=float)
    xte_d = pd.get_dummies(xte, dtype=float).reindex(columns=xtr_d.columns, fill_value=0.0)
    opt = ThresholdOptimizer(
        estimator=make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        constraints=CONSTRAINTS[constraint],
        predict_method="predict_proba",
    )
    opt.fit(xtr_d, ytr, sensitive_features=gtr)
    return np.asarray(opt.predict(xte_d, sensitive_features=gte, random_state=seed))


def run(cases, sizes, reps, epsilon, level, constraints, out, only=None):
    """Every case, size and constraint; a Markdown table each, printed and appended to `out`."""
    import dpfair

    for case in cases:
        case = tidy(case)
        for n in sizes:
            if n > len(case.frame):
                continue
            for constraint in constraints:
                cells: dict = {}
                tols = []
                for r in range(reps):
                    tr, te = split(case, n, np.random.default_rng(1000 * n + r))
                    xtr, xte = tr[case.features], te[case.features]
                    ytr, yte = tr[case.target].to_numpy(), te[case.target].to_numpy()
                    gtr, gte = tr[case.sensitive].to_numpy(), te[case.sensitive].to_numpy()
                    tols.append(tolerance(yte, gte, constraint))
                    scored = {"majority class": (np.full(len(yte), np.bincount(ytr).argmax()), 0.0)}
                    t0 = time.process_time()
                    try:
                        scored["fairlearn ThresholdOptimizer"] = (
                            fairlearn_reference(xtr, ytr, gtr, xte, gte, constraint, r),
                            time.process_time() - t0,
                        )
                    except ValueError as e:  # e.g. a group without positives
                        scored["fairlearn ThresholdOptimizer"] = (
                            f"{type(e).__name__}: {str(e)[:60]}",
                            0.0,
                        )
                    for name, make, sensitive in [
                        ("dp-logistic", lambda: dpfair.DPLogisticRegression(epsilon=epsilon),
                         False),
                        ("group-thresholds", lambda c=constraint: dpfair.GroupThresholdsClassifier(
                            epsilon=epsilon, level=level, constraint=c), True),
                        # The two-group classifiers, which fit group thresholds for more groups
                        # (CDP-Fair on all rows, FDP-Fair over its 3 sites, the others on their
                        # own splits).
                        ("cdp-fair", lambda c=constraint: dpfair.CDPFairClassifier(
                            epsilon=epsilon, alpha=level, constraint=c), True),
                        ("fdp-fair", lambda c=constraint: dpfair.FDPFairClassifier(
                            epsilon=epsilon, alpha=level, constraint=c), True),
                        ("decoupled", lambda c=constraint: dpfair.DecoupledFairClassifier(
                            epsilon=epsilon, alpha=level, constraint=c), True),
                        *([("dp2dp", lambda: dpfair.DP2DPClassifier(epsilon=epsilon, rho=level),
                            True)] if constraint == "demographic-parity" else []),
                    ]:  # fmt: skip
                        if only is not None and name not in only:
                            continue
                        t0 = time.process_time()
                        try:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                est = make()
                                if sensitive:
                                    est.fit(xtr, ytr, sensitive_features=gtr)
                                    pred = est.predict(xte, sensitive_features=gte)
                                else:
                                    est.fit(xtr, ytr)
                                    pred = est.predict(xte)
                        except (ValueError, RuntimeError) as e:
                            scored[name] = (f"{type(e).__name__}: {str(e)[:60]}", 0.0)
                            continue
                        scored[name] = (np.asarray(pred).astype(int), time.process_time() - t0)
                    for name, (pred, secs) in scored.items():
                        cell = cells.setdefault(name, {"acc": [], "gap": [], "cpu": [], "err": []})
                        if isinstance(pred, str):
                            cell["err"].append(pred)
                            continue
                        cell["acc"].append(float((pred == yte).mean()))
                        cell["gap"].append(difference(pred, yte, gte, constraint))
                        cell["cpu"].append(secs)
                text = [
                    f"\n### {case.name}, n = {n}, {constraint} ≤ {level} ({reps} repetitions; "
                    f"tolerance {level} + {np.mean(tols):.3f})\n",
                    "| method | accuracy | difference | CPU s | refused |",
                    "|---|---|---|---|---|",
                ]
                for name, cell in cells.items():
                    refused = f"{len(cell['err'])}: {cell['err'][0]}" if cell["err"] else ""
                    text.append(
                        f"| {name} | {mean_se(cell['acc'])} | {mean_se(cell['gap'])} | "
                        f"{np.mean(cell['cpu']) if cell['cpu'] else 0:.2f} | "
                        f"{refused.replace('|', '/')} |"
                    )
                print("\n".join(text), flush=True)
                if out:
                    with open(out, "a") as f:
                        f.write("\n".join(text) + "\n")


def main() -> None:
    """Command line: the suite, printed as it runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--level", type=float, default=0.1)
    parser.add_argument("--sizes", default="4000,15000")
    parser.add_argument("--cases", help="comma-separated substrings of case names to run")
    parser.add_argument("--constraints", default=",".join(CONSTRAINTS))
    parser.add_argument("--methods", help="comma-separated dpfair methods to run (default: all)")
    parser.add_argument("--out")
    args = parser.parse_args()
    cases = load_cases(os.environ["DPFAIR_DATA_DIR"])
    if args.cases:
        cases = [c for c in cases if any(s in c.name for s in args.cases.split(","))]
    run(cases, [int(s) for s in args.sizes.split(",")], args.reps, args.epsilon, args.level,
        args.constraints.split(","), args.out,
        args.methods.split(",") if args.methods else None)  # fmt: skip


if __name__ == "__main__":
    main()
