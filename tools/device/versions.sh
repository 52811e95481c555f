# tools/device/versions.sh: sourced by the device scripts (from the twenty-first session on; the older
# scripts keep the lines they ran with).  tps_dev_versions BIN: the date, the GPU, its driver and SM
# clock, nvcc, and the NCCL and CUDA runtime libraries BIN/tpsplit loads: the provenance lines every
# data file made on a device carries.
tps_dev_versions() {
  echo "##### versions"; date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1
  for l in $(ldd "$1/tpsplit" | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f "$l")"; done
}
# tps_dev_h200_tables BIN DEADLINE_S (from the twenty-second session on): test_gemm_gpu, then the W8A16 ratio
# tables of the current dispatch (issue 28 item 3: 29 M, w8a16 and dense-bf16, 50 samples, rows alternated, both
# shapes; no table starts past DEADLINE_S) through .w8carry/run_w8a16.sh (tools/device/run_w8a16.sh).  OUT: results.
tps_dev_h200_tables() {
  timeout 90 "$1/test_gemm_gpu" >"$OUT/test.txt" 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a "$OUT/notes.txt"
  grep FAIL "$OUT/test.txt" | head -8; tail -2 "$OUT/test.txt"; rm -f "$OUT/test.txt"
  RATIO_TOKENS=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384 \
    RATIO_DEADLINE=$2 STAGES=ratio bash .w8carry/run_w8a16.sh "$1"
}
# tps_dev_w8_run FILE LABEL BIN KxN TOKENS [VAR=VALUE...] (from the twenty-second session on): one `tpsplit bench
# gemm` of the w8a16 path (BIN/tpsplit, 50 samples, rows alternated) with those variables set; appends to FILE
# "== KxN w8a16 LABEL", "exit N", its configuration lines (and any failing check) and per row the median and min
# times.  OUT: results; stderr to OUT/log.txt.
tps_dev_w8_run() {
  local f=$1 label=$2 bin=$3 kn=$4 tok=$5
  shift 5
  echo "== $kn w8a16 $label" >>"$f"
  env "$@" timeout 60 "$bin/tpsplit" bench gemm --k "${kn%x*}" --n "${kn#*x}" --tp 1 --samples 50 --tokens "$tok" \
    --path w8a16 -o "$OUT/t.tsv" 2>>"$OUT/log.txt" >/dev/null
  echo "exit $?" >>"$f"
  grep -E '^# config|^# check.*(FAIL|fail)' "$OUT/t.tsv" >>"$f"
  grep -E '^[0-9]' "$OUT/t.tsv" | cut -f1-3 >>"$f"
  rm -f "$OUT/t.tsv"
}
# tps_dev_w8_skrs FILE BIN ORDER TAG DEADLINE_S CASE... (from the twenty-third session on): the fix-ups of cut tiles
# compared in one call.  Each CASE is "KxN TOKENS [GRID]": without GRID the default dispatch, with it the 256-token
# stream-K form forced onto GRID blocks, no whole waves first (TPS_W8_KERNEL=sk TPS_W8_BT=256 TPS_W8_SKDP=0
# TPS_W8_SKG=GRID); run once per TPS_W8_SKRS value of ORDER (e.g. "1 0 1": the second 1 measures the drift) through
# tps_dev_w8_run into FILE, labelled "default SKRS=R" or "G=GRID SKRS=R"; no run starts past DEADLINE_S; "TAG CASE (Ns)"
# on stdout after each case.
tps_dev_w8_skrs() {
  local f=$1 bin=$2 order=$3 tag=$4 deadline=$5 c r
  shift 5
  for c in "$@"; do
    set -- $c
    for r in $order; do
      [ "$SECONDS" -gt "$deadline" ] && continue
      if [ -n "${3:-}" ]; then tps_dev_w8_run "$f" "G=$3 SKRS=$r" "$bin" "$1" "$2" TPS_W8_KERNEL=sk TPS_W8_BT=256 TPS_W8_SKDP=0 TPS_W8_SKG="$3" TPS_W8_SKRS="$r"
      else tps_dev_w8_run "$f" "default SKRS=$r" "$bin" "$1" "$2" TPS_W8_SKRS="$r"; fi
    done
    echo "$tag $c (${SECONDS}s)"
  done
}
# tps_dev_begin (from the twenty-fourth session on): B=.w8carry/bin, OUT (default /tmp/out, made), everything the
# script prints from here on also appended to OUT/console.txt, then tps_dev_versions B.
tps_dev_begin() {
  B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
  exec > >(tee -a "$OUT/console.txt") 2>&1
  tps_dev_versions "$B"
}
# tps_dev_ncu FILE REGEX KxN M [VAR=VALUE...] (from the twenty-fourth session on): ncu (clocks free; sections
# SpeedOfLight, Occupancy, LaunchStats, ComputeWorkloadAnalysis, SchedulerStats, WarpStateStats and the tensor-pipe
# cycles metric this ncu knows) of every kernel matching REGEX (demangled names) of `B/tpsplit bench gemm --path w8a16
# --tokens M --tp 1 --check-only` at K x N, with those variables set; appended to FILE, 60 s at most; prints
# "ncu KxN M VARS exit N (Ts)".  Summarized by tools/device/ncu_summary.sh.
tps_dev_ncu() {
  local f=$1 re=$2 kn=$3 m=$4
  shift 4
  [ -n "${TPS_DEV_NCU_MET+x}" ] || TPS_DEV_NCU_MET=$(ncu --query-metrics 2>/dev/null |
    awk '/^sm__pipe_tensor_op_(gmma|hmma)_cycles_active / {print $1".avg.pct_of_peak_sustained_active"}' | paste -sd, -)
  env "$@" timeout 60 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
    ${TPS_DEV_NCU_MET:+--metrics $TPS_DEV_NCU_MET} --kernel-name-base demangled -k regex:"$re" \
    "$B/tpsplit" bench gemm --k "${kn%x*}" --n "${kn#*x}" --path w8a16 --tokens "$m" --tp 1 --check-only >>"$f" 2>&1
  local rc=$?
  echo "ncu $kn $m${*:+ $*} exit $rc (${SECONDS}s)"
}
# tps_dev_sass_cmp OLD.o NEW.o LABEL (from the twenty-fifth session on): the SASS of two objects compared (cuobjdump -sass,
# addresses and section headers left out); prints "SASS of LABEL: N lines, identical to ..." or "DIFFERS ... in N lines"
# (then the first 60 lines of the diff in OUT/sass_diff.txt).  OUT: results.
tps_dev_sass_cmp() {
  local o
  for o in "$1" "$2"; do
    cuobjdump -sass "$o" | grep -vE "^\s*$|code for sm_|Function :|\.section|\.headerflags" | sed "s@/\*[0-9a-f]*\*/@@g" \
      >"$OUT/sass_$(basename "$o").txt"
  done
  local a="$OUT/sass_$(basename "$1").txt" b="$OUT/sass_$(basename "$2").txt" r
  if cmp -s "$a" "$b"; then r="identical to that of $(basename "$1")"
  else r="DIFFERS from that of $(basename "$1") in $(diff "$a" "$b" | grep -c "^[<>]") lines"; diff "$a" "$b" | head -60 >"$OUT/sass_diff.txt"; fi
  echo "SASS of $3: $(wc -l <"$b") lines, $r"
  rm -f "$a" "$b"
}
