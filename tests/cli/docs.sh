#!/bin/sh
# tests/cli/docs.sh: the docs cannot go stale (issue 29 item 1).  Runs every case of
# tests/docs/*.test with the built tpsplit on the bundled data and checks, both ways, that the
# doc line each case names still quotes what the tool prints now; then that every command shown
# in a code block of README.md and doc/*.md has a case (or is on tests/docs/NOT_RUN, whose
# commands are checked for option validity only), that the docs name no file outside the
# repository, and that every term of tests/docs/TERMS has a glossary entry.
# Format of the .test files: tests/docs/README.  Exit 0 all agree, 1 a difference (each
# message names the doc file:line, the number or line quoted there and what the tool printed).
# DOCS_ONLY="a.test b.test" runs only those files (while editing).
set -u
: "${TPSPLIT:?run through make check}" "${top_srcdir:?run through make check}"
export LC_ALL=C TPSPLIT_GNUPLOT= TPSPLIT_THREADS=2
S=$(cd "$top_srcdir" && pwd -P)
D=$S/data
export TPSPLIT_DATADIR="$D"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tpsplit-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
W=$tmp/w
mkdir -p "$tmp/bin" "$W" "$tmp/out"
ln -s "$TPSPLIT" "$tmp/bin/tpsplit"
ln -s "$TPSPLIT" "$W/tpsplit"
ln -s "$D" "$W/data"
ln -s "$S/tests" "$W/tests"
PATH=$tmp/bin:$PATH
export PATH
fails=0; ncases=0; nchecks=0
fail() { fails=$((fails + 1)); printf 'FAIL: %s\n' "$*"; }

# canon CMD: a command as the docs show it and as the cases name it (no '$ ', no trailing
# '  # comment', spaces collapsed)
canon() {
  printf '%s\n' "$1" | sed -e 's/^[[:space:]]*\$[[:space:]]*//' -e 's/[[:space:]][[:space:]]*#[[:space:]].*$//' \
    -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//'
}

