/* gather_nccl.cu: the "nccl" backend of gather.h: ncclAllGather on one communicator per
 * world, created once and non-blocking, so that every wait can poll for its errors and give
 * up; its device barrier is a one-element ncclAllReduce.  It takes every stride: the
 * fallback of auto.
 *
 * NCCL calls are checked and reported as "tpsplit: rank R: <call> failed: <ncclGetErrorString>";
 * a failure aborts the communicator (ncclCommAbort). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nccl.h>
#include "kernels/common/check.h"
#include "kernels/gather/gather.h"

typedef struct {
  int rank, n;
  double timeout_s;
  ncclComm_t comm;
  int comm_ok;
  float *bar; /* [0] in, [1] out of the barrier all-reduce */
} nccl_state;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void nccl_abort(void *p) {
  nccl_state *c = (nccl_state *)p;
  if (c->comm_ok) ncclCommAbort(c->comm);
  c->comm_ok = 0;
}

static int failed(nccl_state *c, const char *what, ncclResult_t r) {
  fprintf(stderr, "tpsplit: rank %d: %s failed: %s\n", c->rank, what, ncclGetErrorString(r));
  return TPS_ERR;
}

/* Settle a non-blocking NCCL call: poll until it leaves ncclInProgress, up to limit_s. */
static int settle(nccl_state *c, ncclResult_t r, const char *what, double limit_s) {
  const double t0 = now_s();
  while (r == ncclInProgress) {
    if (now_s() - t0 > limit_s) {
      fprintf(stderr, "tpsplit: rank %d: %s: no progress in %.0f s\n", c->rank, what, limit_s);
      return TPS_ERR;
    }
    if (ncclCommGetAsyncError(c->comm, &r) != ncclSuccess) break;
  }
  return r == ncclSuccess ? TPS_OK : failed(c, what, r);
}

extern "C" const char *tps_gather_nccl_version(void) {
  static char buf[32];
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  /* NCCL >= 2.9: v = major*10000 + minor*100 + patch */
  snprintf(buf, sizeof buf, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
  return buf;
}

static void nccl_close(void *p, int abort) {
  nccl_state *c = (nccl_state *)p;
  if (!c) return;
  if (c->comm_ok) {
    if (abort) ncclCommAbort(c->comm);
    else {
      ncclResult_t r = ncclCommFinalize(c->comm);
      const double t0 = now_s();
      while (r == ncclInProgress && now_s() - t0 < c->timeout_s)
        if (ncclCommGetAsyncError(c->comm, &r) != ncclSuccess) break;
      if (r == ncclSuccess) ncclCommDestroy(c->comm);
      else ncclCommAbort(c->comm);
    }
  }
  if (c->bar) cudaFree(c->bar);
  free(c);
}

static int nccl_setup(nccl_state *c, tps_world *w) {
  ncclUniqueId id;
  if (c->rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) return failed(c, "ncclGetUniqueId", r);
  }
  if (tps_world_bcast(w, &id, sizeof id) != 0) return TPS_ERR;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclResult_t r = ncclCommInitRankConfig(&c->comm, c->n, id, c->rank, &cfg);
  if (r != ncclSuccess && r != ncclInProgress) return failed(c, "ncclCommInitRankConfig", r);
  c->comm_ok = 1;
  TPS_TRY(settle(c, r, "ncclCommInitRankConfig", c->timeout_s > 60.0 ? c->timeout_s : 60.0));
  CUDA_TRY(cudaMalloc((void **)&c->bar, 2 * sizeof(float)));
  CUDA_TRY(cudaMemset(c->bar, 0, 2 * sizeof(float)));
  return TPS_OK;
}

static int nccl_open(void **st, tps_world *w, const tps_gather_opts *o) {
  *st = NULL;
  nccl_state *c = (nccl_state *)calloc(1, sizeof *c);
  if (!c) return TPS_ERR;
  c->rank = tps_world_rank(w);
  c->n = tps_world_size(w);
  c->timeout_s = o->timeout_s > 0 ? o->timeout_s : 10.0;
  if (nccl_setup(c, w) != TPS_OK) {
    nccl_close(c, 1);
    return TPS_ERR;
  }
  *st = c;
  return TPS_OK;
}

static const char *nccl_refuses(const void *st, size_t stride_bytes) {
  (void)st; (void)stride_bytes;
  return NULL;
}

/* Equal counts, so every rank sends its whole slot (see the padding in gather.h). */
static int nccl_enqueue(void *p, const void *shard, void *out, size_t stride_bytes, size_t total_bytes,
                        cudaStream_t s) {
  (void)total_bytes;
  nccl_state *c = (nccl_state *)p;
  const int bf16 = stride_bytes % 2 == 0;
  const size_t count = bf16 ? stride_bytes / 2 : stride_bytes;
  ncclResult_t r = ncclAllGather(shard, out, count, bf16 ? ncclBfloat16 : ncclInt8, c->comm, s);
  return settle(c, r, "ncclAllGather", c->timeout_s);
}

static int nccl_barrier(void *p, cudaStream_t s) {
  nccl_state *c = (nccl_state *)p;
  return settle(c, ncclAllReduce(c->bar, c->bar + 1, 1, ncclFloat, ncclSum, c->comm, s), "ncclAllReduce",
                c->timeout_s);
}

static int nccl_poll(void *p) {
  nccl_state *c = (nccl_state *)p;
  ncclResult_t r = ncclSuccess;
  if (c->comm_ok && ncclCommGetAsyncError(c->comm, &r) == ncclSuccess && r != ncclSuccess && r != ncclInProgress)
    return failed(c, "ncclCommGetAsyncError", r);
  return TPS_OK;
}

static const tps_gather_ops nccl_ops = {
    TPS_GATHER_NCCL, nccl_open, nccl_close, nccl_abort, nccl_refuses, nccl_enqueue,
    nccl_barrier, nccl_barrier /* the first collective connects the communicator */, nccl_poll, NULL};
TPS_GATHER_BACKEND(nccl_ops);
