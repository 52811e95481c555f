#!/bin/sh
# tests/cli/bad.sh: the bad-input catalog (tests/data/bad/CATALOG).  Every malformed file must give
# exit 2 and exactly one stderr line "tpsplit: FILE:LINE: message" (or "tpsplit: FILE: ..."
# when no line applies) naming the right line, with the expected message; and with
# -o OUT, no OUT and no temporary file left behind, and an OUT already there left as it was.
# A fourth column names another command reading the file ('@' stands for it).
. "$top_srcdir/tests/cli/lib.sh"

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
  esac
  echo "$tmp/$1"
}

n=0
while IFS="$T" read -r name line re cmd; do
  case "$name" in ''|'#'*) continue ;; esac
  case "$name" in
    GEN:*) f=$(gen "${name#GEN:}") ;;
    *) f="$bad/$name" ;;
  esac
  n=$((n + 1))
  if [ "$line" = - ]; then prefix="tpsplit: $f: "; else prefix="tpsplit: $f:$line: "; fi
  if [ -n "${cmd:-}" ]; then
    # shellcheck disable=SC2086
    set -- $(printf '%s\n' "$cmd" | sed "s|@|$f|")
    (cd "$top_srcdir" && "$TPSPLIT" "$@") >"$tmp/out" 2>"$tmp/err"; rc=$?
  else
    "$TPSPLIT" inspect "$f" >"$tmp/out" 2>"$tmp/err"; rc=$?
  fi
  [ "$rc" -eq 2 ] && ok || fail "$name: exit $rc, want 2"
  nl=$(wc -l <"$tmp/err")
  [ "$nl" -eq 1 ] && ok || fail "$name: $nl stderr lines, want 1: $(head -c 300 "$tmp/err")"
  first=$(head -n 1 "$tmp/err")
  case "$first" in
    "$prefix"*) ok ;;
    *) fail "$name: stderr '$first' does not start with '$prefix'" ;;
  esac
  printf '%s\n' "${first#"$prefix"}" | grep -qE -- "$re" && ok || fail "$name: message '$first' does not match /$re/"
  [ -s "$tmp/out" ] && fail "$name: wrote to stdout" || ok
  [ -n "${cmd:-}" ] && continue
  # -o: no output file, no temporary left behind; an existing OUT is not clobbered
  rm -f "$tmp/o.tsv"
  "$TPSPLIT" inspect -o "$tmp/o.tsv" "$f" >/dev/null 2>"$tmp/err"; rc=$?
  [ "$rc" -eq 2 ] && ok || fail "$name: -o: exit $rc, want 2"
  [ -e "$tmp/o.tsv" ] && fail "$name: -o left $tmp/o.tsv" || ok
  ls "$tmp" | grep -q '^o\.tsv\.tmp' && fail "$name: -o left a temporary file" || ok
  echo keep >"$tmp/o.tsv"
  "$TPSPLIT" inspect -o "$tmp/o.tsv" "$f" >/dev/null 2>&1
  [ "$(cat "$tmp/o.tsv")" = keep ] && ok || fail "$name: -o clobbered an existing $tmp/o.tsv"
  rm -f "$tmp/o.tsv"
done <"$bad/CATALOG"
[ "$n" -ge 80 ] && ok || fail "only $n catalog entries, want >= 80"
echo "$n malformed inputs"

# a bad file among good ones: nothing on stdout, one error line
expect_rc 2 "$TPSPLIT" inspect "$top_srcdir/data/h20_tp8_fused_wqa_wkv.tsv" "$bad/nan.tsv"
[ -s "$tmp/out" ] && fail "partial output before the error" || ok
expect_grep "^tpsplit: $bad/nan.tsv:4: " "$tmp/err"
finish