# The checker: one awk program for every kind of check line (tests/docs/README).
# Input: the check kind and text in variables, the doc file and the output file as files.
CHECK_AWK='
function nums(s, arr,   n, pre, post, t) {
  n = 0
  while (match(s, /[0-9]+(\.[0-9]+)?/)) {
    pre = RSTART > 1 ? substr(s, RSTART - 1, 1) : ""
    post = substr(s, RSTART + RLENGTH, 1)
    t = substr(s, RSTART, RLENGTH)
    if (!strict || (pre !~ /[A-Za-z_]/ && post !~ /[A-Za-z_]/)) arr[++n] = t
    s = substr(s, RSTART + RLENGTH)
  }
  return n
}
function decs(t) { return index(t, ".") ? length(t) - index(t, ".") : 0 }
# same(d, o): the doc number d is the output number o, or o rounded to d decimals
function same(d, o,   k) {
  if (d == o) return 1
  k = decs(d)
  if (decs(o) < k) return 0
  return sprintf("%." k "f", o + 0) == d
}
function docline(i,   l) { l = doc[i]; if (fence == 0) sub(/^    /, "", l); return squash(l) }
# blockbad(d): how many non-blank doc lines lo+d..hi+d are not output lines (all blank: 1)
function blockbad(d,   i, l, b, n) {
  b = 0; n = 0
  for (i = lo + d; i <= hi + d; i++) { l = docline(i); if (l == "") continue; n++; if (!(l in outset)) b++ }
  return n ? b : 1
}
function squash(s) { gsub(/[[:space:]]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
FNR == 1 { fi++ }
fi == 1 { doc[FNR] = $0; ndoc = FNR; next }
fi == 2 { out[FNR] = squash($0); nout = FNR; next }
END {
  excerpt = ENVIRON["EXCERPT"]; selector = ENVIRON["SELECTOR"]
  if (kind == "block") {
    for (j = 1; j <= nout; j++) outset[out[j]] = 1
    if (blockbad(0)) {
      # moved by an edit above it? the nearest offset at which every line matches
      for (d = 1; d <= 80; d++) {
        if (lo - d >= 1 && !blockbad(-d)) { printf "%s:%d-%d moved: the block is at %s:%d-%d now (RELINE %d-%d)\n", file, lo, hi, file, lo - d, hi - d, lo - d, hi - d; exit 1 }
        if (hi + d <= ndoc && !blockbad(d)) { printf "%s:%d-%d moved: the block is at %s:%d-%d now (RELINE %d-%d)\n", file, lo, hi, file, lo + d, hi + d, lo + d, hi + d; exit 1 }
      }
    }
    for (i = lo; i <= hi; i++) {
      l = doc[i]; if (fence == 0) sub(/^    /, "", l)
      l = squash(l)
      if (l == "") continue
      found = 0
      for (j = 1; j <= nout; j++) if (out[j] == l) { found = 1; break }
      if (found) continue
      # the nearest output line: the one sharing the most words with the doc line
      nw = split(l, w, " "); best = ""; bs = 0
      for (j = 1; j <= nout; j++) {
        split(out[j], ow, " "); delete have; for (x in ow) have[ow[x]] = 1
        sc = 0; for (x = 1; x <= nw; x++) if (w[x] in have) sc++
        if (sc > bs) { bs = sc; best = out[j] }
      }
      if (++bad > 6) continue
      printf "%s:%d: the doc shows\n    %s\n  the command prints%s\n    %s\n", file, i, l, \
        (bs ? " (nearest line)" : " no such line"), best
    }
    if (bad > 6) printf "... and %d more lines of %s:%d-%d\n", bad - 6, file, lo, hi
    if (bad) exit 1
    # and in the order the command prints them: each doc line at or after the output line of the one
    # before it (a line of another table of the same output, pasted above this one as its header, fails here)
    j = 1
    for (i = lo; i <= hi; i++) {
      l = docline(i); if (l == "") continue
      for (k = j; k <= nout && out[k] != l; k++) ;
      if (k > nout) { printf "%s:%d: the doc shows\n    %s\n  after %s:%d, but the command prints it only before that line (output line %d)\n", file, i, l, file, prev, j - 1; exit 1 }
      j = k; prev = i
    }
    exit 0
  }
  # kind == "quote": the excerpt on the doc line, its numbers in the selected output line(s)
  if (index(doc[line], excerpt) == 0) {
    printf "%s:%d no longer holds \"%s\"", file, line, excerpt
    nat = 0; for (i = 1; i <= ndoc; i++) if (index(doc[i], excerpt)) { nat++; at = i }
    if (nat == 1) printf " (it is at %s:%d now: fix the line number in the .test, or run with DOCS_RELINE=1) (RELINE %d)", file, at, at
    else if (nat > 1) printf " (it is on %d lines of %s: make the excerpt longer)", nat, file
    printf "\n"; exit 1
  }
  sel = 0
  if (selector != "") {
    for (j = 1; j <= nout; j++) if (out[j] ~ selector && (nth == "*" || ++seen == nth)) { if (!sel) sel = j; selall[j] = 1; if (nth != "*") break }
    if (!sel) { printf "%s:%d: no output line matches /%s/ (occurrence %s)\n", file, line, selector, nth; exit 1 }
  }
  strict = 1; nd = nums(excerpt, dn); strict = 0
  for (x = 1; x <= nd; x++) {
    ok = 0
    for (j = 1; j <= nout && !ok; j++) {
      if (sel && !(j in selall)) continue
      delete on; no = nums(out[j], on)
      for (y = 1; y <= no; y++) if (same(dn[x], on[y])) { ok = 1; break }
    }
    if (ok) continue
    printf "%s:%d quotes %s (in \"%s\"), but the command prints %s\n", file, line, dn[x], excerpt, \
      sel ? "\n    " out[sel] (nth == "*" ? " (and the other lines matching /" selector "/)" : "") : "it on no line"
    bad++
  }
  exit bad ? 1 : 0
}'

# runcase CMD: run CMD once (in $W, stdout and stderr together), leave the normalized output in
# $tmp/out/N and its exit status in $tmp/out/N.rc; the same command runs once for all cases
runcase() {
  key=$(printf '%s' "$1" | cksum | tr ' ' _)
  cur=$tmp/out/$key
  [ -f "$cur.rc" ] && return 0
  if [ -n "$golden" ]; then
    # a command too slow to run here: its output is the golden file's stdout, which
    # tests/cli/golden_slow.sh (fit_loo_gpu: tests/cli/loo.sh) checks against the tool (the
    # case names which one)
    g=$S/tests/data/golden/expected/$golden
    [ -f "$g" ] || { fail "$where: no golden file $g"; echo 1 >"$cur.rc"; : >"$cur"; return 0; }
    sed -n 's/^## exit //p' "$g" >"$cur.rc"
    sed -e '1,/^## stdout$/d' -e '/^## stderr$/,$d' -e "s|@DATA@|$D|g" "$g" >"$cur.raw"
  else
    (cd "$W" && sh -c "$1" >"$cur.raw" 2>&1; echo $? >"$cur.rc")
  fi
  sed -e "s|$D/|data/|g" -e "s|$D|data|g" -e "s|$S/_build/\.\./data|data|g" -e "s|$W/||g" \
      -e "s|$TPSPLIT|tpsplit|g" -e "s|/[^ :'\"]*/data/|data/|g" "$cur.raw" >"$cur"
}

# check_line FILE:LINE: EXCERPT | FILE:A-B
check_line() {
  spec=$1
  nchecks=$((nchecks + 1))
  file=${spec%%:*}; rest=${spec#*:}
  [ -f "$S/$file" ] || { fail "$where: no doc file $file"; return; }
  case $rest in
    [0-9]*:*)
      line=${rest%%:*}; excerpt=${rest#*:}; excerpt=${excerpt# }
      msg=$(EXCERPT=$excerpt SELECTOR=$selector awk -v kind=quote -v file="$file" -v line="$line" -v nth="$nth" \
          "$CHECK_AWK" "$S/$file" "$cur") || { fail "$where: \`$cmd\`: $msg"; reline "$msg"; } ;;
    [0-9]*-[0-9]*)
      case $rest in *[!0-9-]*) fail "$where: cannot read the check '$spec'"; return ;; esac
      lo=${rest%%-*}; hi=${rest#*-}; hi=${hi%% *}
      fence=$(awk -v n="$lo" 'NR < n && /^[[:space:]]*```/ {f = !f} END {print f + 0}' "$S/$file")
      msg=$(awk -v kind=block -v file="$file" -v lo="$lo" -v hi="$hi" -v fence="$fence" "$CHECK_AWK" "$S/$file" "$cur") ||
        { fail "$where: \`$cmd\` and the doc disagree:
$msg"; reline "$msg"; } ;;
    *) fail "$where: cannot read the check '$spec'" ;;
  esac
}

# reline MSG: with DOCS_RELINE=1, a check whose excerpt or block moved in the doc (found at one
# place) gets its new line number written into the .test file
reline() {
  [ "${DOCS_RELINE:-0}" = 1 ] || return 0
  to=$(printf '%s\n' "$1" | sed -n 's/.*(RELINE \([0-9-]*\))$/\1/p' | head -n 1)
  [ -n "$to" ] || return 0
  sed "${n}s|^\([^:]*\):[0-9-]*|\1:$to|" "$S/tests/docs/$tf" >"$tmp/reline" && cat "$tmp/reline" >"$S/tests/docs/$tf"
  echo "DOCS_RELINE: tests/docs/$tf:$n now names $file:$to"
}

# finish_case: the exit status of the case just read
finish_case() {
  [ -n "$cmd" ] || return 0
  got=$(cat "$cur.rc")
  [ "$got" = "$want_rc" ] || fail "$where: \`$cmd\` exited $got, want $want_rc: $(head -c 300 "$cur")"
}

cmds=$tmp/commands
: >"$cmds"
files=$(cd "$S/tests/docs" && ls *.test)
[ -n "${DOCS_ONLY:-}" ] && files=$DOCS_ONLY
for tf in $files; do
  n=0; cmd=; selector=; golden=
  cp "$S/tests/docs/$tf" "$tmp/case.test"   # read a copy: DOCS_RELINE rewrites the file
  while IFS= read -r l || [ -n "$l" ]; do
    n=$((n + 1)); where=tests/docs/$tf:$n
    case $l in
      ''|'#'*) ;;
      '$ '*)
        finish_case
        cmd=$(canon "$l"); selector=; nth=1; want_rc=0; ncases=$((ncases + 1))
        printf '%s\n' "$cmd" >>"$cmds"
        runcase "$cmd"; golden= ;;
      'exit '*) want_rc=${l#exit } ;;
      '@golden '*) golden=${l#@golden } ;;
      '~ '*|'~'[1-9*]' '*)
        nth=${l%% *}; nth=${nth#'~'}; nth=${nth:-1}; selector=${l#* }; nchecks=$((nchecks + 1))
        [ "$(sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//' "$cur" | grep -cE -- "$selector")" -ge "$(n=${nth#\*}; echo ${n:-1})" ] ||
          fail "$where: \`$cmd\` prints no line matching /$selector/ (want $nth)" ;;
      '~') selector= ;;
      '! '*)
        nchecks=$((nchecks + 1))
        ! grep -Eq -- "${l#'! '}" "$cur" || fail "$where: \`$cmd\` prints a line matching /${l#'! '}/: $(grep -E -- "${l#'! '}" "$cur" | head -n 1)" ;;
      *)
        [ -n "$cmd" ] || { fail "$where: a check before any '\$ ' command"; continue; }
        check_line "$l" ;;
    esac
  done <"$tmp/case.test"
  finish_case
