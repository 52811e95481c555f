#!/bin/sh
# tests/cli/ncclt.sh: the nccl-tests fixtures (tests/data/ncclt/*.txt), one per layout (.txt: *.log is
# git-ignored here, for the test harness logs).
# 1. The fixtures themselves are checked with awk (independently of tpsplit): the rank
#    count is the number of '#  Rank' lines; every result row has
#    size = count * sizeof(type) * nranks, algbw ~ size/time/1e3, busbw ~ algbw*(n-1)/n
#    (printed values are rounded: tolerance max(10%, 0.02 GB/s)).
# 2. `tpsplit inspect` reads each one: same rows, ranks, GPU, sizes and out-of-place
#    times as awk sees them, and algbw/busbw recomputed from size and time.
. "$top_srcdir/tests/cli/lib.sh"

d="$top_srcdir/tests/data/ncclt"
# rows FILE: the result rows as awk sees them (MPI prefix and NCCL lines dropped), as
# "size count type time_oop time_ip ..." with the layout resolved by hand-written rules:
# a row has 13 (>= 2.13), 11 (pre-2.13), 15 (-S), 21 (-I) fields.
rows() {
  sed -e 's/^\[[0-9]*,[0-9]*\]<std\(out\|err\)>://' "$1" | grep -v 'NCCL \(INFO\|WARN\)' |
    awk '$1 ~ /^[0-9]+$/ {
      if (NF == 13 || NF == 15) print $1, $2, $3, $6, $7, $8, $10
      else if (NF == 11) print $1, $2, $3, $4, $5, $6, $8
      else if (NF == 21) print $1, $2, $3, $6, $7, $8, $14
      else print "BAD", NF }'
}
nranks() { grep -c '^\(\[[0-9]*,[0-9]*\]<stdout>:\)\?# *Rank  *[0-9]' "$1"; }

for spec in current.txt:8:2:21:NVIDIA_H20 pre213.txt:4:4:22:Tesla_V100-SXM2-32GB \
  timestamp.txt:8:2:16:NVIDIA_H200 iterstats.txt:8:2:12:NVIDIA_H200 \
  exponent.txt:16:2:9:NVIDIA_L40S mpi.txt:16:2:19:NVIDIA_H100_80GB_HBM3; do
  IFS=: read -r f n ws nrows gpu <<EOS
$spec
EOS
  gpu=$(echo "$gpu" | tr _ ' ')
  log="$d/$f"
  # 1. the fixture is self-consistent
  [ "$(nranks "$log")" -eq "$n" ] && ok || fail "$f: $(nranks "$log") Rank lines, want $n"
  rows "$log" >"$tmp/rows"
  [ "$(wc -l <"$tmp/rows")" -eq "$nrows" ] && ok || fail "$f: $(wc -l <"$tmp/rows") rows, want $nrows"
  bad=$(awk -v n="$n" -v ws="$ws" '
    function tol(x) { return (0.1 * x > 0.02) ? 0.1 * x : 0.02 }
    $1 == "BAD" { print "unparsed row"; next }
    { a = $1 / $4 / 1e3; b = a * (n - 1) / n
      if ($1 != $2 * ws * n) print "size " $1 " != count*" ws "*" n
      d = $5 - a; if (d < 0) d = -d; if (d > tol(a)) print "algbw " $5 " vs " a
      d = $6 - b; if (d < 0) d = -d; if (d > tol(b)) print "busbw " $6 " vs " b }' "$tmp/rows")
  [ -z "$bad" ] && ok || fail "$f fixture: $bad"
  # 2. inspect reads the same numbers
  expect_rc 0 "$TPSPLIT" inspect "$log"
  expect_grep "^# .*$f: allgather table, $nrows rows \\(nccl-tests\\)\$" "$tmp/out"
  expect_grep "^# gpu $gpu, type [a-z0-9]+, ranks $n, gather nccl\$" "$tmp/out"
  awk '!/^#/ && NF { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
       print $(c["bytes"]), $(c["count"]), $(c["time_us"]), $(c["time_inplace_us"]), $(c["algbw_gbps"]), $(c["busbw_gbps"]), $(c["bytes_per_rank"]) }' \
    "$tmp/out" >"$tmp/got"
  bad=$(paste -d' ' "$tmp/got" "$tmp/rows" | awk -v n="$n" '{
      # got: bytes count t t_ip algbw busbw per_rank | log: size count type t alg bus t_ip
      if ($1 != $8 || $2 != $9 || $3 != $11 || $4 != $14) print NR ": " $0
      a = $8 / $11 / 1e3; b = a * (n - 1) / n
      d = $5 - a; if (d < 0) d = -d; if (d > 0.0005 + 1e-6 * a) print NR ": algbw " $5 " want " a
      d = $6 - b; if (d < 0) d = -d; if (d > 0.0005 + 1e-6 * b) print NR ": busbw " $6 " want " b
      if ($7 != $8 / n) print NR ": bytes_per_rank " $7 }')
  [ "$(wc -l <"$tmp/got")" -eq "$nrows" ] && [ -z "$bad" ] && ok || fail "$f inspect: $bad"
done

