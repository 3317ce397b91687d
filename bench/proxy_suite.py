"""The proxy suite: data sets nobody tuned for (issue "Useful fair models on unseen data").

Subsamples of the shipped files at n in {700, 1500, 4000} with 6-20 columns (some of them text),
several targets and sensitive attributes. On each split (70 % train, 30 % test, a public random
split per repetition) it fits, with default options and no public bounds:

- the majority class of the training rows;
- dpfair's unconstrained private learner, `DPLogisticRegression` at the same epsilon;
- every fair classifier of dpfair (CDP-Fair, FDP-Fair, the decoupled classifier, DP2DP) at
  epsilon = 2 and a fairness target of 0.1;
- Fairlearn's ThresholdOptimizer (demographic parity, non-private) over scikit-learn's
  logistic regression on one-hot features: the non-private fair reference.

and reports held-out accuracy and demographic-parity difference, mean and standard error over
the repetitions, with the constraint's sampling tolerance (one-sided 95 % bound on a difference of
two proportions at the test set's group sizes). Scores are exact on the test rows: a benchmark,
not a release.

    DPFAIR_DATA_DIR=/path/to/datasets python bench/proxy_suite.py [--reps 3] [--out table.md]

Needs the dpfair Python package (`.ci/python` builds it into target/python-venv), pandas,
scikit-learn and fairlearn.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip


@dataclass
class Case:
    """One data set of the suite.

    A frame, its target column and sensitive column (both binary), and the feature columns.
    """

    name: str
    frame: pd.DataFrame
    target: str
    sensitive: str
    features: list


def load_cases(data_dir: str) -> list:
    """The suite's data sets.

    Each with a target and a sensitive attribute the papers did not use together, binary both,
    as text or numbers as in the files.
    """
    cases = []
    adult = pd.read_csv(
        os.path.join(data_dir, "adult.data"), header=None, names=ADULT_COLUMNS,
        skipinitialspace=True, na_values="?",
    ).dropna()  # fmt: skip
    adult["income"] = (adult["income"] == ">50K").astype(int)
    adult["white"] = np.where(adult["race"] == "White", "white", "other")
    cases.append(Case(
        "adult/income~sex (12 cols, 6 text)", adult, "income", "sex",
        ["age", "workclass", "education", "education-num", "marital-status", "occupation",
         "relationship", "race", "capital-gain", "capital-loss", "hours-per-week",
         "native-country"],
    ))  # fmt: skip
    adult["married"] = (adult["marital-status"] == "Married-civ-spouse").astype(int)
    cases.append(Case(
        "adult/married~race (8 cols, 3 text)", adult, "married", "white",
        ["age", "workclass", "education-num", "occupation", "hours-per-week", "sex",
         "capital-gain", "income"],
    ))  # fmt: skip
    credit = pd.read_csv(os.path.join(data_dir, "credit_card_clients.csv"))
    credit["older"] = np.where(credit["AGE"] >= 35, "35+", "<35")
    credit["EDUCATION"] = (
        credit["EDUCATION"].map({1: "grad", 2: "uni", 3: "high"}).fillna("other")
    )
    cases.append(Case(
        "credit/default~age (10 cols, 1 text)", credit, "default payment", "older",
        ["LIMIT_BAL", "SEX", "EDUCATION", "PAY_0", "PAY_2", "PAY_3", "BILL_AMT1", "BILL_AMT2",
         "PAY_AMT1", "PAY_AMT2"],
    ))  # fmt: skip
    law = pd.read_csv(os.path.join(data_dir, "law_bar_pass.csv"))
    law = law.dropna(
        subset=["zfygpa", "lsat", "ugpa", "race1", "gender", "fam_inc", "tier"]
    )
    law["above"] = (law["zfygpa"] > 0).astype(int)
    law["white"] = np.where(law["race1"] == "white", "white", "other")
    cases.append(Case(
        "law/gpa~race (6 cols, 1 text)", law, "above", "white",
        ["lsat", "ugpa", "gender", "fam_inc", "tier", "fulltime"],
    ))  # fmt: skip
    park = pd.read_csv(os.path.join(data_dir, "parkinsons_updrs.tsv"), sep="\t")
    park["severe"] = (park["total_UPDRS"] > park["total_UPDRS"].median()).astype(int)
    park["sex"] = np.where(park["sex"] == 1, "f", "m")
    cases.append(Case(
        "parkinsons/severe~sex (16 cols)", park, "severe", "sex",
        [c for c in park.columns if c not in
         ("subject#", "sex", "motor_UPDRS", "total_UPDRS", "severe", "test_time")][:16],
    ))  # fmt: skip
    return cases


def tidy(case: Case) -> Case:
    """What a practitioner does first.

    Rows with a missing value in a used column left out, and text levels held by under 1 % of
    the rows merged into the column's most frequent level (so that a test split holds no level
    its training split lacks: `predict` refuses an unseen level).
    """
    frame = case.frame.dropna(
        subset=[*case.features, case.target, case.sensitive]
    ).copy()
    for col in case.features:
        if not pd.api.types.is_numeric_dtype(frame[col]):
            share = frame[col].value_counts(normalize=True)
            rare = share.index[share < 0.01]
            frame.loc[frame[col].isin(rare), col] = share.index[0]
    return Case(case.name, frame, case.target, case.sensitive, case.features)


def split(case: Case, n: int, rng) -> tuple:
    """A public 70/30 split of `n` rows of the case drawn with `rng` (training, test frames)."""
    sample = case.frame.iloc[rng.choice(len(case.frame), n, replace=False)]
    cut = int(0.7 * n)
    return sample.iloc[:cut], sample.iloc[cut:]


def dp_gap(pred: np.ndarray, groups: np.ndarray) -> float:
    """Demographic-parity difference: the largest gap between two groups' positive rates."""
    rates = [pred[groups == g].mean() for g in np.unique(groups)]
    return float(max(rates) - min(rates))


