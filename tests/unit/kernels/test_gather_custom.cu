/* test_gather_custom.cu: GPU test of the gathers of kernels/gather/gather.h (exit 77 without a GPU).
 *
 * 1. The custom one-shot kernel with 1..8 ranks EMULATED on one device (one buffer and one
 *    signal area per rank, the same kernel, one cooperative launch): for uneven token counts
 *    (the last ranks hold fewer rows, some none) and several row widths, every rank's output
 *    must equal the host-side concatenation of the shards BITWISE over the T rows, and the
 *    padding past them (the custom backend never writes it) must still hold the poison.
 *    Every case runs twice with fresh data (the per-block call counters advance), with
 *    several block/thread counts.  Refusals: a slot over the cap, a stride not a multiple
 *    of 16 bytes.
 * 2. The real path with a world of one rank (this GPU): tps_gather_create (NCCL
 *    communicator + custom buffers), every backend, also replayed from a CUDA graph.
 * 0. (no GPU needed) every backend of model/latency/allgather.h is registered by its kernels/ file.
 * TPS_TEST_QUICK=1 runs 2, 3 and 8 emulated ranks with one launch configuration and no NCCL
 * (for compute-sanitizer runs).
 * Expected values are computed on the host from the inputs (memcpy of the rows), not by
 * the code under test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "kernels/common/check.h"
#include "kernels/gather/gather.h"

#define POISON 0xA5
#include "tests/unit/expect.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint8_t next_byte(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint8_t)(rng >> 24);
}

/* One emulated case; returns TPS_ERR only on a CUDA failure (mismatches count as fails). */
static int emul_case(tps_gather_emul *e, int n, long T, size_t row_bytes, int reps) {
  const long S = (T + n - 1) / n;
  const size_t stride = (size_t)S * row_bytes, total = (size_t)T * row_bytes, outsz = (size_t)n * stride;
  uint8_t *h_in = (uint8_t *)malloc(outsz ? outsz : 1), *h_out = (uint8_t *)malloc(outsz ? outsz : 1);
  void *d_shard[TPS_GATHER_MAX_RANKS], *d_out[TPS_GATHER_MAX_RANKS];
  if (!h_in || !h_out) return TPS_ERR;
  for (int r = 0; r < n; r++) {
    CUDA_TRY(cudaMalloc(&d_shard[r], stride ? stride : 16));
    CUDA_TRY(cudaMalloc(&d_out[r], outsz ? outsz : 16));
  }
  for (int rep = 0; rep < reps; rep++) {
    for (size_t i = 0; i < outsz; i++) h_in[i] = next_byte(); /* fresh data every repetition */
    for (int r = 0; r < n; r++) {
      /* rank r's shard: its slot of the concatenation (bytes past T are junk it also holds) */
      CUDA_TRY(cudaMemcpy(d_shard[r], h_in + (size_t)r * stride, stride, cudaMemcpyHostToDevice));
      CUDA_TRY(cudaMemset(d_out[r], POISON, outsz));
    }
    TPS_TRY(tps_gather_emul_run(e, (const void *const *)d_shard, (void *const *)d_out, stride, total, 0));
    CUDA_TRY(cudaDeviceSynchronize());
    TPS_TRY(tps_gather_emul_check(e));
    for (int r = 0; r < n; r++) {
      CUDA_TRY(cudaMemcpy(h_out, d_out[r], outsz, cudaMemcpyDeviceToHost));
      size_t bad = 0, first = 0, padbad = 0;
      for (size_t i = 0; i < total; i++)
        if (h_out[i] != h_in[i] && !bad++) first = i;
      for (size_t i = total; i < outsz; i++) padbad += h_out[i] != POISON;
      EXPECT(bad == 0, "n=%d T=%ld row=%zu rep=%d rank %d: %zu bytes differ, first at %zu (row %zu)", n, T,
             row_bytes, rep, r, bad, first, first / row_bytes);
      EXPECT(padbad == 0, "n=%d T=%ld rank %d: %zu padding bytes written", n, T, r, padbad);
    }
  }
  for (int r = 0; r < n; r++) {
    CUDA_TRY(cudaFree(d_shard[r]));
    CUDA_TRY(cudaFree(d_out[r]));
  }
  free(h_in);
  free(h_out);
  return TPS_OK;
}

