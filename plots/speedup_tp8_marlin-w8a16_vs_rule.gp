# speedup_tp8_marlin-w8a16_vs_rule.gp: speedup (replicated / split) vs tokens
# Written by tpsplit 0.1.0; redraw with `gnuplot -d speedup_tp8_marlin-w8a16_vs_rule.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'speedup_tp8_marlin-w8a16_vs_rule.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set xrange [1:16384]
set logscale x 2
set format x '%.0f'
set xtics 1, 2
set mxtics default
set xlabel 'tokens per step T'
set xtics 1, 4
set style textbox opaque noborder
set style fill transparent solid 0.15 noborder
set lmargin at screen 0.0887
set rmargin at screen 0.5153
set arrow 1 from 2048, graph 0 to 2048, graph 1 nohead dt 3 lw 1.5 lc rgb '#555555' back
set label 1 '2048' at 2048, graph 1 center offset 0,0.8 tc rgb '#555555' front
set multiplot title 'split vs replicated: speedup at TP8, marlin-w8a16 (one curve per GPU)' font 'Sans,12'
# panel 1: the speedup
set tmargin at screen 0.9125
set bmargin at screen 0.1988
set format x ''
unset xlabel
set ylabel 'speedup of the split = replicated / split'
set yrange [0:3.972]
set key at screen 0.5237, screen 0.9125 left top vertical Left reverse samplen 3 spacing 1.2
# speedup 1: the split neither wins nor loses
set arrow 100 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#000000' back
plot \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 0 using 1:9:10 with filledcurves lc rgb '#0072B2' notitle, \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 0 using 1:8 with lines lw 3.4 dt 1 lc rgb '#0072B2' title 'H100-SXM (GEMM transferred[1], gather transferred[11],measured[2])', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 1 using 1:9:10 with filledcurves lc rgb '#009E73' notitle, \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 1 using 1:8 with lines lw 2.9 dt 2 lc rgb '#009E73' title 'H200-SXM (GEMM transferred[6], gather transferred[12],measured[7])', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 2 using 1:8 with lines lw 2.4 dt 1 lc rgb '#666666' title 'H100/H200 (pessimistic rule)', \
  NaN with lines dt 3 lw 1.5 lc rgb '#555555' title 'recommended threshold (value above)'
# panel 2: the break-even of each curve (marker) and its 90% interval (bar), one row per curve
unset label
unset arrow 100
unset key
unset title
set tmargin at screen 0.1838
set bmargin at screen 0.0688
set format x '%.0f'
set xlabel 'tokens per step T'
set ylabel ''
set yrange [2.6:-0.6]
set ytics ('H100-SXM' 0, 'H200-SXM' 1, 'H100/H200' 2) scale 0
set grid noytics
set label 1 'break-even (marker) and its 90% interval (bar)' at screen 0.5320, screen 0.1263 left tc rgb '#555555' front
plot \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 3 using 5:9:10:11 with xerrorbars pt 13 ps 1.6 lw 2 lc rgb '#0072B2', \
  '' index 3 using 14:9:12 with labels right offset -1,0 tc rgb '#0072B2', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 4 using 5:9:10:11 with xerrorbars pt 9 ps 1.6 lw 2 lc rgb '#009E73', \
  '' index 4 using 14:9:12 with labels right offset -1,0 tc rgb '#009E73', \
  'speedup_tp8_marlin-w8a16_vs_rule.dat' index 5 using 5:9:10:11 with xerrorbars pt 11 ps 1.6 lw 2 lc rgb '#666666', \
  '' index 5 using 14:9:12 with labels right offset -1,0 tc rgb '#666666'
unset multiplot
unset output
