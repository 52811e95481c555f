#!/bin/sh
# tests/cli/readback.sh: every file tpsplit writes is read back by every command that takes it.
# Each file is written twice by tpsplit itself: under a short folder and under a folder with a
# path of about 3000 bytes (so its "# written by:" and "source" lines, and every path printed,
# are far longer than any fixed line buffer).  Every reading command must then behave the same
# on both (same exit status, same output once the folder is replaced), and the reads that make
# sense must succeed.  Kinds: split, GEMM and all-gather tables and an nccl-tests log
# normalized by `inspect -o`; split, GEMM and all-gather fit files from `fit -o`.
. "$top_srcdir/tests/cli/lib.sh"

short="$tmp/s"
long="$tmp/l"
i=0
while [ $i -lt 14 ]; do long="$long/$(printf 'd%0200d' "$i")"; i=$((i + 1)); done
mkdir -p "$short" "$long"
[ ${#long} -gt 2800 ] && ok || fail "long folder is only ${#long} bytes"

h20="$top_srcdir/data/h20_tp8_fused_wqa_wkv.tsv"
for d in "$short" "$long"; do
  "$TPSPLIT" inspect -o "$d/split.tsv" "$h20" >/dev/null &&
    "$TPSPLIT" inspect -o "$d/gemm.tsv" "$top_srcdir/tests/data/gemm_h20_marlin.tsv" >/dev/null &&
    "$TPSPLIT" inspect -o "$d/ag.tsv" "$top_srcdir/tests/data/allgather_h20.tsv" >/dev/null &&
    "$TPSPLIT" inspect -o "$d/log.tsv" "$top_srcdir/tests/data/ncclt/mpi.txt" >/dev/null && ok || fail "inspect -o into $d"
  # the fits read the tables just written, so their source lines name the folder
  "$TPSPLIT" fit -o "$d/split.fit" "$d/split.tsv" >/dev/null &&
    "$TPSPLIT" fit -o "$d/gemm.fit" "$d/gemm.tsv" >/dev/null &&
    "$TPSPLIT" fit -o "$d/ag.fit" "$d/log.tsv" >/dev/null && ok || fail "fit -o into $d"
done
grep -q "^    \"$long/split.tsv\"\$" "$long/split.fit" && grep -q "^  \"written_by\": \".*$long" "$long/split.fit" && ok ||
  fail "the long fit file does not name its long source"
[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$long/split.fit")" -gt 2800 ] && ok ||
  fail "no long line in the long fit file"

# run CMD with @ = FILE in folder DIR; output (stdout and stderr) with DIR written as DIR
run() { # run DIR FILE CMD...
  d=$1; f=$2; shift 2
  set -- $(printf '%s\n' "$*" | sed "s|@|$d/$f|g; s|%|$d|g")
  (cd "$top_srcdir" && "$TPSPLIT" "$@") >"$tmp/o" 2>&1
  echo "rc=$?" >>"$tmp/o"
  # a line naming the folder is compared up to it: commands print paths into fixed buffers
  # (their lines, not the reading, are cut short by a 3000-byte path)
  sed "s|$d|DIR|g; s|DIR.*|DIR...|; s|$tmp/[sl]/.*|DIR...|" "$tmp/o"
}
# check FILE MUST(0 or -) CMD: the same behaviour from both folders; MUST=0: it succeeds
check() {
  f=$1; must=$2; shift 2
  run "$short" "$f" "$@" >"$tmp/a"
  run "$long" "$f" "$@" >"$tmp/b"
  if cmp -s "$tmp/a" "$tmp/b"; then ok; else fail "$f: '$*' differs with a long path: $(diff "$tmp/a" "$tmp/b" | head -5)"; fi
  if [ "$must" = 0 ]; then
    grep -q '^rc=0$' "$tmp/b" && ok || fail "$f: '$*' failed: $(tail -n 3 "$tmp/b")"
  fi
  # whatever the verdict, the file itself was read: no message about one of its lines
  sed "s|$long|DIR|g" "$tmp/o" | grep -q "DIR/$f:[0-9]*: " && fail "$f: '$*' could not read it: $(grep ":[0-9]*: " "$tmp/o" | head -c 300)" || ok
}

for f in split.tsv gemm.tsv ag.tsv log.tsv; do
  check "$f" 0 inspect @
  check "$f" 0 inspect --json @
  check "$f" 0 fit @
  check "$f" 0 plot --measured @ --no-render --samples 20 -o %/plot_$f
done
check split.tsv 0 validate --measured @ --predicted %/split.fit
check split.tsv 0 validate --predicted @ --measured data/h20_tp8_fused_wqa_wkv.tsv
check split.tsv 0 simulate --model deepseek-v4.1-flash --gpu H20 --tp 8 --table @
for f in split.fit gemm.fit ag.fit; do
  check "$f" - predict --gpu H200 --fit @
  check "$f" 0 plot --fit @ --no-render --samples 20 -o %/plotfit_$f
  check "$f" - decide --gpu H200 --tp 8 --tokens 4096 --fit @
  check "$f" - simulate --model deepseek-v4.1-flash --gpu H200 --tp 8 --fit @
  check "$f" - validate --predicted @ --measured data/h20_tp8_fused_wqa_wkv.tsv
done
check split.fit 0 predict --gpu H200 --fit @
check split.fit 0 decide --gpu H200 --tp 8 --tokens 4096 --fit @
check split.fit 0 simulate --model deepseek-v4.1-flash --gpu H200 --tp 8 --fit @
check split.fit 0 validate --predicted @ --measured data/h20_tp8_fused_wqa_wkv.tsv
check gemm.fit 0 plot --fit @ --no-render --samples 20 -o %/pg
# the plots drawn from both folders are the same files with the same bytes
for p in plot_split.tsv plotfit_split.fit; do
  (cd "$short/$p" && ls) >"$tmp/la"; (cd "$long/$p" && ls) >"$tmp/lb"
  cmp -s "$tmp/la" "$tmp/lb" && ok || fail "$p: different files"
  for g in "$short/$p"/*.gp; do cmp -s "$g" "$long/$p/${g##*/}" && ok || fail "$p: ${g##*/} differs"; done
done
finish