# 3. the era fixtures (tests/data/ncclt/README): every one read exactly as EXPECTED says
T=$(printf '\t')
ne=0
while IFS="$T" read -r f opts nrows n gpu type l1 b1 t1 l2 b2 t2 ip2 note; do
  case "$f" in ''|'#'*) continue ;; esac
  ne=$((ne + 1))
  [ "$opts" = - ] && opts=
  # shellcheck disable=SC2086
  "$TPSPLIT" inspect $opts "$d/$f" >"$tmp/out" 2>"$tmp/err" && ok || { fail "$f $opts: $(cat "$tmp/err")"; continue; }
  expect_grep "^# .*$f: allgather table, $nrows rows \\(nccl-tests\\)\$" "$tmp/out"
  if [ "$gpu" = - ]; then want="^#, type $type, ranks $n, gather nccl\$"; else want="^# gpu $gpu, type $type, ranks $n, gather nccl\$"; fi
  expect_grep "$want" "$tmp/out"
  if [ "$note" = - ]; then expect_nogrep '^# read as:' "$tmp/out"; else expect_grep "^# read as: .*$note" "$tmp/out"; fi
  awk '!/^#/ && NF && $1 != "bytes"' "$tmp/out" >"$tmp/rows"
  first=$(head -n 1 "$tmp/rows" | awk '{ print $1, $3 }'); last=$(tail -n 1 "$tmp/rows" | awk '{ print $1, $3, $4 }')
  [ "$first" = "$b1 $t1" ] && ok || fail "$f: first row '$first', want '$b1 $t1'"
  [ "$last" = "$b2 $t2 $ip2" ] && ok || fail "$f: last row '$last', want '$b2 $t2 $ip2'"
  # shellcheck disable=SC2086
  "$TPSPLIT" inspect --json $opts "$d/$f" | sed -n 's/^ *"line": \([0-9]*\).*/\1/p' >"$tmp/lines"
  [ "$(head -n 1 "$tmp/lines") $(tail -n 1 "$tmp/lines")" = "$l1 $l2" ] && ok ||
    fail "$f: rows on lines $(head -n 1 "$tmp/lines")..$(tail -n 1 "$tmp/lines"), want $l1..$l2"
done <"$d/EXPECTED"
[ "$ne" -ge 13 ] && ok || fail "only $ne EXPECTED entries"
# --run: a file with two all_gather runs; the run out of range names what is there
expect_rc 2 "$TPSPLIT" inspect "$top_srcdir/tests/data/bad/ncclt_two_runs.txt"
expect_grep 'runs: 1: all_gather_perf, lines 1-42; 2: all_gather_perf, lines 44-85' "$tmp/err"
expect_rc 0 "$TPSPLIT" inspect --run 2 "$top_srcdir/tests/data/bad/ncclt_two_runs.txt"
expect_grep '^# read as: .*run 2 of 2 \[runs: 1: all_gather_perf, lines 1-42; 2: all_gather_perf, lines 44-85\]$' "$tmp/out"
expect_rc 2 "$TPSPLIT" inspect --run 3 "$top_srcdir/tests/data/bad/ncclt_two_runs.txt"
expect_grep '--run 3: the file holds 2 runs \[runs: 1: all_gather_perf' "$tmp/err"
expect_rc 2 "$TPSPLIT" inspect --run 1 "$d/multi_run.txt"
expect_grep 'multi_run.txt:2: all_reduce_perf log, not all_gather' "$tmp/err"
expect_rc 2 "$TPSPLIT" inspect --ranks 4 "$d/current.txt"
expect_grep '--ranks 4, but the log has 8' "$tmp/err"
expect_rc 2 "$TPSPLIT" inspect --ranks 0 "$d/current.txt"
expect_grep "inspect: bad --ranks '0' \\(an integer in 1..65536" "$tmp/err"

# hand checks.  current.txt line 31 (128 MiB): 134217728 B in 409.09 us ->
# 134217728/409.09e-6/1e9 = 328.0885 GB/s algbw, * 7/8 = 287.0774 busbw (log prints 328.09, 287.08)
expect_rc 0 "$TPSPLIT" inspect "$d/current.txt"
expect_grep '^ +134217728 +8388608 +409\.09 +405\.04 +16777216 +328\.089 +287\.077$' "$tmp/out"
# exponent.txt line 34: 17179869184 B in 2.2e+07 us (printed in full: 22000000) -> 0.7809 GB/s algbw, * 15/16 = 0.7321
expect_rc 0 "$TPSPLIT" inspect "$d/exponent.txt"
expect_grep '^ *17179869184 +536870912 +22000000 +22000000 +1073741824 +0\.781 +0\.732$' "$tmp/out"
# iterstats.txt: the -I columns are kept as i_min_us ... i_cv_pct
expect_rc 0 "$TPSPLIT" inspect "$d/iterstats.txt"
expect_grep '^ +bytes +count +time_us +time_inplace_us +i_min_us +i_max_us +i_p99_us +i_cv_pct ' "$tmp/out"
expect_grep '^ +65536 +4096 +11\.05 +10\.96 +10\.28 +13\.38 +12\.93 +6\.38 ' "$tmp/out"
# json.txt: the -J JSON of current.txt (tests/data/ncclt/json.awk): the same table
expect_rc 0 "$TPSPLIT" inspect "$d/json.txt"
sed 1d "$tmp/out" >"$tmp/j"
expect_rc 0 "$TPSPLIT" inspect "$d/current.txt"
sed 1d "$tmp/out" >"$tmp/c"
cmp -s "$tmp/j" "$tmp/c" && ok || fail "json.txt does not read as current.txt"
expect_grep "^# gpu NVIDIA H20, type bfloat16, ranks 8, gather nccl\$" "$tmp/j"
# JSON of a log: ranks and GPU as values, per-row line numbers
expect_rc 0 "$TPSPLIT" inspect --json "$d/mpi.txt"
expect_grep '"ranks": 16,' "$tmp/out"
expect_grep '"gpu": "NVIDIA H100 80GB HBM3",' "$tmp/out"
expect_grep '"source": "nccl-tests",' "$tmp/out"
finish
