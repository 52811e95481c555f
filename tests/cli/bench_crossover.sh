#!/bin/sh
# tests/cli/bench_crossover.sh: time the whole default crossover grid (every bundled GPU x
# TP 2,4,8,16 x the three kernel paths, break-even on T = 1..16384 with 90% intervals from
# 200 bootstrap samples per cell), the fit of the bundled H20 table included.  A benchmark,
# not part of `make check`.  Target: under 2 s on the 2-core machine.
#   usage: tests/cli/bench_crossover.sh [TPSPLIT]     (default $TPSPLIT, else ./tpsplit)
# Prints the wall-clock and CPU seconds of `tpsplit crossover`, and of `tpsplit --version`
# (the program's start-up alone: loading its shared libraries, CUDA ones included when it
# was built with CUDA).  Exits 1 when the grid takes 2 s or more of wall-clock time.
tpsplit=${1:-${TPSPLIT:-./tpsplit}}
LC_ALL=C; export LC_ALL
out=$(mktemp) || exit 2
trap 'rm -f "$out" "$out.cpu"' EXIT
now() { date +%s.%N; }
cpu_of() { # CPU seconds of a command (GNU time when present, else "?")
  if /usr/bin/env time -f '%U %S' -o "$out.cpu" "$@" > "$out" 2>&1; then
    awk '{ printf "%.2f", $1 + $2 }' "$out.cpu"
  else
    "$@" > "$out" 2>&1 || { cat "$out" >&2; return 2; }
    printf '?'
  fi
}
t0=$(now); cs=$(cpu_of "$tpsplit" --version) || exit 2; t1=$(now)
t2=$(now); cg=$(cpu_of "$tpsplit" crossover) || exit 2; t3=$(now)
cells=$(grep -cE '^[A-Za-z0-9-]+ +[0-9]+ +[a-z0-9-]+ ' "$out")
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$cells" -v cs="$cs" -v cg="$cg" 'BEGIN {
  s = b - a; w = d - c
  printf "start-up (tpsplit --version): %.2f s wall, %s s CPU\n", s, cs
  printf "crossover grid: %d cells in %.2f s wall, %s s CPU, start-up included (target < 2 s)\n", n, w, cg
  exit !(w < 2.0) }'