static int test_emulated(int quick) {
  const int ranks[] = {1, 2, 3, 4, 5, 8};
  const struct { int blocks, threads; } cfg[] = {{8, 512}, {1, 32}, {16, 256}};
  for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
    const int n = ranks[ri];
    if (quick && n != 2 && n != 3 && n != 8) continue;
    for (size_t c = 0; c < (quick ? 1 : sizeof cfg / sizeof cfg[0]); c++) {
      tps_gather_opts o;
      memset(&o, 0, sizeof o);
      o.blocks = cfg[c].blocks;
      o.threads = cfg[c].threads;
      o.timeout_s = 5;
      tps_gather_emul *e;
      TPS_TRY(tps_gather_emul_create(&e, n, &o));
      /* 3584 B/row = fused_wqa_wkv bf16 output; 2 MiB cap = 585 rows per rank. Token counts:
       * fewer than ranks (some hold none), one more than a multiple, a 4096-token prefill
       * chunk at TP8 (512 rows), the largest under the cap (585 n), odd ones. */
      const long toks[] = {1, (long)n + 1, 2L * n - 1, 7, 48, 1000, 4097 < 585L * n ? 4097 : 585L * n - 3, 585L * n};
      for (size_t t = 0; t < sizeof toks / sizeof toks[0]; t++)
        if (toks[t] >= 1 && toks[t] <= 585L * n) TPS_TRY(emul_case(e, n, toks[t], 3584, 2));
      TPS_TRY(emul_case(e, n, 5, 16, 2));      /* one pack per row */
      TPS_TRY(emul_case(e, n, 2L * n, 24, 2)); /* S = 2 rows of 24 B: 48-byte slots, 8-byte tails */
      if (n > 1) TPS_TRY(emul_case(e, n, 2L * n - 1, 24, 2)); /* n = 1: S = 1, a 24-byte stride */
      tps_gather_emul_destroy(e);
    }
  }
  /* Refusals: a slot over the cap; a stride that is not a multiple of 16. */
  {
    tps_gather_opts o;
    memset(&o, 0, sizeof o);
    o.cap_bytes = 4096;
    tps_gather_emul *e;
    TPS_TRY(tps_gather_emul_create(&e, 2, &o));
    void *d[2];
    CUDA_TRY(cudaMalloc(&d[0], 16384));
    CUDA_TRY(cudaMalloc(&d[1], 16384));
    printf("(two refusals expected next)\n");
    EXPECT(tps_gather_emul_run(e, (const void *const *)d, (void *const *)d, 4112, 8224, 0) == TPS_ERR,
           "a 4112-byte slot over a 4096-byte cap was accepted");
    EXPECT(tps_gather_emul_run(e, (const void *const *)d, (void *const *)d, 24, 48, 0) == TPS_ERR,
           "a 24-byte stride was accepted");
    CUDA_TRY(cudaFree(d[0]));
    CUDA_TRY(cudaFree(d[1]));
    tps_gather_emul_destroy(e);
  }
  return TPS_OK;
}

