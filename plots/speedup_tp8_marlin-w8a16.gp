# speedup_tp8_marlin-w8a16.gp: speedup (replicated / split) vs tokens
# Written by tpsplit 0.1.0; redraw with `gnuplot -d speedup_tp8_marlin-w8a16.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'speedup_tp8_marlin-w8a16.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set label 90 'Speedup of the split by token over the replicated projection, one curve per GPU' at screen 0.5, screen 0.9775 center font 'Sans,12' front
set label 91 'TP8, marlin-w8a16, K 5120 x N 1792, gather auto (custom one-shot while <= 2 MiB per rank, NCCL above)' at screen 0.5, screen 0.9537 center font 'Sans,11' front
set xrange [1:16384]
set logscale x 2
set format x '%.0f'
set xtics 1, 2
set mxtics default
set xlabel 'tokens per step T'
set style fill transparent solid 0.15 noborder
set lmargin at screen 0.0824
set rmargin at screen 0.9792
set key at screen 0.0100, screen 0.1537 left top vertical Left reverse samplen 3 spacing 1.0 maxcols 1 maxrows 6 width -3 font 'Sans,11.0'
set arrow 1 from 29, graph 0 to 29, graph 1 nohead dt 3 lw 1.5 lc rgb '#E69F00' back
set arrow 2 from 48, graph 0 to 48, graph 1 nohead dt 3 lw 1.5 lc rgb '#009E73' back
set arrow 3 from 51, graph 0 to 51, graph 1 nohead dt 3 lw 1.5 lc rgb '#0072B2' back
set label 1 '29' at 29, graph 1 center offset 0,0.8 tc rgb '#E69F00' front
set label 2 '48' at 48, graph 1 center offset 0,0.8 tc rgb '#009E73' front
set label 3 '51' at 51, graph 1 center offset 0,1.9 tc rgb '#0072B2' front
set multiplot
# panel 1: the speedup
set tmargin at screen 0.8825
set bmargin at screen 0.3538
set format x ''
unset xlabel
set ylabel 'speedup of the split = replicated / split'
set yrange [0:6.387]
# speedup 1: the split neither wins nor loses
set arrow 100 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#000000' back
plot \
  'speedup_tp8_marlin-w8a16.dat' index 0 using 1:9:10 with filledcurves lc rgb '#E69F00' notitle, \
  'speedup_tp8_marlin-w8a16.dat' index 0 using 1:8 with lines lw 3.4 dt 1 lc rgb '#E69F00' title 'H20: GEMM measured, h20_tp8_fused_wqa_wkv.tsv + model beyond; gather measured, h20_tp8_fused_wqa_wkv.tsv', \
  'speedup_tp8_marlin-w8a16.dat' index 1 using 1:9:10 with filledcurves lc rgb '#0072B2' notitle, \
  'speedup_tp8_marlin-w8a16.dat' index 1 using 1:8 with lines lw 2.9 dt 1 lc rgb '#0072B2' title 'H100-SXM: GEMM sibling''s h20_tp8_fused_wqa_wkv.tsv, scaled; gather custom model from H20, NCCL measured, nccl_h100_sxm.tsv.gz', \
  'speedup_tp8_marlin-w8a16.dat' index 2 using 1:9:10 with filledcurves lc rgb '#009E73' notitle, \
  'speedup_tp8_marlin-w8a16.dat' index 2 using 1:8 with lines lw 2.4 dt 2 lc rgb '#009E73' title 'H200-SXM: GEMM sibling''s h20_tp8_fused_wqa_wkv.tsv, scaled; gather custom model from H20, NCCL measured, nccl_h200_sxm.tsv.gz', \
  'speedup_tp8_marlin-w8a16.dat' index 3 using 1:8 with points pt 7 ps 1.5 lc rgb '#E69F00' title 'H20 TP8 measured median (no min/max in the table)', \
  NaN with lines dt 3 lw 1.5 lc rgb '#555555' title 'recommended threshold: least predicted excess (value above the frame)', \
  NaN with points pt 13 ps 1.6 lc rgb '#555555' title 'break-even (marker) with its 90% interval (bar), lower panel'
# panel 2: the break-even of each curve (marker) and its 90% interval (bar), one row per curve
unset label
unset arrow
unset key
unset title
set tmargin at screen 0.3387
set bmargin at screen 0.2238
set format x '%.0f'
set xlabel 'tokens per step T'
set ylabel ''
set yrange [2.6:-0.6]
set ytics ('H20' 0, 'H100-SXM' 1, 'H200-SXM' 2) scale 0
set grid noytics
plot \
  'speedup_tp8_marlin-w8a16.dat' index 4 using 5:9:10:11 with xerrorbars pt 13 ps 1.6 lw 2 lc rgb '#E69F00', \
  '' index 4 using 13:9:12 with labels left offset 1,0 tc rgb '#E69F00', \
  'speedup_tp8_marlin-w8a16.dat' index 5 using 5:9:10:11 with xerrorbars pt 9 ps 1.6 lw 2 lc rgb '#0072B2', \
  '' index 5 using 14:9:12 with labels right offset -1,0 tc rgb '#0072B2', \
  'speedup_tp8_marlin-w8a16.dat' index 6 using 5:9:10:11 with xerrorbars pt 11 ps 1.6 lw 2 lc rgb '#009E73', \
  '' index 6 using 14:9:12 with labels right offset -1,0 tc rgb '#009E73'
unset multiplot
unset output
