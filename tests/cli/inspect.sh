#!/bin/sh
# tests/cli/inspect.sh: `tpsplit inspect` on the bundled split table and the GEMM / all-gather
# test tables.  Every derived value is recomputed here with awk from the input file
# (independent of the C code) and compared with what inspect printed.
. "$top_srcdir/tests/cli/lib.sh"

h20="$top_srcdir/data/h20_tp8_fused_wqa_wkv.tsv"
gemm="$top_srcdir/tests/data/gemm_h20_marlin.tsv"
ag="$top_srcdir/tests/data/allgather_h20.tsv"

# pick NAME...: from inspect's text output on stdin, print the named columns of each row
# (columns found by the header line, the first line not starting with '#').
pick() {
  awk -v names="$*" 'BEGIN { n = split(names, want, " ") }
    /^#/ || NF == 0 { next }
    !hdr { for (i = 1; i <= NF; i++) col[$i] = i; hdr = 1; next }
    { s = ""; for (k = 1; k <= n; k++) s = s (k > 1 ? " " : "") $(col[want[k]]); print s }'
}
# data rows of one of our TSV files: non-'#', non-header lines
rows() { awk -F'\t' '!/^#/ && NF > 0 { if (!h) { h = 1; next } print }' "$1"; }

# --- help, version, usage errors
expect_rc 0 "$TPSPLIT" inspect --help
expect_grep '^Usage: tpsplit inspect' "$tmp/out"
expect_rc 0 "$TPSPLIT" inspect --version
expect_grep '^tpsplit inspect \(tpsplit\) [0-9]' "$tmp/out"
expect_rc 2 "$TPSPLIT" inspect
expect_grep '^tpsplit inspect: no FILE given' "$tmp/err"
expect_rc 2 "$TPSPLIT" inspect --no-such-option "$h20"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || fail "bad option: not one stderr line"
expect_grep "^tpsplit inspect: bad option '--no-such-option'" "$tmp/err"
expect_rc 2 "$TPSPLIT" inspect -o "$tmp/x.tsv" "$h20" "$gemm"
expect_grep '^tpsplit inspect: -o takes exactly one FILE' "$tmp/err"

# --- split table: 11 rows; derived columns against awk
expect_rc 0 "$TPSPLIT" inspect "$h20"
cp "$tmp/out" "$tmp/split.txt"
expect_grep "^# .*h20_tp8_fused_wqa_wkv.tsv: split table, 11 rows \(tsv\)$" "$tmp/split.txt"
expect_grep '^# gpu H20, tp 8, k 5120, n 1792, path marlin-w8a16, out_bytes_per_token 3584, gather auto' "$tmp/split.txt"
pick tokens rows_per_rank replicated_us split_us speedup replicated_tflops gather_bytes gather_bytes_per_rank gather \
  gather_algbw_lb_gbps <"$tmp/split.txt" >"$tmp/got"
