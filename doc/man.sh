#!/bin/sh
# doc/man.sh TPSPLIT SRCDIR PKGDATADIR HELP2MAN OUT: the man page tpsplit.1, made by help2man
# from `tpsplit --help` and doc/tpsplit.x, with two sections generated here so that they
# cannot go stale: EXIT STATUS (the one table of `tpsplit --help`, src/base/exit.h; taken out
# of the help text help2man reads, so the page has one exit-status section) and COMMANDS
# (every command's and subcommand's --help, its options included, without its own
# exit-status line: the table above is the one for every command).  tests/cli/man.sh checks it.
set -eu
T=$1 SRC=$2 PKG=$3 H2M=$4 OUT=$5
W=$(mktemp -d "${TMPDIR:-/tmp}/tpsplit-man.XXXXXX")
trap 'rm -rf "$W"' EXIT
case $T in /*) ;; *) T=$PWD/$T ;; esac

# roff-safe text: backslashes, and lines that would read as requests
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
# a help text without its "Exit status" paragraph
noexit() { awk '/^Exit status/ { skip = 1; next } skip && /^$/ { skip = 0; next } !skip'; }

{
  sed "s|@pkgdatadir@|$PKG|g" "$SRC/doc/tpsplit.x"
  echo '[EXIT STATUS]'
  echo 'The same for every command (src/base/exit.h):'
  echo '.nf'
  "$T" --help | awk '/^Exit status/ { f = 1; next } f && /^$/ { exit } f' | esc
  echo '.fi'
  echo '[COMMANDS]'
  echo 'Each command'"'"'s --help, as `tpsplit COMMAND --help` prints it (the exit status: above).'
  echo '.SS "tpsplit (the main job)"'
  echo '.nf'
  "$T" --no-plots --help | noexit | esc
  echo '.fi'
  for c in inspect fit "fit --loo-gpu" "fit --xgpu" predict crossover plot simulate decide validate calibrate \
           bench "bench gemm" "bench split" "bench allgather"; do
    echo ".SS \"tpsplit $c\""
    echo '.nf'
    # shellcheck disable=SC2086
    "$T" $c --help | noexit | esc
    echo '.fi'
  done
} >"$W/tpsplit.x"

# what help2man reads: `tpsplit --help` without its exit-status paragraph (in the section above)
cat >"$W/tpsplit" <<EOF
#!/bin/sh
case "\${1:-}" in --version) exec "$T" --version ;; esac
"$T" --help | awk '/^Exit status/ { skip = 1; next } skip && /^\$/ { skip = 0; next } !skip'
EOF
chmod +x "$W/tpsplit"
# shellcheck disable=SC2086 # "missing help2man" is a command line
$H2M --no-info --include="$W/tpsplit.x" --name="when to split a tensor-parallel projection by token" \
  --output="$OUT" "$W/tpsplit"
