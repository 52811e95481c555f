#!/bin/sh
# tests/cli/gpufacts.sh: a new GPU is ONE row of data/gpus.tsv (issue 26 item 5).  A made-up
# ACME-X1 row is added to a copy of the bundled data (TPSPLIT_DATADIR): the copy differs from
# data/ in gpus.tsv only; predict answers for it (a spec-only or transferred prediction: no part
# measured), finds it by its CUDA name too, and --thresholds-out keys it by the row's engine_key
# with the row's CUDA name as device_name.  A row without the name columns is keyed by its
# table name, with a note.  A fact marked uncertain makes predict name it and cover its break-evens at
# -10%/+10% (checked against rows with the fact moved).  A file without the optional columns (the four name columns, the
# clocks) still reads; bad name cells are refused with file and line (exit 2).
. "$top_srcdir/tests/cli/lib.sh"
command -v jq >/dev/null 2>&1 || { echo "no jq"; exit 77; }
D=$top_srcdir/data
cp -R "$D" "$tmp/d"
chmod -R u+w "$tmp/d"
# the row: name aliases sms cc bf16 fp8 hbm l2 link links link_gbps nccl_link_gbps base boost source
#          cuda_names engine_key plot_colour arch fp4_tflops (the header's order, checked below)
want_hdr='name	aliases	sms	cc	bf16_tflops	fp8_tflops	hbm_gbps	l2_mb	link	links	link_gbps	nccl_link_gbps	base_mhz	boost_mhz	source	cuda_names	engine_key	plot_colour	arch	fp4_tflops'
[ "$(grep '^name' "$D/gpus.tsv")" = "$want_hdr" ] && ok || fail "data/gpus.tsv header changed: update this test's row"
printf 'ACME-X1\tX1\t120\t9.0\t1200\t2400\t5000\t64\tNVLink4\t18\t450\t20.6\t0\t0\tmade up for tests/cli/gpufacts.sh\tACME X1 Turbo,ACME X1\tACME_X1_Turbo\t#123456\tsm90-hopper\t0\n' \
  >>"$tmp/d/gpus.tsv"
# exactly one file differs from the bundled data: gpus.tsv
changed=$(diff -rq "$D" "$tmp/d" | sed "s|$tmp/d|COPY|; s|$D|DATA|")
[ "$changed" = "Files DATA/gpus.tsv and COPY/gpus.tsv differ" ] && ok || fail "files changed: $changed"
export TPSPLIT_DATADIR="$tmp/d"
expect_rc 0 "$TPSPLIT" predict --gpu ACME-X1 --tp 8 --path dense-bf16 --thresholds-out "$tmp/thr.json"
expect_grep '^# ACME-X1 TP8 dense-bf16' "$tmp/out"
expect_grep '^break-even: ' "$tmp/out"
jq -e '.devices | keys == ["ACME_X1_Turbo"]' "$tmp/thr.json" >/dev/null && ok || fail "keys: $(jq -c '.devices | keys' "$tmp/thr.json")"
jq -e '.devices.ACME_X1_Turbo | .device_name == "ACME X1 Turbo" and .gpu_spec == "ACME-X1" and .sm_count == 120' "$tmp/thr.json" \
  >/dev/null && ok || fail "device: $(jq -c '.devices.ACME_X1_Turbo | {device_name, gpu_spec, sm_count}' "$tmp/thr.json")"
jq -e '.devices.ACME_X1_Turbo.thresholds["5120x1792"]["dense-bf16"]["8"].auto.breakeven_tokens | type == "number" or . == null' \
  "$tmp/thr.json" >/dev/null && ok || fail "no TP8 entry"
# found by a CUDA name of the row, the same answer
cp "$tmp/out" "$tmp/by_name"
expect_rc 0 "$TPSPLIT" predict --gpu "ACME X1" --tp 8 --path dense-bf16
cmp -s "$tmp/out" "$tmp/by_name" && ok || fail "--gpu 'ACME X1' answers differently from --gpu ACME-X1"
# decide reads the file back under the row's key (exit 0 split, 1 no split: either is an answer)
"$TPSPLIT" decide --thresholds "$tmp/thr.json" --gpu ACME-X1 --tp 8 --path dense-bf16 --tokens 3000 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -le 1 ] && ok || fail "decide exited $rc: $(head -c 300 "$tmp/err")"
expect_grep 'token_threshold .*ACME_X1_Turbo predicted' "$tmp/out"
# a row without the name columns ('-'): keyed by its name, and a note says so
printf 'ACME-X2\t\t120\t9.0\t1200\t2400\t5000\t64\tNVLink4\t18\t450\t20.6\t0\t0\tmade up\t-\t-\t-\t-\t0\n' >>"$tmp/d/gpus.tsv"
expect_rc 0 "$TPSPLIT" predict --gpu ACME-X2 --tp 8 --path dense-bf16 --thresholds-out "$tmp/thr2.json"
jq -e '(.devices | keys == ["ACME-X2"]) and (.notes | map(test("ACME-X2: no cuda_names or engine_key")) | any)' "$tmp/thr2.json" \
  >/dev/null && ok || fail "unkeyed row: $(jq -c '{k: (.devices | keys), notes}' "$tmp/thr2.json")"
