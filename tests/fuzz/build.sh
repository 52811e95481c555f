#!/bin/sh
# build.sh: `make fuzz` -> tests/fuzz/bin/fuzz_NAME, one libFuzzer binary per parser.
#   FUZZ_CFLAGS=... FUZZ_LIBS=... FUZZ_DATADIRS="PKGDATADIR|SRCDATADIR" \
#   build.sh CC OUTDIR SRCDIR BUILDDIR NAME... -- LIBSOURCE...
# The library sources are compiled once (coverage for the fuzzer, ASan and UBSan), each
# harness linked against them.  Skipped (exit 0, one line) when CC is not found.
set -eu
cc=$1; out=$2; src=$3; build=$4; shift 4
if ! command -v "$cc" >/dev/null 2>&1; then echo "make fuzz: $cc not found, skipped (install clang)"; exit 0; fi
names=""
while [ "$1" != -- ]; do names="$names $1"; shift; done
shift
pkg=${FUZZ_DATADIRS%%|*}; srcdata=${FUZZ_DATADIRS#*|}
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
mkdir -p "$out/obj"
objs=""
cc1() { # cc1 EXTRA... : the compiler with every flag, the data-dir macros quoted once
  # shellcheck disable=SC2086
  "$cc" $flags -DHAVE_CONFIG_H -I"$build" -I"$src" \
    "-DTPS_PKGDATADIR=\"$pkg\"" "-DTPS_SRCDATADIR=\"$srcdata\"" ${FUZZ_CFLAGS:-} "$@"
}
for s in "$@"; do
  o="$out/obj/$(echo "$s" | tr / _).o"
  cc1 -fsanitize=fuzzer-no-link -c "$src/$s" -o "$o"
  objs="$objs $o"
done
for n in $names; do
  # shellcheck disable=SC2086
  cc1 -fsanitize=fuzzer "$src/tests/fuzz/fuzz_$n.c" $objs ${FUZZ_LIBS:-} -o "$out/fuzz_$n"
  echo "  FUZZ     $out/fuzz_$n"
done
