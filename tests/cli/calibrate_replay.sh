#!/bin/sh
# tests/cli/calibrate_replay.sh: `tpsplit calibrate --replay` on the bundled tables: the H200
# calibrate runs' sweeps merged with their full benches (data/calibrate, data/h200_gemm_*)
# and AIConfigurator's dense tables (data/aic, N 1536 and 2048, bf16 and fp8).  Asserts:
# no table past the adaptive row cap or 90% of its budget share, at the default budget
# and at a budget that lets the cap bind; at the default budget the adaptive max error of
# each H200 table no worse than the fixed sweep's, at both budgets by at most 1 point;
# every adaptive row held out and the method chosen by the rule of model/calib/calib.h
# (re-evaluated here from the held-out errors); --no-heldout keeps the first-phase method
# and changes only the tables whose method the check switched.  It prints, and does not
# assert, the tables where the adaptive max is worse (data/calibrate/README.md, "offline
# replay").
. "$top_srcdir/tests/cli/lib.sh"
D=$top_srcdir/data
command -v jq >/dev/null 2>&1 || { echo "no jq"; exit 77; }
H=""
for s in 5120x1792 7168x2112; do
  for p in dense-bf16 native-fp8 w8a16; do
    x=$D/calibrate/full_${s}_$p.tsv+$D/calibrate/thresholds_h200_$s.json
    [ $s = 5120x1792 ] && x=$x+$D/h200_gemm_$p.tsv
    H="$H $x"
  done
done
A=""
for g in a100_sxm h100_sxm b200_sxm l40s rtx_pro_6000_server; do
  for d in bfloat16 fp8; do
    [ $g = a100_sxm ] && [ $d = fp8 ] && continue
    for n in 1536 2048; do A="$A $D/aic/gemm_${g}_k5120.tsv.gz:dtype=$d,n=$n"; done
  done
done
for b in 60 200; do
  expect_rc 0 "$TPSPLIT" calibrate --replay --budget-s $b --json $H $A
  cp "$tmp/out" "$tmp/r$b.json"
  n=$(jq '.tables | length' "$tmp/r$b.json")
  [ "$n" -eq 24 ] && ok || fail "budget $b: $n tables replayed, want 24"
  jq -e '.over_cap == 0 and .over_budget == 0' "$tmp/r$b.json" >/dev/null && ok || fail "budget $b: past the row cap or the budget"
  jq -e '[.tables[] | (.adaptive_rows | length) <= 16 and .clock_s <= 0.9 * .budget_share_s + 1e-9] | all' "$tmp/r$b.json" >/dev/null &&
    ok || fail "budget $b: a table past 16 rows or 90% of its share"
  jq -e '[.tables[] | .scored >= 8 and (.fixed.max_abs_rel | type) == "number"] | all' "$tmp/r$b.json" >/dev/null && ok ||
    fail "budget $b: a table scored on fewer than 8 rows"
  # the held-out check: every adaptive row, the rule (the other method when both its max and
  # its median are smaller by more than 1 point), the count of tables switched
  jq -e '[.tables[] | (.heldout.rows | length) == (.adaptive_rows | length)] | all' "$tmp/r$b.json" >/dev/null && ok ||
    fail "budget $b: an adaptive row not held out"
  jq -e '[.tables[] | .heldout as $h | $h.first_phase_method as $p | (if $p == "shaped" then "steffen" else "shaped" end) as $o |
      (if ($h.rows | length) > 0 and ($h.max_abs_rel[$o] | type) == "number" and ($h.max_abs_rel[$p] | type) == "number" and
          $h.max_abs_rel[$o] < $h.max_abs_rel[$p] - 0.01 and $h.median_abs_rel[$o] < $h.median_abs_rel[$p] - 0.01
       then $o else $p end) == $h.method] | all' "$tmp/r$b.json" >/dev/null && ok || fail "budget $b: a method not as the rule chooses"
  jq -e '.method_switched == ([.tables[] | select(.heldout.method != .heldout.first_phase_method)] | length)' "$tmp/r$b.json" \
    >/dev/null && ok || fail "budget $b: method_switched miscounted"
  jq -e '[.tables[0:6][] | .adaptive.max_abs_rel <= .fixed.max_abs_rel + 0.01] | all' "$tmp/r$b.json" >/dev/null && ok ||
    fail "budget $b: an H200 table's adaptive max worse than the fixed sweep's by more than 1 point"
  # --no-heldout: the first-phase method everywhere; the tables not switched unchanged
  expect_rc 0 "$TPSPLIT" calibrate --replay --no-heldout --budget-s $b --json $H $A
  cp "$tmp/out" "$tmp/n$b.json"
  jq -e '.method_switched == 0 and ([.tables[] | .heldout.method == .heldout.first_phase_method] | all)' "$tmp/n$b.json" \
    >/dev/null && ok || fail "budget $b: --no-heldout switched a method"
  jq -n -e --slurpfile a "$tmp/r$b.json" --slurpfile n "$tmp/n$b.json" '[range(0; 24) as $i | $a[0].tables[$i] as $x |
      $n[0].tables[$i] as $y | $x.heldout.method != $x.heldout.first_phase_method or
      $x.adaptive.max_abs_rel == $y.adaptive.max_abs_rel] | all' >/dev/null && ok ||
    fail "budget $b: a table the check did not switch differs from --no-heldout"
  jq -r '.tables[] | select(.adaptive.max_abs_rel > .fixed.max_abs_rel + 1e-12) |
    "note: budget '$b': adaptive max worse: \(.table) \(.fixed.max_abs_rel) -> \(.adaptive.max_abs_rel)"' "$tmp/r$b.json"
done
# the default budget adds rows (the cap binds at 200 s) and the H200 tables are no worse
jq -e '[.tables[] | (.adaptive_rows | length) > 0] | all' "$tmp/r60.json" >/dev/null && ok || fail "60 s: a table got no adaptive row"
jq -e '[.tables[] | (.adaptive_rows | length) == 16] | all' "$tmp/r200.json" >/dev/null && ok || fail "200 s: the cap did not bind"
jq -e '[.tables[0:6][] | .adaptive.max_abs_rel <= .fixed.max_abs_rel + 1e-12] | all' "$tmp/r60.json" >/dev/null && ok ||
  fail "an H200 table's adaptive max is worse than the fixed sweep's at 60 s"
# --adapt-rows 0: nothing added, the two fits the same
expect_rc 0 "$TPSPLIT" calibrate --replay --adapt-rows 0 --json $H
jq -e '[.tables[] | (.adaptive_rows | length) == 0 and .adaptive.max_abs_rel == .fixed.max_abs_rel] | all' "$tmp/out" >/dev/null &&
  ok || fail "--adapt-rows 0 added rows"
# bad input: mixed shapes, an AIConfigurator table merged
expect_rc 2 "$TPSPLIT" calibrate --replay "$D/calibrate/full_5120x1792_w8a16.tsv+$D/calibrate/full_7168x2112_w8a16.tsv"
expect_grep 'the other pieces are 5120x1792 w8a16' "$tmp/err"
expect_rc 2 "$TPSPLIT" calibrate --replay "$D/aic/gemm_h100_sxm_k5120.tsv.gz:dtype=fp8,n=2048+$D/h200_gemm_w8a16.tsv"
finish
