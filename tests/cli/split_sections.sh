#!/bin/sh
# tests/cli/split_sections.sh: tools/data/split_sections.sh, which turns the stage shapes' archives (tables one after
# another under "## path P K k N n exit c" lines) into one file per table for data/parts.tsv.  Checked apart from the
# tool: each output is its provenance line, then exactly the archive's lines of that section (sed here); every file
# that tpsplit takes (inspect); and refusals naming file:line with nothing written: a section that did not exit 0, a
# line before the first section, a repeated section, a path that is not a name, an existing output (never replaced),
# an archive of another name.
. "$top_srcdir/tests/cli/lib.sh"
split="$top_srcdir/tools/data/split_sections.sh"
tab() { # tab PATH ROWS...: one tpsplit bench gemm table (the lines a section holds)
  p=$1; shift
  printf '# tpsplit bench gemm: test\n# date: 2026-12-04T21:27:58Z\n# gpu: NVIDIA H200, 132 SMs, compute capability 9.0\n'
  printf '#@ gpu: NVIDIA H200\n#@ k: 5120\n#@ n: 512\n#@ path: %s\n#@ timer: cupti-span\n' "$p"
  printf 'rows\ttime_us\tmin_us\tmax_us\n'
  for r in "$@"; do printf '%s\t%s\t%s\t%s\n' "$r" "$((r / 8 + 10)).5" "$((r / 8 + 10)).25" "$((r / 8 + 11)).0"; done
}
mkdir "$tmp/d"
a="$tmp/d/h200_gemm_shape_5120x512.tsv"
{ echo "## path dense-bf16 K 5120 N 512 exit 0"; tab dense-bf16 1 16 64 128 256; echo "## path native-fp8 K 5120 N 512 exit 0"; tab native-fp8 1 16 64 128; } >"$a"
expect_rc 0 sh "$split" "$a"
[ "$(wc -l <"$tmp/out")" -eq 2 ] && ok || fail "two files named on stdout: $(cat "$tmp/out")"
for c in "dense-bf16 2 15" "native-fp8 17 29"; do
  set -- $c
  f="$tmp/d/h200_gemm_5120x512_$1.tsv"
  [ -r "$f" ] || { fail "no $f"; continue; }
  head -1 "$f" | grep -q "^# provenance: a lent NVIDIA H200, 2026-12-04T21:27:58Z, .* section \"## path $1 K 5120 N 512 exit 0\" (lines $2-$3) of h200_gemm_shape_5120x512.tsv" \
    && ok || fail "provenance line of $f: $(head -1 "$f")"
  sed -n "$2,$3p" "$a" >"$tmp/want"; tail -n +2 "$f" >"$tmp/got"
  cmp -s "$tmp/want" "$tmp/got" && ok || fail "$f is not lines $2-$3 of the archive"
  expect_rc 0 "$TPSPLIT" inspect "$f"
done
# an output never replaces an input or an earlier output: refused, nothing else written
cp "$tmp/d/h200_gemm_5120x512_dense-bf16.tsv" "$tmp/keep"; rm "$tmp/d/h200_gemm_5120x512_native-fp8.tsv"
expect_rc 1 sh "$split" "$a"
expect_grep "h200_gemm_5120x512_dense-bf16.tsv: exists; not replaced" "$tmp/err"
cmp -s "$tmp/keep" "$tmp/d/h200_gemm_5120x512_dense-bf16.tsv" && ok || fail "an existing output was changed"
[ ! -e "$tmp/d/h200_gemm_5120x512_native-fp8.tsv" ] && ok || fail "a file written although the archive was refused"
ls "$tmp/d" | grep -q tmp && fail "a temporary file left: $(ls "$tmp/d")" || ok
# a section that did not exit 0, a line before the first section: file:line, nothing written
rm -f "$tmp/d"/h200_gemm_5120x512_*.tsv
b="$tmp/d/h200_gemm_shape_5120x1024.tsv"
{ echo "## path dense-bf16 K 5120 N 1024 exit 0"; tab dense-bf16 1 16; echo "## path w8a16 K 5120 N 1024 exit 1"; tab w8a16 1 16; } >"$b"
expect_rc 1 sh "$split" "$b"
expect_grep "^$b:13: section \"## path w8a16 K 5120 N 1024 exit 1\" did not exit 0" "$tmp/err"
{ echo "# stray"; echo "## path dense-bf16 K 5120 N 1024 exit 0"; tab dense-bf16 1 16; } >"$b"
expect_rc 1 sh "$split" "$b"
expect_grep "^$b:1: a line before the first \"## path\" section" "$tmp/err"
# two sections of one path, K and N (the second would have replaced the first's file), and a path that is not a name
{ echo "## path dense-bf16 K 5120 N 1024 exit 0"; tab dense-bf16 1 16; echo "## path dense-bf16 K 5120 N 1024 exit 0"; tab dense-bf16 1 16; } >"$b"
expect_rc 1 sh "$split" "$b"
expect_grep "^$b:13: section \"## path dense-bf16 K 5120 N 1024 exit 0\" repeats the one at line 1" "$tmp/err"
{ echo "## path ../x K 5120 N 1024 exit 0"; tab dense-bf16 1 16; } >"$b"
expect_rc 1 sh "$split" "$b"
expect_grep "^$b:1: section \"## path \.\./x K 5120 N 1024 exit 0\": a path of a-z, 0-9 and - and a whole K and N wanted" "$tmp/err"
cp "$b" "$tmp/d/other.tsv"
expect_rc 1 sh "$split" "$tmp/d/other.tsv"
expect_grep "not a <prefix>_shape_<K>x<N>.tsv archive" "$tmp/err"
[ "$(ls "$tmp/d" | grep -c '^h200_gemm_5120x')" -eq 0 ] && ok || fail "files written by refused splits: $(ls "$tmp/d")"
finish
