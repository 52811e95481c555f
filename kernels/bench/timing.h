/* timing.h: the statistics of a timed GPU operation (kernels/bench/harness.h measures them); plain
 * C, so that src/ can print them without CUDA headers. */
#ifndef TPS_KERNELS_TIMING_H
#define TPS_KERNELS_TIMING_H
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double median_us, min_us, max_us;
  int nsamples;
} tps_timing;

/* What a replay's time is: TPS_TIMER_SPAN (CUPTI kernel span) or TPS_TIMER_EVENTS. */
typedef enum { TPS_TIMER_EVENTS = 0, TPS_TIMER_SPAN = 1 } tps_timer;

/* Median (GSL), min, max of n samples; sorts us in place (kernels/bench/harness.cu). */
void tps_timing_from_samples(double *us, int n, tps_timing *t);

#ifdef __cplusplus
}
#endif
#endif
