#!/bin/sh
# interp_check.sh STEP TABLE...: how well a bench gemm table's rows are predicted from a subset
# of its own rows: every STEP-th row (and the last) is "measured", each other row is predicted
# by linear interpolation of log time in log M between its measured neighbours.  Prints per
# table: rows, rows measured, rows predicted, the median and max |relative error| of the
# predicted rows, and how many miss by more than 10%.  No model: it shows what interpolating
# that many measured rows can promise where the library's kernel choice makes time jagged in M.
# Exit 2 on a missing argument, a STEP that is not a whole number >= 2, an unreadable file or
# one with fewer than 3 rows.  Needs awk and sort.
[ $# -ge 2 ] || { echo "usage: interp_check.sh STEP TABLE..." >&2; exit 2; }
step=$1; shift
case $step in ''|*[!0-9]*) echo "interp_check.sh: STEP '$step' is not a whole number >= 2" >&2; exit 2 ;; esac
[ "$step" -ge 2 ] || { echo "interp_check.sh: STEP '$step' is not a whole number >= 2" >&2; exit 2; }
for f in "$@"; do # every file checked before anything is printed
  [ -r "$f" ] || { echo "interp_check.sh: cannot read $f" >&2; exit 2; }
  n=$(grep -cv '^#\|^rows' "$f")
  [ "$n" -ge 3 ] || { echo "interp_check.sh: $f: $n rows, want at least 3" >&2; exit 2; }
done
printf 'table\trows\tmeasured\tpredicted\tmed_err\tmax_err\tover_10pct\n'
for f in "$@"; do
  awk -F'\t' -v step="$step" '
    /^#/ || $1 == "rows" { next }
    { n++; m[n] = $1; t[n] = $2 }
    END {
      for (i = 1; i <= n; i++) meas[i] = ((i - 1) % step == 0 || i == n)
      for (i = 1; i <= n; i++) {
        if (meas[i]) { print "M"; continue }
        for (a = i - 1; !meas[a]; a--) ;
        for (b = i + 1; !meas[b]; b++) ;
        x = (log(m[i]) - log(m[a])) / (log(m[b]) - log(m[a]))
        e = exp(log(t[a]) + x * (log(t[b]) - log(t[a]))) / t[i] - 1
        printf "%.6f\n", e < 0 ? -e : e
      }
    }' "$f" | sort -g | awk -v f="$f" '
    $1 == "M" { nm++; next }
    { e[++k] = $1; if ($1 > 0.10) big++ }
    END {
      med = k % 2 ? e[(k + 1) / 2] : (e[k / 2] + e[k / 2 + 1]) / 2
      printf "%s\t%d\t%d\t%d\t%.1f%%\t%.1f%%\t%d\n", f, nm + k, nm, k, 100 * med, 100 * e[k], big
    }'
done
