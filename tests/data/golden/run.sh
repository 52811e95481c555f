#!/bin/sh
# tests/data/golden/run.sh CASEFILE [NAME...]: run the golden cases of CASEFILE (all, or those
# named) and compare each with tests/data/golden/expected/NAME.  GOLDEN_UPDATE=1 rewrites the
# expected files instead (only when a change of behaviour is meant: say so in the commit).
# GOLDEN_KEEP=DIR also leaves each case's stdout, stderr and exit status as run (not normalized)
# in DIR/NAME.stdout, NAME.stderr, NAME.rc, for a script that checks more of the same run
# (tests/cli/loo.sh: fit_loo_gpu).
# Needs TPSPLIT and top_srcdir (make check).  Exit 0 all equal, 1 a difference.
set -u
: "${TPSPLIT:?run through make check}" "${top_srcdir:?run through make check}"
export LC_ALL=C TPSPLIT_GNUPLOT= TPSPLIT_THREADS=2
cases=$1; shift
exp=$top_srcdir/tests/data/golden/expected
D=$(cd "$top_srcdir/data" && pwd -P)
export TPSPLIT_DATADIR="$D"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tpsplit-golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0; n=0
TAB=$(printf '\t')
# norm: the paths of this run and the clock replaced by placeholders (stdout and files alike)
norm() {
  sed -e "s|$D|@DATA@|g" -e "s|$W|@WORK@|g" -e "s|$TPSPLIT|@TPSPLIT@|g" \
      -e 's/[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z/@DATE@/g'
}
while IFS="$TAB" read -r name cmd; do
  case $name in ''|'#'*) continue ;; esac
  if [ $# -gt 0 ]; then case " $* " in *" $name "*) ;; *) continue ;; esac; fi
  n=$((n + 1))
  W=$tmp/$name; mkdir -p "$W"
  (cd "$W" && T=$TPSPLIT D=$D W=$W sh -c "$cmd" >"$tmp/$name.stdout" 2>"$tmp/$name.stderr"
   echo "$?" >"$tmp/$name.rc")
  {
    echo "## exit $(cat "$tmp/$name.rc")"
    echo "## stdout"; cat "$tmp/$name.stdout"
    echo "## stderr"; cat "$tmp/$name.stderr"
    echo "## files"
    (cd "$W" && find . -type f | LC_ALL=C sort | while read -r f; do
       printf '%s %s\n' "$(norm <"$f" | sha256sum | cut -c1-16)" "$f"; done)
  } | norm >"$tmp/$name.got"
  [ -z "${GOLDEN_KEEP:-}" ] || cp "$tmp/$name.stdout" "$tmp/$name.stderr" "$tmp/$name.rc" "$GOLDEN_KEEP/"
  if [ "${GOLDEN_UPDATE:-0}" = 1 ]; then
    mkdir -p "$exp"; cp "$tmp/$name.got" "$exp/$name"
  elif ! cmp -s "$tmp/$name.got" "$exp/$name"; then
    fails=$((fails + 1)); echo "FAIL: golden case $name differs:"
    diff "$exp/$name" "$tmp/$name.got" | head -n 20
  fi
done <"$cases"
[ "$n" -gt 0 ] || { echo "FAIL: no golden case ran from $cases"; exit 1; }
echo "$n golden cases, $fails differ"
[ "$fails" -eq 0 ]
