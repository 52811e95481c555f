#!/bin/sh
# tests/cli/bad.sh: the bad-input catalog (tests/data/bad/CATALOG).  Every malformed file must give
# exit 2 and exactly one stderr line "tpsplit CMD: FILE:LINE: message" (or "tpsplit CMD: FILE: ..."
# when no line applies) naming the right line, with the expected message; and with
# -o OUT, no OUT and no temporary file left behind, and an OUT already there left as it was.
# A fourth column names another command reading the file ('@' stands for it).
. "$top_srcdir/tests/cli/lib.sh"

top_srcdir=$(cd "$top_srcdir" && pwd) # the workers run from there
bad="$top_srcdir/tests/data/bad"
T=$(printf '\t')
H="tokens${T}rows_per_rank${T}replicated_us${T}split_us"

gen() { # gen NAME: make the run-time inputs, print their path
  case "$1" in
    long_line.tsv) # a 10 MiB line (line 4), too big to commit
      { printf '#@ tp: 8\n%s\n6\t1\t14.1\t23.2\n' "$H"
        head -c 10485760 /dev/zero | tr '\0' 'x'; echo; } >"$tmp/long_line.tsv" ;;
    binary.bin) # an ELF-like header: NUL bytes on line 1
      printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\003\000>\000\001\000\000\000' >"$tmp/binary.bin" ;;
    aic_bomb.tsv.gz) # 300 KiB of gzip that inflate to 70 MB, above the 64 MiB bound
      { printf '# source: ai-dynamo/aiconfigurator x\n'; head -c 70000000 /dev/zero | tr '\0' a; } | gzip -1 >"$tmp/aic_bomb.tsv.gz" ;;
    directory) mkdir -p "$tmp/directory" ;;
    missing.tsv) rm -f "$tmp/missing.tsv" ;;
    devzero) echo /dev/zero; return ;;
    thr_*.json) # one key of the bundled thresholds file respelled (line 401: a TP key, 283: the shape)
      case "$1" in
        thr_tp_plus.json) ed='401s/"8"/"+8"/' ;;
        thr_tp_space.json) ed='401s/"8"/" 8"/' ;;
        thr_tp_zero.json) ed='401s/"8"/"08"/' ;;
        thr_shape_zero.json) ed='283s/"5120x1792"/"05120x1792"/' ;;
        thr_dup_tp.json) ed='401s/"8": {/"8": {}, "8": {/' ;;
        thr_missing.json) ed='780s/"split_from_tokens"/"split_from_tokenz"/' ;; # its entry opens on line 754
        thr_obpt.json) ed='311s/3584/3585/' ;; # a 5120x1792 entry's out_bytes_per_token
        thr_rule.json) ed='s/when T >= split_from_tokens/when T > split_from_tokens/' ;; # the rule is line 828
        thr_no_schema.json) ed='s/"schema_version": 1/"schema_versio": 1/' ;; # missing at the root: line 1, where it opens
      esac
      sed "$ed" "$top_srcdir/data/calibrate/thresholds_h200_5120x1792.json" >"$tmp/$1" ;;
  esac
  echo "$tmp/$1"
}

# one catalog entry; its files in the worker's folder $w, run from $top_srcdir; ok/fail print
# (see worker).  Few processes per entry: the catalog is most of `make check`'s time.
run_case() {
  name=$1 line=$2 re=$3 cmd=$4
  case "$name" in
    GEN:*) f=$(gen "${name#GEN:}") ;;
    *) f="$bad/$name" ;;
  esac
  c=inspect # the command, named by the message: "tpsplit CMD: FILE:LINE: what"
  [ -n "${cmd:-}" ] && c=${cmd%% *}
  if [ "$line" = - ]; then prefix="tpsplit $c: $f: "; else prefix="tpsplit $c: $f:$line: "; fi
  rm -f "$w/o.tsv"
  if [ -n "${cmd:-}" ]; then
    # shellcheck disable=SC2086
    set -- $(printf '%s\n' "$cmd" | sed "s|@|$f|")
    "$TPSPLIT" "$@" >"$w/out" 2>"$w/err"; rc=$?
  else # inspect @, with -o: no OUT and no temporary may be left either
    "$TPSPLIT" inspect -o "$w/o.tsv" "$f" >"$w/out" 2>"$w/err"; rc=$?
  fi
  [ "$rc" -eq 2 ] && ok || fail "$name: exit $rc, want 2"
  nl=0 first=
  while IFS= read -r l || [ -n "$l" ]; do nl=$((nl + 1)); [ "$nl" -eq 1 ] && first=$l; done <"$w/err"
  [ "$nl" -eq 1 ] && ok || fail "$name: $nl stderr lines, want 1: $(head -c 300 "$w/err")"
  case "$first" in
    "$prefix"*) ok ;;
    *) fail "$name: stderr '$first' does not start with '$prefix'" ;;
  esac
  printf '%s\n' "${first#"$prefix"}" | grep -qE -- "$re" && ok || fail "$name: message '$first' does not match /$re/"
  [ -s "$w/out" ] && fail "$name: wrote to stdout" || ok
  [ -n "${cmd:-}" ] && return 0
  [ -e "$w/o.tsv" ] && fail "$name: -o left $w/o.tsv" || ok
  for t in "$w"/o.tsv.tmp*; do [ -e "$t" ] && fail "$name: -o left a temporary file $t"; done
  # an OUT already there is not clobbered
  echo keep >"$w/o.tsv"
  "$TPSPLIT" inspect -o "$w/o.tsv" "$f" >/dev/null 2>&1
  read -r kept <"$w/o.tsv"
  [ "$kept" = keep ] && ok || fail "$name: -o clobbered an existing $w/o.tsv"
}

# worker K: the entries K, K + J, K + 2J ... of the catalog (J = $jobs), each line of its
# output "ok" or "FAIL: ..."; the workers run at once (the catalog took 104 s one by one)
worker() (
  w="$tmp/w$1"
  mkdir -p "$w"
  cd "$top_srcdir" || exit 1
  ok() { echo ok; }
  fail() { echo "FAIL: $*"; }
  i=0
  while IFS="$T" read -r name line re cmd; do
    case "$name" in ''|'#'*) continue ;; esac
    i=$((i + 1))
    [ $((i % jobs)) -eq "$1" ] || continue
    run_case "$name" "$line" "$re" "${cmd:-}" </dev/null
  done <"$bad/CATALOG"
)
jobs=${TPSPLIT_TEST_JOBS:-2}
k=0
while [ "$k" -lt "$jobs" ]; do worker "$k" >"$tmp/res$k" & k=$((k + 1)); done
wait
cat "$tmp"/res* >"$tmp/res"
while read -r r; do
  case "$r" in ok) ok ;; *) fail "${r#FAIL: }" ;; esac
done <"$tmp/res"
n=$(grep -cv '^\(#\|$\)' "$bad/CATALOG")
[ "$n" -ge 80 ] && ok || fail "only $n catalog entries, want >= 80"
echo "$n malformed inputs"

# a bad file among good ones: nothing on stdout, one error line
expect_rc 2 "$TPSPLIT" inspect "$top_srcdir/data/h20_tp8_fused_wqa_wkv.tsv" "$bad/nan.tsv"
[ -s "$tmp/out" ] && fail "partial output before the error" || ok
expect_grep "^tpsplit inspect: $bad/nan.tsv:4: " "$tmp/err"
finish
