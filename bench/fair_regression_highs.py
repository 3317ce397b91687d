#!/usr/bin/env python3
"""Performance anchor for private fair regression (Xian et al., "Differentially Private Post-Processing for Fair Regression").

Builds the private joint histogram as Algorithm 1, lines 2-13 (following the authors' postprocess.py), builds the
fixed-support KS-relaxed Wasserstein barycenter LP of line 14 in its *sparse* formulation, solves it with HiGHS (highspy) and reports model size, solve time (median of N
runs, `Highs.run()` only, model building and passing excluded), objective, and a solution check. It also times the
alpha = 0 closed form (rounded quantile average) and compares its objective with the LP's.

Self-contained: needs only numpy and highspy (no pandas / sklearn / scipy). The 70/30 split reproduces
sklearn.model_selection.train_test_split(test_size=0.3, random_state=seed) exactly (legacy RandomState permutation,
test = first ceil(0.3 N) indices); the Laplace noise reproduces the authors' code exactly
(np.random.default_rng(seed).laplace(scale=2/(eps*n), size=(m, k)) added to the joint PMF).

Usage:
  python3 fair_regression_highs.py                 # full grid, writes results + instance JSON next to it
  python3 fair_regression_highs.py --quick         # 1 run per case, no alternative solvers
  python3 fair_regression_highs.py --selftest      # the worked example of docs/reference-values.md, closed form vs LP
  python3 fair_regression_highs.py --instance fair_regression_law_k180.json --runs 11   # anchor only
  python3 fair_regression_highs.py --report fair_regression_highs_results.json              # markdown tables
  python3 fair_regression_highs.py --help
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import platform
import statistics
import sys
import time
from importlib.metadata import version as pkg_version

import numpy as np
import highspy

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA_DIR = os.environ.get("DPFAIR_DATA_DIR", os.path.normpath(os.path.join(HERE, "..", "datasets")))

# --------------------------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------------------------


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_law(data_dir: str):
    """ugpa in [1,4]; groups race1 in {asian, black, hisp, white} coded alphabetically 0..3 (file order kept)."""
    path = os.path.join(data_dir, "law_bar_pass.csv")
    names = ["asian", "black", "hisp", "white"]
    code = {g: i for i, g in enumerate(names)}
    ys, gs = [], []
    with open(path, newline="") as f:  # csv module handles the CRLF line ends
        r = csv.reader(f)
        header = next(r)
        iy, ig = header.index("ugpa"), header.index("race1")
        for row in r:
            g = row[ig]
            if g in code:
                ys.append(float(row[iy]))
                gs.append(code[g])
    y, g = np.asarray(ys, dtype=float), np.asarray(gs, dtype=np.int64)
    assert len(y) == 21983, len(y)
    return dict(name="law", y=y, g=g, group_names=names, s=1.0, t=4.0, path=path)


def load_communities(data_dir: str):
    """ViolentCrimesPerPop in [0,1]; group 1 ("black") iff racepctblack > 0.06, else 0 ("white")."""
    path = os.path.join(data_dir, "communities_crime.csv")
    ys, gs = [], []
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        iy, ib = header.index("ViolentCrimesPerPop"), header.index("racepctblack")
        for row in r:
            ys.append(float(row[iy]))
            gs.append(1 if float(row[ib]) > 0.06 else 0)
    y, g = np.asarray(ys, dtype=float), np.asarray(gs, dtype=np.int64)
    assert len(y) == 1994 and int(g.sum()) == 970, (len(y), int(g.sum()))
    return dict(name="communities", y=y, g=g, group_names=["white", "black"], s=0.0, t=1.0, path=path)


def train_split(n_rows: int, seed: int, test_size: float = 0.3) -> np.ndarray:
    """Train indices of sklearn's train_test_split(..., test_size=0.3, random_state=seed) (ShuffleSplit semantics)."""
    n_test = int(math.ceil(test_size * n_rows))
    perm = np.random.RandomState(seed).permutation(n_rows)
    return perm[n_test:]


# --------------------------------------------------------------------------------------------------------------------
# Private histogram + repair (Algorithm 1, lines 2-13, identical to postprocess.py)
# --------------------------------------------------------------------------------------------------------------------