# an uncertain fact ('?'): predict names it, its break-evens at -10% / +10% are those of rows
# with the peaks at 1080/2160 and 1320/2640 TFLOPS (computed apart here; they differ, so the
# fact matters), and the interval covers them
for v in '1200?	2400' '1080	2160' '1320	2640'; do
  printf 'ACME-X4\t\t120\t9.0\t%s\t5000\t64\tNVLink4\t18\t450\t20.6\t0\t0\tmade up\t-\t-\t-\t-\t0\n' "$v" >"$tmp/row"
  cat "$D/gpus.tsv" "$tmp/row" >"$tmp/u.tsv"
  expect_rc 0 "$TPSPLIT" predict --gpus-file "$tmp/u.tsv" --gpu ACME-X4 --tp 8 --path dense-bf16 --json
  cp "$tmp/out" "$tmp/u_${v%%	*}.json"
done
u="$tmp/u_1200?.json"
jq -e '.uncertain_facts | length == 1 and .[0].fact == "peak_tflops" and (.[0].value | startswith("1200/2400?"))' "$u" >/dev/null &&
  ok || fail "uncertain facts: $(jq -c .uncertain_facts "$u")"
[ "$(jq -r .breakeven_tokens "$tmp/u_1080.json")" != "$(jq -r .breakeven_tokens "$tmp/u_1320.json")" ] && ok ||
  fail "the peak does not move the break-even: the test shows nothing"
for v in 1080 1320; do
  k=$([ $v = 1080 ] && echo minus10 || echo plus10)
  [ "$(jq -r .breakeven_tokens "$tmp/u_$v.json")" = "$(jq -r --arg k "$k" '.uncertain_facts[0]["breakeven_" + $k]' "$u")" ] && ok ||
    fail "peak $v: break-even $(jq -r .breakeven_tokens "$tmp/u_$v.json"), predict's $k $(jq -r --arg k "$k" '.uncertain_facts[0]["breakeven_" + $k]' "$u")"
  jq -e --slurpfile u "$u" '.breakeven_tokens as $b | $u[0] | ($b == null and .breakeven_hi == null) or
      ($b != null and .breakeven_lo <= $b and (.breakeven_hi == null or .breakeven_hi >= $b))' "$tmp/u_$v.json" >/dev/null && ok ||
    fail "peak $v: the interval does not cover its break-even"
  jq -e 'has("uncertain_facts") | not' "$tmp/u_$v.json" >/dev/null && ok || fail "peak $v: uncertain facts where none"
done
printf 'ACME-X4\t\t120\t9.0\t1200?\t2400\t5000\t64\tNVLink4\t18\t450\t20.6\t0\t0\tmade up\t-\t-\t-\t-\t0\n' | cat "$D/gpus.tsv" - >"$tmp/u2.tsv"
expect_rc 0 "$TPSPLIT" predict --gpus-file "$tmp/u2.tsv" --gpu ACME-X4 --tp 8 --path dense-bf16
expect_grep '^uncertain facts of ACME-X4 in the GPU table: peak_tflops 1200/2400\? \(bf16/fp8\) \(break-even [0-9]+/[0-9]+ at -10%/\+10%\); the interval covers' "$tmp/out"
# a file without the optional columns reads, and answers as the full one
cut -f1-12,15 "$D/gpus.tsv" >"$tmp/old.tsv"
expect_rc 0 "$TPSPLIT" predict --gpus-file "$tmp/old.tsv" --gpu H200 --tp 8 --path dense-bf16
cp "$tmp/out" "$tmp/old_out"
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path dense-bf16
cmp -s "$tmp/out" "$tmp/old_out" && ok || fail "the file without the optional columns answers differently"
# bad cells: file and line, exit 2, nothing written
n=$(grep -c '' "$D/gpus.tsv")
for bad in "plot_colour:red:is not #RRGGBB" "engine_key:ACME X:has a blank" "arch:sm 90:has a blank" \
           "engine_key:ACME_X9:is not the CUDA name 'ACME X3' with blanks as '_'" "cuda_names:,ACME:has an empty name" "cuda_names:NVIDIA H200:already names another GPU"; do
  col=${bad%%:*}; rest=${bad#*:}; val=${rest%%:*}; why=${rest#*:}
  cp "$D/gpus.tsv" "$tmp/bad.tsv"
  printf 'ACME-X3\t\t120\t9.0\t1200\t2400\t5000\t64\tNVLink4\t18\t450\t20.6\t0\t0\tmade up\tACME X3\tACME_X3\t#123456\tsm90-hopper\t0\n' |
    awk -F'\t' -v OFS='\t' -v col="$col" -v val="$val" -v hdr="$want_hdr" \
      'BEGIN {split(hdr, h, "\t"); for (i in h) if (h[i] == col) c = i} {$c = val; print}' >>"$tmp/bad.tsv"
  rm -f "$tmp/thr3.json"
  expect_rc 2 "$TPSPLIT" predict --gpus-file "$tmp/bad.tsv" --gpu H200 --tp 8 --path dense-bf16 --thresholds-out "$tmp/thr3.json"
  expect_grep "^tpsplit [a-z][a-z -]*: $tmp/bad.tsv:$((n + 1)): .*$why" "$tmp/err"
  [ ! -e "$tmp/thr3.json" ] && ok || fail "$col '$val': a thresholds file was written"
done
finish
