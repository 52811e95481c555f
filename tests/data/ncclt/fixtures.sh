#!/bin/sh
# fixtures.sh: writes the era fixtures of this folder (see README).  Not run by the tests;
# kept so every file can be re-made: result rows from gen.awk (the documented nccl-tests
# formats), preambles, footers, prefixes and NCCL messages typed after public logs.
set -eu
cd "$(dirname "$0")"
g() { awk "$@" -f gen.awk; }
ranks() { # ranks N GPU [old]: '#  Rank' lines (old: the pre-2.13 "Pid only" form)
  i=0
  while [ "$i" -lt "$1" ]; do
    if [ "${3:-}" = old ]; then printf '#   Rank %2d Pid  %5d on     dgx1-07 device %2d [0x%02x] %s\n' "$i" 31337 "$i" $((6 + i)) "$2"
    else printf '#  Rank %2d Group  0 Pid %6d on %s device %2d [0000:%02x:00] %s\n' "$i" $((40000 + i)) "${4:-node-0}" $((i % 8)) $((16 + 32 * (i % 8))) "$2"; fi
    i=$((i + 1))
  done
}
hdr_cur() {
  echo '#'
  echo '#                                                              out-of-place                       in-place          '
  echo '#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong'
  echo '#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       '
}
hdr_old() {
  echo '#'
  echo '#                                             out-of-place                       in-place          '
  echo '#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error'
  echo '#        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       '
}
foot() { echo '# Out of bounds values : 0 OK'; echo "# Avg bus bandwidth    : $1 "; echo '#'; }

# 1. mid-2020, before nccl-tests' algbw fix: algbw printed equal to busbw; pre-2.13 layout
{ echo '# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 '
  echo '#'; echo '# Using devices'; ranks 8 Tesla-V100-SXM2-16GB old | sed 's/Tesla-V100/Tesla V100/'
  hdr_old
  g -v layout=old -v conv=old -v n=8 -v ws=4 -v type=float -v lo=256 -v hi=134217728 -v alpha=22.5 -v bw=135
  foot 38.2117; } >old_algbw.txt

# 2. rccl-tests under srun --label (every line " 0: "), the label also inside some rows
{ { echo '# rccl-tests version 2.13.0-develop:8b5d2ef rccl-headers=21804 rccl-library=21804'
    echo '# Collective test starting: all_gather_perf'
    echo '# nThread 1 nGpus 1 minBytes 65536 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0'
    echo '#'; echo '# Using devices'
    ranks 16 'AMD Instinct MI250X' '' frontier0 | awk '{ sub(/on frontier0/, "on frontier" int(NR / 9 + 1) "0"); print }'
    echo 'RCCL version : 2.18.3-develop:d6d2f7f'
    echo 'HIP version  : 6.0.32830-d62f6a171'
    echo 'ROCm version : 6.0.0.0-91-6f96dc1'
    echo 'Hostname     : frontier10'
    echo 'Librccl path : /opt/rocm-6.0.0/lib/librccl.so.1'
    hdr_cur
    g -v layout=cur -v n=16 -v ws=4 -v type=float -v lo=65536 -v hi=268435456 -v alpha=48 -v bw=95 |
      awk 'NR % 3 == 2 { sub(/-1 /, "-1 0: ") } { print }'
    foot 31.4428; echo '# Collective test concluded: all_gather_perf'; } | sed 's/^/ 0: /'; } >srun_rccl.txt

# 3. Open MPI --tag-output, a row printed in two pieces (the tag again inside the row), NCCL
#    messages of other ranks between rows
{ { echo '# nccl-tests version 2.13.8 nccl-headers=21803 nccl-library=21803'
    echo '# Collective test starting: all_gather_perf'
    echo '# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0'
    echo '#'; echo '# Using devices'
    ranks 16 'NVIDIA A100-SXM4-80GB' '' a100-0 | awk '{ if (NR > 8) sub(/a100-0/, "a100-1"); print }'
    hdr_cur; } | sed 's/^/[1,0]<stdout>:/'
  g -v layout=cur -v n=16 -v ws=4 -v type=float -v lo=1024 -v hi=1073741824 -v alpha=28 -v bw=185 -v 'mid=[1,0]<stdout>:' |
    sed 's/^/[1,0]<stdout>:/' |
    awk '{ print } NR == 4 { print "[1,5]<stdout>:a100-0:40005:40105 [5] NCCL INFO Channel 02/0 : 5[5] -> 6[6] via P2P/CUMEM/read" }
         NR == 9 { print "[1,12]<stderr>:a100-1:40012:40112 [4] NCCL WARN NET/IB : Got async event : port error" }'
  { foot 60.0571; echo '# Collective test concluded: all_gather_perf'; } | sed 's/^/[1,0]<stdout>:/'; } >ompi_midrow.txt

