# tests/docs/loo_derived.awk: the numbers doc/loo.md, README.md and doc/decision-quality.md
# derive from the tables of `tpsplit fit --loo-gpu` (read from its golden output,
# tests/data/golden/expected/fit_loo_gpu, which tests/cli/loo.sh keeps equal to the tool's) rather
# than quote: run by the cases of tests/docs/other.test and README.test.
# the break-even table (11 columns): the ag+10% shift, the NVLink decisions and interval coverage
$2 ~ /^(dense-bf16|native-fp8)$/ && NF == 11 && $4 + 0 > 0 && $11 + 0 > 0 {
  r = 100 * ($11 / $4 - 1); if (lo == "" || r < lo) lo = r; if (hi == "" || r > hi) hi = r }
$2 ~ /^(dense-bf16|native-fp8)$/ && NF == 11 && $1 !~ /^(L40S|RTX)/ {
  split($10, d, "/"); ok += d[1]; all += d[2]; cases++; if ($9 == "yes") cov++ }
# the all-gather table (nccl version in column 3): cover90 x n summed over the NVLink GPUs
$2 == "NVLink" && $3 ~ /^2\./ { c += $9 * $4 / 100; n += $4 }
# the models' decision-quality table (16 columns): the H100 and H200 rows a sibling answers
$1 ~ /^H[12]00-SXM$/ && $2 ~ /^(dense-bf16|native-fp8)$/ && NF == 16 {
  rows++; if ($16 == "missed") miss++; if ($6 + 0 > worst) worst = $6 + 0 }
END {
  printf "ag+10%% moves the measured break-even, dense-bf16 and native-fp8: +%.0f..+%.0f%%\n", lo, hi
  printf "decisions agree, dense-bf16 and native-fp8, NVLink: %d of %d (%.1f%%)\n", ok, all, 100 * ok / all
  printf "break-even 90%% interval covers, dense-bf16 and native-fp8, NVLink: %d of %d (%.0f%%)\n", cov, cases, 100 * cov / cases
  printf "all-gather 90%% interval covers, NVLink, 8 GPUs: %d of %d points (%.1f%%)\n", c + 0.5, n, 100 * c / n
  printf "models alone, H100 and H200 dense-bf16 and native-fp8: %d of %d met, %d missed, worst %.1f%%\n", rows - miss, rows, miss, worst
}
