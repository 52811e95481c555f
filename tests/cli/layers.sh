#!/bin/sh
# tests/cli/layers.sh: the include directions of doc/architecture.md hold (issue 26 item 1).
# Every #include "..." of src/, model/ and kernels/ is written from the top of the tree
# ("model/core/path.h"), names a file that exists, and goes only where its folder may go:
#   model/core, model/numeric  -> model/core, model/numeric
#   model/core/paths           -> model/core/path.h (a path is data)
#   model/latency              -> model/core, model/numeric, model/latency
#   model/fit                  -> ... latency, model/fit
#   model/predict              -> ... fit, model/predict
#   model/calib, model/sim     -> ... predict, itself
#   kernels/common             -> model/core, kernels/common
#   kernels/gemm, kernels/gather -> model/core, kernels/common, itself
#   kernels/bench              -> model/core, kernels/common, kernels/gemm, kernels/gather, itself
#   src/base                   -> model/*, src/base
#   src/io                     -> model/*, src/base, src/io
#   src/evidence               -> model/*, src/base, src/io, src/evidence
#   src/plot                   -> model/*, src/base, src/io, src/plot
#   src/cli, src/cli/calibrate -> model/*, src/*, kernels/bench/bench.h and kernels/gemm/w8quant.h
#                                 (the bench entry points and the W8A16 override check: plain C)
# model/ includes no src/, kernels/ or I/O header (stdio.h only for snprintf is allowed);
# kernels/ nothing of src/.  The size limits of item 7 are tests/cli/sizes.sh's.
set -u
: "${top_srcdir:?run through make check}"
cd "$top_srcdir" || exit 1
fails=0; n=0
allowed() { # FROMDIR TODIR -> 0 when allowed
  f=$1; t=$2
  case $f in
    model/core|model/numeric) set -- model/core model/numeric ;;
    model/core/paths) set -- model/core/path.h ;;
    model/latency) set -- model/core model/numeric model/latency ;;
    model/fit) set -- model/core model/numeric model/latency model/fit ;;
    model/predict) set -- model/core model/numeric model/latency model/fit model/predict ;;
    model/calib|model/sim) set -- model/core model/numeric model/latency model/fit model/predict "$f" ;;
    kernels/common) set -- model/core kernels/common ;;
    kernels/gemm|kernels/gather) set -- model/core kernels/common "$f" ;;
    kernels/bench) set -- model/core kernels/common kernels/gemm kernels/gather kernels/bench ;;
    src/base) set -- model/ src/base ;;
    src/io) set -- model/ src/base src/io ;;
    src/evidence) set -- model/ src/base src/io src/evidence ;;
    src/plot) set -- model/ src/base src/io src/plot ;;
    src/cli|src/cli/calibrate) set -- model/ src/ kernels/bench/bench.h kernels/gemm/w8quant.h ;;
    *) return 1 ;;
  esac
  for a in "$@"; do
    case $t in "$a"|"$a"/*) return 0 ;; esac
    case $a in */) case $t in "$a"*) return 0 ;; esac ;; esac
  done
  return 1
}
for f in $(find src model kernels -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | LC_ALL=C sort); do
  d=${f%/*}
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    [ "$inc" = config.h ] && continue
    n=$((n + 1))
    if [ ! -f "$inc" ] && [ ! -f "${top_builddir:-.}/$inc" ]; then # (or made by the build: src/io/formats.def, model/core/paths.def)
      echo "FAIL: $f includes \"$inc\": not a path from the top of the tree"; fails=$((fails + 1)); continue; fi
    allowed "$d" "$inc" || { echo "FAIL: $f includes $inc: $d may not depend on ${inc%/*}"; fails=$((fails + 1)); }
  done
done
# model/ is pure: no file I/O, no CUDA
for f in $(find model -type f \( -name '*.c' -o -name '*.h' \)); do
  if grep -nE '\b(fopen|fread|fwrite|fprintf|printf|puts|getenv|cuda[A-Z][a-zA-Z]*)\b *\(' "$f" >/dev/null; then
    echo "FAIL: $f does I/O or CUDA:"; grep -nE '\b(fopen|fread|fwrite|fprintf|printf|puts|getenv|cuda[A-Z][a-zA-Z]*)\b *\(' "$f" | head -3
    fails=$((fails + 1))
  fi
done
# every folder of the layers has a README saying what lives there and what it may include
for d in src/base src/io src/evidence src/plot src/cli model/core model/core/paths model/numeric model/latency model/fit \
         model/predict model/calib model/sim kernels/common kernels/gemm kernels/gather kernels/bench \
         tests/unit tests/cli tests/data tests/fuzz tools src/cli/calibrate; do
  [ -s "$d/README" ] || [ -s "$d/README.md" ] || { echo "FAIL: $d has no README"; fails=$((fails + 1)); }
done
# measurements are read through the one loader (src/io/measure.h: tps_meas_load*, and
# tps_table_read / tps_meas_load_aic on it): no file outside src/io calls a format's own reader
if grep -rnE '\btps_(aic_read(_spec|_mem)?|ncclt_parse(_opts)?)[[:space:]]*\(' src model kernels | grep -v '^src/io/'; then
  echo "FAIL: a format's reader called outside src/io (read through src/io/measure.h)"; fails=$((fails + 1))
fi
# every source file opens with a comment naming itself ("/* evidence.h: ..."), so that a file
# renamed keeps no old name a reader would look for (the old predcli.c, partsrc.h, throut.c)
for f in $(find src model kernels -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \)); do
  b=${f##*/}
  case $(head -n 1 "$f") in
    "/* $b:"*|"/* $b "*) ;;
    *) echo "FAIL: $f: its first line does not name it ('/* $b: what it is')"; fails=$((fails + 1)) ;;
  esac
done
[ "$n" -gt 100 ] || { echo "FAIL: only $n includes seen"; fails=$((fails + 1)); }
echo "$n includes checked, $fails failures"
[ "$fails" -eq 0 ]
