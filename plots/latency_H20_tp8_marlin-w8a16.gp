# latency_H20_tp8_marlin-w8a16.gp: latency vs tokens, replicated and split
# Written by tpsplit 0.1.0; redraw with `gnuplot -d latency_H20_tp8_marlin-w8a16.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'latency_H20_tp8_marlin-w8a16.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set label 90 'Latency of the projection, replicated on every rank vs split by token' at screen 0.5, screen 0.9775 center font 'Sans,12' front
set label 91 'H20, TP8, marlin-w8a16, K 5120 x N 1792, gather auto (custom one-shot while <= 2 MiB per rank, NCCL above)' at screen 0.5, screen 0.9537 center font 'Sans,11' front
set logscale x 2
set format x '%.0f'
set xtics 1, 2
set mxtics default
set xlabel 'tokens per step T'
set logscale y 10
set ylabel 'latency (us)'
set format y '%g'
set autoscale yfix
set offsets 0, 0, graph 0.04, graph 0.04  # the data range, not the next decades
set style fill transparent solid 0.18 noborder
set label 80 'sources: GEMM measured, h20_tp8_fused_wqa_wkv.tsv + model beyond; gather measured, h20_tp8_fused_wqa_wkv.tsv' at screen 0.0100, screen 0.0150 left font 'Sans,10' tc rgb '#444444' front
set lmargin at screen 0.0650
set rmargin at screen 0.9792
set xrange [1:16384]
set label 1 '29' at 29, graph 1 center offset 0,0.8 tc rgb '#E69F00' front
set label 2 '4681' at 4681, graph 1 center offset 0,0.8 tc rgb '#555555' front
set tmargin at screen 0.9062
set bmargin at screen 0.2963
set key at screen 0.0100, screen 0.2263 left top vertical Left reverse samplen 3 spacing 1.0 maxcols 1 maxrows 8 width -2 font 'Sans,11.0'
# the break-even (line) and its 90% interval (shaded)
set object 1 rect from 28, graph 0 to 31, graph 1 fc rgb '#E69F00' fs transparent solid 0.10 noborder behind
set arrow 3 from 29, graph 0 to 29, graph 1 nohead dt 1 lw 1.5 lc rgb '#E69F00' back
# the gather backend changes here
set arrow 1 from 4681, graph 0 to 4681, graph 1 nohead dt 3 lw 1.5 lc rgb '#555555' back
plot \
  'latency_H20_tp8_marlin-w8a16.dat' index 0 using 1:3:4 with filledcurves lc rgb '#888888' title 'replicated, 90% band', \
  'latency_H20_tp8_marlin-w8a16.dat' index 0 using 1:6:7 with filledcurves lc rgb '#E69F00' title 'split, 90% band', \
  'latency_H20_tp8_marlin-w8a16.dat' index 0 using 1:2 with lines lw 2 lc rgb '#444444' title 'replicated = GEMM(T), model', \
  'latency_H20_tp8_marlin-w8a16.dat' index 0 using 1:5 with lines lw 2.5 lc rgb '#E69F00' title 'split = GEMM(ceil(T/8)) + all-gather, model', \
  'latency_H20_tp8_marlin-w8a16.dat' index 1 using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '#222222' title 'replicated, measured median (no min/max in the table)', \
  'latency_H20_tp8_marlin-w8a16.dat' index 1 using 1:5 with points pt 5 ps 1.4 lc rgb '#E69F00' title 'split, measured median (no min/max in the table)', \
  NaN with lines dt 1 lw 1.5 lc rgb '#E69F00' title 'break-even T = 29 (shaded: 90% interval 28..31), threshold 29', \
  NaN with lines dt 3 lw 1.5 lc rgb '#555555' title 'gather custom -> nccl from T = 4681'
unset output
