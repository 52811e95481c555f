/* bench_world.h: the one multi-rank harness of bench split and bench allgather
 * (kernels/bench/bench_world.cu), nccl-tests style: a bench is a tps_bench_op, a table of
 * function pointers for what is its own (buffers, checks, the work of each candidate);
 * the harness does the rest, on every rank of the world:
 *
 *   rank 0: opts->on_start (src/ opens its output), then on every rank: provenance, the
 *   gather (kernels/gather/gather.h), a stream and a timing harness (kernels/bench/harness.h),
 *   op->setup; per point i: on_row(START), op->check, on_row(CHECKED) (also when checks
 *   failed: then the run stops), one CUDA graph per candidate (op->enqueue captured), the
 *   timing loop, op->timed, on_row(TIMED).
 *
 * Timing loop: nwarm untimed rounds, then nsamples rounds; per sample the L2 flush and a
 * device-side barrier of all ranks (tps_gather_device_barrier), both outside the timed
 * span, then the harness's timed launch; the waits poll for gather errors
 * (tps_gather_wait).  Candidates alternate inside every round (round r starts with
 * candidate r mod ncand).  After the rounds each sample is replaced by its maximum over
 * ranks (tps_world_max), then the median (GSL), min and max are taken. */
#ifndef TPS_KERNELS_BENCH_WORLD_H
#define TPS_KERNELS_BENCH_WORLD_H
#include <cuda_runtime.h>
#include "kernels/bench/bench.h"
#include "kernels/gather/gather.h"
#include "kernels/bench/harness.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_BENCH_MAX_CAND 4

/* One rank's view of a running bench. */
typedef struct {
  tps_world *w;
  tps_gather *g;
  tps_harness *h;
  cudaStream_t s;
  int rank, n;
  const tps_bench_world_opts *o;
  tps_bench_world_result *r; /* written by rank 0 only */
  const void *opts;          /* the bench's own options (tps_bench_split_opts, ...) */
  void *st;                  /* the bench's per-rank state (op->setup makes it) */
} tps_bench_rank;

typedef struct {
  size_t npoints;            /* rows of the result */
  int ncand;                 /* candidates timed per point, <= TPS_BENCH_MAX_CAND */
  size_t row_bytes;          /* size of one result row */
  int (*setup)(tps_bench_rank *k);
  /* Point i: fill row (this rank's copy) and check it; *bad = the checks that failed (the
   * same on every rank), which stop the run before timing.  TPS_SKIP: nothing to time here
   * (the row stays zero); TPS_ERR: an error (in r->why or on stderr). */
  int (*check)(tps_bench_rank *k, size_t i, void *row, int *bad);
  int (*enqueue)(tps_bench_rank *k, int cand, cudaStream_t s); /* captured into cand's graph */
  /* After timing: t[ncand] into row; a status other than TPS_OK stops after this row. */
  int (*timed)(tps_bench_rank *k, void *row, const tps_timing *t);
  void (*teardown)(tps_bench_rank *k); /* also after a failure; st may be NULL */
} tps_bench_op;

/* Run op over o->tp ranks; rank 0 copies its rows into rows[] (npoints x row_bytes).
 * Returns the status of the run (on_start's when it refused). */
int tps_bench_world(const tps_bench_op *op, const tps_bench_world_opts *o, const void *opts,
                    tps_bench_world_result *r, void *rows);

/* The provenance of the current device: name, SMs, clocks, L2, driver, runtime, cuBLASLt
 * (kernels/bench/bench_gemm.cu, which bench gemm uses alone). */
int tps_bench_prov_device(tps_bench_prov *p);
/* Its timer part: what harness h times with, its flush, its replays without CUPTI records. */
void tps_bench_prov_timer(tps_bench_prov *p, const tps_harness *h);

#ifdef __cplusplus
}
#endif
#endif
