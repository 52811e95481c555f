#!/bin/sh
# tools/interp/twin_pairs.sh [SRCDIR]: the M, M+1 pairs of the bundled AIConfigurator GEMM
# tables that the twin rule looks at (model/numeric/robust.h tps_twins_merge: M >= 64, the
# other neighbours of the pair >= 8 rows away, per table, dtype, backend, version and N) and how
# many have M+1 the faster (merged) or not (a tile step, kept); the median and 90% quantile of
# the merged pairs' half |log ratio|.  Numbers quoted in doc/fitting.md and robust.h.
src=${1:-.}
for f in "$src"/data/aic/gemm_*_k5120*.tsv.gz; do
  gzip -dc "$f" | awk -F'\t' '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    { key = $c["dtype"] "|" $c["backend"] "|" $c["version"] "|" $c["n"] "|" $c["k"]; m = $c["m"] + 0
      t[key, m] = $c["latency_us"]; n[key]++; r[key, n[key]] = m }
    END { for (key in n) {
            k = n[key]; for (i = 1; i <= k; i++) x[i] = r[key, i]
            # rows in increasing order (the tables are sorted by M; sort anyway)
            for (i = 2; i <= k; i++) { v = x[i]; j = i - 1; while (j >= 1 && x[j] > v) { x[j + 1] = x[j]; j-- } x[j + 1] = v }
            for (i = 1; i < k; i++) {
              if (x[i + 1] != x[i] + 1 || x[i] < 64) continue
              if (i > 1 && x[i] - x[i - 1] < 8) continue
              if (i + 1 < k && x[i + 2] - x[i + 1] < 8) continue
              a = t[key, x[i]]; b = t[key, x[i + 1]]
              d = 0.5 * log(b / a); print (b < a ? "merged" : "kept"), (d < 0 ? -d : d)
            } } }'
done | sort -k1,1 -k2,2g | awk '{ n[$1]++; v[$1, n[$1]] = $2 }
  END { printf "pairs %d: M+1 faster (one point) %d, M+1 slower or equal (a tile step, kept) %d\n", n["merged"] + n["kept"], n["merged"], n["kept"]
        m = n["merged"]; if (m) printf "merged pairs, half |log ratio|: median %.1f%%, 90%% %.1f%%\n", 100 * v["merged", int((m + 1) / 2)], 100 * v["merged", int(0.9 * m + 0.5)] }'
