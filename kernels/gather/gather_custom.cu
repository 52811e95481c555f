/* gather_custom.cu: the one-shot NVLink all-gather (the "custom" backend of gather.h), its
 * peer buffers (CUDA IPC between processes, peer access between threads), its tps_gather_ops,
 * and the emulation of several ranks on one GPU used by the tests.
 *
 * One call on rank `me` of n ranks (stride = S*row_bytes bytes per rank slot, total =
 * T*row_bytes bytes, see gather.h for the layout and the padding):
 *   1. cudaMemcpyAsync of the rank's real rows (min(stride, total - me*stride) bytes) into
 *      its own peer-readable buffer buf[me];
 *   2. one kernel, grid (blocks, 1):
 *        start barrier: thread t < n of block b stores flag -> sig[t].start[b][me]
 *          (st.release.sys, over NVLink), then spins until sig[me].start[b][t] >= flag
 *          (ld.acquire.sys): the same block of every peer has started, so every peer's
 *          step 1 is complete (it precedes that peer's kernel in its stream);
 *        pull: for p = me, me+1, ... (each rank starts with a different peer, spreading the
 *          NVLink load), the blocks copy buf[p][0 .. bytes_p) to out + p*stride in 16-byte
 *          packs (int4 loads and stores, 4 packs in flight per thread), bytes_p % 16 tail
 *          byte by byte;
 *        end barrier: same as start on sig.end: when every block of this rank has passed
 *          it, every block of every peer has finished reading, so the next call may
 *          overwrite buf[me].
 *      flag = calls made so far by this block + 1 (sig[me].counter[b], device-side, so a
 *      captured CUDA graph replays correctly).  Flags only grow, so a peer can never be
 *      mistaken for being one call ahead or behind.
 * A spin wait gives up after timeout_ns (%globaltimer) and sets sig[me].error.
 *
 * Emulation: n ranks on one device, grid (blocks, n), blockIdx.y = rank, every rank with
 * its own buffer and signal area; a cooperative launch guarantees that all blocks are
 * resident together (the barriers would deadlock otherwise). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/common/check.h"
#include "kernels/gather/gather.h"

#define DEFAULT_BLOCKS 32
#define DEFAULT_THREADS 512

/* Signal area of one rank, at the end of its buffer (zeroed at creation). */
typedef struct {
  uint32_t start[TPS_GATHER_MAX_BLOCKS][TPS_GATHER_MAX_RANKS];
  uint32_t end[TPS_GATHER_MAX_BLOCKS][TPS_GATHER_MAX_RANKS];
  uint32_t counter[TPS_GATHER_MAX_BLOCKS]; /* calls made by each block of this rank */
  uint32_t error;                          /* nonzero: a spin wait timed out */
} tps_gather_signal;

/* The kernel's arguments: grid.y = i runs rank rank0 + i (i > 0 in the emulation only). */
typedef struct {
  int nranks;
  int rank0;                                  /* rank of grid.y == 0 */
  size_t stride_bytes, total_bytes;
  const char *buf[TPS_GATHER_MAX_RANKS];      /* every rank's shard buffer, by rank */
  tps_gather_signal *sig[TPS_GATHER_MAX_RANKS]; /* every rank's signal area, by rank */
  char *out[TPS_GATHER_MAX_RANKS];            /* output of grid.y = i */
  unsigned long long timeout_ns;
} tps_gather_kargs;

