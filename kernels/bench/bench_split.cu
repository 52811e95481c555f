/* bench_split.cu: bench split (kernels/bench/bench.h), replicated vs token-split GEMM + all-gather
 * on N GPUs, end to end, as a tps_bench_op of the multi-rank harness (bench_world.h).
 *
 *   replicated(T) = GEMM(T rows)                        on every rank
 *   split(T)      = GEMM(rows_r rows) + ALLGATHER       rows_r = rank r's share of
 *                   S = ceil(T/tp) rows (the last ranks fewer, see gather.h), gathered
 *                   output T * N * 2 bytes (bf16)
 *
 * Per token count, before any timing (random X and W drawn once, same seed on every rank,
 * outputs poisoned with 0xFF bytes = bf16 NaN before each run):
 *   1. the gathered output equals, BITWISE, every rank's shard recomputed locally by the same
 *      GEMM plan (the gather moves bytes; nothing else is allowed);
 *   2. split vs replicated: relative Frobenius error <= 1e-2, no NaN, max |diff| reported
 *      (bf16 rounding of M-dependent tiling: a few 1e-2 at most in absolute terms);
 *   3. shards whose row count runs the same kernel configuration as T rows
 *      (tps_gemm_config) are bitwise equal to the replicated rows (always so at tp 1);
 *   4. the replicated output is bitwise the same on every rank (FNV-1a hash).
 * All checks are reduced over ranks (maximum); any failure stops the run.
 * Units: times us, sizes bytes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/common/check.h"
#include "kernels/gemm/gemm.h"
#include "kernels/bench/bench_world.h"

#define SPLIT_REL_DIFF 1e-2 /* check 2 */

typedef struct {
  tps_gemm *gm;
  uint16_t *x, *y, *shard, *out, *expect; /* device, bf16 */
  long T, S, mine;                        /* the current point: tokens, rows per slot, this rank's rows */
} split_state;

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double uniform(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0; }
static uint16_t f2bf(float f) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
static double bf2d(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return (double)f;
}
static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *c = (const unsigned char *)p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}
/* Rows of slot q of S rows out of T. */
static long slot_rows(long T, long S, int q) { return T - q * S < 0 ? 0 : (T - q * S > S ? S : T - q * S); }

static int split_setup(tps_bench_rank *k) {
  const tps_bench_split_opts *o = (const tps_bench_split_opts *)k->opts;
  split_state *st = (split_state *)calloc(1, sizeof *st);
  if (!st) return TPS_ERR;
  k->st = st;
  const long maxT = o->tokens[o->ntok - 1], Smax = (maxT + k->n - 1) / k->n, N = o->n, K = o->k;
  /* weights and activations: the same seed on every rank */
  uint64_t seed = o->seed;
  float *wh = (float *)malloc(sizeof(float) * (size_t)N * K);
  uint16_t *xh = (uint16_t *)malloc(2 * (size_t)maxT * K);
  if (!wh || !xh) { free(wh); free(xh); fprintf(stderr, "tpsplit: rank %d: out of memory\n", k->rank); return TPS_ERR; }
  for (size_t i = 0; i < (size_t)N * K; i++) wh[i] = (float)(0.05 * uniform(&seed));
  for (size_t i = 0; i < (size_t)maxT * K; i++) xh[i] = f2bf((float)uniform(&seed));
  int rc = tps_gemm_create(&st->gm, o->path, (int)N, (int)K, (int)maxT, wh);
  free(wh);
  if (rc == TPS_OK &&
      (cudaMalloc((void **)&st->x, 2 * (size_t)maxT * K) != cudaSuccess ||
       cudaMemcpy(st->x, xh, 2 * (size_t)maxT * K, cudaMemcpyHostToDevice) != cudaSuccess ||
       cudaMalloc((void **)&st->y, 2 * (size_t)maxT * N) != cudaSuccess ||
       cudaMalloc((void **)&st->shard, 2 * (size_t)Smax * N) != cudaSuccess ||
       cudaMalloc((void **)&st->out, 2 * (size_t)k->n * Smax * N) != cudaSuccess ||
       cudaMalloc((void **)&st->expect, 2 * (size_t)k->n * Smax * N) != cudaSuccess)) {
    fprintf(stderr, "tpsplit: rank %d: cannot allocate or upload the activations and outputs\n", k->rank);
    rc = TPS_ERR;
  }
  free(xh);
  return rc;
}

static void split_teardown(tps_bench_rank *k) {
  split_state *st = (split_state *)k->st;
  if (!st) return;
  tps_gemm_destroy(st->gm);
  cudaFree(st->x);
  cudaFree(st->y);
  cudaFree(st->shard);
  cudaFree(st->out);
  cudaFree(st->expect);
  free(st);
  k->st = NULL;
}