def private_pmfs(y, g, m, s, t, k, eps, seed):
    n = len(y)
    width = (t - s) / k
    bins = np.clip(np.floor((y - s) / width), 0, k - 1).astype(np.int64)  # floor-and-clamp, boundaries go up
    counts = np.zeros((m, k), dtype=np.int64)
    np.add.at(counts, (g, bins), 1)
    hist = counts / n                                                      # joint PMF, all groups
    rng = np.random.default_rng(seed)
    if math.isinf(eps):
        noise = np.zeros((m, k))
    else:
        noise = rng.laplace(scale=2.0 / (eps * n), size=(m, k))             # same draw as the authors' code
    hist = hist + noise
    w = np.clip(hist.sum(axis=1), 1e-6, None)                              # code's floor (hazard H3)
    F = np.cumsum(hist / w[:, None], axis=1)
    F = (np.maximum.accumulate(F, axis=1) + np.minimum.accumulate(F[:, ::-1], axis=1)[:, ::-1]) / 2  # L-inf isotonic
    F = np.clip(F, 0.0, 1.0)
    F[:, -1] = 1.0
    p = np.diff(F, prepend=0.0, axis=1)
    mid = s + (np.arange(k) + 0.5) * width
    return dict(n=n, counts=counts, noisy_hist=hist, w=w, F=F, p=p, midpoints=mid, width=width)


# --------------------------------------------------------------------------------------------------------------------
# Sparse LP (Algorithm 1, line 14, sparse equivalent), index-unit cost (j - l)^2
# --------------------------------------------------------------------------------------------------------------------


def build_lp(p: np.ndarray, w: np.ndarray, alpha: float):
    """Returns (HighsLp, layout). Column order: pi_a(j,l) [a*k*k + j*k + l], C_a(l) [m*k*k + a*k + l], B(l)."""
    m, k = p.shape
    inf = highspy.kHighsInf
    n_pi, n_c = m * k * k, m * k
    ncol = n_pi + n_c + k
    off_c, off_b = n_pi, n_pi + n_c
    # rows: R1 row marginals (m*k) | R2 CDF link (m*k) | R3 KS band (m*k, ranged) | R4 B monotone (k)
    r1, r2, r3, r4 = 0, m * k, 2 * m * k, 3 * m * k
    nrow = 3 * m * k + k

    jj, ll = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    cost_idx = ((jj - ll) ** 2).astype(float).ravel()  # (j,l) row-major

    rows, cols, vals = [], [], []
    for a in range(m):
        base = a * k * k
        pi_cols = base + jj.ravel() * k + ll.ravel()
        # R1: sum_l pi_a(j,l) = p_a(j)
        rows.append(r1 + a * k + jj.ravel()); cols.append(pi_cols); vals.append(np.ones(k * k))
        # R2: C_a(l) - C_a(l-1) - sum_j pi_a(j,l) = 0
        rows.append(r2 + a * k + ll.ravel()); cols.append(pi_cols); vals.append(-np.ones(k * k))
        rows.append(r2 + a * k + np.arange(k)); cols.append(off_c + a * k + np.arange(k)); vals.append(np.ones(k))
        rows.append(r2 + a * k + np.arange(1, k)); cols.append(off_c + a * k + np.arange(k - 1)); vals.append(-np.ones(k - 1))
        # R3: -alpha/2 <= C_a(l) - B(l) <= alpha/2
        rows.append(r3 + a * k + np.arange(k)); cols.append(off_c + a * k + np.arange(k)); vals.append(np.ones(k))
        rows.append(r3 + a * k + np.arange(k)); cols.append(off_b + np.arange(k)); vals.append(-np.ones(k))
    # R4: B(l) - B(l-1) >= 0
    rows.append(r4 + np.arange(k)); cols.append(off_b + np.arange(k)); vals.append(np.ones(k))
    rows.append(r4 + np.arange(1, k)); cols.append(off_b + np.arange(k - 1)); vals.append(-np.ones(k - 1))

    rows = np.concatenate(rows); cols = np.concatenate(cols); vals = np.concatenate(vals)
    order = np.lexsort((rows, cols))  # CSC: by column, then row
    rows, cols, vals = rows[order], cols[order], vals[order]
    start = np.zeros(ncol + 1, dtype=np.int64)
    np.add.at(start, cols + 1, 1)
    start = np.cumsum(start)

    cost = np.zeros(ncol)
    for a in range(m):
        cost[a * k * k:(a + 1) * k * k] = w[a] * cost_idx
    col_lower = np.concatenate([np.zeros(n_pi), np.full(n_c + k, -inf)])
    col_upper = np.full(ncol, inf)
    row_lower = np.concatenate([p.ravel(), np.zeros(m * k), np.full(m * k, -alpha / 2), np.zeros(k)])
    row_upper = np.concatenate([p.ravel(), np.zeros(m * k), np.full(m * k, alpha / 2), np.full(k, inf)])

    lp = highspy.HighsLp()
    lp.num_col_ = ncol
    lp.num_row_ = nrow
    lp.col_cost_ = cost
    lp.col_lower_ = col_lower
    lp.col_upper_ = col_upper
    lp.row_lower_ = row_lower
    lp.row_upper_ = row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = start
    lp.a_matrix_.index_ = rows
    lp.a_matrix_.value_ = vals
    lp.a_matrix_.num_col_ = ncol
    lp.a_matrix_.num_row_ = nrow
    lp.sense_ = highspy.ObjSense.kMinimize
    return lp, dict(m=m, k=k, ncol=ncol, nrow=nrow, nnz=int(len(vals)), off_c=off_c, off_b=off_b)


