# latency_H200-SXM_tp8_w8a16.gp: latency vs tokens, replicated and split
# Written by tpsplit 0.1.0; redraw with `gnuplot -d latency_H200-SXM_tp8_w8a16.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'latency_H200-SXM_tp8_w8a16.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set title 'H200-SXM, TP8, w8a16: replicated vs split latency (GEMM measured[10], gather transferred[12],measured[7])'
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
set key below left horizontal Left reverse samplen 3 spacing 1.2 maxcols 2
set style fill transparent solid 0.18 noborder
# the gather backend changes here
set arrow 1 from 4681, graph 0 to 4681, graph 1 nohead dt 3 lw 1.5 lc rgb '#555555' back
set label 1 'gather custom -> nccl from T = 4681' at 4681, graph 0.04 right offset -0.6,0 tc rgb '#555555'
plot \
  'latency_H200-SXM_tp8_w8a16.dat' index 0 using 1:3:4 with filledcurves lc rgb '#888888' title 'replicated, 90% band', \
  'latency_H200-SXM_tp8_w8a16.dat' index 0 using 1:6:7 with filledcurves lc rgb '#009E73' title 'split, 90% band', \
  'latency_H200-SXM_tp8_w8a16.dat' index 0 using 1:2 with lines lw 2.5 dt 2 lc rgb '#444444' title 'replicated, model', \
  'latency_H200-SXM_tp8_w8a16.dat' index 0 using 1:5 with lines lw 2.5 lc rgb '#009E73' title 'split, model', \
  'latency_H200-SXM_tp8_w8a16.dat' index 1 using 1:2:3:4 with yerrorbars pt 6 ps 1.6 lw 1.5 lc rgb '#222222' title 'replicated (GEMM of T rows), measured median (bar: min..max)'
unset output
