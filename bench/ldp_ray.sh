#!/usr/bin/env bash
# LDP collection on Ray Data (BENCHMARKS.md, "LDP collection at scale (issue #21)", "On Ray
# Data"): bench/ldp_scale.sh makes FILES × ROWS Hadamard reports with `dpfair ldp privatize`
# (and times `dpfair ldp fit` on them), then bench/ldp_ray.py collects the same files with
# dpfair.ray on a local Ray cluster of CPUS worker processes. Deletes the reports afterwards.
#
#   cargo build --release -p dpfair-cli && bench/ldp_ray.sh         # 10 × 10^7 = 10^8 reports
#   FILES=2 ROWS=1000000 bench/ldp_ray.sh                            # a quick check
#
# PYTHON: an interpreter with dpfair (maturin develop --release for a measurement) and
# "ray[data]==2.60.*".
set -euo pipefail
cd "$(dirname "$0")/.."
export DIR=${DIR:-target/tmp/ldp_ray}
PYTHON=${PYTHON:-python3}
trap 'rm -rf "$DIR"' EXIT
KEEP=1 bash bench/ldp_scale.sh
echo "reports on disk: $(du -sh "$DIR/reports" | cut -f1)"
RAY_USAGE_STATS_ENABLED=0 /usr/bin/time -f "bench/ldp_ray.py: %e s wall (with ray.init and shutdown)" \
    "$PYTHON" bench/ldp_ray.py "$DIR/tree.json" "$DIR/reports" "${CPUS:-2}"