static __device__ __forceinline__ uint32_t ld_acquire_sys(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ void st_release_sys(uint32_t *p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
static __device__ __forceinline__ unsigned long long global_ns(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* One barrier of block b of rank me with block b of every rank; false on timeout. */
static __device__ bool block_barrier(const tps_gather_kargs &a, int me, int b, uint32_t flag,
                                     bool end) {
  bool ok = true;
  const int t = threadIdx.x;
  if (t < a.nranks) {
    uint32_t *theirs = end ? &a.sig[t]->end[b][me] : &a.sig[t]->start[b][me];
    const uint32_t *mine = end ? &a.sig[me]->end[b][t] : &a.sig[me]->start[b][t];
    st_release_sys(theirs, flag);
    const unsigned long long t0 = global_ns();
    while (ld_acquire_sys(mine) < flag) {
      if (global_ns() - t0 > a.timeout_ns) {
        atomicExch(&a.sig[me]->error, 1u);
        ok = false;
        break;
      }
    }
  }
  return __syncthreads_and(ok) != 0;
}

__global__ void __launch_bounds__(1024) tps_gather_one_shot(tps_gather_kargs a) {
  const int me = a.rank0 + (int)blockIdx.y;
  const int b = (int)blockIdx.x;
  __shared__ uint32_t flag_s;
  if (threadIdx.x == 0) flag_s = a.sig[me]->counter[b] + 1;
  __syncthreads();
  const uint32_t flag = flag_s;
  if (!block_barrier(a, me, b, flag, false)) return;

  char *out = a.out[blockIdx.y];
  const size_t nthr = (size_t)gridDim.x * blockDim.x;
  const size_t tid = (size_t)b * blockDim.x + threadIdx.x;
  for (int j = 0; j < a.nranks; j++) {
    const int p = (me + j) % a.nranks;
    const size_t off = (size_t)p * a.stride_bytes;
    if (off >= a.total_bytes) continue;
    const size_t bytes = a.total_bytes - off < a.stride_bytes ? a.total_bytes - off : a.stride_bytes;
    const int4 *src = (const int4 *)a.buf[p];
    int4 *dst = (int4 *)(out + off);
    const size_t packs = bytes / 16;
    size_t i = tid;
    for (; i + 3 * nthr < packs; i += 4 * nthr) {
      const int4 v0 = src[i], v1 = src[i + nthr], v2 = src[i + 2 * nthr], v3 = src[i + 3 * nthr];
      dst[i] = v0;
      dst[i + nthr] = v1;
      dst[i + 2 * nthr] = v2;
      dst[i + 3 * nthr] = v3;
    }
    for (; i < packs; i += nthr) dst[i] = src[i];
    for (size_t k = packs * 16 + tid; k < bytes; k += nthr) out[off + k] = a.buf[p][k];
  }
  block_barrier(a, me, b, flag, true);
  if (threadIdx.x == 0) a.sig[me]->counter[b] = flag;
}

/* Step 1: shard -> own peer-readable buffer (cudaMemcpyAsync, device to device: faster on the
 * H200 than a copy kernel of the same launch size, see the README). */
static int copy_in(char *dst, const void *src, size_t bytes, cudaStream_t s) {
  if (bytes) CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  return TPS_OK;
}

/* Launch the one-shot kernel: grid (blocks, ny).  cooperative != 0 uses a cooperative
 * launch (emulation: all ranks' blocks must be co-resident). */
static int custom_launch(const tps_gather_kargs *a, int blocks, int threads, int ny, int cooperative,
                         cudaStream_t s) {
  if (blocks < 1 || blocks > TPS_GATHER_MAX_BLOCKS || threads < 32 || threads > 1024 ||
      threads < a->nranks || a->nranks < 1 || a->nranks > TPS_GATHER_MAX_RANKS || ny < 1 ||
      a->rank0 + ny > a->nranks) {
    fprintf(stderr, "tpsplit: custom gather: bad launch (%d blocks x %d threads, %d ranks)\n",
            blocks, threads, a->nranks);
    return TPS_ERR;
  }
  if (a->stride_bytes % 16 != 0) {
    fprintf(stderr, "tpsplit: custom gather: stride %zu bytes is not a multiple of 16\n",
            a->stride_bytes);
    return TPS_ERR;
  }
  dim3 grid((unsigned)blocks, (unsigned)ny), block((unsigned)threads);
  if (cooperative) {
    int dev, sms, per_sm;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tps_gather_one_shot, threads, 0));
    if ((long)blocks * ny > (long)per_sm * sms) {
      fprintf(stderr, "tpsplit: custom gather: %d x %d blocks cannot be co-resident (%d per SM x %d SMs)\n",
              blocks, ny, per_sm, sms);
      return TPS_ERR;
    }
    tps_gather_kargs copy = *a;
    void *args[] = {&copy};
    CUDA_TRY(cudaLaunchCooperativeKernel((const void *)tps_gather_one_shot, grid, block, args, 0, s));
  } else {
    tps_gather_one_shot<<<grid, block, 0, s>>>(*a);
  }
  CUDA_LAUNCH_CHECK();
  return TPS_OK;
}

/* ---------------------------------------------------------------- peer buffers */
static size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

/* The buffers of one rank: its own (cap_bytes of data, then its signal area) and every
 * peer's, mapped into this process. */
typedef struct {
  tps_world *w;
  int n, rank;
  size_t cap_bytes;                            /* data bytes per buffer (rounded to 256) */
  int blocks, threads;
  double timeout_s;
  char *base;                                  /* own allocation: cap_bytes data + signal */
  const char *buf[TPS_GATHER_MAX_RANKS];       /* every rank's buffer, in this process */
  tps_gather_signal *sig[TPS_GATHER_MAX_RANKS];
  int opened[TPS_GATHER_MAX_RANKS];            /* 1: mapped with cudaIpcOpenMemHandle */
} tps_gather_peers;

typedef struct {
  char host[64];
  int device;
  cudaIpcMemHandle_t handle;
  unsigned long long ptr; /* the buffer in its owner's address space (threads mode) */
  int ok;                 /* this rank can set up the custom backend */
} peer_info;

/* Collective.  TPS_OK: ready; TPS_SKIP: some pair of ranks cannot reach each other
 * (another host, no peer access, too many ranks); TPS_ERR: failure. */
static int peers_map(tps_gather_peers *p, tps_world *w) {
  const int n = p->n, me = p->rank;
  const int mpi = tps_world_is_mpi();
  if (n > TPS_GATHER_MAX_RANKS) return TPS_SKIP;
  int dev;
  CUDA_TRY(cudaGetDevice(&dev));
  const size_t bytes = p->cap_bytes + sizeof(tps_gather_signal);
  CUDA_TRY(cudaMalloc((void **)&p->base, bytes));
  CUDA_TRY(cudaMemset(p->base, 0, bytes));
  CUDA_TRY(cudaDeviceSynchronize());

  peer_info mine, *all = (peer_info *)calloc((size_t)n, sizeof(peer_info));
  if (!all) return TPS_ERR;
  memset(&mine, 0, sizeof mine);
  snprintf(mine.host, sizeof mine.host, "%s", tps_world_host(w));
  mine.device = dev;
  mine.ptr = (unsigned long long)(uintptr_t)p->base;
  mine.ok = 1;
  if (mpi && n > 1 && cudaIpcGetMemHandle(&mine.handle, p->base) != cudaSuccess) {
    (void)cudaGetLastError();
    mine.ok = 0;
  }
  if (tps_world_allgather(w, &mine, all, sizeof mine) != 0) { free(all); return TPS_ERR; }
  /* Every peer on this host and reachable: each rank decides for itself, then all agree. */
  for (int q = 0; q < n && mine.ok; q++) {
    if (q == me) continue;
    if (strcmp(all[q].host, mine.host) != 0) { mine.ok = 0; break; }
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, dev, all[q].device) != cudaSuccess || !can) mine.ok = 0;
    (void)cudaGetLastError();
  }
  int *oks = (int *)calloc((size_t)n, sizeof(int));
  if (!oks || tps_world_allgather(w, &mine.ok, oks, sizeof(int)) != 0) { free(all); free(oks); return TPS_ERR; }
  int ok_all = 1;
  for (int q = 0; q < n; q++) ok_all &= oks[q];
  free(oks);
  if (!ok_all) {
    free(all);
    cudaFree(p->base);
    p->base = NULL;
    return TPS_SKIP;
  }
  for (int q = 0; q < n; q++) {
    char *b;
    if (q == me) {
      b = p->base;
    } else if (mpi) {
      CUDA_TRY(cudaIpcOpenMemHandle((void **)&b, all[q].handle, cudaIpcMemLazyEnablePeerAccess));
      p->opened[q] = 1;
    } else {
      cudaError_t e = cudaDeviceEnablePeerAccess(all[q].device, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else CUDA_TRY(e);
      b = (char *)(uintptr_t)all[q].ptr;
    }
    p->buf[q] = b;
    p->sig[q] = (tps_gather_signal *)(b + p->cap_bytes);
  }
  free(all);
  /* Nobody starts a gather before every rank has zeroed its signals and mapped the peers. */
  return tps_world_barrier(w) != 0 ? TPS_ERR : TPS_OK;
}

