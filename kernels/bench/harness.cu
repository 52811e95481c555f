/* harness.cu: see harness.h.  The L2 flush is a kernel that writes 2x the L2 size with
 * 16-byte stores (every line of the measured op's data is evicted), enqueued on the same
 * stream before the start event, so it is never inside the timed span.  In the default mode
 * a second kernel then reads the buffer back: the write leaves the L2 full of dirty lines,
 * whose write-back to HBM would otherwise overlap the measured kernel (on the H200 it
 * doubled the time of small GEMMs; see README); after the read the L2 holds clean lines of
 * an unrelated buffer: cold for the measured kernel, with no write-back to pay. */
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "kernels/common/check.h"
#include "kernels/bench/harness.h"
#include "kernels/bench/kspan.h"

struct tps_harness {
  cudaStream_t s;
  int own_stream;
  uint4 *flush;
  size_t flush_bytes;
  int flush_blocks;
  cudaEvent_t e0, e1;
  int read_back;
  unsigned *sink;
  int device;
  const char *why;  /* why CUPTI is not used; NULL: the CUPTI span is the time */
  uint64_t mark;    /* CUPTI timestamp before the last timed launch */
  long nfallback;   /* timed replays with no CUPTI record: their event time was taken */
};

__global__ void flush_read_kernel(const uint4 *buf, size_t n, unsigned *sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = buf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc; /* practically never: keeps the loads alive */
}

extern "C" void tps_harness_set_flush_read(tps_harness *h, int read_back) { h->read_back = read_back; }

__global__ void flush_kernel(uint4 *buf, size_t n, unsigned salt) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    buf[i] = make_uint4((unsigned)i, salt, (unsigned)i ^ salt, salt + 1);
}

extern "C" int tps_harness_create(tps_harness **out, cudaStream_t s) {
  *out = NULL;
  tps_harness *h = (tps_harness *)calloc(1, sizeof *h);
  if (!h) return TPS_ERR;
  int dev, l2 = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e == cudaSuccess && !s) { e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); h->own_stream = 1; }
  h->s = s;
  if (l2 <= 0) l2 = 64 << 20;
  h->flush_bytes = ((size_t)l2 * 2 + 15) / 16 * 16;
  h->flush_blocks = sms > 0 ? sms * 4 : 512;
  if (e == cudaSuccess) e = cudaMalloc(&h->flush, h->flush_bytes);
  if (e == cudaSuccess) e = cudaEventCreate(&h->e0);
  if (e == cudaSuccess) e = cudaEventCreate(&h->e1);
  if (e == cudaSuccess) e = cudaMalloc(&h->sink, sizeof(unsigned));
  h->device = dev;
  if (tps_kspan_open(&h->why) == 0) h->why = NULL;
  const char *fm = getenv("TPS_FLUSH");
  h->read_back = !(fm && !strcmp(fm, "write"));
  if (e != cudaSuccess) {
    fprintf(stderr, "tpsplit: harness: %s\n", cudaGetErrorString(e));
    tps_harness_destroy(h);
    return TPS_ERR;
  }
  *out = h;
  return TPS_OK;
}

extern "C" void tps_harness_destroy(tps_harness *h) {
  if (!h) return;
  cudaFree(h->flush);
  cudaFree(h->sink);
  if (h->e0) cudaEventDestroy(h->e0);
  if (h->e1) cudaEventDestroy(h->e1);
  if (h->own_stream && h->s) cudaStreamDestroy(h->s);
  free(h);
}

extern "C" cudaStream_t tps_harness_stream(const tps_harness *h) { return h->s; }
extern "C" size_t tps_harness_flush_bytes(const tps_harness *h) { return h->flush_bytes; }

extern "C" int tps_harness_flush(tps_harness *h) {
  static unsigned salt = 1;
  flush_kernel<<<h->flush_blocks, 256, 0, h->s>>>(h->flush, h->flush_bytes / 16, salt++);
  CUDA_LAUNCH_CHECK();
  if (h->read_back) {
    flush_read_kernel<<<h->flush_blocks, 256, 0, h->s>>>(h->flush, h->flush_bytes / 16, h->sink);
    CUDA_LAUNCH_CHECK();
  }
  return TPS_OK;
}

