#!/bin/sh
# tests/cli/cudeps.sh: the .cu objects cannot be left stale by a header.  automake tracks no
# dependencies of .cu files (they compile through a suffix rule), so Makefile.am makes every
# object of CU_OBJECTS depend on every file of CU_DEPS.  This checks, on the tree:
#   - every .cu file under kernels/ and tests/ has its object in CU_OBJECTS;
#   - every header under kernels/ and model/core/ is in CU_DEPS, and every CU_DEPS entry exists
#     (model/core/paths.def: built, from MODEL_PATHS);
#   - every file a .cu file includes, followed through the headers it reaches, is in CU_DEPS.
set -u
: "${top_srcdir:?run through make check}"
cd "$top_srcdir" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# a variable of Makefile.am, continuation lines joined, $(srcdir)/ and $(OBJEXT) written plainly
var() {
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' Makefile.am | sed -n "s/^$1 = //p" | head -1 |
    sed -e 's/\$(srcdir)\///g' -e 's/\$(OBJEXT)/o/g' | tr -s ' \t' '\n' | sed '/^$/d'
}
deps=$(var CU_DEPS); objs=$(var CU_OBJECTS)
[ -n "$deps" ] && [ -n "$objs" ] || { echo "FAIL: Makefile.am has no CU_DEPS or CU_OBJECTS"; exit 1; }
has() { printf '%s\n' "$2" | grep -qx "$1"; }
for cu in $(find kernels tests -name '*.cu' | sort); do
  has "${cu%.cu}.o" "$objs" || fail "Makefile.am CU_OBJECTS: no ${cu%.cu}.o for $cu"
done
for h in $(find kernels model/core -maxdepth 2 \( -name '*.h' -o -name '*.cuh' \) | sort); do
  has "$h" "$deps" || fail "Makefile.am CU_DEPS: $h is missing (a header under kernels/ or model/core/)"
done
for d in $deps; do
  [ "$d" = model/core/paths.def ] || [ -f "$d" ] || fail "Makefile.am CU_DEPS: $d does not exist"
done
# the include closure of each .cu file
n=0
for cu in $(find kernels tests -name '*.cu' | sort); do
  todo=$cu; seen=
  while [ -n "$todo" ]; do
    f=${todo%% *}; [ "$todo" = "$f" ] && todo= || todo=${todo#* }
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" 2>/dev/null); do
      case " $seen " in *" $inc "*) continue ;; esac
      seen="$seen $inc"; n=$((n + 1))
      has "$inc" "$deps" || fail "$f includes $inc, which CU_DEPS of Makefile.am does not list"
      [ -f "$inc" ] && todo="${todo:+$todo }$inc"
    done
  done
done
[ "$n" -gt 20 ] || fail "only $n includes followed: the scan found too little"
[ "$fails" -eq 0 ] && echo "cudeps: $(printf '%s\n' "$objs" | wc -l) objects, $(printf '%s\n' "$deps" | wc -l) headers, $n includes followed: ok"
exit $((fails > 0))