/* Checks 1-4 for tokens[i] on this rank, reduced over ranks into the row. */
static int split_check(tps_bench_rank *k, size_t i, void *rowp, int *bad) {
  const tps_bench_split_opts *o = (const tps_bench_split_opts *)k->opts;
  split_state *st = (split_state *)k->st;
  tps_bench_split_row *r = (tps_bench_split_row *)rowp;
  const int tp = k->n, rank = k->rank;
  const long T = o->tokens[i], S = (T + tp - 1) / tp, N = o->n, K = o->k;
  const size_t stride = (size_t)S * N * 2, total = (size_t)T * N * 2;
  const cudaStream_t s = k->s;
  st->T = T;
  st->S = S;
  st->mine = slot_rows(T, S, rank);
  r->tokens = T;
  r->rows = S;
  r->split_rel_diff = SPLIT_REL_DIFF;
  CUDA_TRY(cudaMemsetAsync(st->y, 0xFF, total, s));
  CUDA_TRY(cudaMemsetAsync(st->shard, 0xFF, stride, s));
  CUDA_TRY(cudaMemsetAsync(st->out, 0xFF, (size_t)tp * stride, s));
  CUDA_TRY(cudaMemsetAsync(st->expect, 0xFF, (size_t)tp * stride, s));
  TPS_TRY(tps_gemm_run(st->gm, st->x, st->y, (int)T, s));
  TPS_TRY(tps_gemm_run(st->gm, st->x + (size_t)rank * S * K, st->shard, (int)st->mine, s));
  TPS_TRY(tps_gather_enqueue(k->g, k->o->gather, st->shard, st->out, stride, total, s, &r->used));
  TPS_TRY(tps_gather_wait(k->g, s));
  for (int q = 0; q < tp; q++)
    TPS_TRY(tps_gemm_run(st->gm, st->x + (size_t)q * S * K, st->expect + (size_t)q * S * N, (int)slot_rows(T, S, q), s));
  TPS_TRY(tps_gather_wait(k->g, s));
  const size_t nel = (size_t)T * N;
  uint16_t *hy = (uint16_t *)malloc(total), *ho = (uint16_t *)malloc(total), *he = (uint16_t *)malloc(total);
  if (!hy || !ho || !he) { free(hy); free(ho); free(he); return TPS_ERR; }
  cudaError_t e = cudaMemcpy(hy, st->y, total, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(ho, st->out, total, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(he, st->expect, total, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) { free(hy); free(ho); free(he); CUDA_TRY(e); }
  double gathered_bad = 0, nan = 0, bitwise_bad = 0, num = 0, den = 0, maxdiff = 0;
  for (size_t j = 0; j < nel; j++) {
    gathered_bad += ho[j] != he[j];
    const double a = bf2d(ho[j]), b = bf2d(hy[j]);
    if (isnan(a) || isnan(b)) { nan += 1; continue; }
    const double d = fabs(a - b);
    if (d > maxdiff) maxdiff = d;
    num += d * d;
    den += b * b;
  }
  uint64_t cfg_T = 0, cfg_q = 0;
  char buf[256];
  long same = 0;
  int rc = tps_gemm_config(st->gm, (int)T, buf, sizeof buf, &cfg_T);
  for (int q = 0; q < tp && rc == TPS_OK; q++) {
    const long rq = slot_rows(T, S, q);
    if (rq == 0) continue;
    rc = tps_gemm_config(st->gm, (int)rq, buf, sizeof buf, &cfg_q);
    if (rc != TPS_OK || cfg_q != cfg_T) continue;
    same++;
    bitwise_bad += memcmp(ho + (size_t)q * S * N, hy + (size_t)q * S * N, (size_t)rq * N * 2) != 0;
  }
  /* the replicated output is the same on every rank */
  uint64_t hash = fnv1a(hy, total), hashes[TPS_GATHER_MAX_RANKS];
  free(hy);
  free(ho);
  free(he);
  TPS_TRY(rc);
  if (tps_world_allgather(k->w, &hash, hashes, sizeof hash) != 0) return TPS_ERR;
  double hash_bad = 0;
  for (int q = 0; q < tp; q++) hash_bad += hashes[q] != hash;
  const double relfrob = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
  double v[7] = {maxdiff, relfrob, nan, gathered_bad, bitwise_bad, hash_bad, (double)same};
  if (tps_world_max(k->w, v, 7) != 0) return TPS_ERR;
  r->maxdiff = v[0];
  r->relfrob = v[1];
  r->nan = v[2];
  r->gathered_bad = v[3];
  r->bitwise_bad = v[4];
  r->hash_bad = v[5];
  r->same_cfg_shards = (long)v[6];
  r->bad = *bad = (v[2] > 0) + (v[3] > 0) + !(v[1] <= SPLIT_REL_DIFF) + (v[4] > 0) + (v[5] > 0);
  return TPS_OK;
}

/* Candidate 0: replicated; 1: split (this rank's rows, then the gather). */
static int split_enqueue(tps_bench_rank *k, int cand, cudaStream_t s) {
  const tps_bench_split_opts *o = (const tps_bench_split_opts *)k->opts;
  split_state *st = (split_state *)k->st;
  if (cand == 0) return tps_gemm_run(st->gm, st->x, st->y, (int)st->T, s);
  TPS_TRY(tps_gemm_run(st->gm, st->x + (size_t)k->rank * st->S * o->k, st->shard, (int)st->mine, s));
  return tps_gather_enqueue(k->g, k->o->gather, st->shard, st->out, (size_t)st->S * o->n * 2,
                            (size_t)st->T * o->n * 2, s, NULL);
}

static int split_timed(tps_bench_rank *k, void *rowp, const tps_timing *t) {
  (void)k;
  tps_bench_split_row *r = (tps_bench_split_row *)rowp;
  r->rep = t[0];
  r->split = t[1];
  return TPS_OK;
}

extern "C" int tps_bench_split_run(const tps_bench_split_opts *o, tps_bench_split_result *r) {
  const tps_bench_op op = {o->ntok, 2, sizeof(tps_bench_split_row), split_setup, split_check,
                           split_enqueue, split_timed, split_teardown};
  const int rc = tps_bench_world(&op, &o->w, o, &r->w, r->rows);
  r->maxdiff_all = 0;
  for (size_t i = 0; r->w.writer && i < o->ntok; i++)
    if (r->rows[i].maxdiff > r->maxdiff_all) r->maxdiff_all = r->rows[i].maxdiff;
  return rc;
}
