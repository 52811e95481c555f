#!/bin/sh
# tests/cli/loo_only.sh: `tpsplit fit --loo-gpu --json` (every part in one run: the break-even
# rows and the transfer accuracy; one run of the fits instead of one per part) and the
# all-gather asked for alone (--only gather, text and JSON).  The inspect and --hold-out checks
# and the whole table: tests/cli/loo.sh (two scripts so that `make -j2 check` runs the two
# halves at once).
. "$top_srcdir/tests/cli/lib.sh"

# JSON: every break-even row carries the excess of its predicted break-even, of the threshold
# written from the same prediction (excess_written) and of the measured break-even, the best
# single threshold (excess_best) and the hierarchy's (excess_hierarchy, _written) (jansson
# sorts the keys: "tp" ends a row).  A written threshold is never above the first point of the
# excess grid round(2^(i/8)) at or after its break-even (the break-even's 64-per-octave scan
# holds every point of that grid and from it on the prediction's own split wins there: a later
# threshold only adds excess); its verdicts add up to the text's count lines
# (on one thread: the golden text below was made on two, tests/data/golden/run.sh)
expect_rc 0 env TPSPLIT_THREADS=1 "$TPSPLIT" fit --loo-gpu --json
cp "$tmp/out" "$tmp/all.json"
awk -F'[:,]' 'function gup(b,   i, t) { for (i = 0; i <= 120; i++) { t = int(2 ^ (i / 8) + 0.5); if (t >= b) return t } return 1e9 }
     /"excess": \{/{s="e"} /"excess_hierarchy": \{/{s="h"} /"excess_measured": \{/{s="m"} /"excess_written": \{/{s="w"}
     /"excess_best": \{/{s="b"} /"excess_hierarchy_written": \{/{s="hw"}
     /"threshold":/{ v=$2; gsub(/ /,"",v); th[s]=v }
     /"mean":/{ v=$2; gsub(/ /,"",v); mn[s]=v } /"worst":/{ v=$2; gsub(/ /,"",v); wo[s]=v }
     /"predicted":/{ pr=$2; gsub(/ /,"",pr) }
     /"tp":/{ n++
       if (th["e"] != pr || (pr != "null" && th["w"] != "null" && th["w"] + 0 > gup(pr + 0))) { print "row " n ": " pr " " th["e"] " " th["w"]; bad++ }
       if (th["h"] != "null" && th["hw"] != "null" && th["hw"] + 0 > gup(th["h"] + 0)) { print "row " n ": hierarchy " th["h"] " written " th["hw"]; bad++ }
       met2[n <= 33 ? 0 : 1] += mn["hw"] != "null" && mn["hw"] + 0 <= 0.01 && wo["hw"] + 0 <= 0.10 }
     END { print met2[0] + 0, met2[1] + 0 > "/dev/stderr"; exit !(n == 54 && !bad) }' "$tmp/out" 2> "$tmp/met2" && ok || fail "breakeven JSON: excess thresholds (33 dense-bf16/native-fp8 rows, 21 fp8-block/nvfp4)"
read -r m2a m2b < "$tmp/met2"
# the fits run on worker threads (src/base/parallel.h) and must not depend on how many: every
# row's predicted break-even and the low end of its 90% interval (from the nested fits), one
# thread here against two in the golden text
awk -F'[:,]' '/"lo90":/ { v = $2; gsub(/ /, "", v); lo = v == "null" ? "-" : sprintf("%.0f", v) }
  /"predicted":/ { v = $2; gsub(/ /, "", v); pr = v == "null" ? "none" : sprintf("%.0f", v) }
  /"tp":/ { print pr, lo }' "$tmp/out" >"$tmp/be1"
awk '/^gpu +path +tp +measured +predicted/ { f = 1; next } f && /^#/ { f = 0 } f && NF > 5 { print $5, $7 }' \
  "$top_srcdir/tests/data/golden/expected/fit_loo_gpu" >"$tmp/be2"
[ "$(wc -l <"$tmp/be1")" -eq 54 ] && cmp -s "$tmp/be1" "$tmp/be2" && ok ||
  fail "fit --loo-gpu on 1 thread and on 2: break-evens or intervals differ: $(diff "$tmp/be1" "$tmp/be2" | head -4)"
# the text run's summary lines: the golden file's (tests/cli/loo.sh keeps it equal to the tool's
# output), not a second run of it (about 10 s on two cores, 18 s on one)
g="$top_srcdir/tests/data/golden/expected/fit_loo_gpu"
expect_grep "^# dense-bf16, native-fp8: with the written threshold .* instead of the break-even: $m2a of 33 " "$g"
expect_grep "^# fp8-block, nvfp4: with the written threshold .* instead of the break-even: $m2b of 21 " "$g"
expect_rc 0 "$TPSPLIT" fit --loo-gpu --only gather
cmp -s "$tmp/out" /dev/null && fail "--only gather printed nothing" || ok
cp "$tmp/out" "$tmp/gather"
# the printed all-gather median error and coverage, recomputed from the per-point JSON (the
# scored points: 8 GPUs, 64 KiB..64 MiB; covered: lo90 <= measured <= hi90); held-out
# predictions of the NVLink GPUs are not the measurements (no leakage: errors > 0)
expect_rc 0 "$TPSPLIT" fit --loo-gpu --only gather --json
cp "$tmp/out" "$tmp/gather.json"
for g in A100-SXM-80GB H100-SXM B200; do
  want=$(awk -v g="$g" '$1 == g {print $5, $9}' "$tmp/gather")
  # one line per scored point: |relative error| and 1 when lo90 <= measured <= hi90
  awk -v g="$g" -F'[:,]' '
    /"gpu":/ { gsub(/[ "]/, "", $2); cur = $2 }
    /"hi90_us":/ { hi = $2 + 0 } /"lo90_us":/ { lo = $2 + 0 }
    /"measured_us":/ { me = $2 + 0 } /"predicted_us":/ { pr = $2 + 0 }
    /"scored": true/ && cur == g { e = pr / me - 1; if (e < 0) e = -e; print e, (lo <= me && me <= hi) }
  ' "$tmp/gather.json" | sort -g > "$tmp/gpts"
  got=$(awk '{ e[NR] = $1; c += $2 } END { m = NR % 2 ? e[(NR + 1) / 2] : (e[NR / 2] + e[NR / 2 + 1]) / 2;
              printf "%.1f %.1f %d", 100 * m, 100 * c / NR, NR }' "$tmp/gpts")
  # printed with one decimal and a %: compare to 0.1; 22 scored points; errors above zero
  echo "$want $got" | awk '{ gsub(/%/, ""); d1 = $1 - $3; d2 = $2 - $4; if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2;
                             exit !(d1 <= 0.11 && d2 <= 0.11 && $3 > 0 && $5 == 22) }' && ok || fail "$g gather: printed '$want', from the points '$got'"
done

# --- transfer accuracy: its JSON, from the run above (its text: tests/cli/loo.sh, from the whole table)
expect_grep '"gather_nvlink_coverage90"' "$tmp/all.json"

finish
