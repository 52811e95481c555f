#!/bin/sh
# tests/cli/w8fixup.sh: doc/gemm-kernels.md's section "What the stream-K fix-up costs" says what
# data/h100_w8a16_s21.txt holds.  From the device's sweep of the 256-token stream-K form forced at
# K 5120 N 1792 (80 chunks a tile, 14 row blocks; TPS_W8_SKG = G blocks): the points where G divides the
# tiles (no fix-up) give a least-squares line, time = c x chunks of the busiest block + f; the points
# where the tiles divide G (each tile cut into G / tiles pieces) give the time over that line, its range
# per piece count and a line through those (a + b x (pieces - 1)); and the uneven case named there
# (G 132, 512 rows, 17 chunks); from call 2, the split kernel's 256-token tile forced at cluster split 1, 2, 4, 8
# (partials through the cluster's shared memory), each over the line of its own chunk cost.  Each number is
# recomputed here and looked for in the section; the line and the fix-up are also the constants the
# dispatch prices its even grids with (model/core/w8plan.c SKEVEN_*).
. "$top_srcdir/tests/cli/lib.sh"
doc="$top_srcdir/doc/gemm-kernels.md" data="$top_srcdir/data/h100_w8a16_s21.txt"
[ -r "$data" ] && ok || fail "missing $data"
awk '/^## What the stream-K fix-up costs/ { f = 1; next } f && /^## / { exit } f' "$doc" | tr '\n' ' ' | tr -s ' ' >"$tmp/sec"
[ -s "$tmp/sec" ] && ok || fail "doc/gemm-kernels.md has no section 'What the stream-K fix-up costs'"
awk '/^    == 5120x1792 w8a16 TPS_W8_KERNEL=sk TPS_W8_BT=256/ { g = $NF; sub(/.*=/, "", g); on = 1; next }
  /^    == / { on = 0; next }
  on && $1 ~ /^[0-9]+$/ { m = $1; t = $2; tiles = 14 * int((m + 255) / 256)
    if (tiles % g == 0) { x = tiles / g * 80; n++; sx += x; sy += t; sxx += x * x; sxy += x * t }
    else if (g % tiles == 0) { k++; cut[k] = g / tiles; tm[k] = t; tg[k] = g; tmm[k] = m }
    if (g == 132 && m == 512) u = t }
  END { c = (n * sxy - sx * sy) / (n * sxx - sx * sx); f = (sy - c * sx) / n
    printf "(%d points\n", n
    printf "%.3f us a chunk of the busiest block + %.2f us\n", c, f
    for (i = 1; i <= k; i++) { ch = 80 / cut[i]; if (ch > int(ch)) ch = int(ch) + 1
      y = tm[i] - c * ch - f; p = cut[i]; cnt[p]++; fx[tg[i], tmm[i]] = y
      if (!(p in lo) || y < lo[p]) lo[p] = y; if (!(p in hi) || y > hi[p]) hi[p] = y
      q = p - 1; nn++; qx += q; qy += y; qxx += q * q; qxy += q * y }
    for (p = 2; p <= 8; p++) if (p in lo)
      printf "%d pieces %s\n", p, sprintf("%.1f", lo[p]) == sprintf("%.1f", hi[p]) ? sprintf("%.1f", lo[p]) : sprintf("%.1f-%.1f", lo[p], hi[p])
    b = (nn * qxy - qx * qy) / (nn * qxx - qx * qx); a = (qy - b * qx) / nn
    printf "through the %d points\n", nn
    printf "%.2f us + %.2f us a piece past the first\n", a, b
    printf "at the same cuts %.1f, %.1f and %.1f us over its line\n", fx[56, 512], fx[112, 512], fx[112, 256]
    printf "%.2f us of line, %.2f over it\n", 17 * c + f, u - 17 * c - f }' "$data" >"$tmp/want"
# call 2: the split kernel's 256-token tile forced at cluster split S (K 5120), over the line of its own chunk
# cost (split 1 at 512 rows: 80 chunks over the same intercept); the workspace path at the same cuts
awk -v f="$(sed -n 2p "$tmp/want" | awk '{ print $NF == "us" ? $(NF - 1) : $NF }')" '
  /^    == 5120x1792 w8a16 TPS_W8_KERNEL=split TPS_W8_BT=256 TPS_W8_SPLIT=/ { s = $NF; sub(/.*=/, "", s); on = 1; next }
  /^    == / { on = 0; next }
  on && $1 ~ /^[0-9]+$/ { t[s, $1] = $2 }
  END { c = (t[1, 512] - f) / 80
    printf "%.2f us at 512 rows (80 chunks:\n%.3f us a chunk\n", t[1, 512], c
    printf "split 2 %.2f us at 512 rows (%.1f us over its line)\n", t[2, 512], t[2, 512] - 40 * c - f
    printf "split 4 %.2f (%.1f over)\n", t[4, 512], t[4, 512] - 20 * c - f
    printf "split 8 %.2f at 256 rows (%.1f over)\n", t[8, 256], t[8, 256] - 10 * c - f }' "$data" >>"$tmp/want"
[ "$(wc -l <"$tmp/want")" -ge 15 ] && ok || fail "the sweep in $data gave too few lines: $(cat "$tmp/want")"
while IFS= read -r w; do
  # the doc may bold a number or break a line inside the phrase: compare without '*'
  case "$(tr -d '*' <"$tmp/sec")" in *"$w"*) ok ;; *) fail "doc/gemm-kernels.md's fix-up section lacks '$w' (recomputed from $data)" ;; esac
done <"$tmp/want"
# the short form of the fix-up line in the README's limits and the status paragraph at the top of the doc
short=$(sed -n 's/^\(.*\) us + \(.*\) us a piece past the first$/\1 \2/p' "$tmp/want" | awk '{ printf "%.1f us + %.2f us a piece", $1, $2 }')
[ -n "$short" ] && ok || fail "no fix-up line recomputed"
for f in "$top_srcdir/README.md" "$doc"; do
  tr '\n' ' ' <"$f" | tr -s ' ' | grep -qF "$short" && ok || fail "$f does not say '$short' (recomputed from $data)"
done
# the dispatch prices its even grids by the same line and fix-up (model/core/w8plan.c SKEVEN_*): the four
# constants as recomputed here (chunk to 3 decimals, the others to 2)
line=$(sed -n 's/^\(.*\) us a chunk of the busiest block + \(.*\) us$/\1 \2/p' "$tmp/want")
fix=$(sed -n 's/^\(.*\) us + \(.*\) us a piece past the first$/\1 \2/p' "$tmp/want")
set -- $line $fix
for kv in "SKEVEN_CHUNK_US ${1:-?}" "SKEVEN_FIXED_US ${2:-?}" "SKEVEN_FIX_US ${3:-?}" "SKEVEN_PIECE_US ${4:-?}"; do
  name=${kv% *} want=${kv#* }
  got=$(sed -n "s/^#define $name \([0-9.]*\)\$/\1/p" "$top_srcdir/model/core/w8plan.c")
  awk -v a="$got" -v b="$want" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }' && ok ||
    fail "model/core/w8plan.c $name is '$got', the sweep of $data gives $want"
done
finish
