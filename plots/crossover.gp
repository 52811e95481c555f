# crossover.gp: crossover map: break-even tokens per GPU x TP, one panel per kernel path
# Written by tpsplit 0.1.0; redraw with `gnuplot -d crossover.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'crossover.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set label 90 'Break-even tokens per GPU x TP, one panel per kernel path (small: 90% interval; light grey: the split never wins; dark grey: n/a)' at screen 0.5, screen 0.9775 center font 'Sans,12' front
set label 91 'K 5120 x N 1792, gather auto (custom one-shot while <= 2 MiB per rank, NCCL above)' at screen 0.5, screen 0.9537 center font 'Sans,11' front
set palette defined (0 '#c7e9c0', 0.5 '#fee391', 1 '#fc9272')
set logscale cb 2
set cbrange [16:16384]
set format cb '%.0f'
set cblabel 'break-even tokens (split faster from T)'
set xrange [-0.5:3.5]
set yrange [-0.5:11.5]
set xtics ('TP2' 0, 'TP4' 1, 'TP8' 2, 'TP16' 3) scale 0 font 'Sans,7.5'
YT = "set ytics ('H20' 11, 'H100-SXM' 10, 'H800-SXM' 9, 'H200-SXM' 8, 'A100-SXM-80GB' 7, 'L40S' 6, 'B200' 5, 'B300' 4, 'GB200' 3, 'GB300' 2, 'MI300X' 1, 'RTX-PRO-6000-Server' 0) scale 0"
unset grid
unset key
set xlabel 'tensor-parallel size'
# cells where the split never wins (or the path cannot run) stay grey
set object 1 rect from graph 0, graph 0 to graph 1, graph 1 fc rgb '#e6e6e6' fs solid 1 noborder behind
set colorbox user origin 0.9167, 0.1000 size 0.0125, 0.7750
set multiplot layout 2,3 margins 0.1437, 0.9000, 0.0875, 0.8950 spacing 0.0250, 0.09
set title 'marlin-w8a16'
eval YT
unset xlabel
unset colorbox
plot 'crossover.dat' index 0 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 0 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 0 using 1:2:9 with labels offset 0,0.00 font 'Sans,7.5'
unset label  # the title block is drawn once, with the first panel
set title 'dense-bf16'
unset ytics
unset xlabel
unset colorbox
plot 'crossover.dat' index 1 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 1 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 1 using 1:2:9 with labels offset 0,0.00 font 'Sans,7.5'
unset label  # the title block is drawn once, with the first panel
set title 'native-fp8'
unset ytics
unset xlabel
unset colorbox
plot 'crossover.dat' index 2 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 2 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 2 using 1:2:9 with labels offset 0,0.00 font 'Sans,7.5'
unset label  # the title block is drawn once, with the first panel
set title 'w8a16'
eval YT
set xlabel 'tensor-parallel size'
unset colorbox
plot 'crossover.dat' index 3 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 3 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 3 using 1:2:9 with labels offset 0,0.00 font 'Sans,7.5'
unset label  # the title block is drawn once, with the first panel
set title 'fp8-block'
unset ytics
set xlabel 'tensor-parallel size'
unset colorbox
plot 'crossover.dat' index 4 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 4 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 4 using 1:2:9 with labels offset 0,0.00 font 'Sans,7.5'
unset label  # the title block is drawn once, with the first panel
set title 'nvfp4'
unset ytics
set xlabel 'tensor-parallel size'
set colorbox user origin 0.9167, 0.1000 size 0.0125, 0.7750
plot 'crossover.dat' index 5 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 5 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 5 using 1:2:9 with labels offset 0,0.00 font 'Sans,7.5'
unset multiplot
unset output
