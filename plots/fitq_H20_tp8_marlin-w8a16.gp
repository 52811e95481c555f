# fitq_H20_tp8_marlin-w8a16.gp: fit quality: relative residuals and leave-one-out errors
# Written by tpsplit 0.1.0; redraw with `gnuplot -d fitq_H20_tp8_marlin-w8a16.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'fitq_H20_tp8_marlin-w8a16.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set label 90 'Fit quality: median |residual| 3.1% (max 9.9%), leave-one-out median 4.5% (max 12.0%)' at screen 0.5, screen 0.9775 center font 'Sans,12' front
set label 91 'H20, TP8, marlin-w8a16, K 5120 x N 1792, gather auto (custom one-shot while <= 2 MiB per rank, NCCL above)' at screen 0.5, screen 0.9537 center font 'Sans,11' front
set tmargin at screen 0.9250
set logscale x 2
set format x '%.0f'
set xlabel 'tokens per step T'
set ylabel 'relative error (model - measured) / measured (%)'
set key outside right top vertical Left reverse samplen 3 spacing 1.2
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
set yrange [*<-6:6<*]  # at least -6..6%, so the +-5% guides show
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lw 1 lc rgb '#000000' back
set arrow 2 from graph 0, first 5 to graph 1, first 5 nohead dt 2 lc rgb '#999999' back
set arrow 3 from graph 0, first -5 to graph 1, first -5 nohead dt 2 lc rgb '#999999' back
set label 1 '+-5%' at graph 1, first 5 right offset -0.5,0.6 tc rgb '#777777' front
plot \
  'fitq_H20_tp8_marlin-w8a16.dat' index 0 using ($1*0.96):4 with impulses lw 2 lc rgb '#444444' notitle, \
  'fitq_H20_tp8_marlin-w8a16.dat' index 0 using ($1*0.96):4 with points pt 7 ps 1.6 lc rgb '#444444' title 'replicated: residual of the fit', \
  'fitq_H20_tp8_marlin-w8a16.dat' index 0 using ($1*0.96):5 with points pt 6 ps 1.8 lw 1.5 lc rgb '#444444' title 'replicated: leave-one-out error', \
  'fitq_H20_tp8_marlin-w8a16.dat' index 1 using ($1*1.04):4 with impulses lw 2 lc rgb '#E69F00' notitle, \
  'fitq_H20_tp8_marlin-w8a16.dat' index 1 using ($1*1.04):4 with points pt 5 ps 1.6 lc rgb '#E69F00' title 'split: residual of the fit', \
  'fitq_H20_tp8_marlin-w8a16.dat' index 1 using ($1*1.04):5 with points pt 4 ps 1.8 lw 1.5 lc rgb '#E69F00' title 'split: leave-one-out error'
unset output
