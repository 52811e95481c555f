/* gather.h: the all-gather that rebuilds a token-split output on every rank, and the host
 * group ("world") of ranks that runs it.
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
 *             == 0, else nccl (what the brief's engine does).
 *
 * Device-side spin waits give up after timeout_s (default 10 s) and leave an error flag
 * that tps_gather_check() reports, so a dead peer never hangs a rank forever.
 * NVLink multicast is never used (no cuMulticastCreate; NCCL_NVLS_ENABLE=0 is set by
 * tps_world_run when unset).
 *
 * Emulation (tests on one GPU): tps_gather_emul_* stands several ranks on one device, each
 * with its own buffer and signal area, and runs the SAME kernel for all of them in one
 * cooperative launch (grid.y = rank), so the barriers really wait on each other. */
#ifndef TPS_GATHER_H
#define TPS_GATHER_H
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include "allgather.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_GATHER_MAX_RANKS 16
#define TPS_GATHER_MAX_BLOCKS 64

/* ---------------------------------------------------------------- world (kernels/gather_world.c)
 * A group of ranks, one GPU each: one process per GPU under MPI (a build --with-mpi started
 * by mpirun/mpiexec with more than one process), otherwise one thread per GPU in this
 * process.  Collective calls must be made by every rank in the same order.  A rank that
 * fails calls tps_world_fail(): under MPI that aborts the job (MPI_Abort), with threads it
 * wakes every rank waiting in a collective, which then returns -1. */
typedef struct tps_world tps_world;
typedef int (*tps_world_fn)(tps_world *w, void *arg);

/* Start the group: under MPI (1 process per rank) nranks must equal the MPI size (error
 * otherwise) and fn runs once in this process; with threads fn runs in nranks threads.
 * Returns 0 when every rank returned 0, else the first nonzero return (TPS_K_SKIP when a
 * rank skipped).  Under MPI the return is the maximum over ranks. */
int tps_world_run(int nranks, tps_world_fn fn, void *arg);
/* The same with threads only and no cudaSetDevice (tests of the host collectives). */
int tps_world_run_threads_nodev(int nranks, tps_world_fn fn, void *arg);
/* 1 when this process was started by an MPI launcher (and the build has MPI). */
int tps_world_is_mpi(void);
int tps_world_rank(const tps_world *w);
int tps_world_size(const tps_world *w);
/* GPU this rank uses: the local rank on its node (MPI) or the thread index. */
int tps_world_device(const tps_world *w);
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

/* ---------------------------------------------------------------- gather (kernels/gather_*.cu) */
/* backend ids: tps_gather_id of model/allgather.h */

typedef struct {
  size_t cap_bytes;   /* per-rank input cap of the custom backend (0: 2 MiB) */
  int blocks;         /* custom kernel blocks (0: 32) */
  int threads;        /* custom kernel threads per block (0: 512) */
  double timeout_s;   /* host polling and device spin timeout (0: 10 s; NCCL init 60 s) */
  int want_custom;    /* 0: do not set up the custom backend (no IPC buffers) */
} tps_gather_opts;

typedef struct tps_gather tps_gather;

/* Collective: create the NCCL communicator (ncclUniqueId from rank 0 through the world) and,
 * if want_custom and every pair of GPUs has peer access, the custom buffers.  cudaSetDevice
 * must already name this rank's GPU.  Errors name the rank and the NCCL/CUDA message. */
int tps_gather_create(tps_gather **g, tps_world *w, const tps_gather_opts *o);
/* Collective; safe on NULL.  abort != 0 aborts the communicator (ncclCommAbort). */
void tps_gather_destroy(tps_gather *g, int abort);
/* 1 when the custom backend is ready (all peers reachable), 0 otherwise. */
int tps_gather_has_custom(const tps_gather *g);
size_t tps_gather_cap_bytes(const tps_gather *g);
/* Backend that `backend` resolves to for this stride (auto: custom or nccl), or -1 when
 * the requested backend cannot gather it (custom above the cap, misaligned, unavailable). */
