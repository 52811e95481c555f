#!/bin/sh
# tests/cli/plot.sh: `tpsplit plot` end to end: files written, PNG size read from the IHDR bytes,
# scripts deterministic, .dat arithmetic checked with awk, behaviour without gnuplot
# (TPSPLIT_GNUPLOT=/nonexistent), usage errors.  The PNG checks run where gnuplot is installed.
. "$top_srcdir/tests/cli/lib.sh"

h20="$TPSPLIT_DATADIR/h20_tp8_fused_wqa_wkv.tsv"
args="--measured $h20 --gpus H20,H200 --tp 8 --paths marlin-w8a16 --samples 50 --size 800x600"

# png_wh FILE: "W H" from the IHDR chunk (bytes 16..23, big-endian)
png_wh() {
  od -An -tu1 -j16 -N8 "$1" | awk '{print (($1*256+$2)*256+$3)*256+$4, (($5*256+$6)*256+$7)*256+$8}'
}

# is there a gnuplot, by tpsplit's own lookup ($TPSPLIT_GNUPLOT, configure's, PATH)?
have_gp=0
"$TPSPLIT" plot --measured "$h20" --figures fitq --no-render --json -o "$tmp/probe" >"$tmp/probe.json" 2>/dev/null
grep -q '"gnuplot": "' "$tmp/probe.json" && have_gp=1

expect_rc 0 "$TPSPLIT" plot --help
expect_grep '^Usage: tpsplit plot' "$tmp/out"

# --- one run, listed as JSON
expect_rc 0 "$TPSPLIT" plot $args -o "$tmp/a" --json
cp "$tmp/out" "$tmp/a.json"
expect_grep '"files"' "$tmp/a.json"
for f in latency_H20_tp8_marlin-w8a16 latency_H200-SXM_tp8_marlin-w8a16 speedup_tp8_marlin-w8a16 \
         fitq_H20_tp8_marlin-w8a16 crossover; do
  if [ -s "$tmp/a/$f.dat" ] && [ -s "$tmp/a/$f.gp" ]; then ok; else fail "$f.dat/.gp missing"; fi
  expect_grep "$f.gp" "$tmp/a.json"
  if [ $have_gp -eq 1 ]; then
    png="$tmp/a/$f.png"
    if [ -s "$png" ]; then ok; else fail "$png missing or empty"; continue; fi
    # PNG signature 137 80 78 71, then width x height as requested
    sig=$(od -An -tu1 -N4 "$png" | tr -s ' ' | sed 's/^ //')
    [ "$sig" = "137 80 78 71" ] && ok || fail "$png: not a PNG ($sig)"
    wh=$(png_wh "$png")
    [ "$wh" = "800 600" ] && ok || fail "$png is $wh, want 800 600"
    expect_grep "$f.png" "$tmp/a.json"
  fi
done
# provenance in the .dat, none in the .gp
expect_grep '^# tpsplit [0-9.]+: ' "$tmp/a/speedup_tp8_marlin-w8a16.dat"
expect_grep '^# command: tpsplit plot --measured' "$tmp/a/speedup_tp8_marlin-w8a16.dat"
expect_grep "^# inputs: .*h20_tp8_fused_wqa_wkv.tsv" "$tmp/a/speedup_tp8_marlin-w8a16.dat"
expect_nogrep "$tmp" "$tmp/a/speedup_tp8_marlin-w8a16.gp"
expect_grep "set output 'speedup_tp8_marlin-w8a16.png'" "$tmp/a/speedup_tp8_marlin-w8a16.gp"
expect_grep "pngcairo size 800,600 noenhanced" "$tmp/a/speedup_tp8_marlin-w8a16.gp"

# --- .dat arithmetic (awk, block 0 of the H200 latency figure): speedup = replicated / split,
# band around the value, tokens increasing; the measured block of the H20 figure holds the
# bundled rows unchanged (6 tokens: 14.1 and 23.2 us; 16384: 3570.8 and 635.4 us)
awk -F'\t' '/^# block 1/{exit} /^#/||/^tokens/||NF<11{next}
  { n++; s=$2/$5; d=$8-s; if (d<0) d=-d; if (d>1e-8*s) bad++
    if ($3!="nan" && ($3>$2*1.000001 || $4<$2*0.999999)) band++
    if ($1<=prev) order++; prev=$1 }
  END { if (n<300||bad||band||order) { print n, bad, band, order; exit 1 } }' \
  "$tmp/a/latency_H200-SXM_tp8_marlin-w8a16.dat" && ok || fail "latency .dat arithmetic (rows bad band order)"