static void custom_close(void *st, int abort) {
  tps_gather_peers *p = (tps_gather_peers *)st;
  if (!p) return;
  if (!abort && p->n > 1) (void)tps_world_barrier(p->w); /* no peer still reads our buffer */
  for (int q = 0; q < p->n && q < TPS_GATHER_MAX_RANKS; q++)
    if (p->opened[q]) (void)cudaIpcCloseMemHandle((void *)p->buf[q]);
  if (p->base) (void)cudaFree(p->base);
  (void)cudaGetLastError();
  free(p);
}

static int custom_open(void **st, tps_world *w, const tps_gather_opts *o) {
  *st = NULL;
  tps_gather_peers *p = (tps_gather_peers *)calloc(1, sizeof *p);
  if (!p) return TPS_ERR;
  p->w = w;
  p->n = tps_world_size(w);
  p->rank = tps_world_rank(w);
  p->cap_bytes = round_up(o->cap_bytes ? o->cap_bytes : (size_t)tps_gather_cap_default(), 256);
  p->blocks = o->blocks ? o->blocks : DEFAULT_BLOCKS;
  p->threads = o->threads ? o->threads : DEFAULT_THREADS;
  p->timeout_s = o->timeout_s > 0 ? o->timeout_s : 10.0;
  const int rc = peers_map(p, w);
  if (rc != TPS_OK) {
    custom_close(p, 1);
    return rc;
  }
  *st = p;
  return TPS_OK;
}

