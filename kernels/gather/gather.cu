/* gather.cu: the gather object of gather.h: the registry of backends (tps_gather_ops, one
 * per kernels/gather_<name>.cu, under the ids of model/core/backend.h), their opening in id
 * order, backend choice (auto), the device barrier, and the error-polling wait.
 *
 * Error handling (the nccl-tests way, plus a timeout): every wait polls cudaStreamQuery
 * and each backend's asynchronous error (ncclCommGetAsyncError); on an error, or after
 * timeout_s, every backend is aborted (ncclCommAbort) and the world marked failed
 * (tps_world_fail: the other threads' waits return at once; under MPI, MPI_Abort ends the
 * job). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernels/common/check.h"
#include "kernels/gather/gather.h"

static const tps_gather_ops *registry[TPS_NGATHERS]; /* zero before any registration runs */

extern "C" int tps_gather_register(const tps_gather_ops *ops) {
  if ((unsigned)ops->id < TPS_NGATHERS && !tps_gather_is_rule(ops->id)) registry[ops->id] = ops;
  return (int)ops->id;
}

extern "C" const tps_gather_ops *tps_gather_ops_of(int id) {
  return id >= 0 && id < TPS_NGATHERS ? registry[id] : NULL;
}

struct tps_gather {
  tps_world *w;
  int rank, n;
  tps_gather_opts o;
  void *st[TPS_NGATHERS]; /* the open backends' states; NULL: not open */
  int open[TPS_NGATHERS];
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double timeout_of(const tps_gather *g) { return g->o.timeout_s > 0 ? g->o.timeout_s : 10.0; }

/* After a failure on this rank: stop every backend and the other ranks. */
static int fail(tps_gather *g) {
  fprintf(stderr, "tpsplit: rank %d: aborting the gather backends and the other ranks\n", g->rank);
  for (int b = 0; b < TPS_NGATHERS; b++)
    if (g->open[b] && registry[b]->abort) registry[b]->abort(g->st[b]);
  tps_world_fail(g->w);
  return TPS_ERR;
}

/* The backend a rule (auto) picks for this stride: the first open backend, in id order,
 * that is not the fallback and takes it; else the open fallback; -1 when none. */
static int pick(const tps_gather *g, size_t stride_bytes) {
  int fb = -1;
  for (int b = 0; b < TPS_NGATHERS; b++) {
    if (!g->open[b]) continue;
    if (tps_gathers[b].fallback) { if (fb < 0) fb = b; continue; }
    if (!registry[b]->refuses(g->st[b], stride_bytes)) return b;
  }
  return fb;
}

extern "C" int tps_gather_resolve(const tps_gather *g, int backend, size_t stride_bytes) {
  if (backend < 0 || backend >= TPS_NGATHERS) return -1;
  if (tps_gather_is_rule(backend)) return pick(g, stride_bytes);
  return g->open[backend] && !registry[backend]->refuses(g->st[backend], stride_bytes) ? backend : -1;
}

extern "C" int tps_gather_has(const tps_gather *g, int id) {
  return id >= 0 && id < TPS_NGATHERS && g->open[id];
}

extern "C" int tps_gather_create(tps_gather **out, tps_world *w, const tps_gather_opts *o) {
  *out = NULL;
  tps_gather *g = (tps_gather *)calloc(1, sizeof *g);
  if (!g) return TPS_ERR;
  g->w = w;
  g->rank = tps_world_rank(w);
  g->n = tps_world_size(w);
  if (o) g->o = *o;
  if (!g->o.cap_bytes) g->o.cap_bytes = (size_t)tps_gather_cap_default();
  *out = g;
  for (int b = 0; b < TPS_NGATHERS; b++) {
    if (!registry[b]) continue;
    const int rc = registry[b]->open(&g->st[b], w, &g->o);
    if (rc == TPS_SKIP) continue;
    if (rc != TPS_OK) return fail(g);
    g->open[b] = 1;
  }
  /* connect now, outside any graph capture: one warm-up of each backend, waited on */
  cudaStream_t s;
  CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int rc = TPS_OK;
  for (int b = 0; b < TPS_NGATHERS && rc == TPS_OK; b++)
    if (g->open[b] && registry[b]->warmup) rc = registry[b]->warmup(g->st[b], s);
  rc = rc == TPS_OK ? tps_gather_wait(g, s) : fail(g);
  cudaStreamDestroy(s);
  return rc;
}

extern "C" void tps_gather_destroy(tps_gather *g, int abort) {
  if (!g) return;
  for (int b = TPS_NGATHERS - 1; b >= 0; b--)
    if (g->open[b]) registry[b]->close(g->st[b], abort);
  free(g);
}

extern "C" int tps_gather_enqueue(tps_gather *g, int backend, const void *shard, void *out,
                                  size_t stride_bytes, size_t total_bytes, cudaStream_t s, int *used) {
  const int b = tps_gather_resolve(g, backend, stride_bytes);
  if (used) *used = b;
  if (total_bytes > (size_t)g->n * stride_bytes) {
    fprintf(stderr, "tpsplit: rank %d: gather: %zu bytes do not fit %d slots of %zu\n", g->rank,
            total_bytes, g->n, stride_bytes);
    return TPS_ERR;
  }
  if (b < 0) {
    const int open = backend >= 0 && backend < TPS_NGATHERS && g->open[backend];
    fprintf(stderr, "tpsplit: rank %d: %s gather cannot take %zu bytes per rank (%s)\n", g->rank,
            tps_gather_name(backend), stride_bytes,
            open ? registry[backend]->refuses(g->st[backend], stride_bytes) : "not open on these GPUs");
    return TPS_ERR;
  }
  if (registry[b]->enqueue(g->st[b], shard, out, stride_bytes, total_bytes, s) != TPS_OK) return fail(g);
  return TPS_OK;
}

extern "C" int tps_gather_device_barrier(tps_gather *g, cudaStream_t s) {
  if (g->n == 1) return TPS_OK;
  int fb = -1;
  for (int b = 0; b < TPS_NGATHERS; b++) {
    if (!g->open[b] || !registry[b]->barrier) continue;
    if (tps_gathers[b].fallback) { if (fb < 0) fb = b; continue; }
    fb = b;
    break;
  }
  if (fb < 0) {
    fprintf(stderr, "tpsplit: rank %d: no gather backend has a device barrier\n", g->rank);
    return TPS_ERR;
  }
  if (registry[fb]->barrier(g->st[fb], s) != TPS_OK) return fail(g);
  return TPS_OK;
}

extern "C" int tps_gather_wait(tps_gather *g, cudaStream_t s) {
  const double t0 = now_s(), limit = timeout_of(g) + 1.0;
  for (;;) {
    cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) {
      fprintf(stderr, "tpsplit: rank %d: cudaStreamQuery: %s\n", g->rank, cudaGetErrorString(q));
      return fail(g);
    }
    for (int b = 0; b < TPS_NGATHERS; b++)
      if (g->open[b] && registry[b]->poll && registry[b]->poll(g->st[b]) != TPS_OK) return fail(g);
    if (now_s() - t0 > limit) {
      fprintf(stderr, "tpsplit: rank %d: the GPU did not finish within %.0f s\n", g->rank, limit);
      return fail(g);
    }
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  for (int b = 0; b < TPS_NGATHERS; b++)
    if (g->open[b] && registry[b]->check && registry[b]->check(g->st[b]) != TPS_OK) return fail(g);
  return TPS_OK;
}
