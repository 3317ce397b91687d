#!/usr/bin/env bash
# LDP collection at scale (issue #21; BENCHMARKS.md "LDP collection at scale"): FILES × ROWS
# Hadamard reports made with `dpfair ldp privatize` from a synthetic private file, collected by
# one `dpfair ldp fit`. Prints the peak RSS, CPU and wall time of each step and the bytes per
# report, then deletes everything it generated.
#
#   cargo build --release -p dpfair-cli && bench/ldp_scale.sh            # 10 × 10^7 = 10^8 reports
#   FILES=2 ROWS=1000000 bench/ldp_scale.sh                              # a quick check
#
# The private file (ROWS rows, ≈ 30 bytes each) is privatised FILES times, each run a fresh
# release from the OS CSPRNG (FILES × ROWS simulated holders). Data under target/tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${FILES:-10}
ROWS=${ROWS:-10000000}
EPS=${EPS:-2}
DEPTH=${DEPTH:-8}
BIN=${BIN:-target/release/dpfair}
DIR=${DIR:-target/tmp/ldp_scale}
rm -rf "$DIR"
mkdir -p "$DIR/reports"
# KEEP=1 leaves the partition and the reports in $DIR for another collector (bench/ldp_ray.sh).
[ -n "${KEEP:-}" ] || trap 'rm -rf "$DIR"' EXIT

# x1, x2 uniform on [0,1]²; P(y = 1 | x) = 0.5 + 0.4·sin(2π x1)·cos(2π x2) (awk, seeded).
gen() {
    awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); pi = atan2(0, -1); print "x1,x2,y";
        for (i = 0; i < n; i++) { a = rand(); b = rand();
            eta = 0.5 + 0.4 * sin(2 * pi * a) * cos(2 * pi * b);
            printf "%.6f,%.6f,%d\n", a, b, (rand() < eta) ? 1 : 0 } }'
}
gen 20000 1 > "$DIR/public.csv"
gen "$ROWS" 2 > "$DIR/private.csv"
echo "private file: $ROWS rows, $(stat -c %s "$DIR/private.csv") bytes; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

"$BIN" ldp partition --public "$DIR/public.csv" --target y --depth "$DEPTH" --epsilon "$EPS" \
    --mechanism hadamard --out "$DIR/tree.json"

measure() { # label, command...
    local label=$1; shift
    /usr/bin/time -f "$label: %e s wall, %U s user, %S s sys, %M KB peak RSS" "$@" 2>&1 \
        | grep -F -e "$label:" -e wrote || true
}
for i in $(seq 1 "$FILES"); do
    measure "privatize $i" "$BIN" ldp privatize --partition "$DIR/tree.json" --data "$DIR/private.csv" \
        --out "$DIR/reports/r$i.arrow"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
BYTES=$(cat "$DIR"/reports/*.arrow | wc -c)
N=$((FILES * ROWS))
echo "reports: $N in $FILES files, $BYTES bytes = $(awk -v b="$BYTES" -v n="$N" 'BEGIN { printf "%.3f", b / n }') bytes per report"
measure "fit" "$BIN" ldp fit --partition "$DIR/tree.json" --reports "$DIR/reports" --out "$DIR/model.json"
measure "fit (one thread)" env RAYON_NUM_THREADS=1 "$BIN" ldp fit --partition "$DIR/tree.json" \
    --reports "$DIR/reports" --out "$DIR/model1.json"
echo "the model's ledger: $(grep -o '[0-9]* users, one ε-LDP report' "$DIR/model.json" | head -n 1)"
cmp -s <(grep -o '"eta":\[[^]]*\]' "$DIR/model.json") <(grep -o '"eta":\[[^]]*\]' "$DIR/model1.json") \
    && echo "the parallel and one-thread fits give the same leaf estimates"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
