#!/usr/bin/env bash
# DP-SGD throughput, dpfair against the numpy fused float32 implementation, in interleaved pairs
# (one dpfair fit, then one numpy fit, repeated), for logistic regression on Adult-shaped data at
# expected batch 256 and 1,024, then a scaling run at n = 10^5 and 10^6 (batch 256). Reports the
# median examples/s (wall) and examples per CPU-second of each side; prints the load average
# before and after, since the machine is shared.
#
#   PY=/path/to/venv/bin/python bench/dpsgd_compare.sh [pairs] [epochs]
#
# The bench binary is built once and run directly (DPSGD_BIN=path runs a given build instead).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
PAIRS=${1:-5}
EPOCHS=${2:-20}
OUT=$(mktemp)
if [ -z "${DPSGD_BIN:-}" ]; then
  DPSGD_BIN=$(cargo bench -p dpfair-learn --bench dpsgd_throughput --no-run 2>&1 |
    grep -o '(target/[^)]*dpsgd_throughput-[0-9a-f]*)' | tr -d '()')
fi
echo "bench binary: $DPSGD_BIN"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run_pair() { # n batch epochs
  "$DPSGD_BIN" --n "$1" --batch "$2" --epochs "$3" --reps 1 | grep '^{' >>"$OUT"
  "$PY" bench/dpsgd_numpy.py --n "$1" --batch "$2" --epochs "$3" --reps 1 >>"$OUT"
}
for _ in $(seq "$PAIRS"); do
  run_pair 22610 256 "$EPOCHS"
  run_pair 22610 1024 "$EPOCHS"
done
for _ in $(seq 3); do
  run_pair 100000 256 5
  run_pair 1000000 256 1
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$OUT" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
keys = sorted({(r["n"], r["batch"], r["impl"]) for r in rows})
print("| n | expected batch | implementation | runs | examples/s (wall, median) | examples per CPU-second (median) | seconds per epoch (wall) |")
print("|---:|---:|---|---:|---:|---:|---:|")
for n, b, impl in keys:
    rs = [r for r in rows if (r["n"], r["batch"], r["impl"]) == (n, b, impl)]
    wall = statistics.median(r["examples_per_s"] for r in rs)
    cpu = statistics.median(r["examples_per_cpu_s"] for r in rs if r["examples_per_cpu_s"])
    per_epoch = statistics.median(r["wall_s"] / r["epochs"] for r in rs)
    print(f"| {n:,} | {b:,} | {impl} | {len(rs)} | {wall/1e6:.2f} M | {cpu/1e6:.2f} M | {per_epoch*1e3:.1f} ms |")
PYEOF
rm -f "$OUT"
