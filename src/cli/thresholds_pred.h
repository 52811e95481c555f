/* thresholds_pred.h: predictions written as the engine-facing thresholds file (src/io/thresholds.h),
 * for `predict --thresholds-out FILE` and `crossover --thresholds-out FILE`.
 *
 * One entry per prediction: its device keyed as engines key it (tps_thr_gpu_key: the engine_key of its
 * data/gpus.tsv row, else its CUDA name, else its name; gpus_visible 0: predicted, not run on), the shape,
 * path, TP and gather backend of the context, the break-even, its 90% interval, the
 * threshold the command prints, the win bands and losing gaps of the dense scan (a note
 * says when they cannot be written), and each part's provenance as the prediction names it:
 *   measured     source FILE:LINES, points = its measured points (method: the part's source
 *                line, and the model used outside the measured range when the question
 *                leaves it);
 *   fitted       the fit of this GPU's own data;
 *   transferred  from_gpus = the GPUs the model was fitted on;
 *   spec-only    the datasheet and the path's priors.
 * The auto gather rule (custom one-shot below the cap, NCCL above) gets one record naming
 * both, its kind the weaker of the two.  Schema limits: TP from 2 (a TP1 answer is not
 * written; the file's notes say so); an interval that does not hold the point break-even
 * (bootstrap quantiles) is widened to it, and a note says so. */
#ifndef TPS_THROUT_H
#define TPS_THROUT_H
#include "src/io/thresholds.h"
#include "src/cli/predict_common.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  long breakeven;      /* -1: the split never wins up to tmax */
  double lo, hi;       /* its interval as tps_interval gives it: NaN none, +inf never */
  long threshold;      /* the threshold printed (-1 never) */
  long tmax;           /* the largest T of the break-even search */
  const tps_bands *bands; /* the win bands of the same context on 1..tmax (model/predict/crossover.h), or
                           * NULL: none written */
} tps_thrpred_answer;

/* Start a file from a prediction: tps_thr_init, and a note naming the scaling and how the
 * interval is made. */
void tps_thrpred_init(tps_thr_file *f, const tps_predref *ref, int scaling, const char *interval_method);
/* Add the answer of context p (its GPU, TP, path, shape, gathered bytes per token and
 * backend); use: its parts (scaling parts), or NULL (other scalings: the provenance of
 * tps_predref_prov_json).  0 written, 1 not written (TP 1, or the entry is there already:
 * a note says so), -1 with e (out of memory). */
int tps_thrpred_add(tps_thr_file *f, const tps_predref *ref, const tps_pred *p, const tps_partuse *use,
                   const tps_thrpred_answer *a, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
