#!/bin/sh
# tests/cli/sizes.sh: the size limits of issue 26 item 7 hold in src/ and model/: no file over
# 800 lines, no function over 120 lines.  FAILS on any file or function over its limit that
# the allow-list below does not name.
# A function is counted from the first line of its definition (a line at column 0 that
# starts with a name and whose text, up to a "{" ending a line, holds a "(" and no "=") to
# the matching "}" at column 0, both included; one-line definitions count 1.  Structs,
# enums and initializers ("= {") are not functions.
set -u
: "${top_srcdir:?run through make check}"
cd "$top_srcdir" || exit 1
MAX_FILE=800
MAX_FUNC=120

# Allowed over the limits for now, one "FILE" (the whole file: its length and its functions)
# or "FILE:FUNCTION" a line.  Remove an entry when its split lands; an entry that no longer
# exceeds anything is reported (not failed) so that the list only shrinks.
ALLOW='
# not split yet (issue 26 item 7; see the closing note):
'

fnlen() { # FILE... -> "FILE:LINE NAME LENGTH" per function
  awk '
    FNR == 1 { inside = 0; sig = 0; sigtxt = "" }
    {
      line = $0
      if (inside) {
        if (line ~ /^}/) { print FILENAME ":" start " " name " " (FNR - start + 1); inside = 0; sig = 0; sigtxt = "" }
        next
      }
      if (line ~ /^[ \t]*$/ || line ~ /^#/ || line ~ /^[ \t]*(\/\*|\*|\/\/)/) next
      if (!sig && line ~ /^[A-Za-z_].*\{.*\}[ \t;]*$/) next          # a one-line definition
      if (line ~ /^[A-Za-z_]/ && !sig) { sig = FNR; sigtxt = "" }
      if (sig) sigtxt = sigtxt " " line
      if (sig && line ~ /\{[ \t]*$/) {
        if (sigtxt ~ /\(/ && sigtxt !~ /=/) {
          s = sigtxt; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/); name = w[n]
          inside = 1; start = sig
        } else {                                                        # struct, enum, table
          while ((getline l) > 0) if (l ~ /^}/) break
          sig = 0; sigtxt = ""
        }
        next
      }
      code = line; sub(/[ \t]*\/\*.*\*\/[ \t]*$/, "", code)            # a declaration with a comment after it
      if (sig && code ~ /;[ \t]*$/) { sig = 0; sigtxt = "" }
    }' "$@"
}

allowed() { # FILE [FUNCTION] -> 0 when the allow-list names it
  printf '%s\n' "$ALLOW" | grep -v '^#' | grep -qxF -e "$1" -e "$1:${2:-}"
}

fails=0; nfiles=0; nfuncs=0
files=$(find src model -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
used=''
for f in $files; do
  nfiles=$((nfiles + 1))
  n=$(wc -l <"$f")
  if [ "$n" -gt "$MAX_FILE" ]; then
    if allowed "$f"; then used="$used $f"; else echo "FAIL: $f: $n lines (at most $MAX_FILE)"; fails=$((fails + 1)); fi
  fi
done
# shellcheck disable=SC2086
fnlen $files >"${TMPDIR:-/tmp}/sizes.$$" || { echo "FAIL: the function count did not run"; exit 1; }
while read -r at name len; do
  nfuncs=$((nfuncs + 1))
  [ "$len" -gt "$MAX_FUNC" ] || continue
  f=${at%%:*}
  if allowed "$f" "$name"; then used="$used $f $f:$name"; continue; fi
  echo "FAIL: $at $name(): $len lines (at most $MAX_FUNC)"
  fails=$((fails + 1))
done <"${TMPDIR:-/tmp}/sizes.$$"
rm -f "${TMPDIR:-/tmp}/sizes.$$"
for a in $(printf '%s\n' "$ALLOW" | grep -v '^#'); do
  case " $used " in *" $a "*) ;; *) echo "note: allow-list entry $a exceeds nothing now: remove it" ;; esac
done
# the counter itself: a known function and a known total (a broken count passes nothing)
[ "$nfuncs" -gt 500 ] || { echo "FAIL: only $nfuncs functions counted"; fails=$((fails + 1)); }
probe=$(printf 'static int f(int a,\n          int b) {\n  return a;\n}\nstruct s {\n  int x;\n};\nint g(void) { return 0; }\nint\nh(void)\n{\n  if (1) {\n  }\n  return 1;\n}\n' >"${TMPDIR:-/tmp}/sizes_probe.$$.c"; fnlen "${TMPDIR:-/tmp}/sizes_probe.$$.c" | sed 's/^[^ ]* //' | tr '\n' ';')
rm -f "${TMPDIR:-/tmp}/sizes_probe.$$.c"
[ "$probe" = "f 4;h 7;" ] || { echo "FAIL: the function counter reads a known file as '$probe', want 'f 4;h 7;'"; fails=$((fails + 1)); }
echo "$nfiles files, $nfuncs functions checked, $fails over the limits"
[ "$fails" -eq 0 ]