rows "$h20" >"$tmp/want"
[ "$(wc -l <"$tmp/got")" -eq 11 ] && ok || fail "split: $(wc -l <"$tmp/got") rows, want 11"
# speedup = repl/split (%.3f); tflops = 2*T*5120*1792/repl/1e6 (%.1f); gather bytes = T*3584,
# per rank = rpr*3584; custom when rpr*3584 <= 2 MiB; algbw lower bound = T*3584/split/1e3 (%.1f)
bad=$(paste "$tmp/got" "$tmp/want" | awk -F'[ \t]+' '
  function off(a, b, tol) { d = a - b; if (d < 0) d = -d; return d > tol }
  { T = $11; R = $12; rep = $13; spl = $14
    if ($1 != T || $2 != R || $3 != rep || $4 != spl) { print "row " NR ": input columns differ"; next }
    if (off($5, rep / spl, 0.0005)) print "row " NR ": speedup " $5 " want " rep / spl
    if (off($6, 2 * T * 5120 * 1792 / rep / 1e6, 0.05)) print "row " NR ": tflops " $6
    if ($7 != T * 3584 || $8 != R * 3584) print "row " NR ": gather bytes " $7 " " $8
    if ($9 != (R * 3584 <= 2097152 ? "custom" : "nccl")) print "row " NR ": gather " $9
    if (off($10, T * 3584 / spl / 1e3, 0.05)) print "row " NR ": algbw lb " $10 }')
[ -z "$bad" ] && ok || fail "split derived columns: $bad"
# the worked example: 8192 tokens, 1794.7 / 346.9 = 5.1735... -> 5.174; NCCL gather
expect_grep '^ +8192 +1024 +1794\.7 +346\.9 +5\.174 +83\.8 +29360128 +3670016 +nccl +84\.6$' "$tmp/split.txt"
expect_grep '^ +4096 +512 +903\.6 +173\.3 +5\.214 .* custom ' "$tmp/split.txt"

# --- JSON: full precision, stable keys, null for what is unknown
expect_rc 0 "$TPSPLIT" inspect --json "$h20"
cp "$tmp/out" "$tmp/split.json"
expect_grep '"kind": "split"' "$tmp/split.json"
expect_grep '"tp": 8,' "$tmp/split.json"
expect_grep '"ranks": null,' "$tmp/split.json"
expect_grep '"kernel_path": "marlin-w8a16",' "$tmp/split.json"
expect_grep '"nrows": 11,' "$tmp/split.json"
grep '"speedup"' "$tmp/split.json" | awk -F': ' '{ sub(/,$/, "", $2); print $2 }' >"$tmp/sp"
rows "$h20" | awk -F'\t' '{ printf "%.17g\n", $3 / $4 }' >"$tmp/spw"
bad=$(paste "$tmp/sp" "$tmp/spw" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-9 * $2) print NR ": " $1 " vs " $2 }')
[ "$(wc -l <"$tmp/sp")" -eq 11 ] && [ -z "$bad" ] && ok || fail "json speedup: $bad"
grep -q '"speedup": 5\.17353' "$tmp/split.json" && ok || fail "json speedup at 8192 tokens is not 5.17353..."

# --- GEMM table: tflops = 2*M*K*N/t/1e6; gbps = (K*N*(1+1/32) + M*K*2 + M*N*2)/t/1e3
#     (marlin-w8a16: 1 byte weights + one 1-byte scale per 32, bf16 activations and output)
expect_rc 0 "$TPSPLIT" inspect "$gemm"
pick rows time_us samples tflops gbps <"$tmp/out" >"$tmp/got"
bad=$(awk '{ M = $1; t = $2
  tf = 2 * M * 5120 * 1792 / t / 1e6; gb = (5120 * 1792 * (1 + 1 / 32) + M * 5120 * 2 + M * 1792 * 2) / t / 1e3
  d = $4 - tf; if (d < 0) d = -d; if (d > 0.05) print NR ": tflops " $4 " want " tf
  d = $5 - gb; if (d < 0) d = -d; if (d > 0.05) print NR ": gbps " $5 " want " gb
  if ($3 != 50) print NR ": samples " $3 }' "$tmp/got")
[ "$(wc -l <"$tmp/got")" -eq 11 ] && [ -z "$bad" ] && ok || fail "gemm derived: $bad"
# hand check, 1024 rows in 239.4 us: 2*1024*5120*1792/239.4e-6 = 78.49 TFLOPS
expect_grep '^ +1024 +239\.4 +50 +78\.5 ' "$tmp/out"

# --- all-gather table: bytes_per_rank = bytes/8, algbw = bytes/t/1e3, busbw = algbw*7/8
expect_rc 0 "$TPSPLIT" inspect "$ag"
expect_grep '^# gpu H20, ranks 8, gather nccl$' "$tmp/out"
pick bytes time_us time_inplace_us bytes_per_rank algbw_gbps busbw_gbps <"$tmp/out" >"$tmp/got"
rows "$ag" >"$tmp/want"
bad=$(paste "$tmp/got" "$tmp/want" | awk -F'[ \t]+' '{
  if ($1 != $7 || $2 != $9 || $3 != $10) print NR ": input differs"
  a = $7 / $9 / 1e3; b = a * 7 / 8
  if ($4 != $7 / 8) print NR ": bytes_per_rank " $4
  d = $5 - a; if (d < 0) d = -d; if (d > 0.0005) print NR ": algbw " $5 " want " a
  d = $6 - b; if (d < 0) d = -d; if (d > 0.0005) print NR ": busbw " $6 " want " b }')
