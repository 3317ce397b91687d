#!/usr/bin/env bash
# `dpfair compare` at DEFAULT options on data sets nobody tuned for (issue "works on a user's own
# data"): feature sets and targets the papers did not use, read from the shipped files as they
# are (no rewritten copies), with only column selection options. Every method at ε = 1 and 2;
# compare prints the majority-class and non-private references and whether each fairness target
# was met. No --bounds anywhere: every fit pays for private feature bounds from its own ε.
#
#   DPFAIR_DATA_DIR=/path/to/datasets bench/own_data.sh [out-dir] [repetitions]
#
# The data sets:
# - Adult, all 14 columns (adult.data, raw UCI, no header, text columns): target `>50K`
#   (column 14), sensitive sex (column 9); the other 13 columns are features.
# - Credit default, all 23 features (credit_card_clients.csv): target `default payment`,
#   sensitive SEX (a feature column of the 23, used as the group here).
# - Law, every column (law_bar_pass.csv): target pass_bar, sensitive `black`; left out are the
#   columns that restate the target (bar, bar1, bar2, their years, and a published model's
#   prediction of it) and `ID` (left out by its name).
# - Communities with its race column (communities_crime.csv): target `class` (violent crime
#   above the median), sensitive `Black` (racepctblack > 0.06); racepctblack stays a feature;
#   left out are the target's source ViolentCrimesPerPop, the community name (free text) and
#   the cross-validation fold.
#
# Runs release builds under nice; prints the load average and each data set's CPU time.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DPFAIR_DATA_DIR:?set DPFAIR_DATA_DIR to the folder of the shipped data files}
OUT=${1:-$(mktemp -d)}
REPS=${2:-1}
mkdir -p "$OUT"
cargo build -q --release -p dpfair-cli
BIN=target/release/dpfair
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

run() { # name, then compare's data options
  local name=$1
  shift
  echo
  echo "## $name"
  /usr/bin/time -f "$name: %e s wall, %U s user, %S s sys" nice -n 10 "$BIN" compare \
    --epsilon 1,2 --repetitions "$REPS" --out "$OUT/$name" "$@" 2>"$OUT/$name.log" ||
    { tail -5 "$OUT/$name.log"; return 0; }
  grep -E '^(columns|no --bounds|note|warning)' "$OUT/$name.log" || true
  tail -1 "$OUT/$name.log"
}

run adult --data "$DATA/adult.data" --target 14 --sensitive 9
run credit --data "$DATA/credit_card_clients.csv" --target "default payment" --sensitive SEX
run law --data "$DATA/law_bar_pass.csv" --target pass_bar --sensitive black \
  --drop bar,bar1,bar2,bar1_yr,bar2_yr,dnn_bar_pass_prediction
run communities --data "$DATA/communities_crime.csv" --target class --sensitive Black \
  --drop ViolentCrimesPerPop,communityname,fold
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tables and plots in $OUT"