int tps_gather_resolve(const tps_gather *g, int backend, size_t stride_bytes);

/* Enqueue the all-gather on stream s (capturable in a CUDA graph): shard holds this rank's
 * rows (its real bytes: min(stride, max(0, total - rank*stride))); out (nranks*stride_bytes
 * bytes) receives the gathered rows, see the layout above.  *used (may be NULL) gets the
 * backend run.  Returns TPS_K_OK or TPS_K_ERR (message printed). */
int tps_gather_enqueue(tps_gather *g, int backend, const void *shard, void *out,
                       size_t stride_bytes, size_t total_bytes, cudaStream_t s, int *used);
/* Enqueue a device-side barrier of all ranks (custom signals when available, else a
 * one-element ncclAllReduce). */
int tps_gather_device_barrier(tps_gather *g, cudaStream_t s);
/* Wait for stream s while polling ncclCommGetAsyncError and the custom error flag, up to
 * the timeout; on error or timeout print "tpsplit: rank R: ...", abort the communicator,
 * mark the world failed and return TPS_K_ERR. */
int tps_gather_wait(tps_gather *g, cudaStream_t s);
/* Report a device-side barrier timeout flagged since creation (TPS_K_ERR) or TPS_K_OK. */
int tps_gather_check(tps_gather *g);
int tps_gather_rank(const tps_gather *g);
int tps_gather_nranks(const tps_gather *g);
/* NCCL version as "2.28.9" (of the library in use). */
const char *tps_gather_nccl_version(void);

/* ---------------------------------------------------------------- emulation on one GPU */
typedef struct tps_gather_emul tps_gather_emul;
int tps_gather_emul_create(tps_gather_emul **e, int nranks, const tps_gather_opts *o);
void tps_gather_emul_destroy(tps_gather_emul *e);
/* shards[r], outs[r]: rank r's shard and output (nranks*stride_bytes bytes each). One copy
 * per rank into its buffer, then one cooperative launch of the custom kernel. */
int tps_gather_emul_run(tps_gather_emul *e, const void *const *shards, void *const *outs,
                        size_t stride_bytes, size_t total_bytes, cudaStream_t s);
/* Device-side barrier timeouts flagged on any emulated rank: TPS_K_ERR, else TPS_K_OK. */
int tps_gather_emul_check(tps_gather_emul *e);

/* ---------------------------------------------------------------- internal (gather_custom.cu) */
/* Signal area of one rank, at the end of its custom buffer (zeroed at creation). */
typedef struct {
  uint32_t start[TPS_GATHER_MAX_BLOCKS][TPS_GATHER_MAX_RANKS];
  uint32_t end[TPS_GATHER_MAX_BLOCKS][TPS_GATHER_MAX_RANKS];
  uint32_t counter[TPS_GATHER_MAX_BLOCKS]; /* calls made by each block of this rank */
  uint32_t error;                          /* nonzero: a spin wait timed out */
} tps_gather_signal;

typedef struct {
  int nranks;
  int rank0;                                  /* rank of grid.y == 0 */
  size_t stride_bytes, total_bytes;
  const char *buf[TPS_GATHER_MAX_RANKS];      /* every rank's shard buffer, by rank */
  tps_gather_signal *sig[TPS_GATHER_MAX_RANKS]; /* every rank's signal area, by rank */
  char *out[TPS_GATHER_MAX_RANKS];            /* output of grid.y = i */
  unsigned long long timeout_ns;
} tps_gather_kargs;

/* Launch the one-shot kernel: grid (blocks, ny).  cooperative != 0 uses a cooperative
 * launch (emulation: all ranks' blocks must be co-resident). */
int tps_gather_custom_launch(const tps_gather_kargs *a, int blocks, int threads, int ny,
                             int cooperative, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
