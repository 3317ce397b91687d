#!/usr/bin/env python3
"""The regressors' held-out check, measured (issue #40; BENCHMARKS.md, "Regressors' held-out
check"). Standard library only.

For each case (Law's first-year GPA through fair regression over dp-linear, the README's
command; dp-linear on Law's GPA; dp-linear on Adult's weekly hours), each size (the whole file,
4,000 and 2,000 rows) and each repetition (`--seed` 1..REPS, which also draws the subsample),
the rows are split 90/10 into a training file and a test file; `dpfair fit` runs on the
training file twice, with the check (default `--check-fraction`) and without it
(`--check-fraction 0`), and both models predict the test file. Printed per cell: how often the
check kept the model, and the test MSE of the delivered model, of the unchecked model and of
the exact training mean (the constant). Then, per cell, the paired differences
d = (y − m)² − (y − f)² of the unchecked model on the test rows (m the exact training mean),
clipped at τ = (range/8)²: their sum and the 90 % quantile of |d|.

    python3 bench/regressor_check.py [BINARY] [REPS]
"""
import csv, json, os, random, subprocess, sys, tempfile

DATA = os.environ.get("DPFAIR_DATA_DIR", "/work/shared/datasets")
BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/dpfair"
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
LAW = ["--sensitive", "race1", "--features", "lsat,ugpa,fam_inc,fulltime",
       "--bounds", "lsat:10:48,ugpa:1:4,fam_inc:1:5,fulltime:1:2", "--epsilon", "1"]
ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
              "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
              "hours_per_week", "native_country", "income"]
ADULT = ["--sensitive", "sex", "--features", "age,education_num",
         "--bounds", "age:17:90,education_num:1:16", "--epsilon", "1"]
CASES = [
    ("law fair-regression", "law", "zfygpa", (-4.0, 4.0),
     ["fair-regression", "--base", "dp-linear", "--target", "zfygpa", "--range", "-4,4",
      "--alpha", "0.05"] + LAW),
    ("law dp-linear", "law", "zfygpa", (-4.0, 4.0),
     ["dp-linear", "--target", "zfygpa", "--target-range", "-4,4"] + LAW),
    ("adult dp-linear", "adult", "hours_per_week", (1.0, 99.0),
     ["dp-linear", "--target", "hours_per_week", "--target-range", "1,99"] + ADULT),
]


def rows_of(name):
    if name == "law":
        with open(os.path.join(DATA, "law_bar_pass.csv")) as f:
            rows = list(csv.DictReader(f))
        return list(rows[0].keys()), rows
    with open(os.path.join(DATA, "adult.data")) as f:
        rows = [dict(zip(ADULT_COLS, (v.strip() for v in r)))
                for r in csv.reader(f) if len(r) == len(ADULT_COLS)]
    return ADULT_COLS, rows


def write(path, cols, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, cols)
        w.writeheader()
        w.writerows(rows)


def fit_predict(args, train, test, out, seed, fraction):
    model = os.path.join(out, "m.json")
    cmd = [BIN, "fit"] + args + ["--data", train, "--seed", str(seed), "--out", model]
    if fraction is not None:
        cmd += ["--check-fraction", str(fraction)]
    subprocess.run(cmd, check=True, capture_output=True)
    check = json.load(open(model)).get("check") or {}
    pred = os.path.join(out, "p.csv")
    subprocess.run([BIN, "predict", "--model", model, "--data", test, "--out", pred],
                   check=True, capture_output=True)
    with open(pred) as f:
        p = [float(r["prediction"]) for r in csv.DictReader(f)]
    return p, check.get("value") is None and check.get("constant") is None


def main():
    print(f"| case | rows | kept | test MSE: delivered | unchecked model | training mean | "
          f"Σ clip(d, ±τ) | q90 abs(d) / τ |")
    print("|---|---|---|---|---|---|---|---|")
    cache = {}
    for label, data, target, (lo, hi), args in CASES:
        cols, all_rows = cache.setdefault(data, rows_of(data))
        need = [target] + [a for a in args[args.index("--features") + 1].split(",")]
        need.append(args[args.index("--sensitive") + 1])
        all_rows = [r for r in all_rows if all(r.get(c, "") not in ("", "?") for c in need)]
        for n in (len(all_rows), 4000, 2000):
            kept, mse_d, mse_u, mse_c, sums, q90 = 0, [], [], [], [], []
            for seed in range(1, REPS + 1):
                rng = random.Random(seed)
                rows = rng.sample(all_rows, n)
                k = int(0.9 * n)
                train, test = rows[:k], rows[k:]
                with tempfile.TemporaryDirectory() as out:
                    tr, te = os.path.join(out, "train.csv"), os.path.join(out, "test.csv")
                    write(tr, cols, train)
                    write(te, cols, test)
                    p_d, k_d = fit_predict(args, tr, te, out, seed, None)
                    p_u, _ = fit_predict(args, tr, te, out, seed, 0)
                clip = lambda v: min(max(v, lo), hi)
                y = [clip(float(r[target])) for r in test]
                m = sum(clip(float(r[target])) for r in train) / len(train)
                mse = lambda p: sum((a - clip(b)) ** 2 for a, b in zip(y, p)) / len(y)
                kept += k_d
                mse_d.append(mse(p_d))
                mse_u.append(mse(p_u))
                mse_c.append(mse([m] * len(y)))
                tau = ((hi - lo) / 8) ** 2
                d = [(a - m) ** 2 - (a - clip(b)) ** 2 for a, b in zip(y, p_u)]
                sums.append(sum(max(-tau, min(tau, v)) for v in d))
                ad = sorted(abs(v) for v in d)
                q90.append(ad[int(0.9 * (len(ad) - 1))] / tau)
            avg = lambda v: sum(v) / len(v)
            print(f"| {label} | {n} | {kept}/{REPS} | {avg(mse_d):.4f} | {avg(mse_u):.4f} | "
                  f"{avg(mse_c):.4f} | {avg(sums):.1f} ({min(sums):.1f} to {max(sums):.1f}) | "
                  f"{avg(q90):.2f} |", flush=True)


main()
