"""A sensitive attribute collected under local DP: Adult's sex randomised, fairness on the truth.

Adult income (the groups suite's features), subsampled at `--sizes` rows and split 70/30 per
repetition. The training rows' sex is randomised by binary randomised response at eps_A (each
row keeps its value with probability e^eps_A / (e^eps_A + 1)); the test rows keep the truth.
`dpfair.GroupThresholdsClassifier` at epsilon = 2 and demographic parity <= 0.1 is fitted

- with `attribute_epsilon=eps_A`: the table corrected by the flip matrix, a score without the group;
- without it: the randomised column read as if it were the attribute;
- on the true attribute (no randomisation): the reference.

Reported: held-out accuracy and the demographic-parity difference on the **true** attribute
(predictions use the true attribute), mean and standard error over the repetitions.

    DPFAIR_DATA_DIR=/path/to/datasets python bench/ldp_attribute.py [--reps 5]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from groups_suite import load_cases  # noqa: E402
from proxy_suite import mean_se, split, tidy  # noqa: E402


def randomise(values: np.ndarray, epsilon_a: float, rng) -> np.ndarray:
    """Binary randomised response: each value kept with probability e^eps / (e^eps + 1)."""
    levels = np.unique(values)
    keep = rng.random(len(values)) < math.exp(epsilon_a) / (math.exp(epsilon_a) + 1)
    other = np.where(values == levels[0], levels[1], levels[0])
    return np.where(keep, values, other)


def main() -> None:
    """Command line: one Markdown table per size."""
    import dpfair

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--sizes", default="4000,15000")
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--level", type=float, default=0.1)
    args = parser.parse_args()
    case = tidy(next(c for c in load_cases(os.environ["DPFAIR_DATA_DIR"]) if "race (5" in c.name))
    features = [f for f in case.features if f != "sex"] + ["race"]
    for n in [int(s) for s in args.sizes.split(",")]:
        cells: dict = {}
        for r in range(args.reps):
            rng = np.random.default_rng(1000 * n + r)
            tr, te = split(case, n, rng)  # `rng` then randomises the training groups
            ytr, yte = tr[case.target].to_numpy(), te[case.target].to_numpy()
            true_tr, gte = tr["sex"].to_numpy(), te["sex"].to_numpy()
            arms = [("true attribute", true_tr, None)]
            for eps_a in (1.0, 3.0):
                seen = randomise(true_tr, eps_a, rng)
                arms.append((f"ε_A = {eps_a:g}, corrected", seen, eps_a))
                arms.append((f"ε_A = {eps_a:g}, read as given", seen, None))
            for name, g, eps_a in arms:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = dpfair.GroupThresholdsClassifier(
                        epsilon=args.epsilon, level=args.level, attribute_epsilon=eps_a
                    )
                    est.fit(tr[features], ytr, sensitive_features=g)
                    pred = np.asarray(est.predict(te[features], sensitive_features=gte))
                pred = pred.astype(int)
                rates = [pred[gte == v].mean() for v in np.unique(gte)]
                cell = cells.setdefault(name, {"acc": [], "gap": []})
                cell["acc"].append(float((pred == yte).mean()))
                cell["gap"].append(float(max(rates) - min(rates)))
        majority = max(np.mean(case.frame[case.target]), 1 - np.mean(case.frame[case.target]))
        print(
            f"\n### adult/income~sex, n = {n}, demographic parity ≤ {args.level} on the true "
            f"attribute ({args.reps} repetitions; majority class about {majority:.3f})\n"
        )
        print("| training attribute | accuracy | parity gap (true sex) |\n|---|---|---|")
        for name, cell in cells.items():
            print(f"| {name} | {mean_se(cell['acc'])} | {mean_se(cell['gap'])} |", flush=True)


if __name__ == "__main__":
    main()
