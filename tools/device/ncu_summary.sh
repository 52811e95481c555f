#!/bin/sh
# tools/device/ncu_summary.sh NCU_TXT: one line per profiled kernel launch of an ncu details page (as tps_dev_ncu of
# tools/device/versions.sh writes it), the "=====" headers kept, indented as data/h100_w8a16_s24.txt quotes them:
# kernel, grid x block, tensor pipe % of active cycles, SM clock, duration, SM active / elapsed cycles, DRAM %, L2 %,
# issue slots busy %, eligible warps a scheduler, warp cycles per issued instruction, achieved occupancy %.
[ -r "$1" ] || { echo "ncu_summary.sh: cannot read '$1'" >&2; exit 2; }
awk '
function reset() { split("", v); k = "" }
/^=====/ { print "    " $0; reset(); next }
/^  void / {
  reset(); k = $0; sub(/^  void /, "", k); sub(/\(.*/, "", k)
  g = ""; if (match($0, /\([0-9]+, [0-9]+, [0-9]+\)x\([0-9]+, [0-9]+, [0-9]+\)/)) g = substr($0, RSTART, RLENGTH)
  next
}
k == "" { next }
function take(key) { if (!(key in v)) v[key] = $NF }
/hmma_cycles_active/ { take("tensor") }
/SM Frequency/ { take("clk") }
/ Duration / { take("dur") }
/SM Active Cycles/ { take("act") }
/Elapsed Cycles/ { take("el") }
/DRAM Throughput/ { take("dram") }
/L2 Cache Throughput/ { take("l2") }
/Issue Slots Busy/ { take("issue") }
/Eligible Warps Per Scheduler/ { take("elig") }
/Warp Cycles Per Issued Instruction/ { take("wc") }
/Achieved Occupancy/ {
  take("occ")
  printf "      %-26s %-22s tensor %6s%%  SM %s GHz  dur %7s us  active/elapsed cycles %s/%s  dram %5s%%  l2 %5s%%  issue %5s%%  elig %s  cycles/issue %s  occ %s%%\n", \
    k, g, v["tensor"], v["clk"], v["dur"], v["act"], v["el"], v["dram"], v["l2"], v["issue"], v["elig"], v["wc"], v["occ"]
  reset()
}' "$1"