# 4. NCCL INFO / WARN anywhere (NCCL_DEBUG=INFO): before the preamble, between rows, and one
#    message breaking a row in two (its rest on the next line)
{ echo 'h100-node3:81111:81111 [0] NCCL INFO Bootstrap : Using eth0:10.1.0.13<0>'
  echo 'h100-node3:81111:81111 [0] NCCL INFO cudaDriverVersion 12040'
  echo 'NCCL version 2.21.5+cuda12.4'
  echo '# nccl-tests version 2.14.1 nccl-headers=22105 nccl-library=22105'
  echo '# Collective test starting: all_gather_perf'
  echo '# nThread 1 nGpus 8 minBytes 1024 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0'
  echo '#'; echo '# Using devices'; ranks 8 'NVIDIA H100 80GB HBM3' '' h100-node3
  echo 'h100-node3:81111:81190 [0] NCCL INFO Using non-device net plugin version 0'
  echo 'h100-node3:81111:81193 [3] NCCL INFO comm 0x5581cf2a8b40 rank 3 nRanks 8 nNodes 1 localRanks 8 localRank 3 MNNVL 0'
  hdr_cur
  g -v layout=cur -v n=8 -v ws=2 -v type=bfloat16 -v lo=1024 -v hi=268435456 -v alpha=10.4 -v bw=360 |
    awk '{ print } NR == 3 { print "h100-node3:81111:81201 [2] NCCL INFO Channel 12/1 : 2[2] -> 3[3] via P2P/CUMEM" }
         NR == 7 { print "h100-node3:81111:81202 [6] transport/nvls.cc:142 NCCL WARN Cuda failure 2 '"'"'out of memory'"'"'" }' |
    awk 'NR == 12 { h = ""; for (i = 1; i <= 9; i++) h = h "  " $i; r = ""; for (i = 10; i <= NF; i++) r = r "  " $i
                    print h "h100-node3:81111:81210 [1] NCCL INFO NVLS comm 0x55d2 headRank 1"; print r; next } { print }'
  foot 105.372; echo '# Collective test concluded: all_gather_perf'
  echo 'h100-node3:81111:81111 [0] NCCL INFO comm 0x5581cf2a8b40 rank 0 nranks 8 cudaDev 0 busId 18000 - Destroy COMPLETE'; } >noise_midrow.txt

# 5. rccl-tests with the "nThread: 1 nGpus: 8" spelling and RCCL version lines, MI300X
{ echo '# rccl-tests version 2.0.0 rccl-headers=21802 rccl-library=21802'
  echo '# nThread: 1 nGpus: 8 minBytes: 1024 maxBytes: 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 graph: 0'
  echo 'rccl-tests: Version develop:3d4a6ee'
  echo '# Using devices'; ranks 8 'AMD Instinct MI300X' '' mi300x-a
  echo 'RCCL version : 2.18.3-develop:d6d2f7f'
  hdr_cur
  g -v layout=cur -v n=8 -v ws=2 -v type=bfloat16 -v lo=1024 -v hi=134217728 -v alpha=14.9 -v bw=305
  foot 83.1127; } >rccl_mi300x.txt

# 6. a table pasted without its preamble (no Rank lines): ranks from size / (count x 2 B)
{ hdr_cur | sed 1d
  g -v layout=cur -v n=8 -v ws=2 -v type=bfloat16 -v lo=4096 -v hi=16777216 -v alpha=9.1 -v bw=380; } >table_only.txt

# 7. rows only (no header either), pre-2.13, 4 ranks of float
g -v layout=old -v n=4 -v ws=4 -v type=float -v lo=1024 -v hi=1048576 -v alpha=7.3 -v bw=130 >rows_only.txt

# 8. one file, three runs (a script looping over tests): all_reduce, all_gather, broadcast
{ for c in all_reduce all_gather broadcast; do
    echo '# nccl-tests version 2.17.6 nccl-headers=22907 nccl-library=22907'
    echo "# Collective test starting: ${c}_perf"
    echo '# nThread 1 nGpus 8 minBytes 1024 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0'
    echo '#'; echo '# Using devices'; ranks 8 'NVIDIA H200' '' h200-2
    hdr_cur
    if [ "$c" = all_gather ]; then g -v layout=cur -v n=8 -v ws=2 -v type=bfloat16 -v lo=1024 -v hi=1048576 -v alpha=9.8 -v bw=370
    else g -v layout=cur -v coll="$c" -v n=8 -v ws=2 -v type=bfloat16 -v lo=1024 -v hi=1048576 -v alpha=9.8 -v bw=370; fi
    foot 10.2; echo "# Collective test concluded: ${c}_perf"; echo
  done; } >multi_run.txt

# 9. one rank (nixpkgs' smoke test shape): busbw 0, in-place a no-op of 0.05 us
{ echo '# nThread 1 nGpus 1 minBytes 33554432 maxBytes 33554432 step: 1048576(bytes) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0'
  echo '#'; echo '# Using devices'
  echo '#  Rank  0 Group  0 Pid 272738 on nixos-desktop device  0 [0x01] NVIDIA GeForce RTX 4090'
  hdr_cur
  echo '    33554432       8388608     float    none      -1    18.48  1816.16    0.00      0     0.05  671088.64    0.00      0'
  echo '# Out of bounds values : 0 OK'; echo '# Avg bus bandwidth    : 0 '; echo '#'; } >one_rank.txt
