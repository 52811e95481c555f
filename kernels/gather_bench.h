/* gather_bench.h: pieces shared by `bench split` and `bench allgather` (implemented in
 * kernels/bench_split.cu): the multi-rank timing loop and the provenance of a run.
 *
 * Timing (the brief's method, on every rank at once): one CUDA graph per candidate; per
 * sample: the L2 flush (kernels/harness.h, a write of 2x L2), a device-side barrier of all
 * ranks (tps_gather_device_barrier), both outside the timed span, then the harness's timed
 * launch (kernel span from CUPTI where it loads, else CUDA events around the graph launch:
 * kernels/harness.h); the waits poll for NCCL errors (tps_gather_wait).  Candidates
 * alternate inside every round (round r starts with candidate r mod nc).  After the rounds
 * each sample is replaced by its maximum over ranks (tps_world_max), then the median (GSL),
 * min and max of the nsamples are taken (tps_timing_from_samples). */
#ifndef TPS_GATHER_BENCH_H
#define TPS_GATHER_BENCH_H
#include <cuda_runtime.h>
#include "gather.h"
#include "harness.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_GB_MAX_CAND 4

typedef int (*tps_gb_enqueue_fn)(void *ctx, cudaStream_t s);

/* Capture enq(ctx, s) into a graph (thread-local capture mode) and instantiate it. */
int tps_gb_capture(cudaStream_t s, tps_gb_enqueue_fn enq, void *ctx, cudaGraphExec_t *exec);

/* Time nc graphs: nwarm untimed rounds, then nsamples rounds (nsamples <= 200); out[i]
 * gets candidate i's statistics over the per-sample maxima over ranks.  Collective. */
int tps_gb_time(tps_world *w, tps_gather *g, tps_harness *h, const cudaGraphExec_t *exec, int nc,
                int nsamples, int nwarm, tps_timing *out);

/* Provenance of this rank's GPU and software. */
typedef struct {
  char gpu_name[256];   /* "NVIDIA H200" */
  char gpu_short[256];  /* "H200" (the vendor prefix dropped), for '#@ gpu' */
  int sms, sm_clock_mhz, mem_clock_mhz, l2_bytes, cc_major, cc_minor;
  char driver[64];      /* /proc/driver/nvidia/version, else the CUDA driver API version */
  char cuda_runtime[16], cuda_driver_api[16], nccl[16];
  char date_utc[32];    /* "2026-12-02 15:04:05 UTC" */
  char host[64];
} tps_gb_prov;
int tps_gb_prov_get(tps_gb_prov *p, tps_world *w);

/* Number of GPUs visible, printing a line when none (returns 0 then). */
int tps_gb_device_count(void);

#ifdef __cplusplus
}
#endif
#endif