awk -F'\t' '/^# block 1/{b=1;next} b&&$1==6{a=($2==14.1&&$5==23.2)} b&&$1==16384{c=($2==3570.8&&$5==635.4)}
  END{exit !(a&&c)}' "$tmp/a/latency_H20_tp8_marlin-w8a16.dat" && ok || fail "measured block differs from the table"
# the H20 break-even in the speedup figure lies in (24, 48] like the measurement
be=$(awk -F'\t' '/^# block/{b=$0} b~/break-even of curve 0/ && $1=="0"{print $5}' "$tmp/a/speedup_tp8_marlin-w8a16.dat")
if [ -n "$be" ] && awk -v b="$be" 'BEGIN{exit !(b>24 && b<=48)}'; then ok; else fail "H20 break-even '$be' not in (24, 48]"; fi

# --- deterministic: a second run writes identical scripts and data (but for the command line)
expect_rc 0 "$TPSPLIT" plot $args -o "$tmp/b"
for gp in "$tmp"/a/*.gp; do
  n=$(basename "$gp")
  cmp -s "$gp" "$tmp/b/$n" && ok || fail "$n differs between two runs"
  d=${n%.gp}.dat
  grep -v '^# command:' "$tmp/a/$d" >"$tmp/d1"; grep -v '^# command:' "$tmp/b/$d" >"$tmp/d2"
  cmp -s "$tmp/d1" "$tmp/d2" && ok || fail "$d differs between two runs"
done

# --- a saved fit draws the same numbers as the measurement it came from
"$TPSPLIT" fit "$h20" --loo -o "$tmp/h20.fit" >/dev/null 2>&1 && ok || fail "tpsplit fit -o failed"
expect_rc 0 "$TPSPLIT" plot --fit "$tmp/h20.fit" --gpus H20,H200 --tp 8 --paths marlin-w8a16 --samples 50 --no-render -o "$tmp/f"
for d in "$tmp"/f/*.dat; do
  n=$(basename "$d")
  grep -v '^# \(command\|inputs\|block [0-9]*: measured\)' "$d" >"$tmp/d1"
  grep -v '^# \(command\|inputs\|block [0-9]*: measured\)' "$tmp/b/$n" >"$tmp/d2"
  cmp -s "$tmp/d1" "$tmp/d2" && ok || fail "$n from --fit differs from --measured"
done

# --- without gnuplot: a clear line on stderr, .dat/.gp written, no image, exit 0
TPSPLIT_GNUPLOT=/nonexistent expect_rc 0 "$TPSPLIT" plot $args -o "$tmp/c"
expect_grep "gnuplot not found.*/nonexistent.*wrote .dat and .gp files only" "$tmp/err"
[ "$(grep -c 'gnuplot not found' "$tmp/err")" -eq 1 ] && ok || fail "the gnuplot message is not one line"
[ -s "$tmp/c/speedup_tp8_marlin-w8a16.gp" ] && [ -s "$tmp/c/speedup_tp8_marlin-w8a16.dat" ] && ok || fail "no .gp/.dat without gnuplot"
ls "$tmp/c" | grep -q '\.png$' && fail "images without gnuplot" || ok
cmp -s "$tmp/a/speedup_tp8_marlin-w8a16.gp" "$tmp/c/speedup_tp8_marlin-w8a16.gp" && ok || fail ".gp depends on gnuplot's presence"

# --- gnuplot failing on a script: exit 1, the message names the script, no image left
if [ -x /bin/false ]; then
  TPSPLIT_GNUPLOT=/bin/false expect_rc 1 "$TPSPLIT" plot --measured "$h20" --figures fitq -o "$tmp/g"
  expect_grep "fitq_H20_tp8_marlin-w8a16.gp: gnuplot \(/bin/false\) failed with exit status 1" "$tmp/err"
  [ -e "$tmp/g/fitq_H20_tp8_marlin-w8a16.png" ] && fail "image left after gnuplot failed" || ok
fi

# --- SVG and PDF on request
if [ $have_gp -eq 1 ]; then
  expect_rc 0 "$TPSPLIT" plot $args --figures speedup --format svg -o "$tmp/s"
  expect_grep '<svg' "$tmp/s/speedup_tp8_marlin-w8a16.svg"
  expect_grep 'width="800"' "$tmp/s/speedup_tp8_marlin-w8a16.svg"
  expect_rc 0 "$TPSPLIT" plot $args --figures speedup --format pdf -o "$tmp/p"
  head -c 5 "$tmp/p/speedup_tp8_marlin-w8a16.pdf" | grep -q '%PDF-' && ok || fail "not a PDF"
