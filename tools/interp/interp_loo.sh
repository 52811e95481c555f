#!/bin/sh
# interp_loo.sh TPSPLIT: how well tpsplit's GEMM part fills the rows it was not given.  Every
# dense table (data/calibrate/*/dense_*.tsv, the bench's 400 M; AIConfigurator's
# data/aic/gemm_*_k5120.tsv.gz at K 5120, N 1536 and 2048, each dtype and backend) is cut to
# every second of its rows (the first, third, ... and the last), given to `TPSPLIT predict
# --tp 2 --gemm HALF` (TP 2: at TP 1 some tables end in 'no usable values') as the GPU's measurement, and the replicated GEMM it predicts at each
# left-out M is compared with the measured time.  Prints per table: rows left out, median and
# max |relative error|; last line: the same pooled over every table ("all").  Exit 2 on a
# missing TPSPLIT or data file.  Needs awk, sort, gzip; run from the source tree's root or with
# top_srcdir set.
[ $# -eq 1 ] && [ -x "$1" ] || { echo "usage: interp_loo.sh TPSPLIT" >&2; exit 2; }
T=$1
top=${top_srcdir:-.}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/all"
gpu_of() { # AIC file name -> gpus.tsv name
  case $1 in *a100*) echo A100;; *h100*) echo H100;; *h200*) echo H200;; *b200*) echo B200;; *l40s*) echo L40S;;
    *rtx_pro*) echo RTX-PRO-6000-Server;; *) echo "?";; esac
}
# one case: $1 label, $2 gpu, $3 path, $4 k, $5 n, $6 full table (header + rows), $7 --gemm suffix, $8 M column, $9 time column
one() {
  awk -F'\t' -v mc="$8" '/^#/ || $mc !~ /^[0-9]/ { print; next } { r[++n] = $0 } END { for (i = 1; i <= n; i++) if (i % 2 == 1 || i == n) print r[i] }' "$6" > "$tmp/half.tsv"
  awk -F'\t' -v mc="$8" -v tc="$9" '/^#/ || $mc !~ /^[0-9]/ { next } { n++; m = $mc; sub(/\..*/, "", m); r[n] = m "\t" $tc } END { for (i = 2; i < n; i += 2) print r[i] }' "$6" |
    sort -n > "$tmp/left"
  [ -s "$tmp/left" ] || return 0
  toks=$(cut -f1 "$tmp/left" | paste -sd, -)
  "$T" predict --gpu "$2" --tp 2 --path "$3" --k "$4" --n "$5" --gemm "$tmp/half.tsv$7" --tokens "$toks" --samples 2 \
    -o "$tmp/pred.tsv" > /dev/null 2> "$tmp/err" || { echo "interp_loo.sh: $1: $(head -1 "$tmp/err")" >&2; return 1; }
  awk -F'\t' '!/^#/ && $1 ~ /^[0-9]/ { print $1 "\t" $3 }' "$tmp/pred.tsv" | sort -n > "$tmp/pred"
  awk -F'\t' 'NR == FNR { p[$1] = $2; next } ($1 in p) { e = p[$1] / $2 - 1; print (e < 0 ? -e : e) }' "$tmp/pred" "$tmp/left" |
    sort -g > "$tmp/err1"
  cat "$tmp/err1" >> "$tmp/all"
  awk -v l="$1" '{ e[++k] = $1 } END { med = k % 2 ? e[(k + 1) / 2] : (e[k / 2] + e[k / 2 + 1]) / 2;
    printf "%s\t%d\t%.2f%%\t%.1f%%\n", l, k, 100 * med, 100 * e[k] }' "$tmp/err1"
}
printf 'table\tleft_out\tmed_err\tmax_err\n'
for f in "$top"/data/calibrate/*/dense_*.tsv; do
  [ -r "$f" ] || { echo "interp_loo.sh: cannot read $f" >&2; exit 2; }
  b=$(basename "$f" .tsv); shape=${b#dense_}; shape=${shape%%_*}; path=${b#dense_"$shape"_}
  g=$(sed -n 's/^# gpu: NVIDIA \([A-Z0-9]*\).*/\1/p' "$f" | head -1)
  one "$(basename "$(dirname "$f")")/$b" "$g" "$path" "${shape%x*}" "${shape#*x}" "$f" "" 1 2 || exit 1
done
for f in "$top"/data/aic/gemm_*_k5120.tsv.gz; do
  [ -r "$f" ] || { echo "interp_loo.sh: cannot read $f" >&2; exit 2; }
  g=$(gpu_of "$f")
  gzip -dc "$f" > "$tmp/aic.tsv"
  awk -F'\t' '!/^#/ && $1 != "gpu" && $7 == 5120 && ($6 == 1536 || $6 == 2048) { print $2 "\t" $4 "\t" $6 }' "$tmp/aic.tsv" | sort -u |
  while IFS="$(printf '\t')" read -r be dt n; do
    case $dt in bfloat16) p=dense-bf16;; fp8) p=native-fp8;; *) continue;; esac
    awk -F'\t' -v be="$be" -v dt="$dt" -v n="$n" '/^#/ || $1 == "gpu" { print; next } $2 == be && $4 == dt && $6 == n && $7 == 5120' \
      "$tmp/aic.tsv" > "$tmp/full.tsv"
    one "$(basename "$f" .tsv.gz)/$be/$dt/n$n" "$g" "$p" 5120 "$n" "$tmp/full.tsv" ":dtype=$dt,backend=$be" 5 8 || exit 1
  done || exit 1
done
sort -g "$tmp/all" | awk '{ e[++k] = $1 } END { med = k % 2 ? e[(k + 1) / 2] : (e[k / 2] + e[k / 2 + 1]) / 2;
  printf "all\t%d\t%.2f%%\t%.1f%%\n", k, 100 * med, 100 * e[k] }'