done

# Every command in a code block of README.md and doc/*.md has a case or is on NOT_RUN.
notrun=$tmp/notrun
sed -e '/^#/d' -e '/^$/d' -e 's/	.*//' "$S/tests/docs/NOT_RUN" >"$notrun"
for f in $(cd "$S" && ls README.md doc/*.md); do
  awk '/^[[:space:]]*```/ {fence = !fence; next}
       { c = $0; cont = 0 }
       fence || /^    / {
         if (pending != "") { c = pending " " c; sub(/^ *\\? */, "", c) }
         else { t = c; sub(/^[[:space:]]*/, "", t); sub(/^\$[[:space:]]+/, "", t)
                if (t !~ /^(\.\/)?tpsplit([[:space:]]|$)/ || t ~ /^(\.\/)?tpsplit( [a-z-]+)?[:,]/) next
                if (t ~ /^(\.\/)?tpsplit [a-z]+ [A-Z][a-z]/) next  # a message, not a command
                c = t }
         if (c ~ /\\[[:space:]]*$/) { sub(/\\[[:space:]]*$/, "", c); pending = c; next }
         pending = ""; printf "%d\t%s\n", FNR, c }' "$S/$f" |
  while IFS="$(printf '\t')" read -r ln c; do
    c=$(canon "$c")
    nchecks=$((nchecks + 1))
    if ! grep -qxF -- "$c" "$cmds" && ! grep -qxF -- "$c" "$notrun"; then
      echo "FAIL: $f:$ln shows \`$c\`: no case in tests/docs/*.test runs it and tests/docs/NOT_RUN does not list it"
      echo x >>"$tmp/cover_fails"
    fi
  done