fi

# --- the main job's figures (no inputs), scripts only
expect_rc 0 "$TPSPLIT" plot --no-render -o "$tmp/d"
for f in speedup_tp8_marlin-w8a16 speedup_tp8_marlin-w8a16_vs_rule crossover latency_H100-SXM_tp8_marlin-w8a16 \
         fitq_H20_tp8_marlin-w8a16 layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192; do
  [ -s "$tmp/d/$f.gp" ] && ok || fail "default figure $f.gp missing"
done
expect_grep "written to $tmp/d\$" "$tmp/out"
# the per-layer figure: the kinds' totals (count x one layer) add up to the model's totals
# over all layers, which equal the sum of the per-layer rows and what `tpsplit simulate`
# reports for the same chunk (a separate path through model/sim/sim.c)
ly="$tmp/d/layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat"
awk -F'\t' '/^# block/{split($0, w, " "); b=w[3]+0; next} /^#/||NF<2||$1=="kind"||$1=="layers"||$1=="layer"||$1=="bar"{next}
  b==0 { km+=$5; ks+=$6; kn+=$2; if ($5!=$2*$3 && ($5-$2*$3)^2 > 1e-12*$5*$5) bad++ }
  b==1 { tm=$2; ts=$3; tn=$1 }
  b>=2 && NF==6 { if ($1==1 && $4>seg1) seg1=$4; if ($1==0 && $4>seg0) seg0=$4 }
  NF==4 && $1 ~ /^[0-9]+$/ && b>=2 { lm+=$2; ls+=$3; ln++ }
  function near(a, c) { d=a-c; if (d<0) d=-d; return d <= 1e-6*c }
  END { if (bad || kn!=40 || tn!=40 || ln!=40 || !near(km,tm) || !near(ks,ts) || !near(lm,tm) || !near(ls,ts) ||
            !near(seg1*1000,tm) || !near(seg0*1000,ts)) { print bad, kn, tn, ln, km, tm, ks, ts, lm, ls, seg1, seg0; exit 1 }
        printf "%.6f %.6f\n", tm, ts }' "$ly" >"$tmp/ly.tot" && ok || fail "per-layer kinds/segments/layers do not add up to the totals: $(cat "$tmp/ly.tot")"
expect_rc 0 "$TPSPLIT" simulate --model deepseek-v4.1-flash --gpu H200 --tp 8 --chunk 8192 --prompt 8192 --json
sm=$(tr ',' '\n' <"$tmp/out" | grep -m1 '"main_us"' | sed 's/.*: *//')
ss=$(tr ',' '\n' <"$tmp/out" | grep -m1 '"split_us"' | sed 's/.*: *//')
awk -v m="$sm" -v s="$ss" '{ d1=$1-m; d2=$2-s; if (d1<0) d1=-d1; if (d2<0) d2=-d2; exit !(m>0 && d1<=1e-6*m && d2<=1e-6*s) }' "$tmp/ly.tot" &&
  ok || fail "per-layer totals $(cat "$tmp/ly.tot") differ from simulate's chunk ($sm, $ss)"
# one chart: two stacked bars, a segment plot per layer kind (4 kinds), no bar per layer
gp="$tmp/d/layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.gp"
[ "$(grep -c 'with boxxyerror' "$gp")" -eq 4 ] && ok || fail "per-layer chart: want one boxxyerror per layer kind (4)"
expect_nogrep 'with boxes' "$gp"
# the speedup figures: the break-even intervals are drawn in the second panel, whose top is
# under the bottom of the speedup panel; nothing in panel 1 is placed at a data y below 1
for f in speedup_tp8_marlin-w8a16 speedup_tp8_marlin-w8a16_vs_rule; do
  awk '/^# panel 1/{p=1} /^# panel 2/{p=2}
    p==1 && /^set bmargin at screen/{b1=$5} p==2 && /^set tmargin at screen/{t2=$5}
    p==1 && /xerrorbars/{bad++} p==2 && /xerrorbars/{n2++}
    p==1 && /^set (label|arrow)/ && /first 0\.[0-9]/{bad++}
    END{exit !(p==2 && b1>0 && t2>0 && t2<b1 && n2>=2 && !bad)}' "$tmp/d/$f.gp" &&
    ok || fail "$f.gp: break-even marks not in a panel of their own below the speedup axis"