extern "C" int tps_harness_capture(tps_harness *h, const tps_op *op, cudaGraphExec_t *exec) {
  cudaGraph_t graph;
  *exec = NULL;
  CUDA_TRY(cudaStreamBeginCapture(h->s, cudaStreamCaptureModeRelaxed));
  int rc = op->enqueue(op->ctx, h->s);
  cudaError_t e = cudaStreamEndCapture(h->s, &graph);
  if (rc != TPS_OK) {
    if (e == cudaSuccess) cudaGraphDestroy(graph);
    fprintf(stderr, "tpsplit: harness: capturing '%s' failed\n", op->name);
    return TPS_ERR;
  }
  CUDA_TRY(e);
  e = cudaGraphInstantiate(exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_TRY(e);
  CUDA_TRY(cudaGraphLaunch(*exec, h->s));
  CUDA_TRY(cudaStreamSynchronize(h->s));
  return TPS_OK;
}

extern "C" tps_timer tps_harness_timer(const tps_harness *h, const char **why) {
  if (why) *why = h->why;
  return h->why ? TPS_TIMER_EVENTS : TPS_TIMER_SPAN;
}

extern "C" long tps_harness_fallbacks(const tps_harness *h) { return h->nfallback; }

extern "C" const char *tps_harness_timer_text(const tps_harness *h) {
  return !h->why
             ? "CUPTI kernel span (first kernel start to last kernel end of the replay's graph, activity records); "
               "event_us: CUDA events around the graph launch (adds its launch latency)"
             : "CUDA events around the graph launch (CUPTI not used: includes the graph's launch latency)";
}

extern "C" int tps_harness_launch_timed(tps_harness *h, cudaGraphExec_t exec) {
  h->mark = tps_kspan_mark();
  CUDA_TRY(cudaEventRecord(h->e0, h->s));
  CUDA_TRY(cudaGraphLaunch(exec, h->s));
  CUDA_TRY(cudaEventRecord(h->e1, h->s));
  return TPS_OK;
}

extern "C" int tps_harness_read_timed(tps_harness *h, double *us, double *event_us) {
  float ms = 0;
  CUDA_TRY(cudaEventSynchronize(h->e1));
  CUDA_TRY(cudaEventElapsedTime(&ms, h->e0, h->e1));
  if (event_us) *event_us = 1e3 * (double)ms;
  int nk = 0;
  if (!h->why && tps_kspan_take(h->device, h->mark, us, &nk) == 0) return TPS_OK;
  /* the event timer, or a replay that ran nothing CUPTI records (no kernel, copy or memset) */
  if (!h->why && h->nfallback++ == 0)
    fprintf(stderr, "tpsplit: harness: a replay on device %d left no CUPTI record; its CUDA event time is "
                    "used (counted: tps_harness_fallbacks)\n", h->device);
  *us = 1e3 * (double)ms;
  return TPS_OK;
}

extern "C" int tps_harness_replay_us(tps_harness *h, const tps_op *op, cudaGraphExec_t exec, double *us,
                                     double *event_us) {
  TPS_TRY(tps_harness_flush(h));
  if (op->before) TPS_TRY(op->before(op->ctx, h->s));
  TPS_TRY(tps_harness_launch_timed(h, exec));
  return tps_harness_read_timed(h, us, event_us);
}

extern "C" void tps_timing_from_samples(double *us, int n, tps_timing *t) {
  gsl_sort(us, 1, (size_t)n);
  t->nsamples = n;
  t->median_us = gsl_stats_median_from_sorted_data(us, 1, (size_t)n);
  t->min_us = us[0];
  t->max_us = us[n - 1];
}

extern "C" int tps_harness_time(tps_harness *h, const tps_op *ops, int nops, int nsamples, int nwarmup,
                                tps_timing *out, tps_timing *out_events, double *samples_us) {
  if (nops < 1 || nsamples < 1) return TPS_ERR;
  cudaGraphExec_t *ex = (cudaGraphExec_t *)calloc((size_t)nops, sizeof *ex);
  double *smp = (double *)malloc((size_t)nops * nsamples * sizeof *smp);
  double *esmp = (double *)malloc((size_t)nops * nsamples * sizeof *esmp);
  int rc = (ex && smp && esmp) ? TPS_OK : TPS_ERR;
  for (int i = 0; i < nops && rc == TPS_OK; i++) rc = tps_harness_capture(h, &ops[i], &ex[i]);
  for (int r = -nwarmup; r < nsamples && rc == TPS_OK; r++) {
    int start = ((r % nops) + nops) % nops;
    for (int j = 0; j < nops && rc == TPS_OK; j++) {
      int i = (start + j) % nops;
      double us, eus;
      rc = tps_harness_replay_us(h, &ops[i], ex[i], &us, &eus);
      if (rc == TPS_OK && r >= 0) {
        smp[(size_t)i * nsamples + r] = us;
        esmp[(size_t)i * nsamples + r] = eus;
      }
    }
  }
  if (rc == TPS_OK) {
    if (samples_us) memcpy(samples_us, smp, (size_t)nops * nsamples * sizeof *smp);
    for (int i = 0; i < nops; i++) {
      tps_timing_from_samples(smp + (size_t)i * nsamples, nsamples, &out[i]);
      if (out_events) tps_timing_from_samples(esmp + (size_t)i * nsamples, nsamples, &out_events[i]);
    }
  }
  for (int i = 0; ex && i < nops; i++) if (ex[i]) cudaGraphExecDestroy(ex[i]);
  free(ex);
  free(smp);
  free(esmp);
  return rc;
}
