# layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.gp: per-layer input-projection stage, main (replicated) vs split
# Written by tpsplit 0.1.0; redraw with `gnuplot -d layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set title 'DeepSeek-V4.1-Flash on H200-SXM, TP8, marlin-w8a16, 8192 tokens: input-projection stage per layer'
set xlabel 'layer index'
set ylabel 'stage time (us)'
set yrange [0:*]
set xrange [-1:40]
set xtics 2 out nomirror
set key outside right top vertical Left reverse samplen 3 spacing 1.2
set style fill solid 0.85 noborder
set boxwidth 0.38
plot 'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 0 using ($1-0.2):2 with boxes lc rgb '#777777' title 'main (replicated)', \
     '' index 0 using ($1+0.2):3 with boxes lc rgb '#009E73' title 'split'
unset output
