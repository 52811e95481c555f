/* gather_nccl.cu: the gather object of gather.h: one NCCL communicator per world (created
 * once, non-blocking, so that every wait can poll for errors and give up), the custom
 * backend's peer buffers (gather_custom.cu), backend choice, device barrier, and the
 * error-polling wait.
 *
 * Error handling (the nccl-tests way, plus a timeout): NCCL calls are checked and reported
 * as "tpsplit: rank R: <call>: <ncclGetErrorString>"; every wait polls cudaStreamQuery and
 * ncclCommGetAsyncError; on an error, or after timeout_s, the communicator is aborted
 * (ncclCommAbort) and the world marked failed (tps_world_fail: the other threads' waits
 * return at once; under MPI, MPI_Abort ends the job). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nccl.h>
#include "check.h"
#include "gather.h"
#include "gather_priv.h"

struct tps_gather {
  tps_world *w;
  int rank, n;
  tps_gather_opts o;
  ncclComm_t comm;
  int comm_ok;
  tps_gather_peers peers;
  int has_custom;
  float *bar; /* one float for the NCCL barrier */
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double timeout_of(const tps_gather *g) { return g->o.timeout_s > 0 ? g->o.timeout_s : 10.0; }

static int fail(tps_gather *g, const char *what, ncclResult_t r) {
  if (r != ncclSuccess)
    fprintf(stderr, "tpsplit: rank %d: %s failed: %s\n", g->rank, what, ncclGetErrorString(r));
  fprintf(stderr, "tpsplit: rank %d: aborting the communicator and the other ranks\n", g->rank);
  if (g->comm_ok) {
    ncclCommAbort(g->comm);
    g->comm_ok = 0;
  }
  tps_world_fail(g->w);
  return TPS_K_ERR;
}

/* Settle a non-blocking NCCL call: poll until it is no longer in progress. */
static int settle(tps_gather *g, ncclResult_t r, const char *what, double limit_s) {
  const double t0 = now_s();
  while (r == ncclInProgress) {
    if (now_s() - t0 > limit_s) {
      fprintf(stderr, "tpsplit: rank %d: %s: no progress in %.0f s\n", g->rank, what, limit_s);
      return fail(g, what, ncclInProgress);
    }
    if (ncclCommGetAsyncError(g->comm, &r) != ncclSuccess) break;
  }
  if (r != ncclSuccess) return fail(g, what, r);
  return TPS_K_OK;
}

extern "C" const char *tps_gather_nccl_version(void) {
  static char buf[32];
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  /* NCCL >= 2.9: v = major*10000 + minor*100 + patch */
  snprintf(buf, sizeof buf, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
  return buf;
}

extern "C" int tps_gather_create(tps_gather **out, tps_world *w, const tps_gather_opts *o) {
  *out = NULL;
  tps_gather *g = (tps_gather *)calloc(1, sizeof *g);
  if (!g) return TPS_K_ERR;
  g->w = w;
  g->rank = tps_world_rank(w);
  g->n = tps_world_size(w);
  if (o) g->o = *o;
  if (!g->o.cap_bytes) g->o.cap_bytes = (size_t)2 << 20;
  *out = g;

  ncclUniqueId id;
  if (g->rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) return fail(g, "ncclGetUniqueId", r);
  }
  if (tps_world_bcast(w, &id, sizeof id) != 0) return TPS_K_ERR;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclResult_t r = ncclCommInitRankConfig(&g->comm, g->n, id, g->rank, &cfg);
  if (r != ncclSuccess && r != ncclInProgress) return fail(g, "ncclCommInitRankConfig", r);
  g->comm_ok = 1;
  TPS_TRY(settle(g, r, "ncclCommInitRankConfig", 60.0 > timeout_of(g) ? 60.0 : timeout_of(g)));
  CUDA_TRY(cudaMalloc((void **)&g->bar, 2 * sizeof(float)));
  CUDA_TRY(cudaMemset(g->bar, 0, 2 * sizeof(float)));

  if (g->o.want_custom) {
    int rc = tps_gather_peers_open(&g->peers, w, g->o.cap_bytes);
    if (rc == TPS_K_ERR) return TPS_K_ERR;
    g->has_custom = rc == TPS_K_OK;
  }
  /* Connect NCCL now (outside any graph capture): one barrier all-reduce, waited on. */
  cudaStream_t s;
  CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int rc = settle(g, ncclAllReduce(g->bar, g->bar + 1, 1, ncclFloat, ncclSum, g->comm, s), "ncclAllReduce", timeout_of(g));
  if (rc == TPS_K_OK) rc = tps_gather_wait(g, s);
  cudaStreamDestroy(s);
  return rc;
}