done
# measured tables with min/max columns are drawn with min..max bars: the H100 table of our W8A16
# kernels on the H100 w8a16 latency figure (its medians and bars are the table's rows unchanged)
lat="$tmp/d/latency_H100-SXM_tp8_w8a16"
[ -s "$lat.gp" ] && ok || fail "no H100 w8a16 latency figure"
expect_grep "index 1 using 1:2:3:4 with yerrorbars .*min\.\.max" "$lat.gp"
awk -F'\t' 'FNR==NR { if ($1 ~ /^[0-9]+$/) { a[$1]=$2; lo[$1]=$3; hi[$1]=$4 } next }
  /^# block 1/{b=1; next} b && $1 ~ /^[0-9]+$/ { n++; if ($2!=a[$1] || $3!=lo[$1] || $4!=hi[$1] || !($3<=$2 && $2<=$4)) bad++ }
  END { exit !(n>=15 && !bad) }' "$TPSPLIT_DATADIR/h100_w8a16_grid_5120x1792_w8a16.tsv" "$lat.dat" &&
  ok || fail "H100 w8a16 measured block differs from data/h100_w8a16_grid_5120x1792_w8a16.tsv"
# a table without min/max (the H20 split table) is drawn as points and says so
expect_grep "with points .*no min/max in the table" "$tmp/d/latency_H20_tp8_marlin-w8a16.gp"
expect_nogrep "yerrorbars" "$tmp/d/latency_H20_tp8_marlin-w8a16.gp"
# the rule's curve (block 2) is the pessimistic scaling's break-even, printed by the main job too
rule=$(awk -F'\t' '/^# block/{b=$0} b~/break-even of curve 2/ && $1=="2"{print $5}' "$tmp/d/speedup_tp8_marlin-w8a16_vs_rule.dat")
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path marlin-w8a16 --scaling pessimistic
expect_grep "^break-even: $rule tokens" "$tmp/out"
# crossover map: every bundled GPU (the rows of data/gpus.tsv) x TP 2, 4, 8, 16 x the
# predictable paths (those with TPS_PATH_F_MODEL in model/core/paths/*.c)
ngpu=$(awk -F'\t' '/^#/ || $1 == "name" || NF < 2 { next } { n++ } END { print n + 0 }' "$TPSPLIT_DATADIR/gpus.tsv")
npath=$(awk '/^const tps_path tps_path_/ { m = 0 } /\.flags = .*TPS_PATH_F_MODEL/ { m = 1 } /^};/ { n += m; m = 0 }
  END { print n + 0 }' $(path_files))
want=$((ngpu * 4 * npath))
n=$(awk -F'\t' '/^#/||/^col/||NF<10{next}{n++}END{print n+0}' "$tmp/d/crossover.dat")
[ "$npath" -ge 4 ] && [ "$n" -eq "$want" ] && ok || fail "crossover cells: $n, want $want ($ngpu GPUs x 4 TP x $npath paths)"

# --- usage and input errors: exit 2, one line, nothing written
expect_rc 2 "$TPSPLIT" plot $args --format jpg -o "$tmp/e"
expect_grep "bad --format 'jpg'" "$tmp/err"
expect_rc 2 "$TPSPLIT" plot $args --size 10x10 -o "$tmp/e"
expect_rc 2 "$TPSPLIT" plot --measured "$tmp/missing.tsv" -o "$tmp/e"
expect_grep "^tpsplit [a-z][a-z -]*: .*missing.tsv" "$tmp/err"
expect_rc 2 "$TPSPLIT" plot --measured "$h20" --gpus NoSuchGPU -o "$tmp/e"
expect_grep "unknown GPU 'NoSuchGPU'" "$tmp/err"
expect_rc 2 "$TPSPLIT" plot --measured "$h20" --tp 100 -o "$tmp/e"
expect_grep "bad --tp '100'" "$tmp/err"
expect_rc 2 "$TPSPLIT" plot --measured "$h20" --paths no-such-path -o "$tmp/e"
expect_rc 2 "$TPSPLIT" plot --gpus H100 -o "$tmp/e"
# a figure list none of which applies (one measured GPU and TP has no crossover map) is refused
expect_rc 2 "$TPSPLIT" plot --measured "$h20" --figures crossover -o "$tmp/e"
expect_grep "^tpsplit plot: none of the figures asked for applies to these inputs: nothing written" "$tmp/err"
[ -e "$tmp/e" ] && fail "output written after usage errors" || ok
finish