static const char *custom_refuses(const void *st, size_t stride_bytes) {
  const tps_gather_peers *p = (const tps_gather_peers *)st;
  if (stride_bytes % 16) return "not a multiple of 16 bytes";
  if (stride_bytes > p->cap_bytes) return "over the cap";
  return NULL;
}

/* One call on this rank: its real rows into its buffer, then the kernel (blocks x threads;
 * with nothing to copy the kernel is exactly its two barriers). */
static int custom_run(tps_gather_peers *p, const void *shard, void *out, size_t stride_bytes,
                      size_t total_bytes, int blocks, int threads, cudaStream_t s) {
  const size_t off = (size_t)p->rank * stride_bytes;
  const size_t mine = off >= total_bytes ? 0 : (total_bytes - off < stride_bytes ? total_bytes - off : stride_bytes);
  TPS_TRY(copy_in(p->base, shard, mine, s));
  tps_gather_kargs a;
  memset(&a, 0, sizeof a);
  a.nranks = p->n;
  a.rank0 = p->rank;
  a.stride_bytes = stride_bytes;
  a.total_bytes = total_bytes;
  for (int q = 0; q < p->n; q++) {
    a.buf[q] = p->buf[q];
    a.sig[q] = p->sig[q];
  }
  a.out[0] = (char *)out;
  a.timeout_ns = (unsigned long long)(p->timeout_s * 1e9);
  return custom_launch(&a, blocks, threads, 1, 0, s);
}

static int custom_enqueue(void *st, const void *shard, void *out, size_t stride_bytes, size_t total_bytes,
                          cudaStream_t s) {
  tps_gather_peers *p = (tps_gather_peers *)st;
  return custom_run(p, shard, out, stride_bytes, total_bytes, p->blocks, p->threads, s);
}

static int custom_barrier(void *st, cudaStream_t s) {
  return custom_run((tps_gather_peers *)st, NULL, NULL, 0, 0, 1, 32, s);
}

/* The error flag of this rank's signal area (synchronous read). */
static int custom_check(void *st) {
  const tps_gather_peers *p = (const tps_gather_peers *)st;
  uint32_t err = 0;
  CUDA_TRY(cudaMemcpy(&err, &p->sig[p->rank]->error, sizeof err, cudaMemcpyDeviceToHost));
  if (err) {
    fprintf(stderr, "tpsplit: rank %d: custom gather: a device barrier timed out (a peer did not arrive)\n", p->rank);
    return TPS_ERR;
  }
  return TPS_OK;
}

