/* bench_allgather.cu: bench allgather (kernels/bench/bench.h), the all-gather alone over N GPUs,
 * as a tps_bench_op of the multi-rank harness (bench_world.h), in the terms of nccl-tests'
 * all_gather_perf:
 *
 *   size  = bytes of the whole gathered buffer = count * 2 * nranks (bfloat16 elements)
 *   count = elements per rank; a requested size is rounded down so that each rank's part
 *           is a multiple of 16 bytes (as nccl-tests does), sizes that round to 0 are skipped
 *   time  = median over the samples (bench_world.h: graph per operation, L2 flush and
 *           device barrier untimed, each sample the max over ranks), not nccl-tests' mean;
 *           out-of-place and in-place (sendbuff = recvbuff + rank * count) are timed as two
 *           alternated candidates
 *   wrong = elements of the gathered buffer that differ from the expected pattern, summed
 *           over ranks (checked once per size and placement, before timing); a row with
 *           wrong elements is timed and reported, then the run stops.
 * Units: bytes, us. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/common/check.h"
#include "kernels/bench/bench_world.h"

typedef struct {
  void *send, *recv;   /* device: one rank's part; the gathered buffer */
  uint16_t *host;      /* the gathered buffer on the host */
  size_t per;          /* bytes per rank of the current size */
  size_t size;
} ag_state;

static int ag_setup(tps_bench_rank *k) {
  const tps_bench_ag_opts *o = (const tps_bench_ag_opts *)k->opts;
  ag_state *st = (ag_state *)calloc(1, sizeof *st);
  if (!st) return TPS_ERR;
  k->st = st;
  const size_t maxsz = (size_t)o->sizes[o->nsizes - 1];
  if (cudaMalloc(&st->send, maxsz / k->n + 16) != cudaSuccess || cudaMalloc(&st->recv, maxsz + 16) != cudaSuccess ||
      !(st->host = (uint16_t *)malloc(maxsz + 16))) {
    fprintf(stderr, "tpsplit: rank %d: bench allgather: cannot allocate\n", k->rank);
    return TPS_ERR;
  }
  return TPS_OK;
}

static void ag_teardown(tps_bench_rank *k) {
  ag_state *st = (ag_state *)k->st;
  if (!st) return;
  cudaFree(st->send);
  cudaFree(st->recv);
  free(st->host);
  free(st);
  k->st = NULL;
}

/* The value rank r puts at element i of its part: never NaN, different per rank and index. */
static uint16_t pattern(int r, size_t i) { return (uint16_t)(((unsigned)r * 7919u + (unsigned)(i * 31u)) & 0x3F7Fu); }

/* Candidate 0: out of place; 1: in place (this rank's part already in its slot). */
static int ag_enqueue(tps_bench_rank *k, int inplace, cudaStream_t s) {
  ag_state *st = (ag_state *)k->st;
  const void *send = inplace ? (const char *)st->recv + (size_t)k->rank * st->per : st->send;
  return tps_gather_enqueue(k->g, k->o->gather, send, st->recv, st->per, st->size, s, NULL);
}

static int fill_and_check(tps_bench_rank *k, int inplace, long *wrong) {
  ag_state *st = (ag_state *)k->st;
  const int n = k->n, me = k->rank;
  const size_t cnt = st->per / 2;
  for (size_t i = 0; i < cnt; i++) st->host[i] = pattern(me, i);
  CUDA_TRY(cudaMemsetAsync(st->recv, 0xFF, st->size, k->s));
  void *src = inplace ? (char *)st->recv + (size_t)me * st->per : st->send;
  CUDA_TRY(cudaMemcpyAsync(src, st->host, st->per, cudaMemcpyHostToDevice, k->s));
  TPS_TRY(ag_enqueue(k, inplace, k->s));
  TPS_TRY(tps_gather_wait(k->g, k->s));
  CUDA_TRY(cudaMemcpy(st->host, st->recv, st->size, cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < cnt; i++) bad += st->host[(size_t)r * cnt + i] != pattern(r, i);
  long all[TPS_GATHER_MAX_RANKS];
  if (tps_world_allgather(k->w, &bad, all, sizeof bad) != 0) return TPS_ERR;
  *wrong = 0;
  for (int r = 0; r < n; r++) *wrong += all[r];
  return TPS_OK;
}

static int ag_check(tps_bench_rank *k, size_t i, void *rowp, int *bad) {
  const tps_bench_ag_opts *o = (const tps_bench_ag_opts *)k->opts;
  ag_state *st = (ag_state *)k->st;
  tps_bench_ag_row *r = (tps_bench_ag_row *)rowp;
  *bad = 0;
  st->per = (size_t)o->sizes[i] / k->n / 16 * 16; /* bytes per rank, 16-byte aligned */
  if (st->per == 0) return TPS_SKIP;
  st->size = r->size = st->per * k->n;
  r->count = st->per / 2;
  r->used = tps_gather_resolve(k->g, k->o->gather, st->per);
  if (r->used < 0) {
    if (k->rank == 0)
      snprintf(k->r->why, sizeof k->r->why, "%zu bytes per rank: the %s gather cannot take them (cap %zu)", st->per,
               tps_gather_name(k->o->gather), k->o->cap_bytes);
    return TPS_ERR;
  }
  TPS_TRY(fill_and_check(k, 0, &r->wrong_oop));
  return fill_and_check(k, 1, &r->wrong_ip);
}

static int ag_timed(tps_bench_rank *k, void *rowp, const tps_timing *t) {
  (void)k;
  tps_bench_ag_row *r = (tps_bench_ag_row *)rowp;
  r->oop = t[0];
  r->ip = t[1];
  return r->wrong_oop || r->wrong_ip ? TPS_ERR : TPS_OK;
}

extern "C" int tps_bench_allgather_run(const tps_bench_ag_opts *o, tps_bench_ag_result *r) {
  const tps_bench_op op = {o->nsizes, 2, sizeof(tps_bench_ag_row), ag_setup, ag_check, ag_enqueue, ag_timed,
                           ag_teardown};
  return tps_bench_world(&op, &o->w, o, &r->w, r->rows);
}
