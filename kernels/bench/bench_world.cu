/* bench_world.cu: the multi-rank harness of bench_world.h (bench split, bench allgather):
 * world launch, per-rank setup, the timing loop, provenance.  Units: us, bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/common/check.h"
#include "kernels/bench/bench_world.h"

static_assert(TPS_BENCH_MAX_RANKS == TPS_GATHER_MAX_RANKS, "bench.h and gather.h rank limits");
static_assert(TPS_BENCH_MAX_BLOCKS == TPS_GATHER_MAX_BLOCKS, "bench.h and gather.h block limits");

extern "C" int tps_bench_mpi(void) { return tps_world_is_mpi(); }

/* Capture op->enqueue(cand) into a graph (thread-local capture mode) and instantiate it. */
static int capture(tps_bench_rank *k, const tps_bench_op *op, int cand, cudaGraphExec_t *exec) {
  cudaGraph_t gr;
  CUDA_TRY(cudaStreamBeginCapture(k->s, cudaStreamCaptureModeThreadLocal));
  int rc = op->enqueue(k, cand, k->s);
  cudaError_t e = cudaStreamEndCapture(k->s, &gr);
  if (rc != TPS_OK) return rc;
  CUDA_TRY(e);
  CUDA_TRY(cudaGraphInstantiate(exec, gr, 0));
  CUDA_TRY(cudaGraphDestroy(gr));
  return TPS_OK;
}

/* The timing loop of bench_world.h over nc instantiated graphs; out[c] for graph c. */
static int time_graphs(tps_bench_rank *k, const cudaGraphExec_t *exec, int nc, tps_timing *out) {
  const int nsamples = k->o->samples, nwarm = k->o->warmup;
  if (nc < 1 || nc > TPS_BENCH_MAX_CAND || nsamples < 1 || nsamples * nc > 512) return TPS_ERR;
  double samp[512];
  for (int r = 0; r < nwarm + nsamples; r++) {
    for (int j = 0; j < nc; j++) {
      const int c = (r + j) % nc; /* alternate: round r starts with candidate r mod nc */
      TPS_TRY(tps_harness_flush(k->h));
      TPS_TRY(tps_gather_device_barrier(k->g, k->s));
      TPS_TRY(tps_harness_launch_timed(k->h, exec[c]));
      TPS_TRY(tps_gather_wait(k->g, k->s));
      double us = 0;
      TPS_TRY(tps_harness_read_timed(k->h, &us, NULL)); /* kernel span (CUPTI) or events */
      if (r >= nwarm) samp[c * nsamples + (r - nwarm)] = us;
    }
  }
  if (tps_world_max(k->w, samp, (size_t)(nc * nsamples)) != 0) return TPS_ERR; /* max over ranks */
  for (int c = 0; c < nc; c++) tps_timing_from_samples(samp + c * nsamples, nsamples, &out[c]);
  return TPS_OK;
}

