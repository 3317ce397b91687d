"""The private group report on Adult (issue #44, docs/evaluation.md "Coverage on Adult").

The README's tour: a dp-logistic model fitted on fdpfair_adult.csv, predictions on the same
file, then `dpfair evaluate --epsilon 1` REPS times (seeded noise 1..REPS, a simulation: every
run is a fresh release). Counts how often each 95 % interval contains Fairlearn's exact value on
those rows (MetricFrame / fairlearn.metrics), and prints the mean interval width.

    cargo build --release -p dpfair-cli
    target/python-venv/bin/python bench/private_evaluation_adult.py /path/to/datasets [REPS]

Needs pandas and fairlearn (the Python package's test extra). Scratch files in
target/tmp/private_evaluation_adult.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equal_opportunity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from sklearn.metrics import accuracy_score

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / "target" / "release" / "dpfair"
DIR = ROOT / "target" / "tmp" / "private_evaluation_adult"


def run(*args: str) -> str:
    return subprocess.run([str(BIN), *args], check=True, capture_output=True, text=True).stdout


def main() -> None:
    data = Path(sys.argv[1]) / "fdpfair_adult.csv"
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    DIR.mkdir(parents=True, exist_ok=True)
    model, pred, out = DIR / "model.json", DIR / "pred.csv", DIR / "report.json"
    common = ["--target", "Label", "--sensitive", "Sensitive"]
    run("fit", "dp-logistic", "--data", str(data), *common, "--bounds",
        "Age:17:90,Workclass:0:8,Education-Num:1:16", "--epsilon", "1", "--seed", "7",
        "--out", str(model))  # fmt: skip
    run("predict", "--model", str(model), "--data", str(data), "--out", str(pred))
    frame = pd.read_csv(data)
    y, s = frame["Label"], frame["Sensitive"]
    y_hat = pd.read_csv(pred)["prediction"]
    mf = MetricFrame(
        metrics={
            "accuracy": accuracy_score,
            "selection_rate": selection_rate,
            "true_positive_rate": true_positive_rate,
            "false_positive_rate": false_positive_rate,
        },
        y_true=y,
        y_pred=y_hat,
        sensitive_features=s,
    )
    exact = {}
    for g, row in mf.by_group.iterrows():
        exact.update({(str(g), m): v for m, v in row.items()})
    exact.update({("overall", m): v for m, v in mf.overall.items()})
    for f in [
        demographic_parity_difference,
        demographic_parity_ratio,
        equalized_odds_difference,
        equalized_odds_ratio,
        equal_opportunity_difference,
        equal_opportunity_ratio,
    ]:
        exact[("disparities", f.__name__)] = f(y, y_hat, sensitive_features=s)
    hits = dict.fromkeys(exact, 0)
    widths = dict.fromkeys(exact, 0.0)
    for rep in range(1, reps + 1):
        run("evaluate", "--data", str(data), "--predictions", str(pred), *common,
            "--epsilon", "1", "--groups", "0,1", "--classes", "0,1",
            "--insecure-seeded-noise", str(rep), "--out", str(out))  # fmt: skip
        report = json.loads(out.read_text())["report"]
        rows = {r["group"]: r for r in report["by_group"]} | {"overall": report["overall"]}
        for (where, metric), value in exact.items():
            fig = report["disparities"][metric] if where == "disparities" else rows[where][metric]
            hits[(where, metric)] += fig["lower"] - 1e-12 <= value <= fig["upper"] + 1e-12
            widths[(where, metric)] += (fig["upper"] - fig["lower"]) / reps
    print(f"{reps} releases at ε = 1 on {len(frame)} rows; exact value, coverage, mean width")
    for key, value in exact.items():
        print(f"{key[0]:>11} {key[1]:<30} {value:.4f}  {hits[key] / reps:.3f}  {widths[key]:.4f}")
    print(f"lowest coverage: {min(hits.values()) / reps:.3f}")


if __name__ == "__main__":
    main()
