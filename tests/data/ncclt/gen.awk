# gen.awk: writes the result rows of the hand-made nccl-tests fixtures in this directory
# (the preamble and footer lines were typed by hand from nccl-tests src/util.cu).
# Not run by the tests; kept so the numbers can be re-derived.  mawk or gawk:
#   awk -v layout=cur -v n=8 -v ws=2 -v type=bfloat16 -v lo=1024 -v hi=1073741824 \
#       -v alpha=11.8 -v bw=330 -f gen.awk
# Model: time_us = alpha + size/(bw*1e3) (bw in GB/s), times a small deterministic wiggle;
# in-place 1-2% off.  count = size/(ws*n); algbw = size/time/1e3; busbw = algbw*(n-1)/n.
# layout=cur: "%12li  %12li  %8s  %6s  %6s" + getFloatStr(7|6) blocks + "%6g" #wrong.
# layout=old: "%12li  %12li  %8s" + "%7.2f|%7.1f|%7.0f  %6.2f  %6.2f  %5.0le" blocks.
# ts=1 appends "%21s" timestamp; iter=1 adds i_min i_max i_p99 i_cv% (getFloatStr 7).
# na=1 prints N/A for #wrong (-c 0).  prefix= is put before each line (MPI tags).
# Options for the other eras and collectives (defaults: the all_gather rows above):
#   conv=old     algbw printed equal to busbw = size/time*(n-1)/n (nccl-tests before the
#                June 2020 fix, NVIDIA/nccl-tests#45);
#   coll=        all_reduce (size = count*ws, busbw = 2(n-1)/n algbw, redop sum),
#                reduce_scatter (size = count*ws*n, busbw (n-1)/n, redop sum),
#                broadcast (size = count*ws, busbw = algbw, root 0),
#                alltoall (as all_gather, in-place #wrong N/A: no in-place check);
#   mid=TEXT     put TEXT inside each row after the leading fields (a row printed in pieces
#                by two writes, tagged twice by the launcher);
#   old layout with coll=all_reduce prints its redop column (pre-2.13 all_reduce_perf).
function fs(v, w,   p, x) {
  p = 0; x = 1
  while (v >= x) { p++; x *= 10 }
  if (p < w - 2) return sprintf("%" w ".2f", v)
  if (p < w - 1) return sprintf("%" w ".1f", v)
  if (p < w + 1) return sprintf("%" w ".0f", v)
  return sprintf("%" w ".1e", v)
}
function oldtime(v) {
  if (v >= 10000) return sprintf("%7.0f", v)
  if (v >= 100) return sprintf("%7.1f", v)
  return sprintf("%7.2f", v)
}
function blk(t, size, ip,   a, b, s, f) {
  a = size / t / 1e3
  f = (n - 1) / n
  if (coll == "all_reduce") f = 2 * (n - 1) / n
  if (coll == "broadcast") f = 1
  b = a * f
  if (conv == "old") a = b
  if (layout == "old") return sprintf("  %s  %6.2f  %6.2f  %5.0e", oldtime(t), a, b, 0)
  s = sprintf("  %7s  %6s  %6s", fs(t, 7), fs(a, 6), fs(b, 6))
  s = s ((na || (ip && coll == "alltoall")) ? "     N/A" : sprintf("  %6g", 0))
  if (iter) s = s sprintf("  %7s  %7s  %7s  %7s", fs(t * 0.93, 7), fs(t * 1.21, 7), fs(t * 1.17, 7), fs(3.1 + 4 / (1 + t / 50), 7))
  return s
}
BEGIN {
  k = 0
  for (size = lo; size <= hi; size *= 2) {
    k++
    count = (coll == "all_reduce" || coll == "broadcast") ? size / ws : size / (ws * n)
    t = (alpha + size / (bw * 1e3)) * (1 + 0.03 * sin(k))
    tip = t * (1 - 0.015 * cos(k))
    op = (coll == "all_reduce" || coll == "reduce_scatter") ? "sum" : "none"
    rt = coll == "broadcast" ? "0" : "-1"
    if (layout == "old" && op == "sum") line = sprintf("%12.0f  %12.0f  %8s  %6s", size, count, type, op)
    else if (layout == "old") line = sprintf("%12.0f  %12.0f  %8s", size, count, type)
    else line = sprintf("%12.0f  %12.0f  %8s  %6s  %6s", size, count, type, op, rt)
    line = line mid blk(t, size, 0) blk(tip, size, 1)
    if (ts) line = line sprintf("%21s", "2026-11-30 09:14:" sprintf("%02d", 10 + k))
    print prefix line
  }
}
