# crossover.gp: crossover map: break-even tokens per GPU x TP, one panel per kernel path
# Written by tpsplit 0.1.0; redraw with `gnuplot -d crossover.gp` in this folder.
set terminal pngcairo size 1200,800 noenhanced font 'Sans,11'
set output 'crossover.png'
set datafile separator tab
set datafile missing 'nan'
set grid back lc rgb '#dddddd'
set border lw 1
set palette defined (0 '#c7e9c0', 0.5 '#fee391', 1 '#fc9272')
set logscale cb 2
set cbrange [32:16384]
set format cb '%.0f'
set cblabel 'break-even tokens (split faster from T)'
set xrange [-0.5:3.5]
set yrange [-0.5:9.5]
set xtics ('TP2' 0, 'TP4' 1, 'TP8' 2, 'TP16' 3) scale 0
YT = "set ytics ('H20' 9, 'H100-SXM' 8, 'H800-SXM' 7, 'H200-SXM' 6, 'A100-SXM-80GB' 5, 'L40S' 4, 'B200' 3, 'B300' 2, 'GB200' 1, 'MI300X' 0) scale 0"
unset grid
unset key
set xlabel 'tensor-parallel size'
# cells where the split never wins (or the path cannot run) stay grey
set object 1 rect from graph 0, graph 0 to graph 1, graph 1 fc rgb '#e6e6e6' fs solid 1 noborder behind
set colorbox user origin 0.915, 0.15 size 0.015, 0.72
set multiplot layout 1,3 margins 0.11, 0.88, 0.1, 0.88 spacing 0.03, 0.1 title 'break-even tokens: GPU x TP, one panel per kernel path (cell: break-even, below: 90% interval; light grey: never, dark grey: n/a)' font 'Sans,13'
set title 'marlin-w8a16'
eval YT
unset colorbox
plot 'crossover.dat' index 0 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 0 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 0 using 1:2:9 with labels offset 0,0.45 font 'Sans,11', \
     '' index 0 using 1:2:10 with labels offset 0,-0.6 font 'Sans,8' tc rgb '#333333'
set title 'dense-bf16'
unset ytics
unset colorbox
plot 'crossover.dat' index 1 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 1 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 1 using 1:2:9 with labels offset 0,0.45 font 'Sans,11', \
     '' index 1 using 1:2:10 with labels offset 0,-0.6 font 'Sans,8' tc rgb '#333333'
set title 'native-fp8'
unset ytics
set colorbox
plot 'crossover.dat' index 2 using 1:2:(0.5):(0.5):5 with boxxyerror fs solid 1 noborder lc palette, \
     '' index 2 using (strcol(9) eq 'n/a' ? $1 : NaN):2:(0.5):(0.5) with boxxyerror fs solid 1 noborder lc rgb '#c8c8c8', \
     '' index 2 using 1:2:9 with labels offset 0,0.45 font 'Sans,11', \
     '' index 2 using 1:2:10 with labels offset 0,-0.6 font 'Sans,8' tc rgb '#333333'
unset multiplot
unset output
