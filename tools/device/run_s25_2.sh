#!/bin/bash
# Twenty-fifth session, call 2: the SM90 w8a16 kernels' occupancy counts per plan (tps_gemm.occ, filled by
# tps_w8g_prepare) instead of per process.  On the device: test_gemm_gpu (every form against float64, the rows the
# rule picks), then bench gemm (5 samples: its checks, and the launches it picked) at the 29 M of the bundled tables at K 5120 N 1792 and K 7168 N 2112, whose
# '# config' lines (the launch the dispatch picked at each M) must equal those of data/h100_w8a16_grid_<KxN>_w8a16.tsv
# (made by the per-process counts): the same device, the same picks.  Carry: .w8carry/bin built here from that tree.
. .w8carry/versions.sh
tps_dev_begin
timeout 200 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)"
grep -E "FAIL|rows unforced|test_gemm_gpu: " $OUT/test.txt | tail -8
# the device code of gemm_w8a16_sm90.cu before (84c8256) and now (this tree: the fix-up's slot loads in one helper,
# wk2_add_slot), both compiled here with ptxas -v (same registers and spills, every entry): their SASS compared
for o in 84c8256 now; do cuobjdump -sass .w8carry/sm90_$o.o | grep -vE "^\s*$|code for sm_|Function :|\.section|\.headerflags" | sed "s@/\*[0-9a-f]*\*/@@g" >$OUT/sass_$o.txt; done
if cmp -s $OUT/sass_84c8256.txt $OUT/sass_now.txt; then r="identical to that of 84c8256"; else r="DIFFERS from that of 84c8256 in $(diff $OUT/sass_84c8256.txt $OUT/sass_now.txt | grep -c "^[<>]") lines"; diff $OUT/sass_84c8256.txt $OUT/sass_now.txt | head -40 >$OUT/sass_diff.txt; fi
echo "SASS of gemm_w8a16_sm90.cu: $(wc -l <$OUT/sass_now.txt) lines, $r"
rm -f $OUT/sass_*.txt
T=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384
for kn in 5120x1792 7168x2112; do
  timeout 200 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --path w8a16 --tokens $T --tp 1 --samples 5 -o $OUT/t_$kn.tsv >$OUT/check_$kn.txt 2>&1
  echo "check $kn exit $? (${SECONDS}s): $(grep -cE ': ok$' $OUT/check_$kn.txt) checks ok, $(grep -ciE 'FAIL' $OUT/check_$kn.txt) failed"
  grep "^# config M=" $OUT/t_$kn.tsv >$OUT/config_$kn.txt; grep "^# check" $OUT/t_$kn.tsv >>$OUT/check_$kn.txt; rm -f $OUT/t_$kn.tsv
  grep '^# config M=' data/h100_w8a16_grid_${kn}_w8a16.tsv >$OUT/config_${kn}_tables.txt
  if cmp -s $OUT/config_$kn.txt $OUT/config_${kn}_tables.txt; then echo "configs $kn: all $(wc -l <$OUT/config_$kn.txt) the tables'"
  else echo "configs $kn: differ from the tables'"; diff $OUT/config_${kn}_tables.txt $OUT/config_$kn.txt | head -20; fi
done
# on an H200 (every ask since 2026-12-06 gave an H100): the tables of the current dispatch too (issue 28 item 3)
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200 && tps_dev_h200_tables $B 380
echo "all done (${SECONDS}s)"
