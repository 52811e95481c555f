/* w8trace.c: a developer tool, not a test.  Where the time of the W8A16 stream kernel (the
 * split-K cluster kernel for M <= 64, kernels/gemm/gemm_w8a16_sm90.cu) goes, phase by phase.
 *
 *   tests/unit/kernels/w8trace K N SAMPLES FLAGS M[,M...]      (FLAGS: a comma list of TPS_W8_SKIP_* sums)
 *
 * For each M and each flag set: the traced form of the kernel (tps_w8c_set_trace) is
 * captured into a graph and replayed SAMPLES times by the harness (L2 flush before each
 * replay, CUPTI span); after each replay the per-block clock64 stamps are read back.  Each
 * phase's time is cycles since that block's start, turned into us at the peak SM clock; per
 * replay the median and the maximum over blocks are taken, and the median of those over
 * replays is printed.  With FLAGS 0 the traced form's output is compared with the
 * production form's, bit for bit (the stamps must not change what is computed).
 * The token tile follows M as in production (TPS_W8_SBT forces one); the traced forms sum
 * partials as production does (tps_w8c_sum: TPS_W8_SUM, default st.async).  With a flag set the kernel leaves a phase out and its results are wrong: only times are kept. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "kernels/gemm/gemm_internal.h"
#include "kernels/bench/harness.h"

typedef struct { tps_gemm *g; const void *x; void *y; int m; } run_ctx;
static int enqueue(void *p, cudaStream_t s) {
  run_ctx *c = (run_ctx *)p;
  return tps_gemm_run(c->g, c->x, c->y, c->m, s);
}

static double median(double *v, int n) {
  gsl_sort(v, 1, (size_t)n);
  return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
  fprintf(stderr, "w8trace: %s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: w8trace K N SAMPLES FLAGS M[,M...]\n");
    return 2;
  }
  const int k = atoi(argv[1]), n = atoi(argv[2]), ns = atoi(argv[3]);
  if (k < 64 || n < 64 || k % 64 || n % 64 || ns < 1) {
    fprintf(stderr, "w8trace: K, N must be multiples of 64, SAMPLES >= 1\n");
    return 2;
  }
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const double cyc_per_us = khz / 1e3;
  /* weights: uniform in [-1, 1); X: bf16 of uniform [-1, 1) (never zeros) */
  float *w = (float *)malloc((size_t)n * k * sizeof *w);
  srand(12345);
  for (size_t i = 0; i < (size_t)n * k; i++) w[i] = (float)rand() / RAND_MAX * 2.f - 1.f;
  tps_gemm *g;
  if (tps_gemm_create(&g, TPS_PATH_W8A16, n, k, 64, w)) return 1;
  free(w);
  uint16_t *hx = (uint16_t *)malloc((size_t)64 * k * 2);
  for (size_t i = 0; i < (size_t)64 * k; i++) {
    float f = (float)rand() / RAND_MAX * 2.f - 1.f;
    uint32_t u;
    memcpy(&u, &f, 4);
    hx[i] = (uint16_t)(u >> 16);
  }
  void *dx, *dy, *dy0;
  CK(cudaMalloc(&dx, (size_t)64 * k * 2));
  CK(cudaMalloc(&dy, (size_t)64 * n * 2));
  CK(cudaMalloc(&dy0, (size_t)64 * n * 2));
  CK(cudaMemcpy(dx, hx, (size_t)64 * k * 2, cudaMemcpyHostToDevice));
  const int nblk = (n + 127) / 128 * TPS_W8C_SPLITS;
  const size_t tr_n = (size_t)nblk * TPS_W8_TR_STRIDE;
  unsigned long long *dtr, *htr = (unsigned long long *)malloc(tr_n * sizeof *htr);
  CK(cudaMalloc((void **)&dtr, tr_n * sizeof *dtr));
  tps_harness *h;
  if (tps_harness_create(&h, 0)) return 1;
  printf("# w8trace K=%d N=%d samples=%d, %d blocks, peak SM clock %d MHz, timer %s\n", k, n, ns, nblk, khz / 1000,
         tps_harness_timer(h, NULL) == TPS_TIMER_SPAN ? "cupti-span" : "events");
  printf("# columns: phase, median over replays of (median over blocks, max over blocks), us since the block's start\n");
  double *span = (double *)malloc((size_t)ns * sizeof *span);
  double *ph_med = (double *)malloc((size_t)ns * TPS_W8_TR_SLOTS * sizeof *ph_med);
  double *ph_max = (double *)malloc((size_t)ns * TPS_W8_TR_SLOTS * sizeof *ph_max);
  double *gts = (double *)malloc((size_t)ns * 2 * sizeof *gts);
  double *col = (double *)malloc((size_t)nblk * sizeof *col);
  int rc = 0;
  for (char *ms = strtok(argv[5], ","); ms && !rc; ms = strtok(NULL, ",")) {
    const int m = atoi(ms);
    if (m < 1 || m > 64) { fprintf(stderr, "w8trace: M must be 1..64\n"); return 2; }
    char desc[160];
    uint64_t id;
    tps_gemm_config(g, m, desc, sizeof desc, &id);
    /* the production form's output, for the comparison below */
    CK(cudaMemset(dy0, 0xFF, (size_t)64 * n * 2));
    if (tps_gemm_run(g, dx, dy0, m, 0)) return 1;
    CK(cudaDeviceSynchronize());
    char flist[256];
    snprintf(flist, sizeof flist, "%s", argv[4]);
    char *save = NULL;
    for (char *fs = strtok_r(flist, ",", &save); fs; fs = strtok_r(NULL, ",", &save)) {
      const int flags = atoi(fs);
      run_ctx c = {g, dx, dy, m};
      tps_op op = {"w8a16-trace", &c, enqueue, NULL};
      cudaGraphExec_t ex;
      CK(cudaMemset(dtr, 0, tr_n * sizeof *dtr));
      CK(cudaMemset(dy, 0xFF, (size_t)64 * n * 2));
      tps_w8c_set_trace(dtr, flags);
      int e = tps_harness_capture(h, &op, &ex); /* also replays once */
      tps_w8c_set_trace(NULL, 0);
      if (e) return 1;
      if (flags == 0) {
        CK(cudaDeviceSynchronize());
        uint16_t *a = (uint16_t *)malloc((size_t)m * n * 2), *b = (uint16_t *)malloc((size_t)m * n * 2);
        CK(cudaMemcpy(a, dy, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b, dy0, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
        const int same = !memcmp(a, b, (size_t)m * n * 2);
        printf("# M=%d traced form vs production form: %s\n", m, same ? "same bits" : "DIFFERENT");
        if (!same) rc = 1;
        free(a);
        free(b);
      }
      for (int s = 0; s < ns; s++) {
        double ev;
        if (tps_harness_replay_us(h, &op, ex, &span[s], &ev)) return 1;
        CK(cudaMemcpy(htr, dtr, tr_n * sizeof *htr, cudaMemcpyDeviceToHost));
        unsigned long long g0 = ~0ull, g0max = 0, g1 = 0;
        for (int b = 0; b < nblk; b++) {
          const unsigned long long *t = htr + (size_t)b * TPS_W8_TR_STRIDE;
          if (t[TPS_W8_TR_GT0] < g0) g0 = t[TPS_W8_TR_GT0];
          if (t[TPS_W8_TR_GT0] > g0max) g0max = t[TPS_W8_TR_GT0];
          if (t[TPS_W8_TR_GT1] > g1) g1 = t[TPS_W8_TR_GT1];
        }
        gts[2 * s] = (double)(g1 - g0) / 1e3;
        gts[2 * s + 1] = (double)(g0max - g0) / 1e3;
        for (int p = TPS_W8_TR_ISSUED; p < TPS_W8_TR_GT1; p++) {
          int nv = 0;
          for (int b = 0; b < nblk; b++) {
            const unsigned long long *t = htr + (size_t)b * TPS_W8_TR_STRIDE;
            if (p != TPS_W8_TR_SMID && t[p]) col[nv++] = (double)(t[p] - t[TPS_W8_TR_C0]) / cyc_per_us;
          }
          double mx = 0;
          for (int i = 0; i < nv; i++) mx = col[i] > mx ? col[i] : mx;
          ph_med[(size_t)p * ns + s] = nv ? median(col, nv) : -1;
          ph_max[(size_t)p * ns + s] = nv ? mx : -1;
        }
      }
      CK(cudaGraphExecDestroy(ex));
      double sp = median(span, ns);
      double gsp, gsk;
      {
        double *a = (double *)malloc((size_t)ns * sizeof *a), *b2 = (double *)malloc((size_t)ns * sizeof *b2);
        for (int s = 0; s < ns; s++) { a[s] = gts[2 * s]; b2[s] = gts[2 * s + 1]; }
        gsp = median(a, ns);
        gsk = median(b2, ns);
        free(a);
        free(b2);
      }
      printf("M=%d flags=%d [%s] span %.3f us, globaltimer span %.3f us, block start skew %.3f us\n", m, flags, desc, sp,
             gsp, gsk);
      static const char *names[TPS_W8_TR_SLOTS] = {
          [TPS_W8_TR_ISSUED] = "issued", [TPS_W8_TR_MMA] = "mma_done", [TPS_W8_TR_RED0] = "sum_start",
          [TPS_W8_TR_RED1] = "exchanged", [TPS_W8_TR_RED2] = "stored", [TPS_W8_TR_END] = "end"};
      for (int p = TPS_W8_TR_ISSUED; p < TPS_W8_TR_GT1; p++) {
        if (p == TPS_W8_TR_SMID) continue;
        const double md = median(ph_med + (size_t)p * ns, ns), mx = median(ph_max + (size_t)p * ns, ns);
        if (md < 0) continue;
        char nm[32];
        if (p >= TPS_W8_TR_CHUNK && p < TPS_W8_TR_MMA) snprintf(nm, sizeof nm, "chunk%d", p - TPS_W8_TR_CHUNK);
        else snprintf(nm, sizeof nm, "%s", names[p]);
        printf("  %-10s %7.3f %7.3f\n", nm, md, mx);
      }
    }
  }
  tps_harness_destroy(h);
  tps_gemm_destroy(g);
  return rc;
}
