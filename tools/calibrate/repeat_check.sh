#!/bin/bash
# repeat_check.sh DIR_A DIR_B: how far two runs of the same bench gemm tables (full_*.tsv of
# the same M) are apart: per table in both, the median and max of |time_B / time_A - 1| over
# the rows both measured, and the row of the max.  Exit 2 on a missing argument or directory.
[ $# -eq 2 ] && [ -d "$1" ] && [ -d "$2" ] || { echo "usage: repeat_check.sh DIR_A DIR_B" >&2; exit 2; }
printf 'table\trows\tmed_diff\tmax_diff\tat_row\n'
for a in "$1"/full_*.tsv; do
  b="$2/$(basename "$a")"
  [ -r "$b" ] || continue
  join -t"$(printf '\t')" <(grep -v '^#\|^rows' "$a" | cut -f1,2 | sort) <(grep -v '^#\|^rows' "$b" | cut -f1,2 | sort) |
    awk -F'\t' '{ e = $3 / $2 - 1; if (e < 0) e = -e; printf "%.6f %s\n", e, $1 }' | sort -g |
    awk -v t="$(basename "$a")" '{ e[NR] = $1; m[NR] = $2 }
      END { printf "%s\t%d\t%.1f%%\t%.1f%%\t%s\n", t, NR, 100 * (NR % 2 ? e[(NR + 1) / 2] : (e[NR / 2] + e[NR / 2 + 1]) / 2), 100 * e[NR], m[NR] }'
done
