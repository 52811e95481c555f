/* gather.h: the all-gather that rebuilds a token-split output on every rank, its backends,
 * and the host group ("world") of ranks that runs it.
 *
 * Layout (both backends).  T tokens are split into nranks shards of S = ceil(T/nranks)
 * rows; rank p holds rows [p*S, min((p+1)*S, T)), so the last ranks may hold fewer rows,
 * even none (T=5, 4 ranks: 2, 2, 1, 0 rows).  With row_bytes bytes per row, every rank's
 * slot in the gathered buffer is stride_bytes = S*row_bytes wide and starts at
 * p*stride_bytes, so the first total_bytes = T*row_bytes bytes of the output are the T rows
 * in order.  The output buffer must hold nranks*stride_bytes bytes (the PADDING: up to
 * nranks-1 rows, S*nranks - T rows in all, past the T rows):
 *   - nccl:   ncclAllGather needs equal counts, so each rank sends its whole slot
 *             (stride_bytes; the rows past its real ones are whatever its shard buffer
 *             holds) and the padding rows of the output receive them: ignore them;
 *   - custom: copies exactly the real rows; the padding of the output is never written.
 *
 * Backends:
 *   - nccl:   ncclAllGather (bf16 elements when stride_bytes is even, else bytes) on a
 *             communicator created once per world;
 *   - custom: one-shot NVLink all-gather: the rank copies its shard into a buffer that
 *             every peer can read (CUDA IPC between processes, peer access between threads
 *             of one process), then ONE kernel: a device-side barrier with every peer (each
 *             block flags the same block of every peer and waits for theirs), a pull of
 *             every rank's shard from its buffer in 16-byte packs, a second barrier (no peer
 *             overwrites its buffer before everyone has read it).  Per-rank input cap:
 *             2 MiB by default (tps_gather_opts.cap_bytes).  Needs stride_bytes % 16 == 0
 *             (16-byte packs land aligned; bf16 rows with N % 8 == 0, e.g. N=1792).
 *   - auto:   custom while the per-rank input (stride_bytes) <= cap and stride_bytes % 16
 *             == 0, else nccl (what an inference engine with a custom all-gather does).
 * Each backend is a tps_gather_ops (below) in its own file, kernels/gather_<name>.cu, under
 * the id and name of model/core/backend.h; kernels/gather/gather.cu dispatches to them.
 *
 * Device-side spin waits give up after timeout_s (default 10 s) and leave an error flag
 * that tps_gather_wait() reports, so a dead peer never hangs a rank forever.
 * NVLink multicast is never used (no cuMulticastCreate; NCCL_NVLS_ENABLE=0 is set by
 * tps_world_run when unset).
 *
 * Emulation (tests on one GPU): tps_gather_emul_* stands several ranks on one device, each
 * with its own buffer and signal area, and runs the SAME kernel for all of them in one
 * cooperative launch (grid.y = rank), so the barriers really wait on each other. */
#ifndef TPS_KERNELS_GATHER_H
#define TPS_KERNELS_GATHER_H
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include "model/core/backend.h"
#include "model/core/status.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_GATHER_MAX_RANKS 16
#define TPS_GATHER_MAX_BLOCKS 64

/* ---------------------------------------------------------------- world (kernels/gather/gather_world.c)
 * A group of ranks, one GPU each: one process per GPU under MPI (a build --with-mpi started
 * by mpirun/mpiexec with more than one process), otherwise one thread per GPU in this
 * process.  Collective calls must be made by every rank in the same order.  A rank that
 * fails calls tps_world_fail(): under MPI that aborts the job (MPI_Abort), with threads it
 * wakes every rank waiting in a collective, which then returns -1. */
typedef struct tps_world tps_world;
typedef int (*tps_world_fn)(tps_world *w, void *arg);

/* Start the group: under MPI (1 process per rank) nranks must equal the MPI size (error
 * otherwise) and fn runs once in this process; with threads fn runs in nranks threads.
 * Returns TPS_OK when every rank returned it, else the first other return (TPS_SKIP when a
 * rank skipped).  Under MPI: the worst over ranks (error, then skip, then ok). */
int tps_world_run(int nranks, tps_world_fn fn, void *arg);
/* The same with threads only and no cudaSetDevice (tests of the host collectives). */
int tps_world_run_threads_nodev(int nranks, tps_world_fn fn, void *arg);
/* 1 when this process was started by an MPI launcher (and the build has MPI). */
int tps_world_is_mpi(void);
int tps_world_rank(const tps_world *w);
int tps_world_size(const tps_world *w);
/* Host name of this rank (for provenance). */
const char *tps_world_host(const tps_world *w);
int tps_world_barrier(tps_world *w);
/* Gather `bytes` (<= 4096) from every rank into all (rank order). */
int tps_world_allgather(tps_world *w, const void *mine, void *all, size_t bytes);
/* Broadcast `bytes` (<= 4096) from rank 0. */
int tps_world_bcast(tps_world *w, void *buf, size_t bytes);
/* In-place element-wise maximum over ranks of v[0..n), n <= 512. */
int tps_world_max(tps_world *w, double *v, size_t n);
void tps_world_fail(tps_world *w);

/* ---------------------------------------------------------------- gather (kernels/gather/gather.cu) */
/* Backend ids and names: tps_gather_id of model/core/backend.h (tps_gather_parse, _name). */

