"""One PRV/PLD evaluation of the Poisson-subsampled Gaussian, dp_accounting's PLD accountant, timed
(wall and CPU) for the accountant comparison in BENCHMARKS.md ("Accountants").

    python bench/prv_compare.py [--q 0.01] [--z 1.1] [--steps 10000] [--delta 1e-5] [--reps 3]

Prints one JSON line per repetition. dp_accounting's default discretisation (value_discretization
_interval 1e-4) and pessimistic rounding, as in docs/reference-values.md.
"""
import argparse
import json
import time

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--q", type=float, default=0.01)
    p.add_argument("--z", type=float, default=1.1)
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    for rep in range(a.reps):
        w0, c0 = time.perf_counter(), time.process_time()
        acc = pld_privacy_accountant.PLDAccountant()
        event = dp_accounting.PoissonSampledDpEvent(
            a.q, dp_accounting.GaussianDpEvent(a.z)
        )
        acc.compose(dp_accounting.SelfComposedDpEvent(event, a.steps))
        eps = acc.get_epsilon(a.delta)
        w1, c1 = time.perf_counter(), time.process_time()
        print(json.dumps({"impl": "dp_accounting PLD", "rep": rep, "epsilon": eps,
                          "wall_s": round(w1 - w0, 4), "cpu_s": round(c1 - c0, 4)}))


if __name__ == "__main__":
    main()
