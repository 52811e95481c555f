#!/bin/sh
# tests/cli/faults.sh: faults around the inputs rather than in them (issue 22), each bounded by
# `timeout` so a regression hangs nothing:
#  - FIFOs without a writer or with a silent one (refused after TPSPLIT_INPUT_TIMEOUT), a FIFO
#    and a pipe that deliver a file (read once: sniffing does not eat them), a stream without
#    newlines (stopped at the line limit);
#  - gnuplot that hangs (killed at TPSPLIT_GNUPLOT_TIMEOUT, its process group with it), that
#    writes a cut image and says nothing, a full disk (RLIMIT_FSIZE with SIGXFSZ ignored: the
#    write fails as on a full disk): exit 1, no partial image;
#  - SIGINT and SIGTERM while figures are drawn: exit 130 / 143, no temporary left, every
#    image there complete;
#  - -o through a symbolic link, into /dev/null, a FIFO, a directory;
#  - no output replaces an input or another output (same file through links, new names
#    spelled two ways), refused before anything is read; writers killed by SIGTERM and
#    SIGKILL at random points leave no half file and no temporary;
#  - limits of options checked before any work (token ranges, --at, --round);
#  - out of memory while reading (inspect, predict, decide, simulate, validate): exit 1, said
#    as such with the file being read, never blamed on a line of it, the same every run.
. "$top_srcdir/tests/cli/lib.sh"

h20="$top_srcdir/data/h20_tp8_fused_wqa_wkv.tsv"
cur="$top_srcdir/tests/data/ncclt/current.txt"
now_ms() { date +%s%3N; }
png_ok() { # png_ok FILE: the PNG signature and the IEND chunk at the end
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
    [ "$(tail -c 12 "$1" | od -An -tx1 | tr -d ' \n')" = 0000000049454e44ae426082 ]
}
no_temps() { # no_temps DIR: no temporary file or render folder left
  if find "$1" -name '*.tmp.*' -o -name '.*.??????' | grep -q .; then fail "temporaries left in $1: $(find "$1" -name '*.tmp.*' -o -name '.*.??????' | head -3)"; else ok; fi
}

