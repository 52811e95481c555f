#!/bin/sh
# tests/cli/env.sh: the environment variables tpsplit reads are one table (src/cli/envvars.c).  Its
# rows, as `tpsplit --help` prints them, must equal doc/environment.md's rows and the man
# page's (when built); every variable the sources read (getenv literals, the W8A16
# overrides of kernels/gemm/w8quant.c, the launcher variables of kernels/gather/gather_world.c) must
# be a row; each command's --help must name the rows of that command and no others.
. "$top_srcdir/tests/cli/lib.sh"

# the names in the Environment section of `tpsplit [CMD] --help`, sorted
help_env() {
  "$TPSPLIT" "$@" --help | awk '/^Environment:/ { f = 1; next } f && /^$/ { exit } f && /^  [A-Z]/ { print $1 }' | sort
}
help_env > "$tmp/help"
[ -s "$tmp/help" ] && ok || fail "tpsplit --help has no Environment section"
awk -F'|' '/^\| `[A-Z]/ { gsub(/[` ]/, "", $2); print $2 }' "$top_srcdir/doc/environment.md" | sort > "$tmp/md"
if cmp -s "$tmp/help" "$tmp/md"; then ok; else fail "--help and doc/environment.md differ: $(diff "$tmp/help" "$tmp/md" | tr '\n' ' ')"; fi
if [ -f "$top_builddir/tpsplit.1" ]; then
  while read -r v; do
    grep -q "$v" "$top_builddir/tpsplit.1" || fail "tpsplit.1 lacks $v"
  done < "$tmp/help"
  ok
fi

# every variable the sources read
{
  grep -rhoE 'getenv\("[A-Za-z_0-9]+"\)' "$top_srcdir/src" "$top_srcdir/model" "$top_srcdir/kernels" | sed 's/getenv("//; s/")//'
  grep -hoE '^ *\{"TPS_W8_[A-Z_0-9]+"' "$top_srcdir/kernels/gemm/w8quant.c" | sed 's/.*{"//; s/"//'
  for f in gather/gather_world.c bench/bench_gemm.cu; do
    [ -f "$top_srcdir/kernels/$f" ] || echo "NO-SUCH-FILE-kernels/$f"
    awk '/(vars|envs)\[\] = \{/ { f = 1 } f { print } f && /\};/ { f = 0 }' "$top_srcdir/kernels/$f" |
      grep -oE '"[A-Z][A-Z_0-9]+"' | tr -d '"'
  done
} | sort -u > "$tmp/src"
[ "$(wc -l < "$tmp/src")" -ge 10 ] && ok || fail "found only $(wc -l < "$tmp/src") variables in the sources"
missing=$(comm -23 "$tmp/src" "$tmp/help" | tr '\n' ' ')
[ -z "$missing" ] && ok || fail "read by the sources but not in the table: $missing"

# each command's --help: exactly the rows whose commands column names it (or all)
for c in inspect fit predict crossover plot simulate decide validate calibrate; do
  help_env "$c" > "$tmp/c"
  awk -F'|' -v c="\`$c\`" '/^\| `[A-Z]/ && ($4 ~ / all / || index($4, c)) { gsub(/[` ]/, "", $2); print $2 }' \
    "$top_srcdir/doc/environment.md" | sort > "$tmp/want"
  if cmp -s "$tmp/c" "$tmp/want"; then ok; else fail "$c --help environment: $(tr '\n' ' ' < "$tmp/c") want $(tr '\n' ' ' < "$tmp/want")"; fi
done
expect_rc 0 "$TPSPLIT" plot --help
expect_grep '^  TPSPLIT_GNUPLOT ' "$tmp/out"
expect_rc 0 "$TPSPLIT" crossover --help
expect_grep '^  TPSPLIT_THREADS ' "$tmp/out"
# the subcommands whose fits the variable splits over threads say so in their own help
for s in --loo-gpu --xgpu; do
  expect_rc 0 "$TPSPLIT" fit $s --help
  expect_grep '^  TPSPLIT_THREADS ' "$tmp/out"
done
finish