def solve_once(lp, options: dict):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for key, val in options.items():
        h.setOptionValue(key, val)
    h.passModel(lp)
    c0 = time.process_time()
    t0 = time.perf_counter()
    h.run()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0  # CPU time of this process (all threads) during run()
    info = h.getInfo()
    status = h.modelStatusToString(h.getModelStatus())
    x = np.asarray(h.getSolution().col_value)
    return dict(wall=wall, cpu=cpu, highs_runtime=h.getRunTime(), status=status, obj=info.objective_function_value,
                simplex_iters=int(info.simplex_iteration_count), ipm_iters=int(info.ipm_iteration_count),
                crossover_iters=int(info.crossover_iteration_count),
                max_primal_infeas=float(info.max_primal_infeasibility),
                max_dual_infeas=float(info.max_dual_infeasibility), x=x)


def timed_solve(lp, options: dict, runs: int):
    res = [solve_once(lp, options) for _ in range(runs)]
    last = res[-1]
    last["walls"] = [r["wall"] for r in res]
    last["median_wall"] = statistics.median(last["walls"])
    last["min_wall"] = min(last["walls"])
    last["median_cpu"] = statistics.median(r["cpu"] for r in res)
    last["median_highs_runtime"] = statistics.median(r["highs_runtime"] for r in res)
    objs = [r["obj"] for r in res]
    last["obj_spread"] = max(objs) - min(objs)
    return last


# --------------------------------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------------------------------


