/* gpu_doubt.h: the facts of a GPU marked uncertain in data/gpus.tsv (a value followed by '?')
 * and what they do to an answer (issue 27 item 7).  Each uncertain fact the latency models
 * read (SM count, L2, the tensor peaks, HBM bandwidth, the link bandwidths) is moved to -10%
 * and +10% of its table value, the prediction made again from the same parts and models, and
 * its break-even taken; the answer's 90% interval is widened to cover every such break-even
 * (a "never" makes its end "never").  Clocks are flagged but move nothing: no model reads
 * them.  A fact whose uncertain value is 0 (unknown) cannot be moved: it is named as such. */
#ifndef TPS_GPU_DOUBT_H
#define TPS_GPU_DOUBT_H
#include <stddef.h>
#include "src/cli/predict_common.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_DOUBT_MAX 6

typedef struct {
  const char *fact;      /* "sms", "l2_mb", "peak_tflops", "hbm_gbps", "link_gbps", "clock_mhz" */
  char value[48];        /* as the table has it, e.g. "148?" */
  int moved;             /* 1: the break-even was computed at -10% and +10% */
  long be_minus, be_plus; /* break-even tokens at -10% / +10%; -1 never */
} tps_doubt_fact;

typedef struct {
  int n;                 /* uncertain facts of the GPU (0: none, the answer is unchanged) */
  tps_doubt_fact f[TPS_DOUBT_MAX];
} tps_doubt;

/* The uncertain facts of gpu and their break-evens for the prediction (scaling, tp, path, o) on
 * 1..tmax.  TPS_OK (d->n = 0 when the GPU has none), or the status of a failed prediction. */
int tps_doubt_eval(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                   const tps_pred_opts *o, long tmax, tps_doubt *d);
/* Widen [*lo, *hi] (tokens; +inf = never) to cover every moved fact's break-evens; 1 when it moved. */
int tps_doubt_widen(const tps_doubt *d, double *lo, double *hi);
/* One line: "uncertain facts of B300 in the GPU table: sms 148? (break-even 1200/1300 at -10%/+10%),
 * ...; the interval covers them". */
void tps_doubt_describe(const tps_doubt *d, const tps_gpu *gpu, char *buf, size_t sz);

#ifdef __cplusplus
}
#endif
#endif