done
# ... and every complete command in a line of text: `tpsplit ...` with an option and no
# placeholder (an upper-case word such as FILE or G, brackets, '|', '...').
for f in $(cd "$S" && ls README.md doc/*.md); do
  awk '/^[[:space:]]*```/ {fence = !fence; next}
       fence || /^    / {next}
       { s = $0
         while (match(s, /`(\.\/)?tpsplit [^`]*`/)) {
           c = substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH)
           if (c !~ / -/ || c ~ /[A-Z][A-Z]|[][|<>]|\.\.\.|=[A-Z]| [A-Z]( |$)/) continue
           printf "%d\t%s\n", FNR, c } }' "$S/$f" |
  while IFS="$(printf '\t')" read -r ln c; do
    c=$(canon "$c")
    nchecks=$((nchecks + 1))
    if ! grep -qxF -- "$c" "$cmds" && ! grep -qxF -- "$c" "$notrun"; then
      echo "FAIL: $f:$ln names \`$c\`: no case in tests/docs/*.test runs it and tests/docs/NOT_RUN does not list it"
      echo x >>"$tmp/cover_fails"
    fi
  done
done
[ -f "$tmp/cover_fails" ] && fails=$((fails + $(wc -l <"$tmp/cover_fails")))

# The NOT_RUN commands (a GPU, or minutes): their options parse.  No GPU is visible, so a valid
# command stops at 'no GPU' (exit 1, or 77) before it writes anything; 2 is a usage error, unless
# the input it lacks is what a GPU run writes.  They run in a scratch folder whose data/ holds
# links to the bundled files, so that nothing of the source tree can be replaced.
mkdir -p "$tmp/nr/data"
for f in "$D"/*; do ln -s "$f" "$tmp/nr/data/"; done
sed -e '/^#/d' -e '/^$/d' -e '/	mention:/d' -e 's/	.*//' "$S/tests/docs/NOT_RUN" |
while IFS= read -r c; do
  nchecks=$((nchecks + 1))
  (cd "$tmp/nr" && CUDA_VISIBLE_DEVICES= sh -c "$c" >"$tmp/nr.out" 2>&1; echo $? >"$tmp/nr.rc")
  if [ "$(cat "$tmp/nr.rc")" = 2 ] && ! grep -q 'cannot open: No such file' "$tmp/nr.out"; then
    echo "FAIL: tests/docs/NOT_RUN: \`$c\` is refused as a usage error: $(head -n 1 "$tmp/nr.out")"
    echo x >>"$tmp/nr_fails"
  fi
done
[ -f "$tmp/nr_fails" ] && fails=$((fails + $(wc -l <"$tmp/nr_fails")))

# No doc names a file outside the repository.
nchecks=$((nchecks + 1))
if (cd "$S" && grep -nE '(^|[^a-z_])shared/(brief|data|reference)|\.\./shared|/work/' README.md doc/*.md) >"$tmp/ext"; then
  fail "the docs name files outside the repository (name what the repository holds, or a public URL):
$(cat "$tmp/ext")"
fi

# Every term of tests/docs/TERMS has an entry in doc/glossary.md, and the README links it.
grep -q '(doc/glossary.md)' "$S/README.md" || fail "README.md does not link doc/glossary.md"
while IFS= read -r term; do
  case $term in ''|'#'*) continue ;; esac
  nchecks=$((nchecks + 1))
  grep -qF -- "**$term**" "$S/doc/glossary.md" || fail "doc/glossary.md has no entry **$term** (tests/docs/TERMS)"
done <"$S/tests/docs/TERMS"

echo "$ncases doc cases, $nchecks checks, $fails failed"
[ "$fails" -eq 0 ]