static const tps_gather_ops custom_ops = {
    TPS_GATHER_CUSTOM, custom_open, custom_close, NULL, custom_refuses, custom_enqueue,
    custom_barrier, NULL, NULL, custom_check};
TPS_GATHER_BACKEND(custom_ops);

/* ---------------------------------------------------------------- emulation on one GPU */
struct tps_gather_emul {
  int n, blocks, threads;
  size_t cap_bytes;
  double timeout_s;
  char *base[TPS_GATHER_MAX_RANKS];
};

extern "C" int tps_gather_emul_create(tps_gather_emul **out, int nranks, const tps_gather_opts *o) {
  *out = NULL;
  if (nranks < 1 || nranks > TPS_GATHER_MAX_RANKS) {
    fprintf(stderr, "tpsplit: custom gather emulation: %d ranks (1..%d)\n", nranks, TPS_GATHER_MAX_RANKS);
    return TPS_ERR;
  }
  tps_gather_emul *e = (tps_gather_emul *)calloc(1, sizeof *e);
  if (!e) return TPS_ERR;
  e->n = nranks;
  e->cap_bytes = round_up(o && o->cap_bytes ? o->cap_bytes : (size_t)tps_gather_cap_default(), 256);
  e->blocks = o && o->blocks ? o->blocks : 8;
  e->threads = o && o->threads ? o->threads : DEFAULT_THREADS;
  e->timeout_s = o && o->timeout_s > 0 ? o->timeout_s : 10.0;
  *out = e;
  for (int r = 0; r < nranks; r++) {
    const size_t bytes = e->cap_bytes + sizeof(tps_gather_signal);
    CUDA_TRY(cudaMalloc((void **)&e->base[r], bytes));
    CUDA_TRY(cudaMemset(e->base[r], 0, bytes));
  }
  CUDA_TRY(cudaDeviceSynchronize());
  return TPS_OK;
}

extern "C" void tps_gather_emul_destroy(tps_gather_emul *e) {
  if (!e) return;
  for (int r = 0; r < e->n; r++)
    if (e->base[r]) (void)cudaFree(e->base[r]);
  free(e);
}

extern "C" int tps_gather_emul_run(tps_gather_emul *e, const void *const *shards, void *const *outs,
                                   size_t stride_bytes, size_t total_bytes, cudaStream_t s) {
  if (stride_bytes > e->cap_bytes) {
    fprintf(stderr, "tpsplit: custom gather emulation: %zu bytes per rank over the cap of %zu\n",
            stride_bytes, e->cap_bytes);
    return TPS_ERR;
  }
  tps_gather_kargs a;
  memset(&a, 0, sizeof a);
  a.nranks = e->n;
  a.rank0 = 0;
  a.stride_bytes = stride_bytes;
  a.total_bytes = total_bytes;
  a.timeout_ns = (unsigned long long)(e->timeout_s * 1e9);
  for (int r = 0; r < e->n; r++) {
    const size_t off = (size_t)r * stride_bytes;
    const size_t mine = off >= total_bytes ? 0 : (total_bytes - off < stride_bytes ? total_bytes - off : stride_bytes);
    TPS_TRY(copy_in(e->base[r], shards[r], mine, s));
    a.buf[r] = e->base[r];
    a.sig[r] = (tps_gather_signal *)(e->base[r] + e->cap_bytes);
    a.out[r] = (char *)outs[r];
  }
  return custom_launch(&a, e->blocks, e->threads, e->n, 1, s);
}

extern "C" int tps_gather_emul_check(tps_gather_emul *e) {
  for (int r = 0; r < e->n; r++) {
    uint32_t err = 0;
    CUDA_TRY(cudaMemcpy(&err, &((tps_gather_signal *)(e->base[r] + e->cap_bytes))->error, sizeof err,
                        cudaMemcpyDeviceToHost));
    if (err) {
      fprintf(stderr, "tpsplit: custom gather emulation: rank %d: a device barrier timed out\n", r);
      return TPS_ERR;
    }
  }
  return TPS_OK;
}