extern "C" void tps_gather_destroy(tps_gather *g, int abort) {
  if (!g) return;
  if (g->has_custom) {
    if (!abort) (void)tps_world_barrier(g->w); /* no peer still reads our buffer */
    tps_gather_peers_close(&g->peers);
  }
  if (g->comm_ok) {
    if (abort) ncclCommAbort(g->comm);
    else {
      ncclResult_t r = ncclCommFinalize(g->comm);
      const double t0 = now_s();
      while (r == ncclInProgress && now_s() - t0 < timeout_of(g))
        if (ncclCommGetAsyncError(g->comm, &r) != ncclSuccess) break;
      if (r == ncclSuccess) ncclCommDestroy(g->comm);
      else ncclCommAbort(g->comm);
    }
  }
  if (g->bar) cudaFree(g->bar);
  free(g);
}

extern "C" int tps_gather_has_custom(const tps_gather *g) { return g->has_custom; }
extern "C" size_t tps_gather_cap_bytes(const tps_gather *g) { return g->o.cap_bytes; }
extern "C" int tps_gather_rank(const tps_gather *g) { return g->rank; }
extern "C" int tps_gather_nranks(const tps_gather *g) { return g->n; }

extern "C" int tps_gather_resolve(const tps_gather *g, int backend, size_t stride_bytes) {
  const int custom_ok = g->has_custom && stride_bytes <= g->o.cap_bytes && stride_bytes % 16 == 0;
  switch (backend) {
  case TPS_GATHER_NCCL: return TPS_GATHER_NCCL;
  case TPS_GATHER_CUSTOM: return custom_ok ? TPS_GATHER_CUSTOM : -1;
  case TPS_GATHER_AUTO: return custom_ok ? TPS_GATHER_CUSTOM : TPS_GATHER_NCCL;
  default: return -1;
  }
}

extern "C" int tps_gather_enqueue(tps_gather *g, int backend, const void *shard, void *out,
                                  size_t stride_bytes, size_t total_bytes, cudaStream_t s, int *used) {
  const int b = tps_gather_resolve(g, backend, stride_bytes);
  if (used) *used = b;
  if (total_bytes > (size_t)g->n * stride_bytes) {
    fprintf(stderr, "tpsplit: rank %d: gather: %zu bytes do not fit %d slots of %zu\n", g->rank,
            total_bytes, g->n, stride_bytes);
    return TPS_K_ERR;
  }
  if (b < 0) {
    fprintf(stderr, "tpsplit: rank %d: custom gather cannot take %zu bytes per rank (%s)\n", g->rank,
            stride_bytes,
            !g->has_custom ? "no peer access between all GPUs" :
            stride_bytes % 16 ? "not a multiple of 16 bytes" : "over the cap");
    return TPS_K_ERR;
  }
  if (b == TPS_GATHER_CUSTOM)
    return tps_gather_peers_enqueue(&g->peers, shard, out, stride_bytes, total_bytes, g->o.blocks,
                                    g->o.threads, timeout_of(g), s);
  /* NCCL: equal counts, so every rank sends its whole slot (see the padding in gather.h). */
  const int bf16 = stride_bytes % 2 == 0;
  const size_t count = bf16 ? stride_bytes / 2 : stride_bytes;
  char *dst = (char *)out;
  ncclResult_t r = ncclAllGather(shard, dst, count, bf16 ? ncclBfloat16 : ncclInt8, g->comm, s);
  return settle(g, r, "ncclAllGather", timeout_of(g));
}

extern "C" int tps_gather_device_barrier(tps_gather *g, cudaStream_t s) {
  if (g->n == 1) return TPS_K_OK;
  if (g->has_custom) {
    /* The custom kernel with nothing to copy is exactly its two barriers. */
    return tps_gather_peers_enqueue(&g->peers, NULL, NULL, 0, 0, 1, 32, timeout_of(g), s);
  }
  return settle(g, ncclAllReduce(g->bar, g->bar + 1, 1, ncclFloat, ncclSum, g->comm, s), "ncclAllReduce",
                timeout_of(g));
}

extern "C" int tps_gather_check(tps_gather *g) {
  uint32_t err = 0;
  TPS_TRY(tps_gather_peers_error(&g->peers, &err));
  if (err) {
    fprintf(stderr, "tpsplit: rank %d: custom gather: a device barrier timed out (a peer did not arrive)\n", g->rank);
    return fail(g, "custom gather", ncclSuccess);
  }
  return TPS_K_OK;
}

extern "C" int tps_gather_wait(tps_gather *g, cudaStream_t s) {
  const double t0 = now_s(), limit = timeout_of(g) + 1.0;
  for (;;) {
    cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) {
      fprintf(stderr, "tpsplit: rank %d: cudaStreamQuery: %s\n", g->rank, cudaGetErrorString(q));
      return fail(g, "stream", ncclSuccess);
    }
    ncclResult_t r = ncclSuccess;
    if (g->comm_ok && ncclCommGetAsyncError(g->comm, &r) == ncclSuccess && r != ncclSuccess && r != ncclInProgress)
      return fail(g, "ncclCommGetAsyncError", r);
    if (now_s() - t0 > limit) {
      fprintf(stderr, "tpsplit: rank %d: the GPU did not finish within %.0f s\n", g->rank, limit);
      return fail(g, "timeout", ncclSuccess);
    }
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  return tps_gather_check(g);
}
