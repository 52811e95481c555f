/* fuzz_aiconf.c: AIConfigurator GEMM and NCCL tables (src/io/aic.c tps_aic_read_mem), plain
 * text or gzip (the reader inflates data that start with the gzip magic bytes).  The first
 * byte picks the row selection a user could give after "FILE:" (none, dtype, an m range,
 * n, k, op, num_gpus, or a GEMM selection on any table), the rest is the file.  What a table
 * that reads must hold: rows, each within the ranges of aic.h and matching the selection;
 * the curves of its first row's shape are ascending and hold that row's value.
 * Seeds: data/aic (plain and gzip, the gzip files cut to their first rows), tests/data/bad/aic_*. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/fuzz/fuzz.h"
#include "src/io/aic.h"

static const char *const sel[16] = {"",
                                    "dtype=fp8",
                                    "dtype=bfloat16,n=2048",
                                    "m=1-64",
                                    "k=5120",
                                    "n=1792,k=5120",
                                    "dtype=fp8,m=8,n=1536,k=5120",
                                    "backend=trtllm",
                                    "op=all_gather",
                                    "op=all_reduce,num_gpus=8",
                                    "num_gpus=2,dtype=half",
                                    "dtype=half",
                                    "op=alltoall",
                                    "m=3",
                                    "n=65536",
                                    "dtype=int4_wo,k=7168"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char spec[96], *path;
  tps_aic_filter f;
  tps_err e;
  tps_err_clear(&e);
  const char *s = sel[data[0] & 15];
  snprintf(spec, sizeof spec, "aic.tsv%s%s", s[0] ? ":" : "", s);
  if (tps_aic_parse_spec(spec, &path, &f, &e) != 0) abort(); /* every selection above is valid */
  tps_aic_file a;
  int rc = tps_aic_read_mem(path, (const char *)data + 1, size - 1, &f, &a, &e);
  free(path);
  if (rc != 0) {
    if (!e.set || !e.msg[0]) abort(); /* a refusal always says why */
    return 0;
  }
  if (a.nrows == 0 || (a.kind != TPS_AIC_GEMM && a.kind != TPS_AIC_NCCL)) abort();
  if (a.kind == TPS_AIC_GEMM) {
    for (size_t i = 0; i < a.nrows; i++) {
      const tps_aic_gemm_row *g = &a.g[i];
      if (g->m < 1 || g->m > 16777216L || g->n < 1 || g->n > 1048576L || g->k < 1 || g->k > 1048576L) abort();
      if (!(g->latency_us >= 1e-3 && g->latency_us <= 1e9) || g->line < 1) abort();
      if ((f.dtype[0] && strcmp(g->dtype, f.dtype)) || (f.n && g->n != f.n) || (f.k && g->k != f.k)) abort();
      if (f.m_hi > 0 && (g->m < f.m_lo || g->m > f.m_hi)) abort();
    }
    long *m;
    double *t;
    size_t n;
    const tps_aic_gemm_row *g0 = &a.g[0];
    if (tps_aic_gemm_curve(&a, g0->dtype, g0->n, g0->k, &m, &t, &n, &e) != 0 || n < 1) abort();
    int found = 0;
    for (size_t i = 0; i < n; i++) {
      if ((i && m[i] <= m[i - 1]) || !(t[i] >= 1e-3 && t[i] <= 1e9)) abort();
      found |= m[i] == g0->m;
    }
    if (!found) abort();
    free(m);
    free(t);
  } else {
    for (size_t i = 0; i < a.nrows; i++) {
      const tps_aic_nccl_row *c = &a.c[i];
      if (c->num_gpus < 1 || c->num_gpus > 65536 || !(c->bytes >= 1 && c->bytes <= 1125899906842624.0)) abort();
      if (!(c->latency_us >= 1e-3 && c->latency_us <= 1e9) || c->elements < 1 || c->line < 1) abort();
      if ((f.op[0] && strcmp(c->op, f.op)) || (f.num_gpus && c->num_gpus != f.num_gpus)) abort();
    }
    double *b, *t;
    size_t n;
    const tps_aic_nccl_row *c0 = &a.c[0];
    if (tps_aic_nccl_curve(&a, c0->op, c0->num_gpus, c0->dtype, &b, &t, &n, &e) != 0 || n < 1) abort();
    int found = 0;
    for (size_t i = 0; i < n; i++) {
      if ((i && b[i] <= b[i - 1]) || !(t[i] >= 1e-3 && t[i] <= 1e9)) abort();
      found |= b[i] == c0->bytes;
    }
    if (!found) abort();
    free(b);
    free(t);
  }
  tps_aic_free(&a);
  return 0;
}
