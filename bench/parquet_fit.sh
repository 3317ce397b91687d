#!/usr/bin/env bash
# Fitting from Parquet (issue #21): peak RSS and CPU time of `dpfair fit fair-regression
# --scores` on an N-row synthetic file (score, group, label), streamed from Parquet against the
# same rows loaded whole from CSV; then `dpfair fit decoupled` on a two-group file of N rows,
# streamed from Parquet (at most --base-rows rows held for DP-SGD, the rest counted batch by
# batch) against the same rows loaded whole from CSV. The files are generated under target/tmp
# and deleted at the end (each pair as soon as it is measured).
#
#   bench/parquet_fit.sh [N]        (default N = 10000000)
#
# Release builds under nice; prints the load average and /usr/bin/time's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000000}
TMP=target/tmp/parquet_fit
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
cargo build -q --release -p dpfair-cli
cargo build -q --release -p dpfair-data --example synthetic_parquet
BIN=target/release/dpfair
GEN=target/release/examples/synthetic_parquet
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); N = $N"
nice -n 10 "$GEN" "$N" "$TMP/big.parquet"
nice -n 10 "$GEN" "$N" "$TMP/big.csv" --csv
ls -l "$TMP"
FIT=(fit fair-regression --scores score --sensitive group --groups a,b,c --range 0,1
     --bins 50 --alpha 0.05 --epsilon 1)
measure() {
    local label=$1; shift
    /usr/bin/time -v nice -n 10 "$@" 2> "$TMP/time.txt" >/dev/null || { cat "$TMP/time.txt"; exit 1; }
    awk -v l="$label" -F': ' '
        /User time/ {u=$2} /System time/ {s=$2} /Elapsed \(wall/ {w=$2}
        /Maximum resident/ {r=$2}
        END {printf "%-34s user %6.2f s  sys %5.2f s  wall %s  peak RSS %7.1f MB\n", l, u, s, w, r/1024}' \
        "$TMP/time.txt"
}
measure "fair-regression, Parquet (streamed)" "$BIN" "${FIT[@]}" --data "$TMP/big.parquet" --out "$TMP/m1.json"
measure "fair-regression, CSV (whole)" "$BIN" "${FIT[@]}" --data "$TMP/big.csv" --out "$TMP/m2.json"
measure "predict, Parquet in and out" "$BIN" predict --model "$TMP/m1.json" --data "$TMP/big.parquet" --out "$TMP/pred.parquet" --seed 1
rm -f "$TMP"/big.* "$TMP"/pred.parquet
nice -n 10 "$GEN" "$N" "$TMP/two.parquet" --two-groups
nice -n 10 "$GEN" "$N" "$TMP/two.csv" --csv --two-groups
ls -l "$TMP"
DEC=(fit decoupled --target label --sensitive group --groups a,b --features score
     --bounds score:0:1 --epsilon 3 --delta 1e-7 --seed 1)
measure "decoupled, Parquet (streamed)" "$BIN" "${DEC[@]}" --data "$TMP/two.parquet" --out "$TMP/d1.json"
measure "decoupled, CSV (whole)" "$BIN" "${DEC[@]}" --data "$TMP/two.csv" --out "$TMP/d2.json"
# The same public split and base-model seed: the two models' DP-SGD runs are alike.
grep -o '"split_seed":[0-9]*' "$TMP/d1.json" "$TMP/d2.json"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