def tolerance(groups: np.ndarray) -> float:
    """One-sided 95 % sampling bound on a difference of two proportions at these group sizes."""
    sizes = [np.sum(groups == g) for g in np.unique(groups)]
    return 1.645 * math.sqrt(sum(1 / (4 * s) for s in sizes))


def fairlearn_reference(xtr, ytr, gtr, xte, gte, seed):
    """Fairlearn's ThresholdOptimizer over logistic regression on one-hot features."""
    from fairlearn.postprocessing import ThresholdOptimizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    xtr_d = pd.get_dummies(xtr, dtype=float)
    xte_d = pd.get_dummies(xte, dtype=float).reindex(
        columns=xtr_d.columns, fill_value=0.0
    )
    base = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    opt = ThresholdOptimizer(
        estimator=base, constraints="demographic_parity", predict_method="predict_proba"
    )
    opt.fit(xtr_d, ytr, sensitive_features=gtr)
    return np.asarray(opt.predict(xte_d, sensitive_features=gte, random_state=seed))


def public_bounds(case: Case) -> dict:
    """Bounds of the numeric features from the whole file: the public ranges a practitioner
    could state (the reference "dp-logistic (public bounds)" and `--public-bounds` use them)."""
    return {
        c: (float(case.frame[c].min()), float(case.frame[c].max()))
        for c in case.features
        if pd.api.types.is_numeric_dtype(case.frame[c]) and case.frame[c].nunique() > 2
    }


def methods(epsilon: float, target: float, bounds: dict | None, reference: dict):
    """The unconstrained private learner and the fair classifiers of dpfair, at defaults
    (with `bounds` where given), and dp-logistic with the public `reference` bounds."""
    import dpfair

    return {
        "dp-logistic": lambda: dpfair.DPLogisticRegression(
            epsilon=epsilon, bounds=bounds
        ),
        "dp-logistic (public bounds)": lambda: dpfair.DPLogisticRegression(
            epsilon=epsilon, bounds=reference or None
        ),
        "cdp-fair": lambda: dpfair.CDPFairClassifier(
            epsilon=epsilon, alpha=target, bounds=bounds
        ),
        "fdp-fair": lambda: dpfair.FDPFairClassifier(
            epsilon=epsilon, alpha=target, bounds=bounds
        ),
        # FDP-Fair with each estimator of eta named (the default is "auto").
        **{
            f"fdp-fair ({eta})": (
                lambda eta=eta: dpfair.FDPFairClassifier(
                    epsilon=epsilon, alpha=target, bounds=bounds, eta_model=eta
                )
            )
            for eta in ["kernel", "logistic", "dp-sgd"]
        },
        "decoupled": lambda: dpfair.DecoupledFairClassifier(
            epsilon=epsilon, alpha=target, bounds=bounds
        ),
        "dp2dp": lambda: dpfair.DP2DPClassifier(
            epsilon=epsilon, rho=target, bounds=bounds
        ),
        # A private search at the same epsilon (dpfair.PrivateSearchCV: one ledger entry at
        # the estimator's budget), over a small grid of each method's main setting.
        **{
            f"{name} (tuned)": (
                lambda est=est, grid=grid: dpfair.PrivateSearchCV(est(), grid)
            )
            for name, est, grid in [
                ("dp-logistic", lambda: dpfair.DPLogisticRegression(
                    epsilon=epsilon, bounds=bounds),
                 {"learning_rate": [0.1, 0.5, 2.0], "epochs": [10, 30]}),
                ("cdp-fair", lambda: dpfair.CDPFairClassifier(
                    epsilon=epsilon, alpha=target, bounds=bounds),
                 {"eta_model": ["kernel", "logistic", "dp-sgd"]}),
                ("decoupled", lambda: dpfair.DecoupledFairClassifier(
                    epsilon=epsilon, alpha=target, bounds=bounds),
                 {"post_fraction": [0.2, 0.33, 0.5]}),
                ("dp2dp", lambda: dpfair.DP2DPClassifier(
                    epsilon=epsilon, rho=target, bounds=bounds),
                 {"pool_fraction": [0.15, 0.25, 0.4]}),
            ]
        },  # fmt: skip
    }