# ---------------------------------------------------------------- FIFOs and pipes
mkfifo "$tmp/fifo"
t0=$(now_ms)
TPSPLIT_INPUT_TIMEOUT=1 timeout 20 "$TPSPLIT" inspect "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"; rc=$?
t1=$(now_ms)
[ "$rc" -eq 2 ] && ok || fail "FIFO without a writer: exit $rc, want 2"
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/fifo: no data for 1 s \\(a FIFO nobody writes" "$tmp/err"
[ $((t1 - t0)) -lt 8000 ] && ok || fail "FIFO without a writer took $((t1 - t0)) ms"
# a writer that opens the FIFO and never writes
sleep 30 >"$tmp/fifo" &
hold=$!
TPSPLIT_INPUT_TIMEOUT=1 timeout 20 "$TPSPLIT" inspect "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"; rc=$?
kill "$hold" 2>/dev/null; wait "$hold" 2>/dev/null
[ "$rc" -eq 2 ] && ok || fail "FIFO with a silent writer: exit $rc, want 2"
expect_grep "no data for 1 s" "$tmp/err"
# a writer that delivers a table: read once, sniffed from the bytes
cat "$h20" >"$tmp/fifo" &
timeout 20 "$TPSPLIT" inspect "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"; rc=$?
wait
[ "$rc" -eq 0 ] && ok || fail "FIFO with a table: exit $rc: $(cat "$tmp/err")"
expect_grep "fifo: split table, 11 rows \\(tsv\\)" "$tmp/out"
# pipes: an nccl-tests log and a JSON file through /dev/stdin (as `<(...)` would give them)
timeout 20 "$TPSPLIT" inspect /dev/stdin <"$cur" >"$tmp/ref" 2>&1
cat "$cur" | timeout 20 "$TPSPLIT" inspect /dev/stdin >"$tmp/out" 2>"$tmp/err" && ok || fail "pipe: $(cat "$tmp/err")"
expect_grep "allgather table, 21 rows \\(nccl-tests\\)" "$tmp/out"
cat "$top_srcdir/tests/data/ncclt/json.txt" | timeout 20 "$TPSPLIT" inspect /dev/stdin >"$tmp/out" 2>"$tmp/err" &&
  ok || fail "JSON pipe: $(cat "$tmp/err")"
# validate sniffs its --predicted file, then reads it: a pipe must survive both
"$TPSPLIT" fit "$top_srcdir/data/h200_tp1_fused_wqa_wkv_w8a16.tsv" -o "$tmp/tp1.fit" >/dev/null 2>&1
if [ -s "$tmp/tp1.fit" ]; then
  timeout 60 "$TPSPLIT" validate --predicted "$tmp/tp1.fit" --measured "$top_srcdir/data/h200_tp1_fused_wqa_wkv_w8a16.tsv" >"$tmp/ref" 2>&1; want=$?
  cat "$tmp/tp1.fit" | timeout 60 "$TPSPLIT" validate --predicted /dev/stdin \
    --measured "$top_srcdir/data/h200_tp1_fused_wqa_wkv_w8a16.tsv" >"$tmp/out" 2>&1; rc=$?
  [ "$rc" -eq "$want" ] && ok || fail "validate with a piped fit file: exit $rc, want $want: $(head -c 300 "$tmp/out")"
  sed 's|/dev/stdin|F|' "$tmp/out" >"$tmp/o1"; sed "s|$tmp/tp1.fit|F|" "$tmp/ref" >"$tmp/o2"
  cmp -s "$tmp/o1" "$tmp/o2" && ok || fail "validate from a pipe differs from the file"
else fail "fit -o tp1.fit"; fi
# the files of predict --gemm/--gather are sniffed (fit file? bench log? AIConfigurator
# table?) and then read: a pipe must survive both, a FIFO without a writer must not hang
aicn="$top_srcdir/data/aic/nccl_h100_sxm.tsv.gz"
timeout 60 "$TPSPLIT" predict --gpu H20 --gather "$cur" >"$tmp/ref" 2>&1
cat "$cur" | timeout 60 "$TPSPLIT" predict --gpu H20 --gather /dev/stdin >"$tmp/out" 2>"$tmp/err" && ok ||
  fail "predict --gather from a pipe: $(cat "$tmp/err")"
sed "s|$cur|F|" "$tmp/ref" >"$tmp/o1"; sed 's|/dev/stdin|F|' "$tmp/out" >"$tmp/o2"
cmp -s "$tmp/o1" "$tmp/o2" && ok || fail "predict --gather from a pipe differs from the file"
cat "$aicn" | timeout 20 "$TPSPLIT" inspect /dev/stdin >"$tmp/out" 2>"$tmp/err" && ok || fail "gzip AIConfigurator pipe: $(cat "$tmp/err")"
expect_grep "^# /dev/stdin: AIConfigurator NCCL table, gpu h100_sxm, 573 rows$" "$tmp/out"
cat "$top_srcdir/data/aic/gemm_h100_sxm_k5120.tsv.gz" | timeout 60 "$TPSPLIT" predict --gpu H100 --path dense-bf16 \
  --gemm /dev/stdin:dtype=bfloat16 --gather "$aicn" >"$tmp/out" 2>"$tmp/err" && ok || fail "predict --gemm from a pipe: $(cat "$tmp/err")"
expect_grep "^# parts: GEMM measured" "$tmp/out"
t0=$(now_ms)
TPSPLIT_INPUT_TIMEOUT=1 timeout 20 "$TPSPLIT" predict --gpu H20 --gather "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"; rc=$?
t1=$(now_ms)
[ "$rc" -eq 2 ] && ok || fail "predict --gather FIFO without a writer: exit $rc, want 2"
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/fifo: no data for 1 s" "$tmp/err"
[ $((t1 - t0)) -lt 8000 ] && ok || fail "predict --gather FIFO without a writer took $((t1 - t0)) ms"
# the thresholds file goes through the same bounded reader (it called json_load_file, which
# waited forever on a FIFO and had no size cap)
thr="$top_srcdir/data/calibrate/thresholds_h200_5120x1792.json"
t0=$(now_ms)
TPSPLIT_INPUT_TIMEOUT=1 timeout 20 "$TPSPLIT" decide --thresholds "$tmp/fifo" --tp 8 --tokens 4096 --path w8a16 >"$tmp/out" 2>"$tmp/err"; rc=$?
t1=$(now_ms)
[ "$rc" -eq 2 ] && ok || fail "decide --thresholds FIFO without a writer: exit $rc, want 2"
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/fifo: no data for 1 s" "$tmp/err"
[ $((t1 - t0)) -lt 8000 ] && ok || fail "decide --thresholds FIFO without a writer took $((t1 - t0)) ms"
cat "$thr" >"$tmp/fifo" &
timeout 20 "$TPSPLIT" decide --thresholds "$tmp/fifo" --tp 8 --tokens 4096 --path w8a16 >"$tmp/out" 2>"$tmp/err"; rc=$?
wait
[ "$rc" -eq 0 ] && ok || fail "decide --thresholds from a FIFO: exit $rc: $(cat "$tmp/err")"
expect_grep "^verdict: split$" "$tmp/out"
truncate -s 70M "$tmp/huge.json"
expect_rc 2 timeout 20 "$TPSPLIT" decide --thresholds "$tmp/huge.json" --tp 8 --tokens 4096 --path w8a16
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/huge.json: .*67108864 bytes" "$tmp/err"
rm -f "$tmp/huge.json"
# a stream without newlines: stopped at the line limit, memory bounded
head -c 300000 /dev/zero | tr '\0' x | timeout 20 "$TPSPLIT" inspect /dev/stdin >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && ok || fail "newline-free stream: exit $rc, want 2"
expect_grep "^tpsplit [a-z][a-z -]*: /dev/stdin:1: line longer than the limit of 65536 bytes \\(reading stopped" "$tmp/err"
t0=$(now_ms)
tr '\0' x </dev/zero | timeout 20 "$TPSPLIT" inspect /dev/stdin >"$tmp/out" 2>"$tmp/err"; rc=$?
t1=$(now_ms)
[ "$rc" -eq 2 ] && [ $((t1 - t0)) -lt 8000 ] && ok || fail "endless stream: exit $rc after $((t1 - t0)) ms"
# devices are refused by kind, nothing read
timeout 20 "$TPSPLIT" inspect /dev/zero >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && ok || fail "/dev/zero: exit $rc"
expect_grep "^tpsplit [a-z][a-z -]*: /dev/zero: is a character device" "$tmp/err"

# ---------------------------------------------------------------- gnuplot that misbehaves
# a fake gnuplot: `gnuplot -d NAME.gp` in the render folder; MODE says what it does
cat >"$tmp/fakegp" <<'EOF'
#!/bin/sh
# a stand-in for `gnuplot -d [-e reset] NAME.gp ...`: every NAME.gp argument is one figure
for a in "$@"; do
  case "$a" in *.gp) ;; *) continue ;; esac
  out=$(sed -n "s/^set output '\(.*\)'$/\1/p" "$a")
  case "$FAKEGP_MODE" in
    hang) echo $$ >"$FAKEGP_PIDFILE"; sleep 60 & echo $! >>"$FAKEGP_PIDFILE"; wait ;;
    cut) printf '\211PNG\r\n\032\n\000\000\000\rIHDR' >"$out" ;;
    slow) sleep 1; printf '\211PNG\r\n\032\n' >"$out"; head -c 3000 /dev/zero >>"$out"
          printf '\000\000\000\000IEND\256B`\202' >>"$out" ;;
  esac
