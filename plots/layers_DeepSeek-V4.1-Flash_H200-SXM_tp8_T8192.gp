# layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.gp: input-projection stage over all layers, replicated vs split, by layer kind
# Written by tpsplit 0.1.0; redraw with `gnuplot -d layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set label 90 'Input-projection stage of one 8192-token chunk, all 40 layers, replicated vs split by token, by layer kind' at screen 0.5, screen 0.9775 center font 'Sans,12' front
set label 91 'DeepSeek-V4.1-Flash on H200-SXM, TP8, marlin-w8a16, K 5120 x N of each projection, gather auto (custom one-shot while <= 2 MiB per rank, NCCL above)' at screen 0.5, screen 0.9537 center font 'Sans,11' front
set lmargin at screen 0.1111
set rmargin at screen 0.9792
set tmargin at screen 0.9225
set bmargin at screen 0.1487
set key at screen 0.1111, screen 0.0663 left top vertical Left reverse samplen 3 spacing 1.0 maxcols 2 maxrows 2 width -2 font 'Sans,11.0'
set label 3 'layer kind: layers x the stage of one layer, replicated -> split' at screen 0.1111, screen 0.0762 left front
set xlabel 'time summed over the 40 layers (ms)'
set xrange [0:17.78]
set yrange [-0.7:1.7]
set ytics ('replicated' 1, 'split by token' 0) scale 0
set grid noytics
set style fill solid 0.9 border lc rgb '#ffffff'
# the model's totals at the bar ends
set label 1 '13.68 ms' at 13.67972916, 1 left offset 0.8,0 front
set label 2 '6.76 ms: saves 6.92 ms (51%)' at 6.756583026, 0 left offset 0.8,0 front
plot \
  'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 2 using 2:1:3:4:5:6 with boxxyerror fc rgb '#4E79A7' title 'plain: 32 x (327.6 -> 154.6 us)', \
  'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 3 using 2:1:3:4:5:6 with boxxyerror fc rgb '#F28E2B' title 'compressor/1024+indexer/32: 3 x (461.1 -> 288.0 us)', \
  'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 4 using 2:1:3:4:5:6 with boxxyerror fc rgb '#59A14F' title 'compressor/512+indexer/32: 1 x (407.8 -> 234.7 us)', \
  'layers_DeepSeek-V4.1-Flash_H200-SXM_tp8_T8192.dat' index 5 using 2:1:3:4:5:6 with boxxyerror fc rgb '#B07AA1' title 'indexer/32: 4 x (351.0 -> 177.9 us)'
unset output