def run(cases, sizes, reps, epsilon, target, only=None, public=False):
    """Every method (or those named in `only`) on every case, size and repetition; a row of
    results per (case, size). With `public`, every method gets the public bounds."""
    rows = []
    for case in cases:
        reference = public_bounds(case)
        chosen = {
            name: make
            for name, make in methods(epsilon, target, reference if public else None,
                                      reference).items()
            if only is None or name in only
        }  # fmt: skip
        for n in sizes:
            if n > len(case.frame):
                continue
            results: dict = {}
            tols = []
            for r in range(reps):
                tr, te = split(case, n, np.random.default_rng(1000 * n + r))
                xtr, xte = tr[case.features], te[case.features]
                ytr, yte = tr[case.target].to_numpy(), te[case.target].to_numpy()
                gtr, gte = tr[case.sensitive].to_numpy(), te[case.sensitive].to_numpy()
                tols.append(tolerance(gte))
                majority = np.bincount(ytr).argmax()
                scored = {"majority class": (np.full(len(yte), majority), 0.0)}
                t0 = time.process_time()
                scored["fairlearn ThresholdOptimizer"] = (
                    fairlearn_reference(xtr, ytr, gtr, xte, gte, r),
                    time.process_time() - t0,
                )
                for name, make in chosen.items():
                    t0 = time.process_time()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            est = make()
                            if name.startswith("dp-logistic"):
                                est.fit(xtr, ytr)
                                pred = est.predict(xte)
                            else:
                                est.fit(xtr, ytr, sensitive_features=gtr)
                                pred = est.predict(xte, sensitive_features=gte)
                        pred = np.asarray(pred).astype(int)
                    except (ValueError, RuntimeError) as e:  # a refusal is a result too
                        scored[name] = (f"{type(e).__name__}: {str(e)[:60]}", 0.0)
                        continue
                    scored[name] = (pred, time.process_time() - t0)
                for name, (pred, secs) in scored.items():
                    cell = results.setdefault(
                        name, {"acc": [], "gap": [], "cpu": [], "err": []}
                    )
                    if isinstance(pred, str):
                        cell["err"].append(pred)
                        continue
                    cell["acc"].append(float((pred == yte).mean()))
                    cell["gap"].append(dp_gap(pred, gte))
                    cell["cpu"].append(secs)
            rows.append((case.name, n, float(np.mean(tols)), results))
            print_block(rows[-1], reps, flush=True)
    return rows


def mean_se(values):
    """`mean ± standard error` (the mean alone for one value)."""
    if not values:
        return "-"
    m = float(np.mean(values))
    if len(values) < 2:
        return f"{m:.3f}"
    return f"{m:.3f} ± {float(np.std(values, ddof=1)) / math.sqrt(len(values)):.3f}"


def block(row, reps) -> str:
    """One (case, size) as a Markdown table."""
    name, n, tol, results = row
    out = [
        f"\n### {name}, n = {n} ({reps} repetitions; parity tolerance 0.1 + {tol:.3f})\n",
        "| method | accuracy | parity gap | CPU s | refused |",
        "|---|---|---|---|---|",
    ]
    for method, cell in results.items():
        refused = f"{len(cell['err'])}: {cell['err'][0]}" if cell["err"] else ""
        out.append(
            f"| {method} | {mean_se(cell['acc'])} | {mean_se(cell['gap'])} | "
            f"{np.mean(cell['cpu']) if cell['cpu'] else 0:.2f} | {refused.replace('|', '/')} |"
        )
    return "\n".join(out)


def print_block(row, reps, flush=False):
    """Print [`block`] as soon as it is measured."""
    print(block(row, reps), flush=flush)


def main() -> None:
    """Command line: the suite, printed as it runs and written to `--out`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--target", type=float, default=0.1)
    parser.add_argument("--sizes", default="700,1500,4000")
    parser.add_argument(
        "--cases", help="comma-separated substrings of case names to run"
    )
    parser.add_argument("--methods", help="comma-separated method names to run")
    parser.add_argument(
        "--public-bounds",
        action="store_true",
        help="give every method the public bounds",
    )
    parser.add_argument("--out")
    args = parser.parse_args()
    data_dir = os.environ.get("DPFAIR_DATA_DIR")
    if not data_dir:
        raise SystemExit("set DPFAIR_DATA_DIR to the folder of the shipped data files")
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = [tidy(c) for c in load_cases(data_dir)]
    if args.cases:
        wanted = args.cases.split(",")
        cases = [c for c in cases if any(w in c.name for w in wanted)]
    only = set(args.methods.split(",")) if args.methods else None
    rows = run(
        cases, sizes, args.reps, args.epsilon, args.target, only, args.public_bounds
    )
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(block(r, args.reps) for r in rows) + "\n")


if __name__ == "__main__":
    main()
