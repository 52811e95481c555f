# speedup_tp8_marlin-w8a16_vs_rule.gp: speedup (replicated / split) vs tokens
# Written by tpsplit 0.1.0; redraw with `gnuplot -d speedup_tp8_marlin-w8a16_vs_rule.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'speedup_tp8_marlin-w8a16_vs_rule.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set title 'split vs replicated: speedup at TP8, marlin-w8a16 (one curve per GPU)'
set logscale x 2
set format x '%.0f'
set xtics 1, 2
set mxtics default
set xlabel 'tokens per step T'
set ylabel 'speedup of the split = replicated / split'
set yrange [0:3.627]
set style textbox opaque noborder
set key outside right top vertical Left reverse samplen 3 spacing 1.2
set style fill transparent solid 0.15 noborder
# speedup 1: the split neither wins nor loses
set arrow 100 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#000000' back
set arrow 1 from 2048, graph 0 to 2048, graph 0.970 nohead dt 3 lw 1.5 lc rgb '#0072B2' back
set label 1 'threshold 2048' at 2048, graph 0.970 left offset 0.4,0 tc rgb '#0072B2' boxed front
set arrow 2 from 2048, graph 0 to 2048, graph 0.932 nohead dt 3 lw 1.5 lc rgb '#009E73' back
set label 2 'threshold 2048' at 2048, graph 0.932 left offset 0.4,0 tc rgb '#009E73' boxed front
set arrow 3 from 2048, graph 0 to 2048, graph 0.895 nohead dt 3 lw 1.5 lc rgb '#666666' back
set label 3 'threshold 2048' at 2048, graph 0.895 left offset 0.4,0 tc rgb '#666666' boxed front
plot \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 0 using 1:9:10 with filledcurves lc rgb '#0072B2' notitle, \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 0 using 1:8 with lines lw 3.4 dt 1 lc rgb '#0072B2' title 'H100-SXM (model from the H20 fit)', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 1 using 1:9:10 with filledcurves lc rgb '#009E73' notitle, \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 1 using 1:8 with lines lw 2.9 dt 2 lc rgb '#009E73' title 'H200-SXM (model from the H20 fit)', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 2 using 1:8 with lines lw 2.4 dt 1 lc rgb '#666666' title 'H100/H200 (pessimistic rule)', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 3 using 5:9 with points pt 13 ps 1.8 lc rgb '#0072B2' notitle, \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 3 using 5:10:6:7 with xerrorbars pt 13 ps 1.8 lw 2 lc rgb '#0072B2' title 'H100-SXM break-even 1473 [90%: 961..3009]', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 4 using 5:9 with points pt 9 ps 1.8 lc rgb '#009E73' notitle, \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 4 using 5:10:6:7 with xerrorbars pt 9 ps 1.8 lw 2 lc rgb '#009E73' title 'H200-SXM break-even 1473 [90%: 961..3009]', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 5 using 5:9 with points pt 11 ps 1.8 lc rgb '#666666' notitle, \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 5 using 5:10:5:5 with xerrorbars pt 11 ps 1.8 lw 2 lc rgb '#666666' title 'H100/H200 break-even 1106'
unset output
