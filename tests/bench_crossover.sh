#!/bin/sh
# tests/bench_crossover.sh: time the whole default crossover grid (every bundled GPU x
# TP 2,4,8,16 x the three kernel paths, break-even on T = 1..16384 with 90% intervals from
# 200 bootstrap samples per cell), fit of the bundled H20 table included.  A benchmark,
# not part of `make check`.  Target: under 2 s on the 2-core machine.
#   usage: tests/bench_crossover.sh [TPSPLIT]     (default ./tpsplit)
# Prints the wall-clock and CPU seconds; exits 1 when the wall-clock time is 2 s or more.
tpsplit=${1:-${TPSPLIT:-./tpsplit}}
LC_ALL=C; export LC_ALL
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
t0=$(date +%s.%N)
/usr/bin/env time -f '%U %S' -o "$out.cpu" "$tpsplit" crossover > "$out" 2>&1 || {
  # no GNU time: measure the wall clock only
  "$tpsplit" crossover > "$out" 2>&1 || { cat "$out"; exit 2; }
}
t1=$(date +%s.%N)
cells=$(grep -cE '^[A-Za-z0-9-]+ +[0-9]+ +[a-z0-9-]+ ' "$out")
cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$out.cpu" 2>/dev/null)
rm -f "$out.cpu"
awk -v a="$t0" -v b="$t1" -v n="$cells" -v cpu="${cpu:-?}" 'BEGIN {
  w = b - a
  printf "crossover grid: %d cells in %.2f s wall, %s s CPU (target < 2 s)\n", n, w, cpu
  exit !(w < 2.0) }'
