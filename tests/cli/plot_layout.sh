#!/bin/sh
# tests/cli/plot_layout.sh: the figures' layout, measured on their SVG renders (issue 29 item 3):
# no text leaves the canvas or runs into another, no legend entry lies over a plot area, no
# drawn line (curve, threshold, break-even, error bar) crosses a text, and the legend leaves
# the data most of the width (speedup, latency, per-layer figures).  gnuplot draws each script
# with the svg terminal and prints its plot areas (GPVAL_TERM_*) after every plot;
# tests/cli/svg_layout.awk estimates every text's box and checks.  Each figure must also say
# its GPU, TP, path, K x N and gather backend.  Skips (77) where gnuplot is missing.
. "$top_srcdir/tests/cli/lib.sh"
chk="$top_srcdir/tests/cli/svg_layout.awk"
h20="$TPSPLIT_DATADIR/h20_tp8_fused_wqa_wkv.tsv"

# the gnuplot tpsplit would run ($TPSPLIT_GNUPLOT, configure's, PATH)
"$TPSPLIT" plot --measured "$h20" --figures fitq --no-render --json -o "$tmp/probe" >"$tmp/probe.json" 2>/dev/null
gp=$(sed -n 's/.*"gnuplot": "\([^"]*\)".*/\1/p' "$tmp/probe.json")
[ -n "$gp" ] && [ -x "$gp" ] || { echo "SKIP: no gnuplot"; exit 77; }

# inject: after every complete plot command, print the plot area in px (y up)
cat >"$tmp/inject.awk" <<'AWK'
{ print }
/^plot( |$)/ { inplot = 1 }
inplot && !/\\$/ { print "print sprintf('AREA %.2f %.2f %.2f %.2f', GPVAL_TERM_XMIN, GPVAL_TERM_XMAX, GPVAL_TERM_YMIN, GPVAL_TERM_YMAX)"; inplot = 0 }
AWK