done
exit 0
EOF
chmod +x "$tmp/fakegp"
fig="--measured $h20 --figures fitq"
t0=$(now_ms)
FAKEGP_MODE=hang FAKEGP_PIDFILE="$tmp/gp.pids" TPSPLIT_GNUPLOT="$tmp/fakegp" TPSPLIT_GNUPLOT_TIMEOUT=1 \
  timeout 30 "$TPSPLIT" plot $fig -o "$tmp/hang" >"$tmp/out" 2>"$tmp/err"; rc=$?
t1=$(now_ms)
[ "$rc" -eq 1 ] && ok || fail "hanging gnuplot: exit $rc, want 1"
expect_grep "gnuplot \\($tmp/fakegp\\) did not finish within 1 s: killed \\(TPSPLIT_GNUPLOT_TIMEOUT" "$tmp/err"
[ $((t1 - t0)) -lt 10000 ] && ok || fail "hanging gnuplot took $((t1 - t0)) ms"
sleep 0.2
for p in $(cat "$tmp/gp.pids" 2>/dev/null); do # gone, or a zombie nobody reaped yet
  case "$(ps -o stat= -p "$p" 2>/dev/null)" in ''|Z*) ok ;; *) fail "gnuplot's process $p still runs" ;; esac
done
ls "$tmp/hang" | grep -q '\.png$' && fail "image left by a killed gnuplot" || ok
no_temps "$tmp/hang"
FAKEGP_MODE=cut TPSPLIT_GNUPLOT="$tmp/fakegp" timeout 30 "$TPSPLIT" plot $fig -o "$tmp/cut" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] && ok || fail "cut image: exit $rc, want 1"
expect_grep "fitq_H20_tp8_marlin-w8a16.png: gnuplot wrote an incomplete image \\(16 bytes without its end" "$tmp/err"
ls "$tmp/cut" | grep -q '\.png$' && fail "a cut image was kept" || ok
no_temps "$tmp/cut"
# a full disk under a real gnuplot: writes past 60 KiB fail with EFBIG as they would with ENOSPC
if command -v gnuplot >/dev/null 2>&1; then
  (trap '' XFSZ; ulimit -f 60; exec timeout 60 "$TPSPLIT" plot --measured "$h20" -o "$tmp/full") >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" -eq 1 ] && ok || fail "full disk: exit $rc, want 1: $(cat "$tmp/err")"
  grep -qE "gnuplot wrote an incomplete image|write error: File too large|gnuplot produced no image" "$tmp/err" && ok ||
    fail "full disk message: $(cat "$tmp/err")"
  for f in "$tmp"/full/*.png; do [ -e "$f" ] || continue; png_ok "$f" && ok || fail "partial image $f"; done
  no_temps "$tmp/full"
fi

# ---------------------------------------------------------------- signals while drawing
sig_test() { # sig_test SIGNAL|MAIN WANT_RC [tpsplit args]  (MAIN: SIGINT to the main job's batch)
  s=$1; want=$2; shift 2
  batch=0; [ "$s" = MAIN ] && batch=1
  rm -rf "$tmp/sig"; mkdir -p "$tmp/sig"
  FAKEGP_MODE=slow TPSPLIT_GNUPLOT="$tmp/fakegp" env --default-signal=INT,TERM timeout 60 "$TPSPLIT" "$@" -o "$tmp/sig/o" \
    >/dev/null 2>"$tmp/sigerr" &
  pid=$!
  i=0
  if [ "$s" = MAIN ]; then # the main job renders in one batch: signal it while gnuplot draws
    s=INT
    while [ $i -lt 100 ] && ! ls -a "$tmp/sig/o" 2>/dev/null | grep -q '^\.batch'; do sleep 0.05; i=$((i + 1)); done
  else
    while [ $i -lt 100 ] && ! ls "$tmp/sig/o" 2>/dev/null | grep -q '\.png$'; do sleep 0.05; i=$((i + 1)); done
  fi
  sleep "$sig_delay"
  pkill -"$s" -P "$pid" -x tpsplit 2>/dev/null || kill -"$s" "$pid"
  wait "$pid"; rc=$?
  [ "$rc" -eq "$want" ] && ok || fail "SIG$s: exit $rc, want $want ($(head -c 200 "$tmp/sigerr"))"
  no_temps "$tmp/sig"
  n=0
  for f in "$tmp"/sig/o/*.png; do [ -e "$f" ] || continue; n=$((n + 1)); png_ok "$f" && ok || fail "SIG$s: partial image $f"; done
  [ "$n" -ge 1 ] || [ "$batch" = 1 ] && ok || fail "SIG$s: no figure finished before the signal (test timing)"
}
if env --default-signal=INT true 2>/dev/null; then
  sig_delay=0.15
  sig_test INT 130 plot --measured "$h20"
  sig_test TERM 143 plot --measured "$h20"
  sig_test MAIN 130 --samples 20
  # later, once each gnuplot of the batch has written an image into its temporary folder (the
  # fake one takes 0.3 s a figure) and before the batch moves them into place: those images
  # go with the folders
  sig_delay=0.5
  sig_test MAIN 130 --samples 20
fi

# ---------------------------------------------------------------- -o targets
"$TPSPLIT" inspect -o "$tmp/ref.tsv" "$cur" >/dev/null
printf 'old\n' >"$tmp/target.tsv"
ln -s target.tsv "$tmp/link.tsv"
expect_rc 0 "$TPSPLIT" inspect -o "$tmp/link.tsv" "$cur"
[ -L "$tmp/link.tsv" ] && cmp -s "$tmp/target.tsv" "$tmp/ref.tsv" && ok || fail "-o through a symbolic link"
ls "$tmp" | grep -q 'tmp\.' && fail "temporary left by -o through a link" || ok
ln -s missing.tsv "$tmp/dangling.tsv"
expect_rc 2 "$TPSPLIT" inspect -o "$tmp/dangling.tsv" "$cur"
expect_grep "dangling.tsv: is a symbolic link to a missing file" "$tmp/err"
expect_rc 0 "$TPSPLIT" inspect -o /dev/null "$cur"
[ -c /dev/null ] && ok || fail "/dev/null is no longer a device"
mkfifo "$tmp/outfifo"
cat "$tmp/outfifo" >"$tmp/fromfifo" &
reader=$!
sleep 0.2
timeout 20 "$TPSPLIT" inspect -o "$tmp/outfifo" "$cur" >/dev/null 2>"$tmp/err" && ok || fail "-o FIFO: $(cat "$tmp/err")"
wait "$reader"
cmp -s "$tmp/fromfifo" "$tmp/ref.tsv" && [ -p "$tmp/outfifo" ] && ok || fail "-o into a FIFO"
timeout 20 "$TPSPLIT" inspect -o "$tmp/outfifo" "$cur" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && ok || fail "-o FIFO without a reader: exit $rc"
expect_grep "a FIFO nobody reads" "$tmp/err"
mkdir "$tmp/odir"
expect_rc 2 "$TPSPLIT" inspect -o "$tmp/odir" "$cur"
expect_grep "odir: is a directory" "$tmp/err"
if [ -w /dev/full ]; then
  expect_rc 1 "$TPSPLIT" inspect -o /dev/full "$cur"
  expect_grep "^tpsplit [a-z][a-z -]*: /dev/full: write error: No space left on device$" "$tmp/err"
fi

# ---------------------------------------------------------------- no output replaces an input (issue 30)
# each refused before anything is read: exit 2, one line naming both, the input unchanged,
# nothing on stdout, no temporary
mkdir "$tmp/same"
S="$tmp/same"
mkdir "$S/data"; cp "$top_srcdir/data/gpus.tsv" "$top_srcdir/data/h100_w8a16_grid_5120x1792_w8a16.tsv" "$S/data/"
cp "$h20" "$S/split.tsv"; cp "$cur" "$S/log.txt"; cp "$top_srcdir/data/h200_gemm_dense-bf16.tsv" "$S/G.tsv"
ln -s split.tsv "$S/link.tsv"; ln "$S/log.txt" "$S/hard.txt"
same_case() { # same_case FILE PATTERN tpsplit-args...: FILE must survive unchanged
  f=$1; re=$2; shift 2
  cp "$f" "$S/before"
  timeout 20 "$TPSPLIT" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" -eq 2 ] && ok || fail "$*: exit $rc, want 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || fail "$*: want one stderr line: $(head -c 300 "$tmp/err")"
  expect_grep "$re" "$tmp/err"
  [ -s "$tmp/out" ] && fail "$*: wrote to stdout" || ok
  cmp -s "$f" "$S/before" && ok || fail "$*: $f changed"
  no_temps "$S"
}
W="would replace an input,"
same_case "$S/G.tsv" "^tpsplit [a-z][a-z -]*: $S/G.tsv: -o $W --gemm '$S/G.tsv' \\(the same file\\): nothing read or written$" \
  predict --gpu H200 --path dense-bf16 --gemm "$S/G.tsv" -o "$S/G.tsv"
same_case "$S/G.tsv" "-o $W --gemm '$S/G.tsv'" predict --gpu H200 --path dense-bf16 --gemm "$S/G.tsv:dtype=bfloat16" -o "$S/G.tsv"
same_case "$S/split.tsv" "^tpsplit [a-z][a-z -]*: $S/split.tsv: -o $W argument '$S/split.tsv'" fit -o "$S/split.tsv" "$S/split.tsv"
same_case "$S/log.txt" "^tpsplit [a-z][a-z -]*: $S/log.txt: --thresholds-out $W --gather '$S/log.txt'" \
  predict --gpu H20 --gather "nccl=$S/log.txt" --thresholds-out "$S/log.txt"
same_case "$S/log.txt" "^tpsplit [a-z][a-z -]*: $S/log.txt: -o $W argument" inspect -o "$S/log.txt" "$S/log.txt"
same_case "$S/split.tsv" "^tpsplit [a-z][a-z -]*: $S/link.tsv: -o $W argument '$S/split.tsv'" inspect -o "$S/link.tsv" "$S/split.tsv"
same_case "$S/log.txt" "^tpsplit [a-z][a-z -]*: $S/hard.txt: -o $W argument '$S/log.txt'" inspect -o "$S/hard.txt" "$S/log.txt"
same_case "$S/split.tsv" "--thresholds-out $W --fit" crossover --fit "$S/split.tsv" --thresholds-out "$S/split.tsv"
same_case "$S/log.txt" "^tpsplit [a-z][a-z -]*: $S/log.txt: -o $W --gather" calibrate --gather "$S/log.txt" -o "$S/log.txt"
# two outputs, one file: existing, new, and spelled two ways
cp "$S/G.tsv" "$S/X"
same_case "$S/X" "^tpsplit [a-z][a-z -]*: $S/X: --thresholds-out and -o '$S/X' are the same file" predict --gpu H20 -o "$S/X" --thresholds-out "$S/X"
same_case "$S/G.tsv" "^tpsplit [a-z][a-z -]*: $S/./Y: --thresholds-out and -o '$S/Y' are the same file" predict --gpu H20 -o "$S/Y" --thresholds-out "$S/./Y"
[ -e "$S/Y" ] && fail "a refused run created $S/Y" || ok
# the bundled files a command reads when no option replaces them
keep_dd=${TPSPLIT_DATADIR-}
export TPSPLIT_DATADIR="$S/data"
same_case "$S/data/gpus.tsv" "-o $W the bundled GPU table" predict --gpu H20 -o "$S/data/gpus.tsv"
same_case "$S/data/h100_w8a16_grid_5120x1792_w8a16.tsv" "-o $W a bundled measurement" fit --xgpu -o "$S/data/h100_w8a16_grid_5120x1792_w8a16.tsv"
# files a run finds itself, noted as they are read (src/base/iocheck.h): a table data/parts.tsv names,
# the cross-GPU fits, a --measured file that sits in -o DIR under a figure's name
cp -R "$top_srcdir/data" "$S/dd"
export TPSPLIT_DATADIR="$S/dd"
R="which this run read: nothing written"
same_case "$S/dd/h200_gemm_dense-bf16.tsv" "^tpsplit predict: $S/dd/h200_gemm_dense-bf16.tsv: would replace '$S/dd/h200_gemm_dense-bf16.tsv', $R\$" \
  predict --gpu H200 --tp 8 --path dense-bf16 -o "$S/dd/h200_gemm_dense-bf16.tsv"
same_case "$S/dd/h200_gemm_dense-bf16.tsv" "would replace '$S/dd/h200_gemm_dense-bf16.tsv', $R" \
  predict --gpu H200 --tp 8 --path dense-bf16 --thresholds-out "$S/dd/h200_gemm_dense-bf16.tsv"
same_case "$S/dd/xgpu.fit" "^tpsplit crossover: $S/dd/xgpu.fit: would replace '$S/dd/xgpu.fit', $R\$" \
  crossover --gpus H200 --tp 8 --paths dense-bf16 --thresholds-out "$S/dd/xgpu.fit"
mkdir "$S/po"
cp "$top_srcdir/data/h20_tp8_fused_wqa_wkv.tsv" "$S/po/latency_H20_tp8_marlin-w8a16.dat"
cp "$S/po/latency_H20_tp8_marlin-w8a16.dat" "$S/before_po"
TPSPLIT_GNUPLOT= "$TPSPLIT" plot --measured "$S/po/latency_H20_tp8_marlin-w8a16.dat" -o "$S/po" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && ok || fail "plot over its own --measured file: exit $?, want 2"
expect_grep "latency_H20_tp8_marlin-w8a16.dat: would replace '$S/po/latency_H20_tp8_marlin-w8a16.dat', $R" "$tmp/err"
cmp -s "$S/po/latency_H20_tp8_marlin-w8a16.dat" "$S/before_po" && ok || fail "plot replaced its --measured file"
no_temps "$S/po"
# a model description read last (the per-layer figure) is refused before anything is written or printed
mkdir "$S/pm"
echo SENT >"$S/pm/latency_H20_tp8_marlin-w8a16.dat"
sed 's/0-39/0-40/' "$top_srcdir/data/models/deepseek-v4.1-flash.tsv" >"$S/badmodel.tsv"
bad_line=$(grep -n '0-40' "$S/badmodel.tsv" | head -n 1 | cut -d: -f1)
for m in nonexist "$S/badmodel.tsv"; do
  TPSPLIT_GNUPLOT= "$TPSPLIT" plot --measured "$top_srcdir/data/h20_tp8_fused_wqa_wkv.tsv" --model "$m" -o "$S/pm" >"$tmp/out" 2>"$tmp/err"
  [ $? -eq 2 ] && ok || fail "plot --model $m: exit $?, want 2"
  [ "$(ls "$S/pm")" = latency_H20_tp8_marlin-w8a16.dat ] && [ "$(cat "$S/pm/latency_H20_tp8_marlin-w8a16.dat")" = SENT ] && ok ||
    fail "plot --model $m wrote before refusing the model: $(ls "$S/pm" | head -c 300)"
done
expect_grep "^tpsplit plot: $S/badmodel.tsv:$bad_line: layer 40 out of range" "$tmp/err"
cp "$S/badmodel.tsv" "$S/dd/models/deepseek-v4.1-flash.tsv"
mkdir "$S/mj"
echo SENT >"$S/mj/crossover.dat"
TPSPLIT_GNUPLOT= "$TPSPLIT" -o "$S/mj" --samples 20 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && ok || fail "the main job with a bad bundled model: exit $?, want 2"
[ -s "$tmp/out" ] && fail "the main job printed before refusing its model: $(head -c 200 "$tmp/out")" || ok
[ "$(ls "$S/mj")" = crossover.dat ] && [ "$(cat "$S/mj/crossover.dat")" = SENT ] && ok || fail "the main job wrote before refusing its model"
expect_grep "deepseek-v4.1-flash.tsv:$bad_line: layer 40 out of range" "$tmp/err"
if [ -n "$keep_dd" ]; then TPSPLIT_DATADIR=$keep_dd; else unset TPSPLIT_DATADIR; fi
# refused before anything is read: a FIFO nobody writes is not waited for
t0=$(now_ms)
same_case "$S/G.tsv" "-o $W --gemm" predict --gpu H200 --path dense-bf16 --gather "$tmp/fifo" --gemm "$S/G.tsv" -o "$S/G.tsv"
[ $(($(now_ms) - t0)) -lt 5000 ] && ok || fail "the same-file check waited for the FIFO"

# ---------------------------------------------------------------- writers killed at random points
# SIGTERM: exit 143 (or 0 when it came too late); SIGKILL: nothing to clean up with, so the
# output must be nameless until it is complete (O_TMPFILE).  Either way OUT is the old file
# or the whole new one, and no temporary is left (src/base/util.h says where one could be).
mkdir "$tmp/kill"
K="$tmp/kill"
kargs="predict --gpu H20 --tokens 1..16384:1 -o $K/out.tsv"
t0=$(now_ms)
# shellcheck disable=SC2086
"$TPSPLIT" $kargs >/dev/null 2>&1 && cp "$K/out.tsv" "$K/ref" || fail "kill test reference run"
dur=$(($(now_ms) - t0))
printf 'old\n' >"$K/old"
i=0
for sig in TERM KILL TERM KILL TERM KILL TERM KILL TERM KILL TERM KILL TERM KILL TERM KILL; do
  i=$((i + 1))
  rm -f "$K/out.tsv"
  [ $((i % 4)) -lt 2 ] && cp "$K/old" "$K/out.tsv" # half of them replace a file, half make one
  d=$(awk -v s="$i" -v d="$dur" 'BEGIN { srand(s); printf "%.3f", rand() * d * 1.2 / 1000 }')
  # shellcheck disable=SC2086
  "$TPSPLIT" $kargs >/dev/null 2>&1 &
  pid=$!
  sleep "$d"
  kill -"$sig" "$pid" 2>/dev/null
  { wait "$pid"; rc=$?; } 2>/dev/null
  case "$sig:$rc" in TERM:143|TERM:0|KILL:137|KILL:0) ok ;; *) fail "SIG$sig after $d s: exit $rc" ;; esac
  if [ ! -e "$K/out.tsv" ] || cmp -s "$K/out.tsv" "$K/ref" || cmp -s "$K/out.tsv" "$K/old"; then ok
  else fail "SIG$sig after $d s: a half-written $K/out.tsv ($(wc -c <"$K/out.tsv") bytes)"; fi
  # the one unavoidable leftover: SIGKILL between linking the complete file to its temporary
  # name and renaming it over the old one (microseconds); anything else is a failure
  for t in "$K"/out.tsv.tmp.*; do
    [ -e "$t" ] && [ "$sig" = KILL ] && cmp -s "$t" "$K/ref" && [ $((i % 4)) -lt 2 ] && rm -f "$t"
  done
  no_temps "$K"
done

# ---------------------------------------------------------------- limits before work
expect_rc 2 timeout 20 "$TPSPLIT" predict --gpu H200 --tokens 1..100000000:1
expect_grep "token range '1..100000000:1' goes to 100000000, above the limit of 65536 tokens" "$tmp/err"
# CPU time, not wall time (a loaded machine stretches the latter): expanding the range first
# took 5.6 s of CPU; refusing it takes milliseconds plus the start-up
cpu=$( (timeout 20 "$TPSPLIT" predict --gpu H200 --tokens 1..100000000:1 >/dev/null 2>&1; times) | tail -n 1 |
  awk '{ n = 0; for (i = 1; i <= NF; i++) { split($i, p, "m"); sub("s", "", p[2]); n += 60 * p[1] + p[2] } print int(1000 * n) }')
[ "${cpu:-99999}" -lt 1000 ] && ok || fail "--tokens 1..100000000:1 took $cpu ms of CPU"
expect_rc 2 "$TPSPLIT" predict --gpu H200 --tokens 1,2,70000
expect_grep "token count 70000 .* above the limit of 65536 tokens" "$tmp/err"
expect_rc 2 "$TPSPLIT" decide --gpu H200 --tp 8 --tokens 70000
expect_grep "decide: bad --tokens '70000' \\(an integer in 1..65536" "$tmp/err"
expect_rc 2 "$TPSPLIT" predict --gpu H200 --at 9223372036854775807
expect_grep "predict: bad --at '9223372036854775807' \\(an integer in 1..65536" "$tmp/err"
expect_rc 2 "$TPSPLIT" predict --gpu H200 --round 9223372036854775800
expect_grep "predict: bad --round '9223372036854775800' \\(an integer in 1..65536" "$tmp/err"
expect_rc 2 "$TPSPLIT" validate --predicted "$h20" --measured "$h20" --round 9223372036854775807
expect_grep "validate: bad --round" "$tmp/err"

# ---------------------------------------------------------------- out of memory
# a 43 MiB log under a 60 MB address space: the reader runs out, says so, blames no line
if (ulimit -v 60000 && "$TPSPLIT" --version) >/dev/null 2>&1; then
  { cat "$cur"; i=0; while [ $i -lt 20 ]; do
      awk 'BEGIN { for (k = 0; k < 26000; k++) printf "h100:1:2 [0] NCCL INFO Channel %02d/0 : 0[0] -> 1[1] via P2P/CUMEM/read pad pad pad pad\n", k % 32 }'
      i=$((i + 1)); done; } >"$tmp/big.txt"
  for k in 1 2 3; do
    (ulimit -v 60000; exec "$TPSPLIT" inspect "$tmp/big.txt") >/dev/null 2>"$tmp/oom$k"; echo $? >"$tmp/oomrc$k"
  done
  if [ "$(cat "$tmp/oomrc1")" -eq 0 ]; then
    ok # enough memory after all: nothing to check
  else
    [ "$(cat "$tmp/oomrc1")" -eq 1 ] && ok || fail "out of memory: exit $(cat "$tmp/oomrc1"), want 1"
    expect_grep "^tpsplit [a-z][a-z -]*: out of memory \\(reading $tmp/big.txt\\)$" "$tmp/oom1"
  fi
  cmp -s "$tmp/oom1" "$tmp/oom2" && cmp -s "$tmp/oom1" "$tmp/oom3" && ok || fail "out of memory: not the same every run"
  # the commands that read measurements, fits and model files: exit 1 (a resource error),
  # the message names memory and the file being read, never a line of it
  m="$top_srcdir/data/models/deepseek-v3.tsv"
  { cat "$m"; head -c 44000000 /dev/zero | tr '\0' '#' | fold -w 100; } >"$tmp/bigmodel.tsv"
  oom_cmd() { # oom_cmd FILE_READ tpsplit-args...: run twice under the limit
    f=$1; shift
    for k in 1 2; do
      (ulimit -v 60000; exec "$TPSPLIT" "$@") >"$tmp/oomout" 2>"$tmp/oomc$k"; rc=$?
      [ "$rc" -eq 1 ] && ok || fail "$1 out of memory reading $f: exit $rc, want 1: $(head -c 300 "$tmp/oomc$k")"
      expect_grep "^tpsplit [a-z][a-z -]*: out of memory \\(reading $f\\)$" "$tmp/oomc$k"
      [ "$(wc -l <"$tmp/oomc$k")" -eq 1 ] && ok || fail "$1: more than one error line"
      [ -s "$tmp/oomout" ] && fail "$1: wrote to stdout when out of memory" || ok
    done
    cmp -s "$tmp/oomc1" "$tmp/oomc2" && ok || fail "$1 out of memory: not the same every run"
  }
  oom_cmd "$tmp/big.txt" predict --gpu H200 --tp 8 --gather "$tmp/big.txt"
  oom_cmd "$tmp/big.txt" calibrate --simulate "$tmp/big.txt"
  oom_cmd "$tmp/big.txt" decide --gpu H200 --tp 8 --tokens 4096 --gather "$tmp/big.txt"
  oom_cmd "$tmp/bigmodel.tsv" simulate --model "$tmp/bigmodel.tsv" --gpu H200 --tp 8
  oom_cmd "$tmp/big.txt" simulate --model "$m" --gpu H200 --tp 8 --gather "$tmp/big.txt"
  oom_cmd "$tmp/big.txt" validate --predicted "$h20" --measured "$tmp/big.txt"
  oom_cmd "$tmp/big.txt" validate --predicted "$tmp/big.txt" --measured "$h20"
fi
finish
