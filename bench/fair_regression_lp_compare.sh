#!/bin/sh
# Xian et al. barycenter LP, Law School k = 180, m = 4: HiGHS (highspy) and dpfair back to back on the
# same instance (bench/fair_regression_law_k180.json), so that both see the same machine load.
#
#   HIGHS_PY=/tmp/highs-venv/bin/python CARGO_TARGET_DIR=/work/tgt/freg bench/fair_regression_lp_compare.sh
#
# The HiGHS virtual environment lives outside the repository:
#   python3 -m venv /tmp/highs-venv && /tmp/highs-venv/bin/pip install numpy highspy
# The HiGHS script is bench/fair_regression_highs.py (or set HIGHS_SCRIPT).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=${HIGHS_PY:-/tmp/highs-venv/bin/python}
script=${HIGHS_SCRIPT:-$here/fair_regression_highs.py}
echo "== HiGHS (median of 11 runs; CPU time is the comparable figure on a loaded machine)"
"$py" "$script" --instance "$here/fair_regression_law_k180.json" --runs 11
echo "== dpfair (criterion, release)"
cd "$here/.."
cargo bench -p dpfair --bench fair_regression_lp -- --noplot