# check_dir DIR W H: every script of DIR drawn as SVG and checked
check_dir() {
  for s in "$1"/*.gp; do
    n=$(basename "$s" .gp)
    awk -f "$tmp/inject.awk" "$s" >"$1/$n.chk"
    (cd "$1" && "$gp" -d "$n.chk" 2>"$n.areas" >/dev/null) || { fail "$n: gnuplot failed: $(grep -v AREA "$1/$n.areas" | head -3)"; continue; }
    grep -v '^AREA' "$1/$n.areas" | grep -q . && { fail "$n: gnuplot warned: $(grep -v AREA "$1/$n.areas" | head -2)"; continue; }
    case $n in speedup*|latency*|layers*) frac=0.6 ;; *) frac=0 ;; esac
    if awk -f "$chk" -v W="$2" -v H="$3" -v min_area_frac=$frac "$1/$n.areas" "$s" "$1/$n.svg" >"$tmp/chk.out"; then ok
    else fail "layout of $n ($2x$3): $(cat "$tmp/chk.out")"; fi
  done
}

# the main job's figures, default size
expect_rc 0 "$TPSPLIT" plot --format svg --no-render -o "$tmp/m"
check_dir "$tmp/m" 1200 800
# one curve per TP on the H200, a narrower and shorter image
expect_rc 0 "$TPSPLIT" plot --measured "$h20" --gpus H200 --tp 2,4,8,16 --paths marlin-w8a16 --by tp --samples 50 \
  --figures speedup,latency --format svg --size 1000x700 --no-render -o "$tmp/t"
check_dir "$tmp/t" 1000 700
# a smaller crossover map (4 GPUs x 4 TP x 2 paths) and the per-layer figure at that size
expect_rc 0 "$TPSPLIT" plot --gpus H20,H100,H200,B200 --tp 2,4,8,16 --paths marlin-w8a16,dense-bf16 --samples 50 \
  --model deepseek-v4.1-flash --figures crossover,layers --format svg --size 1000x700 --no-render -o "$tmp/x"
check_dir "$tmp/x" 1000 700

# the checker is not vacuous: two overlapping texts, a legend entry over the data, a line
# through a text and a text off the canvas are each found
cat >"$tmp/bad.svg" <<'SVG'
	<g transform="translate(100.00,100.00)" stroke="none" fill="black" font-family="Sans" font-size="11.00"  text-anchor="start">
		<text>tokens per step T</text>
	</g>
	<g transform="translate(130.00,104.00)" stroke="none" fill="black" font-family="Sans" font-size="11.00"  text-anchor="start">
		<text>split, model</text>
	</g>
	<g transform="translate(300.00,300.00)" stroke="none" fill="black" font-family="Sans" font-size="11.00"  text-anchor="start">
		<text>H100-SXM: legend</text>
	</g>
	<path stroke='black'  d='M340.00,250.00 L340.00,350.00  '/>
	<g transform="translate(1190.00,500.00)" stroke="none" fill="black" font-family="Sans" font-size="11.00"  text-anchor="start">
		<text>cut at the edge</text>
	</g>
SVG
printf "plot x title 'H100-SXM: legend'\n" >"$tmp/bad.gp"
echo "AREA 250 700 100 700" >"$tmp/bad.areas"
awk -f "$chk" -v W=1200 -v H=800 -v min_area_frac=0.6 "$tmp/bad.areas" "$tmp/bad.gp" "$tmp/bad.svg" >"$tmp/bad.out" && fail "checker passed a bad layout"
for what in "overlap" "lies over plot area" "crosses the text 'H100-SXM: legend'" "leaves the canvas" "widest plot area"; do
  grep -q "$what" "$tmp/bad.out" && ok || fail "checker did not report '$what': $(cat "$tmp/bad.out")"
done

# each figure says its GPU, TP, path, K x N and gather backend (in its title block)
for f in speedup_tp8_marlin-w8a16 speedup_tp8_marlin-w8a16_vs_rule latency_H20_tp8_marlin-w8a16 \
         latency_H100-SXM_tp8_w8a16 fitq_H20_tp8_marlin-w8a16 crossover layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192; do
  s="$tmp/m/$f.gp"
  grep -q "K [0-9][0-9]* x N \([0-9][0-9]*\|of each projection\)" "$s" && ok || fail "$f: no K x N"
  grep -q "gather \(auto\|NCCL\|custom\)" "$s" && ok || fail "$f: no gather backend"
  case $f in crossover) ;; *) grep -q "TP[0-9]" "$s" && grep -q "marlin-w8a16\|w8a16" "$s" && ok || fail "$f: no TP or path" ;; esac
done
grep -q "H100-SXM, TP8, w8a16" "$tmp/m/latency_H100-SXM_tp8_w8a16.gp" && ok || fail "H100 w8a16 latency: no GPU in the title"
# the legend names the sources in words, not the terminal's [n]
grep "title '" "$tmp/m/speedup_tp8_marlin-w8a16.gp" | grep -q '\[[0-9][0-9]*\]' && fail "speedup legend holds [n] source numbers" || ok
grep -q "title 'H100-SXM: GEMM sibling''s" "$tmp/m/speedup_tp8_marlin-w8a16.gp" && ok || fail "speedup legend: H100 source not in words"
# the two speedup figures have different titles
t1=$(grep "set label 90 " "$tmp/m/speedup_tp8_marlin-w8a16.gp"); t2=$(grep "set label 90 " "$tmp/m/speedup_tp8_marlin-w8a16_vs_rule.gp")
[ -n "$t1" ] && [ "$t1" != "$t2" ] && ok || fail "speedup and vs_rule share a title"
# the H200 curve overlaps the H100's: drawn dashed over it
grep "index 2 using 1:8 with lines" "$tmp/m/speedup_tp8_marlin-w8a16.gp" | grep -q "dt 2" && ok || fail "H200 curve not dashed"
# latency figures: both model curves solid, the break-even marked
for f in "$tmp"/m/latency_*.gp; do
  grep "index 0 using 1:[25] with lines" "$f" | grep -q "dt [2-9]" && fail "$(basename "$f"): a dashed model curve" || ok
  grep -q "title 'break-even T = [0-9]" "$f" && ok || fail "$(basename "$f"): no break-even marked"
done
# crossover: a "never" cell keeps the lower end of its interval (H20 TP16 native-fp8)
awk -F'\t' '$4=="H20" && $3==16 && $9=="never" && $10 ~ /^[0-9]+\.\.never$/ {f=1} END {exit !f}' "$tmp/m/crossover.dat" &&
  ok || fail "crossover: a never cell without its lower bound"
finish
