/* harness.h: timing of GPU operations, C-callable.
 *
 * One CUDA graph per measured operation (candidate).  Before every measured replay: an L2
 * flush (a kernel writes a buffer of twice the device's L2 size, by default then reads it
 * back, see tps_harness_set_flush_read), then the op's optional
 * `before` hook (e.g. a device-wide barrier across ranks), both outside the timed span.
 * The time of a replay is the span of its kernels, first kernel start to last kernel end,
 * from CUPTI activity records (kernels/bench/kspan.h) where CUPTI can be loaded; otherwise (and
 * with TPS_TIMER=events) the cudaEventElapsedTime of two events recorded on the stream right
 * around the graph launch, which adds the graph's launch latency (about 2.8 us on the H200,
 * data/h200_gemm_tuning.txt).
 * Both are taken on every replay; tps_harness_timer says which one is the time.
 * Candidates alternate inside every round (round r starts at candidate r mod n), so drifts
 * (clocks, temperature) hit them alike.
 * Statistics: median (GSL, of the sorted samples), min and max.
 *
 * Modelled on nccl-tests: each measured op is a struct of function pointers and a context.
 * Lower-level calls (flush, capture, one timed replay) are exposed for benches that
 * combine samples across ranks (maximum over ranks) before taking the median. */
#ifndef TPS_KERNELS_HARNESS_H
#define TPS_KERNELS_HARNESS_H
#include <cuda_runtime.h>
#include "kernels/bench/timing.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct tps_op {
  const char *name;                           /* for progress lines and errors */
  void *ctx;                                  /* passed to the callbacks */
  int (*enqueue)(void *ctx, cudaStream_t s);  /* the work; captured into the op's graph */
  int (*before)(void *ctx, cudaStream_t s);   /* optional, before each timed replay (untimed) */
} tps_op;


typedef struct tps_harness tps_harness;

/* Create on the current device with its own stream (s = 0: create one) and a flush buffer
 * of 2x the L2 size. */
int tps_harness_create(tps_harness **h, cudaStream_t s);
void tps_harness_destroy(tps_harness *h);
cudaStream_t tps_harness_stream(const tps_harness *h);
size_t tps_harness_flush_bytes(const tps_harness *h);

/* Flush mode: 1 (default) = write 2x L2, then read it back (leaves clean lines: no dirty
 * write-back overlaps the measured kernel); 0 = the write alone.
 * The environment variable TPS_FLUSH=write selects 0 at creation. */
void tps_harness_set_flush_read(tps_harness *h, int read_back);
/* The timer of this harness; *why (may be NULL) says why CUPTI is not used (NULL if it is). */
tps_timer tps_harness_timer(const tps_harness *h, const char **why);
/* Timed replays so far whose CUPTI span could not be taken (they ran no kernel, copy or
 * memset): their event time was used. */
long tps_harness_fallbacks(const tps_harness *h);
/* A one-line description of the timer for provenance lines (static text). */
const char *tps_harness_timer_text(const tps_harness *h);
/* Enqueue the L2 flush on the harness stream. */
int tps_harness_flush(tps_harness *h);
/* Capture op->enqueue into a graph and instantiate it; replays it once (warm-up). */
int tps_harness_capture(tps_harness *h, const tps_op *op, cudaGraphExec_t *exec);
/* One timed launch in two steps, for callers that wait for completion their own way:
 * launch (CUPTI mark, event, graph launch, event), then, once the stream has completed,
 * read: *us = the harness's time of it, *event_us (may be NULL) = the event time. */
int tps_harness_launch_timed(tps_harness *h, cudaGraphExec_t exec);
int tps_harness_read_timed(tps_harness *h, double *us, double *event_us);
/* One sample: flush, op->before, launch_timed, synchronize, read_timed. */
int tps_harness_replay_us(tps_harness *h, const tps_op *op, cudaGraphExec_t exec, double *us, double *event_us);

/* The whole method for nops candidates: capture each, nwarmup untimed rounds, nsamples
 * rounds with the candidates alternated; out[i] for ops[i]; out_events[i] (may be NULL) the
 * event-timed statistics of the same replays.  samples_us, if not NULL, receives nops x
 * nsamples raw samples (row i = op i, in round order). */
int tps_harness_time(tps_harness *h, const tps_op *ops, int nops, int nsamples, int nwarmup,
                     tps_timing *out, tps_timing *out_events, double *samples_us);


#ifdef __cplusplus
}
#endif
#endif
