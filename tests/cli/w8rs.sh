#!/bin/sh
# tests/cli/w8rs.sh: the reduce-scatter fix-up of the 256-token stream-K form's even grids is priced by what
# data/h100_w8a16_s23.txt measured.  From its call 1's "==" blocks (each launch's config line names its tiles, chunks and
# grid; TPS_W8_SKRS=0|1 in the block's label), every launch whose grid cuts each tile into p >= 2 pieces: its time
# over the even-grid line (model/core/w8plan.c SKEVEN_CHUNK_US x chunks a block + SKEVEN_FIXED_US), and a
# least-squares line in p - 1 per fix-up.  The reduce-scatter's line is the dispatch's SKRS_FIX_US / SKRS_PIECE_US;
# both lines are what the data file, w8plan.c and doc/gemm-kernels.md say.
. "$top_srcdir/tests/cli/lib.sh"
data="$top_srcdir/data/h100_w8a16_s23.txt" plan="$top_srcdir/model/core/w8plan.c" doc="$top_srcdir/doc/gemm-kernels.md"
[ -r "$data" ] && ok || fail "missing $data"
c=$(sed -n 's/^#define SKEVEN_CHUNK_US \([0-9.]*\)$/\1/p' "$plan") f=$(sed -n 's/^#define SKEVEN_FIXED_US \([0-9.]*\)$/\1/p' "$plan")
[ -n "$c" ] && [ -n "$f" ] && ok || fail "no SKEVEN_CHUNK_US / SKEVEN_FIXED_US in $plan"
awk -v c="$c" -v f="$f" '
  /^# Call 2/ { exit } # the line is of call 1 (call 2: the tables, and the cp.async experiment against it)
  /^ *== / { rs = ($0 ~ /SKRS=1/) ? 1 : ($0 ~ /SKRS=0/ ? 0 : -1); next }
  /^ *# config M=/ { m = $3; sub(/^M=/, "", m); sub(/:$/, "", m); tiles[m] = 0
    if (match($0, /[0-9]+x[0-9]+ tiles x [0-9]+ chunks over a persistent grid of [0-9]+/)) {
      nf = split(substr($0, RSTART, RLENGTH), w, /[x ]+/); tiles[m] = w[1] * w[2]; ch[m] = w[4]; grid[m] = w[nf] }
    next }
  /^ *[0-9]+\t/ { split($0, v, "\t"); mm = v[1] + 0; t = v[2] + 0
    if (rs < 0 || !tiles[mm] || grid[mm] % tiles[mm]) next
    p = grid[mm] / tiles[mm]; if (p < 2) next
    y = t - (c * ch[mm] / p + f); x = p - 1
    n[rs]++; sx[rs] += x; sy[rs] += y; sxx[rs] += x * x; sxy[rs] += x * y }
  END { for (k = 1; k >= 0; k--) {
      d = n[k] * sxx[k] - sx[k] * sx[k]
      if (n[k] < 2 || d == 0) { printf "%d %d - -\n", k, n[k]; continue } # too few cut launches: said below
      b = (n[k] * sxy[k] - sx[k] * sy[k]) / d; a = (sy[k] - b * sx[k]) / n[k]
      printf "%d %d %.2f %.2f\n", k, n[k], a, b } }' "$data" >"$tmp/lines"
set -- $(sed -n 1p "$tmp/lines"); rsn=$2 rsa=$3 rsb=$4
set -- $(sed -n 2p "$tmp/lines"); own=$2 owa=$3 owb=$4
[ "${rsn:-0}" -ge 20 ] && [ "${own:-0}" -ge 10 ] && ok || fail "too few cut launches in $data: $(cat "$tmp/lines")"
for kv in "SKRS_FIX_US $rsa" "SKRS_PIECE_US $rsb"; do
  name=${kv% *} want=${kv#* }
  got=$(sed -n "s/^#define $name \([0-9.]*\)\$/\1/p" "$plan")
  awk -v a="$got" -v b="$want" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }' && ok || fail "$plan $name is '$got', $data gives $want"
done
# the reduce-scatter is cheaper than the owner's fix-up at every piece count the dispatch may cut (2..8)
awk -v a="$rsa" -v b="$rsb" -v c="$owa" -v d="$owb" 'BEGIN { for (p = 2; p <= 8; p++) if (a + b * (p - 1) >= c + d * (p - 1)) exit 1 }' && ok ||
  fail "the reduce-scatter ($rsa + $rsb) is not cheaper than the owner's fix-up ($owa + $owb) at every p"
for w in "reduce-scatter (SKRS=1) costs $rsa us + $rsb us a piece past the first ($rsn launches" \
  "the owner's fix-up (SKRS=0) $owa us + $owb us ($own launches)"; do
  tr '\n' ' ' <"$data" | sed 's/#  */ /g' | tr -s ' ' | grep -qF -- "$w" && ok || fail "$data does not say '$w'"
done
for w in "$rsa us + $rsb us a piece past the first" "$owa us + $owb us"; do
  tr '\n' ' ' <"$doc" | tr -d '*' | tr -s ' ' | grep -qF -- "$w" && ok || fail "$doc does not say '$w' (recomputed from $data)"
done
finish