[ "$(wc -l <"$tmp/got")" -eq 21 ] && [ -z "$bad" ] && ok || fail "allgather derived: $bad"

# --- several files: one block each, in order
expect_rc 0 "$TPSPLIT" inspect "$h20" "$gemm" "$ag"
[ "$(grep -c '^# .*: .* table, [0-9]* rows' "$tmp/out")" -eq 3 ] && ok || fail "3 files: not 3 blocks"

# --- -o: the normalized table, written atomically, reads back to the same table
rm -f "$tmp/norm.tsv"
expect_rc 0 "$TPSPLIT" inspect -o "$tmp/norm.tsv" "$h20"
[ -f "$tmp/norm.tsv" ] && ok || fail "-o did not write the file"
ls "$tmp" | grep -q '^norm\.tsv\.tmp' && fail "-o left a temporary file" || ok
expect_rc 0 "$TPSPLIT" inspect "$tmp/norm.tsv"
sed 1d "$tmp/out" >"$tmp/a"; sed 1d "$tmp/split.txt" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok || fail "-o output does not read back to the same table"
expect_grep '^#@ tp: 8$' "$tmp/norm.tsv"
expect_grep '^tokens	rows_per_rank	replicated_us	split_us$' "$tmp/norm.tsv"
# an nccl-tests log becomes an all-gather TSV with the same numbers
expect_rc 0 "$TPSPLIT" inspect -o "$tmp/log.tsv" "$top_srcdir/tests/data/ncclt/mpi.txt"
expect_grep '^bytes	ranks	time_us	time_inplace_us$' "$tmp/log.tsv"
expect_grep '^1024	16	28.73	28.5$' "$tmp/log.tsv"
# -o into a missing directory: exit 2, one line, nothing written
expect_rc 2 "$TPSPLIT" inspect -o "$tmp/nodir/x.tsv" "$h20"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || fail "-o nodir: not one stderr line"
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/nodir/x.tsv: cannot create output file" "$tmp/err"
[ -s "$tmp/out" ] && fail "-o nodir: printed a table" || ok
# an AIConfigurator table with a UTF-8 byte order mark is still AIConfigurator's (the sniffer
# skips the mark as every text reader does), with the same rows
aic="$top_srcdir/data/aic/gemm_a100_sxm_k5120.tsv.gz"
{ printf '\357\273\277'; gzip -dc "$aic"; } >"$tmp/bom_aic.tsv"
expect_rc 0 "$TPSPLIT" inspect "$aic"
head -n 1 "$tmp/out" | sed 's/^# [^:]*://' >"$tmp/a"
expect_rc 0 "$TPSPLIT" inspect "$tmp/bom_aic.tsv"
head -n 1 "$tmp/out" | sed 's/^# [^:]*://' >"$tmp/b"
grep -q '^ AIConfigurator GEMM table, gpu a100_sxm, [0-9]* rows$' "$tmp/b" && cmp -s "$tmp/a" "$tmp/b" && ok ||
  fail "a byte order mark changed what the AIConfigurator table reads as: $(cat "$tmp/b")"
# a bench table holds its own tflops and gbps: the derived ones are named apart (derived_*), so the JSON row keeps both
# (one key a name: the file's gbps was replaced by the derived one, 1212.4 for its 1213 at 1 row)
b="$top_srcdir/data/h200_gemm_7168x2112_native-fp8.tsv"
expect_rc 0 "$TPSPLIT" inspect --json "$b"
nr=$(rows "$b" | wc -l | tr -d ' ')
[ "$(grep -c '"gbps": ' "$tmp/out")" -eq "$nr" ] && [ "$(grep -c '"derived_gbps": ' "$tmp/out")" -eq "$nr" ] && ok ||
  fail "inspect --json $b: $nr rows, want one gbps and one derived_gbps each"
col=$(awk -F'\t' '!/^#/ && !h { for (i = 1; i <= NF; i++) if ($i == "gbps") c = i; h = 1; next } !/^#/ && NF { print $c }' "$b" | head -n 1)
grep -q "\"gbps\": $col," "$tmp/out" && ok || fail "inspect --json: the file's gbps $col of its first row is not in the JSON"
finish
