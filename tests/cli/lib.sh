# tests/cli/lib.sh: helpers for the shell tests (sourced).  Exit codes: 0 pass, 77 skip, 1 fail.
# Needs TPSPLIT and top_srcdir from the harness (Makefile.am AM_TESTS_ENVIRONMENT).
set -u
: "${TPSPLIT:?run through make check}"
: "${top_srcdir:?run through make check}"
export LC_ALL=C
fails=0
checks=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tpsplit-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
# expect_rc WANT CMD...: run CMD, compare its exit code.
expect_rc() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "'$*' exited $rc, want $want; stderr: $(head -c 400 "$tmp/err")"; else ok; fi
}
# expect_grep PATTERN FILE
expect_grep() { if grep -qE -- "$1" "$2"; then ok; else fail "'$1' not found in $2: $(head -c 400 "$2")"; fi; }
expect_nogrep() { if grep -qE -- "$1" "$2"; then fail "'$1' unexpectedly in $2"; else ok; fi; }
# near A B RELTOL: |A-B| <= RELTOL*|B|
near() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN{d=a-b; if(d<0)d=-d; m=b<0?-b:b; exit !(d<=r*m)}'; }
expect_near() { if near "$1" "$2" "$3"; then ok; else fail "${4:-value} $1 not within $3 of $2"; fi; }
finish() {
  echo "$checks checks passed, $fails failed"
  [ "$fails" -eq 0 ] || exit 1
  exit 0
}
# path_files: the files of the kernel paths (model/core/paths/<name>.c), in the order of the
# one list MODEL_PATHS of Makefile.am (the order of tps_paths[] and of every output)
path_files() {
  awk '/^MODEL_PATHS = / { f = 1; next } f { for (i = 1; i <= NF; i++) if ($i ~ /\.c$/) print ENVIRON["top_srcdir"] "/" $i
    if ($0 !~ /\\$/) exit }' "$top_srcdir/Makefile.am"
}