/* ---- the real path, a world of one rank ---- */
static int one_rank(tps_world *w, void *arg) {
  (void)arg;
  tps_gather_opts o;
  memset(&o, 0, sizeof o);
  tps_gather *g;
  int rc = tps_gather_create(&g, w, &o);
  if (rc != TPS_OK) { tps_gather_destroy(g, 1); return rc; }
  EXPECT(tps_gather_has(g, TPS_GATHER_CUSTOM), "one rank: custom backend not set up");
  EXPECT(tps_gather_resolve(g, TPS_GATHER_AUTO, 2u << 20) == TPS_GATHER_CUSTOM, "auto at the cap is not custom");
  EXPECT(tps_gather_resolve(g, TPS_GATHER_AUTO, (2u << 20) + 16) == TPS_GATHER_NCCL, "auto over the cap is not nccl");
  EXPECT(tps_gather_resolve(g, TPS_GATHER_CUSTOM, (2u << 20) + 16) == -1, "custom over the cap accepted");
  EXPECT(tps_gather_resolve(g, TPS_GATHER_AUTO, 24) == TPS_GATHER_NCCL, "auto with a 24-byte stride is not nccl");
  const size_t row = 3584, T = 77, bytes = T * row;
  uint8_t *h = (uint8_t *)malloc(bytes), *o2 = (uint8_t *)malloc(bytes);
  void *shard, *out;
  CUDA_TRY(cudaMalloc(&shard, bytes));
  CUDA_TRY(cudaMalloc(&out, bytes));
  cudaStream_t s;
  CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int backend = 0; backend < TPS_NGATHERS; backend++) {
    if (tps_gathers[backend].rule) continue;
    for (int graph = 0; graph < 2; graph++) {
      cudaGraphExec_t exec = NULL;
      for (int rep = 0; rep < 3; rep++) {
        for (size_t i = 0; i < bytes; i++) h[i] = next_byte();
        /* on s, ordered before the gather: s does not wait for the legacy stream, so a
         * plain cudaMemset there could land after the gather's copy */
        CUDA_TRY(cudaMemcpyAsync(shard, h, bytes, cudaMemcpyHostToDevice, s));
        CUDA_TRY(cudaMemsetAsync(out, POISON, bytes, s));
        int used = -1;
        if (!graph) {
          TPS_TRY(tps_gather_enqueue(g, backend, shard, out, bytes, bytes, s, &used));
        } else if (!exec) {
          cudaGraph_t gr;
          CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
          TPS_TRY(tps_gather_enqueue(g, backend, shard, out, bytes, bytes, s, &used));
          CUDA_TRY(cudaStreamEndCapture(s, &gr));
          CUDA_TRY(cudaGraphInstantiate(&exec, gr, 0));
          CUDA_TRY(cudaGraphDestroy(gr));
        }
        if (exec) CUDA_TRY(cudaGraphLaunch(exec, s));
        TPS_TRY(tps_gather_wait(g, s));
        CUDA_TRY(cudaMemcpy(o2, out, bytes, cudaMemcpyDeviceToHost));
        EXPECT(memcmp(o2, h, bytes) == 0, "one rank, %s, graph %d, rep %d: output differs",
               tps_gather_name(backend), graph, rep);
        if (used >= 0) EXPECT(used == backend, "backend %d ran as %d", backend, used);
      }
      if (exec) CUDA_TRY(cudaGraphExecDestroy(exec));
    }
  }
  TPS_TRY(tps_gather_device_barrier(g, s));
  TPS_TRY(tps_gather_wait(g, s));
  CUDA_TRY(cudaStreamDestroy(s));
  CUDA_TRY(cudaFree(shard));
  CUDA_TRY(cudaFree(out));
  free(h);
  free(o2);
  tps_gather_destroy(g, 0);
  return TPS_OK;
}

int main(void) {
  for (int b = 0; b < TPS_NGATHERS; b++)
    EXPECT(tps_gathers[b].rule || tps_gather_ops_of(b), "backend %s: no tps_gather_ops registered", tps_gather_name(b));
  if (fails) return 1;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    printf("no GPU: skipped\n");
    return 77;
  }
  /* TPS_TEST_QUICK=1: fewer cases (for compute-sanitizer runs) */
  const char *q = getenv("TPS_TEST_QUICK");
  if (test_emulated(q && *q == '1') != TPS_OK) return 1;
  if (!(q && *q == '1') && tps_world_run(1, one_rank, NULL) != TPS_OK) return 1;
  printf("%d checks, %d failed (NCCL %s)\n", checks, fails, tps_gather_nccl_version());
  return fails ? 1 : 0;
}