/* Provenance of this rank's GPU plus the world's: host, NCCL, every rank's PCI bus id. */
static int world_prov(tps_bench_rank *k, tps_bench_prov *p) {
  TPS_TRY(tps_bench_prov_device(p));
  int dev;
  char bus[32] = "";
  CUDA_TRY(cudaGetDevice(&dev));
  CUDA_TRY(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
  if (tps_world_allgather(k->w, bus, p->busid, sizeof bus) != 0) return TPS_ERR;
  snprintf(p->host, sizeof p->host, "%s", tps_world_host(k->w));
  snprintf(p->nccl, sizeof p->nccl, "%s", tps_gather_nccl_version());
  p->mpi = tps_world_is_mpi();
  p->nranks = k->n;
  return TPS_OK;
}

typedef struct {
  const tps_bench_op *op;
  const tps_bench_world_opts *o;
  const void *opts;
  tps_bench_world_result *r;
  void *rows;
  int start_rc;  /* on_start's status (rank 0) */
  int lead_here; /* rank 0 runs in this process */
} world_job;

/* Points in order; returns the status of the first one that stopped the run. */
static int points(tps_bench_rank *k, const world_job *job, void *row) {
  const tps_bench_op *op = job->op;
  const int lead = k->rank == 0;
  for (size_t i = 0; i < op->npoints; i++) {
    memset(row, 0, op->row_bytes);
    if (lead && k->o->on_row) k->o->on_row(k->o->arg, i, TPS_BENCH_ROW_START, row);
    int bad = 0, rc = op->check(k, i, row, &bad);
    if (rc == TPS_SKIP) continue;
    if (rc == TPS_OK && lead && k->o->on_row) k->o->on_row(k->o->arg, i, TPS_BENCH_ROW_CHECKED, row);
    if (rc == TPS_OK && bad) rc = TPS_ERR;
    if (rc == TPS_OK) {
      cudaGraphExec_t ex[TPS_BENCH_MAX_CAND] = {NULL};
      tps_timing t[TPS_BENCH_MAX_CAND];
      for (int c = 0; c < op->ncand && rc == TPS_OK; c++) rc = capture(k, op, c, &ex[c]);
      if (rc == TPS_OK) rc = time_graphs(k, ex, op->ncand, t);
      for (int c = 0; c < op->ncand; c++)
        if (ex[c]) cudaGraphExecDestroy(ex[c]);
      if (rc == TPS_OK) {
        rc = op->timed(k, row, t);
        if (lead) {
          memcpy((char *)job->rows + i * op->row_bytes, row, op->row_bytes);
          if (k->o->on_row) k->o->on_row(k->o->arg, i, TPS_BENCH_ROW_TIMED, row);
        }
      }
    }
    if (rc != TPS_OK) {
      if (lead) k->r->stopped = (long)i;
      return rc;
    }
  }
  return TPS_OK;
}

static int rank_main(tps_world *w, void *arg) {
  world_job *job = (world_job *)arg;
  tps_bench_rank k;
  memset(&k, 0, sizeof k);
  k.w = w;
  k.rank = tps_world_rank(w);
  k.n = tps_world_size(w);
  k.o = job->o;
  k.r = job->r;
  k.opts = job->opts;
  const int lead = k.rank == 0;
  if (lead) job->lead_here = 1;
  if (lead && k.o->on_start && (job->start_rc = k.o->on_start(k.o->arg)) != TPS_OK) return job->start_rc;
  tps_bench_prov pv;
  memset(&pv, 0, sizeof pv);
  void *row = calloc(1, job->op->row_bytes);
  int rc = row ? world_prov(&k, &pv) : TPS_ERR;
  tps_gather_opts go;
  memset(&go, 0, sizeof go);
  go.cap_bytes = k.o->cap_bytes;
  go.blocks = k.o->blocks;
  go.threads = k.o->threads;
  if (rc == TPS_OK) rc = tps_gather_create(&k.g, w, &go);
  if (rc == TPS_OK && !tps_gathers[k.o->gather].rule && !tps_gather_has(k.g, k.o->gather)) {
    if (lead)
      snprintf(k.r->why, sizeof k.r->why, "%s gather: not available on these GPUs (they cannot all reach each other)",
               tps_gather_name(k.o->gather));
    rc = TPS_ERR;
  }
  if (rc == TPS_OK && cudaStreamCreateWithFlags(&k.s, cudaStreamNonBlocking) != cudaSuccess) rc = TPS_ERR;
  if (rc == TPS_OK) rc = tps_harness_create(&k.h, k.s);
  if (rc == TPS_OK) {
    tps_bench_prov_timer(&pv, k.h);
    rc = job->op->setup(&k);
  }
  if (rc == TPS_OK) rc = points(&k, job, row);
  if (lead) {
    if (k.h) tps_bench_prov_timer(&pv, k.h); /* with the count of fallbacks */
    k.r->prov = pv;
  }
  job->op->teardown(&k);
  if (k.h) tps_harness_destroy(k.h);
  if (k.s) cudaStreamDestroy(k.s);
  tps_gather_destroy(k.g, rc != TPS_OK);
  free(row);
  return rc;
}

extern "C" int tps_bench_world(const tps_bench_op *op, const tps_bench_world_opts *o, const void *opts,
                               tps_bench_world_result *r, void *rows) {
  memset(r, 0, sizeof *r);
  r->stopped = -1;
  world_job job = {op, o, opts, r, rows, TPS_OK, 0};
  const int rc = tps_world_run(o->tp, rank_main, &job);
  r->writer = job.lead_here;
  if (job.start_rc != TPS_OK) return job.start_rc;
  return rc;
}