typedef struct {
  size_t cap_bytes;   /* per-rank input cap of the capped backend (0: its row's, tps_gather_cap_default) */
  int blocks;         /* custom kernel blocks (0: 32) */
  int threads;        /* custom kernel threads per block (0: 512) */
  double timeout_s;   /* host polling and device spin timeout (0: 10 s; NCCL init 60 s) */
} tps_gather_opts;

typedef struct tps_gather tps_gather;

/* Collective: open every backend in id order (NCCL: a communicator, its ncclUniqueId from
 * rank 0 through the world; custom: peer buffers, where every pair of GPUs has peer access),
 * then one warm-up of each, waited on.  cudaSetDevice must already name this rank's GPU.
 * Errors name the rank and the NCCL/CUDA message. */
int tps_gather_create(tps_gather **g, tps_world *w, const tps_gather_opts *o);
/* Collective; safe on NULL.  abort != 0 aborts instead of finalizing (ncclCommAbort). */
void tps_gather_destroy(tps_gather *g, int abort);
/* 1 when the backend `id` is open on this world (custom: all peers reachable), else 0. */
int tps_gather_has(const tps_gather *g, int id);
/* Backend that `backend` resolves to for this stride (auto: the first open backend other
 * than the fallback (nccl) that takes the stride, else the fallback), or -1 when the
 * requested backend cannot gather it (custom above the cap, misaligned, not open). */
int tps_gather_resolve(const tps_gather *g, int backend, size_t stride_bytes);

/* Enqueue the all-gather on stream s (capturable in a CUDA graph): shard holds this rank's
 * rows (its real bytes: min(stride, max(0, total - rank*stride))); out (nranks*stride_bytes
 * bytes) receives the gathered rows, see the layout above.  *used (may be NULL) gets the
 * backend run.  Returns TPS_OK or TPS_ERR (message printed). */
int tps_gather_enqueue(tps_gather *g, int backend, const void *shard, void *out,
                       size_t stride_bytes, size_t total_bytes, cudaStream_t s, int *used);
/* Enqueue a device-side barrier of all ranks (custom signals when open, else a one-element
 * ncclAllReduce: the same preference as auto). */
int tps_gather_device_barrier(tps_gather *g, cudaStream_t s);
/* Wait for stream s while polling every backend for asynchronous errors (NCCL), up to the
 * timeout, then read their error flags (custom's device barrier timeouts); on an error or
 * timeout print "tpsplit: rank R: ...", abort every backend, mark the world failed and
 * return TPS_ERR. */
int tps_gather_wait(tps_gather *g, cudaStream_t s);
/* NCCL version as "2.28.9" (of the library in use). */
const char *tps_gather_nccl_version(void);

/* ---------------------------------------------------------------- one backend */
/* What kernels/gather/gather.cu calls for one backend.  `st` is the backend's state made by open.
 * Every function returns TPS_OK or TPS_ERR after printing one line naming the rank. */
typedef struct tps_gather_ops {
  tps_gather_id id;     /* its row in model/core/backend.h's tps_gathers[] (name, cap, fallback) */
  /* Collective: set up on this rank.  TPS_SKIP: this world cannot run it (no state). */
  int (*open)(void **st, tps_world *w, const tps_gather_opts *o);
  void (*close)(void *st, int abort); /* collective unless abort */
  void (*abort)(void *st);            /* after a failure on this rank: stop at once */
  /* NULL when it takes stride_bytes per rank, else why not (static text). */
  const char *(*refuses)(const void *st, size_t stride_bytes);
  int (*enqueue)(void *st, const void *shard, void *out, size_t stride_bytes, size_t total_bytes,
                 cudaStream_t s);
  int (*barrier)(void *st, cudaStream_t s); /* device-side barrier of all ranks; NULL: none */
  int (*warmup)(void *st, cudaStream_t s);  /* connect before any graph capture; NULL: none */
  int (*poll)(void *st);   /* while waiting: an asynchronous error?  NULL: none */
  int (*check)(void *st);  /* after the wait: an error flag?  NULL: none */
} tps_gather_ops;

/* Make ops the backend of its id (at load time, through TPS_GATHER_BACKEND).  (The kernels/
 * objects are linked directly, not from an archive, so every registration runs.) */
int tps_gather_register(const tps_gather_ops *ops);
/* The registered backend of an id, NULL when none (a rule, or no file for it). */
const tps_gather_ops *tps_gather_ops_of(int id);
#define TPS_GATHER_BACKEND(ops) \
  static const int ops##_registered_ __attribute__((used)) = tps_gather_register(&(ops))

/* ---------------------------------------------------------------- emulation on one GPU */
typedef struct tps_gather_emul tps_gather_emul;
int tps_gather_emul_create(tps_gather_emul **e, int nranks, const tps_gather_opts *o);
void tps_gather_emul_destroy(tps_gather_emul *e);
/* shards[r], outs[r]: rank r's shard and output (nranks*stride_bytes bytes each). One copy
 * per rank into its buffer, then one cooperative launch of the custom kernel. */
int tps_gather_emul_run(tps_gather_emul *e, const void *const *shards, void *const *outs,
                        size_t stride_bytes, size_t total_bytes, cudaStream_t s);
/* Device-side barrier timeouts flagged on any emulated rank: TPS_ERR, else TPS_OK. */
int tps_gather_emul_check(tps_gather_emul *e);

#ifdef __cplusplus
}
#endif
#endif
