# layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.gp: input-projection stage over all layers, replicated vs split, by layer kind
# Written by tpsplit 0.1.0; redraw with `gnuplot -d layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set title 'DeepSeek-V4.1-Flash on H200-SXM, TP8, marlin-w8a16: input-projection stage of one 8192-token chunk, all 40 layers, by layer kind'
set xlabel 'time summed over the 40 layers (ms)'
set xrange [0:18.29]
set yrange [-0.7:1.7]
set ytics ('replicated' 1, 'split by token' 0) scale 0
set grid noytics
set style fill solid 0.9 border lc rgb '#ffffff'
set key below left horizontal Left reverse samplen 2 spacing 1.3 maxcols 2 title 'layer kind: layers x the stage of one layer, replicated -> split' left
# the model's totals at the bar ends
set label 1 '14.07 ms' at 14.06822748, 1 left offset 0.8,0 front
set label 2 '6.76 ms: saves 7.31 ms (52%)' at 6.762525401, 0 left offset 0.8,0 front
plot \
  'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 2 using 2:1:3:4:5:6 with boxxyerror fc rgb '#4E79A7' title 'plain: 32 x (336.0 -> 153.3 us)', \
  'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 3 using 2:1:3:4:5:6 with boxxyerror fc rgb '#F28E2B' title 'compressor/1024+indexer/32: 3 x (480.5 -> 297.9 us)', \
  'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 4 using 2:1:3:4:5:6 with boxxyerror fc rgb '#59A14F' title 'compressor/512+indexer/32: 1 x (425.8 -> 243.1 us)', \
  'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 5 using 2:1:3:4:5:6 with boxxyerror fc rgb '#B07AA1' title 'indexer/32: 4 x (362.5 -> 179.9 us)'
unset output
