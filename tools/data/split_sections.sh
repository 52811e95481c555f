#!/bin/sh
# tools/data/split_sections.sh ARCHIVE... : one file per table of the stage `shapes` of
# tools/device/run_h200.sh, whose output (ARCHIVE, <prefix>_shape_<K>x<N>.tsv) holds the paths'
# tables one after another, each under a line "## path P K k N n exit 0".  Every section of exit 0
# becomes <dir of ARCHIVE>/<prefix>_<k>x<n>_<P>.tsv: the section's lines unchanged (its "##" line
# left out), after one "# provenance:" line naming the device (the section's "# gpu:" line), its date,
# ARCHIVE and its section line.  A tpsplit input holds one table (the loader refuses a second
# "#@ gpu:"), so data/parts.tsv can name each file.
# Refused with ARCHIVE:line, nothing written (exit 1): a section that did not exit 0 or was not run, a
# section without its "# date:" or "# gpu:" line, a path that is not a name (a-z, 0-9, -) or a K or N
# that is not a whole number (they name the file), a section repeating another's path, K and N (one
# file each), an ARCHIVE without sections; and an output file that exists already (an output never
# replaces an input).  Every file of one ARCHIVE is written under a temporary name, removed on any
# failure, and renamed only once all of them are whole.
set -eu
[ $# -ge 1 ] || { echo "usage: tools/data/split_sections.sh ARCHIVE..." >&2; exit 2; }
tmps=
trap 'for t in $tmps; do rm -f "$t"; done' EXIT
for a in "$@"; do
  [ -r "$a" ] || { echo "$a: cannot read" >&2; exit 1; }
  base=$(basename "$a" .tsv)
  case $base in *_shape_*) ;; *) echo "$a: not a <prefix>_shape_<K>x<N>.tsv archive" >&2; exit 1 ;; esac
  prefix=${base%%_shape_*}
  dir=$(dirname "$a")
  # pass 1: the sections, their output names and provenance lines, checked before anything is written
  list=$(awk -v a="$a" -v prefix="$prefix" -v dir="$dir" '
    function fail(ln, msg) { printf "%s:%d: %s\n", a, ln, msg > "/dev/stderr"; bad = 1; exit 1 }
    function close_sec() {
      if (!nsec) return
      if (date == "") fail(hl, "section \"" head "\" has no \"# date:\" line")
      if (gpu == "") fail(hl, "section \"" head "\" has no \"# gpu:\" line")
      printf "%d\t%d\t%s/%s_%sx%s_%s.tsv\t%s\t%s\t%s\n", hl + 1, NR0, dir, prefix, k, n, p, date, gpu, head
    }
    /^## / {
      NR0 = NR - 1; close_sec()
      head = $0; hl = NR; nsec++; date = ""; gpu = ""
      if ($2 != "path" || $4 != "K" || $6 != "N" || $8 != "exit" || NF != 9) fail(NR, "not a \"## path P K k N n exit c\" line: " $0)
      if ($9 != "0") fail(NR, "section \"" $0 "\" did not exit 0: not split")
      p = $3; k = $5; n = $7
      if (p !~ /^[a-z0-9][a-z0-9-]*$/ || k !~ /^[1-9][0-9]*$/ || n !~ /^[1-9][0-9]*$/)
        fail(NR, "section \"" $0 "\": a path of a-z, 0-9 and - and a whole K and N wanted (they name its file)")
      if ((p " " k " " n) in seen) fail(NR, "section \"" $0 "\" repeats the one at line " seen[p " " k " " n] " (one file each)")
      seen[p " " k " " n] = NR
      next
    }
    !nsec { fail(NR, "a line before the first \"## path\" section") }
    /^# date: / && date == "" { date = $3 }
    /^# gpu: / && gpu == "" { g = $0; sub(/^# gpu: /, "", g); sub(/,.*/, "", g); gpu = g }
    END { if (bad) exit 1; if (!nsec) fail(0, "no \"## path\" section"); NR0 = NR; close_sec() }' "$a")
  # pass 2: each table under a temporary name (the trap removes them on any failure), renamed once all are whole
  while IFS='	' read -r from to out date gpu head; do
    if [ -e "$out" ]; then echo "$out: exists; not replaced (remove it first to split $a again)" >&2; exit 1; fi
    {
      printf '# provenance: a lent %s, %s, driver and runtime in the lines below; the table of section "%s" (lines %s-%s) of %s, the stage shapes of tools/device/run_h200.sh (its paths'"'"' tables one after another), split into one file per table by tools/data/split_sections.sh\n' \
        "$gpu" "$date" "$head" "$from" "$to" "$(basename "$a")"
      sed -n "${from},${to}p" "$a"
    } >"$out.tmp"
    tmps="$tmps $out.tmp"
  done <<EOF
$list
EOF
  for t in $tmps; do mv "$t" "${t%.tmp}"; echo "${t%.tmp}"; done
  tmps=
done
