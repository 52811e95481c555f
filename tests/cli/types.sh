#!/bin/sh
# tests/cli/types.sh: kernel paths and gather backends are complete named types (issue 26
# item 3).  Outside the type's own file (model/core/path.[ch], model/core/backend.[ch]) no
# code in src/, model/ or kernels/ may
#   - compare a path or backend id with one of the ids (==, !=, case, or a ternary choosing
#     an id: `x == TPS_PATH_W8A16`, `b != TPS_GATHER_NCCL`, `case TPS_GATHER_AUTO:`),
#   - name a backend id at all (TPS_GATHER_NCCL, _CUSTOM, _AUTO, ...; the ids are read from
#     model/core/backend.h and MODEL_PATHS of Makefile.am, so a new one is checked as well): code asks the row's fields
#     and functions (tps_gather_is_rule, _is_capped, _fallback, _pick, _refuses, ...),
#   - write the backend count as a number (`[3]` arrays of backends, `{NULL, NULL, NULL}`,
#     `b < 3`) or the custom gather's cap (2 MiB) again.
# Allowed: a kernels/ file registering its own id (`TPS_GATHER_NCCL, nccl_open, ...` in
# kernels/gather/gather_nccl.cu; `TPS_PATH_W8A16, {traits}` in kernels/gemm/gemm_w8a16.cu),
# which is the table lookup of the registry, and the lines of the ALLOW list below.
# Also: one float64 CPU GEMM reference (kernels/common/gemm_ref.c) and no second copy.
# FAILS naming each offending FILE:LINE.
set -u
: "${top_srcdir:?run through make check}"
cd "$top_srcdir" || exit 1

# "FILE<TAB>text" lines allowed (the text of the line exactly): facts that only look alike.
ALLOW='model/latency/xgather.c	#define SYMM_REF_BYTES (2.0 * 1024 * 1024)'

fail=0
files=$(find src model kernels -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' | sort)
[ -n "$files" ] || { echo "FAIL: no sources under src/, model/, kernels/"; exit 1; }
own='^(model/core/path\.[ch]|model/core/paths/[a-z0-9_]+\.c|model/core/backend\.[ch])$'
# the ids, read from the one list of each type (a new path or backend is checked with no edit here):
# a path's id is TPS_PATH_ and its file's name in capitals (MODEL_PATHS, Makefile.am)
pids=$(awk '/^MODEL_PATHS = / { f = 1; next } f { for (i = 1; i <= NF; i++) if ($i ~ /\.c$/) { n = $i; sub(/.*\//, "", n)
  sub(/\.c$/, "", n); print "TPS_PATH_" toupper(n) } if ($0 !~ /\\$/) exit }' Makefile.am | paste -sd'|' -)
gids=$(sed -n 's/^ *\(TPS_GATHER_[A-Z0-9_]*\) *[=,].*/\1/p' model/core/backend.h | grep -v '^TPS_GATHER_TERM_' | paste -sd'|' -)
case "$pids" in *TPS_PATH_W8A16*) ;; *) echo "FAIL: no path ids read from MODEL_PATHS (Makefile.am): '$pids'"; fail=1;; esac
case "$gids" in *TPS_GATHER_NCCL*) ;; *) echo "FAIL: no backend ids read from model/core/backend.h: '$gids'"; fail=1;; esac
ids="($pids|$gids)"
gidsx="($gids)"

check() { # FILE REGEX WHAT
  scan "$2" "$3" "$1"
}
# scan REGEX WHAT FILE...: every line of the files matching REGEX, outside comment lines and the
# ALLOW list, as "FAIL: FILE:LINE: WHAT: text" (one grep over all the files: a process or two
# per file cost this test 30 s of CPU)
scan() {
  re=$1; what=$2; shift 2
  [ $# -gt 0 ] || return 0
  grep -nHE -- "$re" "$@" /dev/null | awk -v what="$what" -v allow="$ALLOW" '
    BEGIN { n = split(allow, a, "\n"); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
    { f = $0; sub(/:.*/, "", f); rest = substr($0, length(f) + 2)
      ln = rest; sub(/:.*/, "", ln); text = substr(rest, length(ln) + 2)
      if (text ~ /^ *(\/\*|\*|\/\/)/ || ((f "\t" text) in ok)) next
      print "FAIL: " f ":" ln ": " what ": " text }'
}
checked=$(printf '%s\n' $files | grep -Ev "$own")
gfiles=$(printf '%s\n' $checked | grep -E '^kernels/gather/gather_[^/]*\.cu$' || true)
ofiles=$(printf '%s\n' $checked | grep -Ev '^kernels/gather/gather_[^/]*\.cu$')
out=$(
  scan "(==|!=) *$ids\\b|\\b$ids *(==|!=)|case +$ids\\b|\\? *$ids *:|: *$ids *;" "an id compared or chosen outside its type's file" $checked
  # a backend id named outside its type (kernels/: only the file that registers it, as its ops' id)
  scan "$gidsx\\b" "a backend id" $gfiles | grep -v ": *TPS_GATHER_[A-Z0-9_]*, [a-z0-9_]*_open,"
  scan "$gidsx\\b" "a backend id named (ask the row: model/core/backend.h)" $ofiles
  scan "TPS_GATHER_CUSTOM_CAP_BYTES|2u? *\\* *1024u? *\\* *1024u?|2\\.0 *\\* *1024(\\.0)? *\\* *1024|2097152" "the custom cap written again (tps_gather_cap_default)" $checked
  scan "\\{ *NULL, *NULL, *NULL *\\}|[a-z]+ < 3; *[a-z]+\\+\\+\\) .*(gather|backend)" "a backend count written as 3" $checked
)
if [ -n "$out" ]; then echo "$out"; fail=1; fi

# one float64 CPU GEMM reference
refs=$(grep -rlE --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
         'gsl_blas_dgemm|cblas_dgemm|\+= *\(double\) *[a-z_]+\[[^]]*\] *\* *\(double\)' src model kernels tests/unit |
       grep -v '^kernels/common/gemm_ref\.c$' || true)
if [ -n "$refs" ]; then echo "FAIL: a second float64 GEMM reference: $refs (kernels/common/gemm_ref.h is the one)"; fail=1; fi
grep -q 'gsl_blas_dgemm\|cblas_dgemm' kernels/common/gemm_ref.c || { echo "FAIL: kernels/common/gemm_ref.c lost its dgemm"; fail=1; }

# the check itself finds what it must (a planted comparison, in a temporary file)
tmp=${TMPDIR:-/tmp}/types.$$; mkdir -p "$tmp" && trap 'rm -rf "$tmp"' EXIT
printf 'int f(int b) {\n  if (b == TPS_GATHER_CUSTOM) return 1;\n  return b != TPS_PATH_W8A16 ? TPS_GATHER_AUTO : 0;\n}\n' > "$tmp/x.c"
n=$(check "$tmp/x.c" "(==|!=) *$ids\\b|\\b$ids *(==|!=)|case +$ids\\b|\\? *$ids *:|: *$ids *;" x | wc -l)
[ "$n" -eq 2 ] || { echo "FAIL: tests/cli/types.sh: the planted comparisons were found $n times, not 2"; fail=1; }

[ "$fail" -eq 0 ] && echo "ok: no path or backend id compared or named outside its type's file; one float64 GEMM reference"
exit "$fail"