def monotone_coupling(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Unique optimal coupling for a strictly convex cost: overlap of the quantile intervals (Lemma B.9)."""
    Fp = np.cumsum(p); Fq = np.cumsum(q)
    Fp[-1] = Fq[-1] = 1.0
    Fp0 = np.concatenate([[0.0], Fp[:-1]]); Fq0 = np.concatenate([[0.0], Fq[:-1]])
    return np.maximum(0.0, np.minimum(Fp[:, None], Fq[None, :]) - np.maximum(Fp0[:, None], Fq0[None, :]))


def ks(pa: np.ndarray, pb: np.ndarray) -> float:
    return float(np.max(np.abs(np.cumsum(pa) - np.cumsum(pb))))


def check_solution(x: np.ndarray, layout: dict, p: np.ndarray, w: np.ndarray, alpha: float, obj: float) -> dict:
    m, k = layout["m"], layout["k"]
    pi = x[:m * k * k].reshape(m, k, k)
    C = x[layout["off_c"]:layout["off_c"] + m * k].reshape(m, k)
    B = x[layout["off_b"]:layout["off_b"] + k]
    q = pi.sum(axis=1)  # column sums = q_a
    cost_idx = (np.arange(k)[:, None] - np.arange(k)[None, :]) ** 2
    obj_recomputed = float(sum(w[a] * np.sum(cost_idx * pi[a]) for a in range(m)))
    ks_pair = max((ks(q[a], q[b]) for a in range(m) for b in range(a + 1, m)), default=0.0)
    # polish (hazard H6): clamp, renormalise q_a, monotone coupling; its cost must equal the LP optimum
    polished_obj, max_dev_from_monotone = 0.0, 0.0
    for a in range(m):
        qa = np.clip(q[a], 0.0, None); qa = qa / qa.sum()
        mc = monotone_coupling(p[a], qa)
        polished_obj += float(w[a] * np.sum(cost_idx * mc))
        max_dev_from_monotone = max(max_dev_from_monotone, float(np.max(np.abs(mc - pi[a]))))
    return dict(
        min_pi=float(pi.min()),
        row_marginal_err=float(np.max(np.abs(pi.sum(axis=2) - p))),
        cdf_link_err=float(np.max(np.abs(np.cumsum(q, axis=1) - C))),
        q_sum_err=float(np.max(np.abs(q.sum(axis=1) - 1.0))),
        ks_band_violation=float(np.max(np.abs(C - B)) - alpha / 2),
        b_monotone_violation=float(max(0.0, -np.min(np.diff(B, prepend=0.0)))),
        max_pairwise_ks_q=ks_pair,
        ks_ok=bool(ks_pair <= alpha + 1e-7),
        obj_recomputed_err=abs(obj_recomputed - obj),
        polished_obj=polished_obj,
        polished_minus_lp=polished_obj - obj,
        max_dev_from_monotone_coupling=max_dev_from_monotone,
    )


# --------------------------------------------------------------------------------------------------------------------
# alpha = 0 closed form: round the weighted quantile average to the grid
# --------------------------------------------------------------------------------------------------------------------


def alpha0_closed_form(F: np.ndarray, w: np.ndarray, build_couplings: bool = True):
    """F: (m,k) group CDFs on the grid (last entry 1). Returns (objective in index units, q, pi or None)."""
    m, k = F.shape
    W = w.sum()
    u = np.unique(np.concatenate([F.ravel(), [0.0, 1.0]]))
    u = u[(u >= 0.0) & (u <= 1.0)]
    length = np.diff(u)
    mid = 0.5 * (u[:-1] + u[1:])
    J = np.empty((m, len(mid)), dtype=np.int64)
    for a in range(m):
        J[a] = np.minimum(np.searchsorted(F[a], mid, side="left"), k - 1)  # Q_a(u) = min{j : F_a(j) >= u}
    qbar = (w / W) @ J
    r = np.floor(qbar + 0.5).astype(np.int64)  # ties (exact .5) go up; equal cost either way
    d2 = (J - r[None, :]) ** 2
    obj = float(np.sum(w[:, None] * d2 * length[None, :]))
    q = np.bincount(r, weights=length, minlength=k)
    pi = None
    if build_couplings:
        pi = np.zeros((m, k, k))
        for a in range(m):
            np.add.at(pi[a], (J[a], r), length)
    return obj, q, pi


def time_closed_form(F, w, runs: int, inner: int):
    per_call = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(inner):
            alpha0_closed_form(F, w)
        per_call.append((time.perf_counter() - t0) / inner)
    return statistics.median(per_call)


# --------------------------------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------------------------------

SOLVER_VARIANTS = {
    "choose": {},                                               # HiGHS default (solver="choose")
    "simplex": {"solver": "simplex"},                           # dual simplex (simplex_strategy default)
    "ipm": {"solver": "ipm"},                                   # IPX + crossover
    "choose_1thread": {"threads": 1},                            # same, HiGHS scheduler limited to 1 thread
    "simplex_nopresolve": {"solver": "simplex", "presolve": "off"},
    "ipm_nocrossover": {"solver": "ipm", "run_crossover": "off"},  # interior solution (like Clarabel would give)
}


def fmt_s(x: float) -> str:
    if x < 1e-3:
        return f"{x * 1e6:.1f} us"
    if x < 1:
        return f"{x * 1e3:.1f} ms"
    return f"{x:.3f} s"


def _loadavg():
    try:
        return os.getloadavg()
    except OSError:
        return None


def bench_instance(path: str, variants, runs: int) -> int:
    """Re-solve a stored instance JSON (the same input a Rust solver gets) and compare with its stored objective."""
    with open(path) as f:
        inst = json.load(f)
    p, w, alpha = np.asarray(inst["p_tilde"]), np.asarray(inst["w_tilde"]), float(inst["alpha"])
    ref = inst["highs"]["objective_index"]
    t0 = time.perf_counter()
    lp, lay = build_lp(p, w, alpha)
    t_build = time.perf_counter() - t0
    print(f"instance {os.path.basename(path)}: m={lay['m']} k={lay['k']} alpha={alpha} vars={lay['ncol']} "
          f"rows={lay['nrow']} nnz={lay['nnz']} (model build {fmt_s(t_build)}); loadavg {_loadavg()}")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(lp)
    h.presolve()
    plp = h.getPresolvedLp()
    print(f"  HiGHS presolve reduces it to {plp.num_col_} vars, {plp.num_row_} rows, "
          f"{len(plp.a_matrix_.value_)} nnz (p_tilde has {int(np.sum(p == 0))} of {p.size} zero entries)")
    bad = 0
    for vname in variants:
        r = timed_solve(lp, SOLVER_VARIANTS[vname], runs)
        chk = check_solution(r["x"], lay, p, w, alpha, r["obj"])
        rel = abs(r["obj"] - ref) / abs(ref)
        bad += rel > 1e-7 or not chk["ks_ok"]
        print(f"  {vname:<19} median {fmt_s(r['median_wall']):>9}  min {fmt_s(r['min_wall']):>9}  "
              f"cpu {fmt_s(r['median_cpu']):>9}  obj {r['obj']:.12g}  rel diff vs stored {rel:.1e}  "
              f"runs {[round(t, 3) for t in r['walls']]}", flush=True)
    return 1 if bad else 0


def markdown_report(path: str) -> int:
    """Print the markdown tables of BENCHMARKS.md from a results JSON written by a grid run."""
    with open(path) as f:
        d = json.load(f)
    v0 = d["variants"][0]
    print(f"Main table: HiGHS variant `{v0}` {d['variant_options'][v0]}, median of {d['runs']} runs of `Highs.run()` "
          f"(wall), seed {d['seed']}.\n")
    print("| data | k | eps | alpha | vars | rows | nnz | median solve (wall) | min | median CPU | iters | "
          "objective (index units) | objective (value units) | max KS(q_a,q_b) | checks | alpha=0 closed form |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in d["results"]:
        x = r["variants"][v0]
        cf = r.get("closed_form_alpha0")
        cfs = (f"{fmt_s(cf['median_time_s'])}, {'matches' if cf['matches'] else 'MISMATCH'} "
               f"(abs diff {cf['abs_diff_vs_lp']:.0e})") if cf else "n/a"
        print(f"| {r['dataset']} | {r['k']} | {r['eps']} | {r['alpha']} | {r['num_vars']:,} | {r['num_rows']:,} | "
              f"{r['nnz']:,} | **{fmt_s(x['median_solve_s'])}** | {fmt_s(x['min_solve_s'])} | "
              f"{fmt_s(x['median_cpu_s'])} | {x['simplex_iters'] + x['ipm_iters']} | {x['objective_index']:.10g} | "
              f"{x['objective_value']:.6g} | {x['checks']['max_pairwise_ks_q']:.6f} | "
              f"{'OK' if x['all_checks_ok'] else 'FAIL'} | {cfs} |")
    others = d["variants"][1:]
    if others:
        print("\nOther HiGHS settings (median wall / median CPU), same instances:\n")
        print("| data | k | eps | alpha | " + " | ".join(d["variants"]) + " |")
        print("|---|---|---|---|" + "---|" * len(d["variants"]))
        for r in d["results"]:
            cells = []
            for v in d["variants"]:
                x = r["variants"].get(v)
                cells.append(f"{fmt_s(x['median_solve_s'])} / {fmt_s(x['median_cpu_s'])}"
                             + ("" if x["all_checks_ok"] else " FAIL") if x else "-")
            print(f"| {r['dataset']} | {r['k']} | {r['eps']} | {r['alpha']} | " + " | ".join(cells) + " |")
    worst = max(max(abs(x["checks"]["row_marginal_err"]), abs(x["checks"]["ks_band_violation"]),
                    -x["checks"]["min_pi"], abs(x["checks"]["q_sum_err"]))
                for r in d["results"] for x in r["variants"].values())
    print(f"\nWorst constraint residual over all solves (row marginals, KS band, -min pi, sum q_a - 1): {worst:.1e}")
    print(f"environment: {json.dumps(d['environment'])}")
    return 0


def selftest() -> int:
    """Spec section 8 worked example + alpha=0 closed form vs LP on random small instances."""
    y = np.array([0.1, 0.1, 0.5, 0.9, 0.9, 0.9]); g = np.array([0, 0, 0, 0, 1, 1])
    pm = private_pmfs(y, g, 2, 0.0, 1.0, 3, math.inf, 0)
    assert np.allclose(pm["p"], [[0.5, 0.25, 0.25], [0, 0, 1]]) and np.allclose(pm["w"], [2 / 3, 1 / 3])
    fails = 0
    for alpha, want in [(0.0, 7 / 12), (0.25, 1 / 3), (0.5, 1 / 12), (1.0, 0.0)]:
        lp, lay = build_lp(pm["p"], pm["w"], alpha)
        r = solve_once(lp, {})
        chk = check_solution(r["x"], lay, pm["p"], pm["w"], alpha, r["obj"])
        ok = r["status"] == "Optimal" and abs(r["obj"] - want) < 1e-9 and chk["ks_ok"]
        fails += not ok
        print(f"worked example alpha={alpha}: LP {r['obj']:.9f} (reference {want:.9f}) {'OK' if ok else 'FAIL'}")
    cf = alpha0_closed_form(pm["F"], pm["w"])
    ok = abs(cf[0] - 7 / 12) < 1e-12 and np.allclose(cf[1], [0, 0.75, 0.25])
    fails += not ok
    print(f"section 8 example closed form: {cf[0]:.9f}, q={cf[1].tolist()} {'OK' if ok else 'FAIL'}")
    rng = np.random.default_rng(1)
    worst, n_nonopt = 0.0, 0
    tight = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    for _ in range(200):
        m, k = int(rng.integers(1, 5)), int(rng.integers(1, 15))
        P = rng.dirichlet(np.full(k, 0.5), size=m)
        P[rng.random((m, k)) < 0.3] = 0
        P = P + 1e-12
        F = np.cumsum(P / P.sum(axis=1, keepdims=True), axis=1); F[:, -1] = 1.0
        P = np.diff(F, prepend=0.0, axis=1)
        w = rng.random(m)
        lp, _ = build_lp(P, w, 0.0)
        r = solve_once(lp, {})
        if r["status"] != "Optimal":
            n_nonopt += 1
            r = solve_once(lp, tight)  # see BENCHMARKS.md, "HiGHS robustness"
        worst = max(worst, abs(alpha0_closed_form(F, w)[0] - r["obj"]))
    ok = worst < 1e-6
    fails += not ok
    print(f"closed form vs LP on 200 random alpha=0 instances: max |diff| {worst:.1e} {'OK' if ok else 'FAIL'} "
          f"(default-tolerance HiGHS was not Optimal on {n_nonopt}; re-solved with 1e-10 tolerances)")
    return 1 if fails else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--runs", type=int, default=5, help="timed runs per case (median reported)")
    ap.add_argument("--variants", default="choose,simplex,ipm,choose_1thread,simplex_nopresolve,ipm_nocrossover",
                    help="comma list of HiGHS option sets: " + ",".join(SOLVER_VARIANTS))
    ap.add_argument("--alt-min-k", type=int, default=0,
                    help="variants other than the first are timed only for k >= this (saves time)")
    ap.add_argument("--quick", action="store_true", help="1 run, first variant only")
    ap.add_argument("--results-json", default=os.path.join(HERE, "fair_regression_highs_results.json"))
    ap.add_argument("--instance-json", default=os.path.join(HERE, "fair_regression_law_k180.json"))
    ap.add_argument("--selftest", action="store_true", help="section 8 worked example + closed-form checks, then exit")
    ap.add_argument("--report", metavar="FILE", help="print markdown tables from a results JSON and exit")
    ap.add_argument("--instance", metavar="FILE",
                    help="only re-solve and time this stored instance JSON (e.g. fair_regression_law_k180.json)")
    args = ap.parse_args(argv)

    variants = [v for v in args.variants.split(",") if v]
    if args.quick:
        args.runs, variants = 1, variants[:1]
    if args.selftest:
        return selftest()
    if args.report:
        return markdown_report(args.report)
    if args.instance:
        return bench_instance(args.instance, variants, args.runs)

    env = dict(python=sys.version.split()[0], numpy=np.__version__, highspy=pkg_version("highspy"),
               highs_version=f"{highspy.Highs().version()}" if hasattr(highspy.Highs(), "version") else "?",
               cpu_count=os.cpu_count(), platform=platform.platform(), processor=_cpu_model(),
               loadavg_at_start=_loadavg())
    print("environment:", json.dumps(env))
    t_start = time.time()

    datasets = [(load_law(args.data_dir), [36, 180]), (load_communities(args.data_dir), [12, 60])]
    alphas = [0.0, 0.05, 0.2]
    epss = [math.inf, 1.0]
    results = []
    instance = None

    hdr = (f"{'data':<11} {'k':>4} {'eps':>4} {'alpha':>5} {'vars':>7} {'rows':>5} {'nnz':>7} "
           f"{'variant':<19} {'median':>9} {'cpu':>9} {'obj(index)':>14} {'obj(value)':>12} {'iters':>6} "
           f"{'KS(q)':>8} check")
    print(hdr)
    for ds, ks_ in datasets:
        tr = train_split(len(ds["y"]), args.seed)
        y, g = ds["y"][tr], ds["g"][tr]
        m = len(ds["group_names"])
        for k in ks_:
            for eps in epss:
                pm = private_pmfs(y, g, m, ds["s"], ds["t"], k, eps, args.seed)
                for alpha in alphas:
                    t0 = time.perf_counter()
                    lp, lay = build_lp(pm["p"], pm["w"], alpha)
                    t_build = time.perf_counter() - t0
                    row = dict(dataset=ds["name"], seed=args.seed, n_train=int(len(y)), m=m, k=k,
                               eps=("inf" if math.isinf(eps) else eps), alpha=alpha,
                               num_vars=lay["ncol"], num_rows=lay["nrow"], nnz=lay["nnz"],
                               model_build_s=t_build, variants={})
                    first_x = None
                    for vi, vname in enumerate(variants):
                        if vi > 0 and k < args.alt_min_k:
                            continue
                        r = timed_solve(lp, SOLVER_VARIANTS[vname], args.runs)
                        if vi == 0:
                            first_x = r["x"]
                        chk = check_solution(r["x"], lay, pm["p"], pm["w"], alpha, r["obj"])
                        ok = (r["status"] == "Optimal" and chk["ks_ok"] and chk["row_marginal_err"] < 1e-7
                              and chk["min_pi"] > -1e-7 and chk["ks_band_violation"] < 1e-7
                              and abs(chk["polished_minus_lp"]) < 1e-6 * max(1.0, abs(r["obj"])))
                        used = ("ipm+crossover" if r["ipm_iters"] and r["crossover_iters"] else
                                "ipm" if r["ipm_iters"] else "simplex")
                        row["variants"][vname] = dict(
                            status=r["status"], algorithm_used=used, median_solve_s=r["median_wall"],
                            min_solve_s=r["min_wall"], median_cpu_s=r["median_cpu"], solve_s_runs=r["walls"],
                            median_highs_runtime_s=r["median_highs_runtime"], objective_index=r["obj"],
                            objective_value=r["obj"] * pm["width"] ** 2, obj_spread_over_runs=r["obj_spread"],
                            simplex_iters=r["simplex_iters"], ipm_iters=r["ipm_iters"],
                            crossover_iters=r["crossover_iters"], max_primal_infeas=r["max_primal_infeas"],
                            max_dual_infeas=r["max_dual_infeas"], checks=chk, all_checks_ok=bool(ok))
                        iters = r["simplex_iters"] + r["ipm_iters"]
                        print(f"{ds['name']:<11} {k:>4} {str(row['eps']):>4} {alpha:>5} {lay['ncol']:>7} "
                              f"{lay['nrow']:>5} {lay['nnz']:>7} {vname:<19} {fmt_s(r['median_wall']):>9} "
                              f"{fmt_s(r['median_cpu']):>9} {r['obj']:>14.9g} {r['obj'] * pm['width'] ** 2:>12.6g} "
                              f"{iters:>6} {chk['max_pairwise_ks_q']:>8.5f} {'OK' if ok else 'FAIL'} "
                              f"[{used}, {r['status']}]", flush=True)
                    if alpha == 0.0:
                        cf_obj, cf_q, _ = alpha0_closed_form(pm["F"], pm["w"])
                        cf_t = time_closed_form(pm["F"], pm["w"], args.runs, inner=200)
                        lp_obj = row["variants"][variants[0]]["objective_index"]
                        lp_q = first_x[:m * k * k].reshape(m, k, k).sum(axis=1)
                        row["closed_form_alpha0"] = dict(
                            objective_index=cf_obj, objective_value=cf_obj * pm["width"] ** 2, median_time_s=cf_t,
                            abs_diff_vs_lp=abs(cf_obj - lp_obj),
                            rel_diff_vs_lp=abs(cf_obj - lp_obj) / max(1e-300, abs(lp_obj)),
                            max_abs_q_diff_vs_lp=float(np.max(np.abs(lp_q - cf_q[None, :]))),
                            matches=bool(abs(cf_obj - lp_obj) <= 1e-7 * max(1.0, abs(lp_obj))))
                        print(f"{'':<11} {'':>4} {'':>4} {'':>5} {'':>7} {'':>5} {'':>7} {'alpha=0 closed form':<19} "
                              f"{fmt_s(cf_t):>9} {'':>9} {cf_obj:>14.9g} {cf_obj * pm['width'] ** 2:>12.6g} {'':>6} "
                              f"{'':>8} {'match' if row['closed_form_alpha0']['matches'] else 'MISMATCH'} "
                              f"(|obj diff|={abs(cf_obj - lp_obj):.1e}, "
                              f"max|q diff|={row['closed_form_alpha0']['max_abs_q_diff_vs_lp']:.1e})", flush=True)
                    results.append(row)
                    if ds["name"] == "law" and k == 180 and eps == 1.0 and alpha == 0.05:
                        instance = make_instance(ds, args.seed, y, m, k, eps, alpha, pm, lay, row, variants[0])

    env["loadavg_at_end"] = _loadavg()
    env["grid_wall_s"] = time.time() - t_start
    out = dict(environment=env, seed=args.seed, runs=args.runs, variants=variants,
               variant_options={v: SOLVER_VARIANTS[v] for v in variants}, results=results)
    with open(args.results_json, "w") as f:
        json.dump(out, f, indent=1)
    print("environment at end:", json.dumps(env))
    print("wrote", args.results_json)
    if instance is not None:
        # extra objectives on the same p~, w~ (same instance, other alphas) for a fuller cross-check
        extra = {}
        for a2 in [0.0, 0.005, 0.05, 0.2, 1.0]:
            lp2, _ = build_lp(np.asarray(instance["p_tilde"]), np.asarray(instance["w_tilde"]), a2)
            extra[repr(a2)] = solve_once(lp2, {})["obj"]
        instance["highs_objective_index_by_alpha"] = extra
        instance["alpha0_closed_form_objective_index"] = alpha0_closed_form(
            np.asarray(instance["F_tilde"]), np.asarray(instance["w_tilde"]))[0]
        with open(args.instance_json, "w") as f:
            json.dump(instance, f, indent=1)
        print("wrote", args.instance_json)
    return 0


def make_instance(ds, seed, y, m, k, eps, alpha, pm, lay, row, variant):
    v = row["variants"][variant]
    return dict(
        description=("Seed 001 fixed-support KS-relaxed W2 barycenter LP instance: Law School (ugpa, race1), "
                     "k=180, alpha=0.05, eps=1, seed 33 (sklearn-equivalent 70/30 split, "
                     "np.random.default_rng(33).laplace noise, L-inf isotonic repair). Solve "
                     "min sum_a w_a sum_{j,l} (j-l)^2 pi_a(j,l) s.t. pi_a 1 = p_a, pi_a^T 1 = q_a, "
                     "|cumsum(q_a) - B| <= alpha/2 (B free = barycenter CDF), pi >= 0. "
                     "objective_index uses index units (j-l)^2; objective_value = objective_index * bin_width^2."),
        dataset="law_bar_pass.csv", dataset_sha256=sha256_of(ds["path"]), seed=seed,
        n_rows_total=int(len(ds["y"])), n_train=int(len(y)), group_names=ds["group_names"], m=m, k=k,
        s=ds["s"], t=ds["t"], bin_width=pm["width"], eps=eps, alpha=alpha,
        midpoints=pm["midpoints"].tolist(),
        w_tilde=pm["w"].tolist(),
        p_tilde=pm["p"].tolist(),
        F_tilde=pm["F"].tolist(),
        train_counts=pm["counts"].tolist(),
        noisy_joint_hist=pm["noisy_hist"].tolist(),
        lp_size_sparse_form=dict(num_vars=lay["ncol"], num_rows=lay["nrow"], nnz=lay["nnz"]),
        highs=dict(status=v["status"], objective_index=v["objective_index"], objective_value=v["objective_value"],
                   median_solve_s=v["median_solve_s"], variant=variant, highspy=pkg_version("highspy"),
                   max_pairwise_ks_q=v["checks"]["max_pairwise_ks_q"]),
        notes=("p_tilde rows sum to 1 up to rounding (F_tilde[:, -1] = 1 exactly; p_tilde = diff(F_tilde)). "
               "w_tilde are NOT normalised (hazard H8). Parse floats with a correctly rounding parser "
               "(serde_json feature float_roundtrip) to get bit-identical inputs."),
    )


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
