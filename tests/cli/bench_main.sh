#!/bin/sh
# tests/cli/bench_main.sh: time the main job (`tpsplit` with no arguments: the answer, the grid of
# every bundled GPU x TP x path, and its figures written and rendered into a temporary folder).
# A benchmark, not part of `make check`.  Targets (issue 29 item 4), on a 2-core machine: the
# answer printed within 0.3 s; the main job done with every figure in <= 1.0 s median idle and
# <= 1.5 s with the other core busy (a shell loop spinning on it during those runs).
#   usage: tests/cli/bench_main.sh [TPSPLIT]     (default $TPSPLIT, else ./tpsplit)
# Runs each case 3 times and prints the median wall-clock seconds and the load average before
# the runs (other work on the machine slows them down):
#   main job              `tpsplit -o DIR`, figures rendered by gnuplot;
#   without rendering     the same with TPSPLIT_GNUPLOT= (scripts and data, no gnuplot);
#   answer and grid only  `tpsplit --no-plots`;
#   the answer            seconds until the answer's lines reach a pipe (the main job flushes
#                         them before it computes the grid and the figures);
#   other core busy       the main job again while `while :; do :; done` runs.
# Exits 1 when a target is missed, 2 when a run fails.
tpsplit=${1:-${TPSPLIT:-./tpsplit}}
LC_ALL=C; export LC_ALL
dir=$(mktemp -d) || exit 2
trap 'rm -rf "$dir"' EXIT
now() { date +%s.%N; }
# median3 CMD...: the median wall-clock seconds of three runs of CMD
median3() {
  for i in 1 2 3; do
    t0=$(now)
    "$@" >"$dir/out" 2>&1 || { cat "$dir/out" >&2; return 2; }
    t1=$(now)
    echo "$t0 $t1"
  done | awk '{ v[NR] = $2 - $1 } END {
    for (i = 1; i <= 3; i++) for (j = i + 1; j <= 3; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    printf "%.2f", v[2] }'
}
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime | sed 's/.*average: *//')
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
main=$(median3 "$tpsplit" -o "$dir/figs") || exit 2
norender=$(TPSPLIT_GNUPLOT= median3 "$tpsplit" -o "$dir/figs2") || exit 2
noplots=$(median3 "$tpsplit" --no-plots) || exit 2
images=$(ls "$dir/figs" | grep -c '\.png$')
# the answer: the time its first line reaches a reader through a pipe, median of 3
answer=$(for i in 1 2 3; do
  t0=$(now)
  "$tpsplit" -o "$dir/figs3" | { IFS= read -r l; now; cat >/dev/null; } | awk -v t0="$t0" '{ printf "%.3f\n", $1 - t0 }'
done | sort -n | sed -n 2p)
# the other core busy
sh -c 'while :; do :; done' &
spin=$!
busy=$(median3 "$tpsplit" -o "$dir/figs4")
kill "$spin" 2>/dev/null
[ -n "$busy" ] || exit 2
printf 'load average before the runs: %s (%s cores)\n' "$load" "$cores"
printf 'the answer printed after: %s s, median of 3 (target <= 0.3 s)\n' "$answer"
printf 'main job (tpsplit -o DIR, %s images): %s s wall, median of 3 (target <= 1.0 s)\n' "$images" "$main"
printf 'main job, the other core busy:        %s s (target <= 1.5 s)\n' "$busy"
printf 'without rendering (TPSPLIT_GNUPLOT=): %s s\n' "$norender"
printf 'answer and grid only (--no-plots):   %s s\n' "$noplots"
awk -v a="$answer" -v t="$main" -v b="$busy" 'BEGIN { exit !(a <= 0.3 && t <= 1.0 && b <= 1.5) }'
