/* sim_common.h: what `simulate` and `decide` share: the reference data for predictions (a
 * fit file, or a fit of the bundled H20 measurement made on the spot, and the measured
 * table itself), a prediction context for one projection on a target, and the
 * recommended threshold.
 *
 * Sources of a projection's times on a target (GPU, TP):
 *   measured   the measured split-vs-replicated table is for this GPU, TP, K, N, path and
 *              output bytes: its two columns interpolated (gemm.c's measured-curve mode:
 *              Steffen, monotone, in log-log; exact at the measured sizes);
 *   model      the reference fit transferred to the target and the projection's path
 *              (model/predict/predict.h, scaling "model"), evaluated for the projection's own K, N
 *              and output bytes (the fitted/prior efficiencies carry over to a new shape);
 *   spec       datasheet x path priors (scaling "spec");
 *   parts      (the default) each part from a measurement or a model (src/evidence/evidence.h), for
 *              the projection's own K, N and gathered bytes. */
#ifndef TPS_SIMCTX_H
#define TPS_SIMCTX_H
#include <stddef.h>
#include "src/base/err.h"
#include "src/io/gpus.h"
#include "src/io/table.h"
#include "model/fit/fit.h"
#include "model/predict/predict.h"
#include "model/sim/sim.h"
#include "src/evidence/evidence.h"
#include "src/cli/cmdopt.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  tps_table table;          /* the measurement (default: the bundled H20 table) */
  int have_table;
  const tps_gpu *table_gpu; /* its GPU in the GPU table (NULL when unknown) */
  tps_fit *fit;             /* reference fit (owned) */
  const tps_gpu *ref_gpu;   /* the fit's GPU */
  char fit_desc[512];       /* "fit of FILE" or "fit file FILE" */
  tps_partset *parts;       /* scaling parts (tps_simref_parts) */
  tps_pred_opts po;         /* the question's options (--gather and its cap, inter-node): defaults from
                             * tps_simref_load; a command sets its own (v->po) before asking */
} tps_simref;

/* fit_file: a fit file (NULL: fit table_file); table_file: NULL = the bundled
 * h20_tp8_fused_wqa_wkv.tsv.  gt must outlive r. 0 or -1 with e. */
int tps_simref_load(tps_simref *r, const tps_gpu_table *gt, const char *fit_file, const char *table_file,
                    const char *gpus_file, tps_err *e);
void tps_simref_free(tps_simref *r);
/* The parts of the parts scaling: the partset (tmax, --measured-only) and the --gemm and
 * --gather files of v.  0 or -1 with e. */
int tps_simref_parts(tps_simref *r, const tps_gpu_table *gt, const tps_cmdopt_values *v, long tmax, tps_err *e);

typedef struct {
  long threshold;     /* recommended threshold (least predicted excess, tps_pred_threshold); -1 never */
  long breakeven;     /* -1 when the split never wins up to tmax, or not computed */
  char source[4800];  /* one line: where the threshold comes from (a file path in full) */
  tps_partuse use;    /* parts scaling: the parts of the prediction */
} tps_sim_thr;

/* Threshold from the crossover of (gpu, tp, path, shape) under the scaling, break-even
 * searched on T = 1..tmax (0: TPS_PRED_DEFAULT_TMAX). 0 or -1 with e. */
int tps_simref_threshold(const tps_simref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                         const tps_gemm_shape *shape, long tmax, tps_sim_thr *t, tps_err *e);

/* The source of every projection of a model on a target: measured where the table matches
 * (its GPU, TP, K, N, path and output bytes), else a prediction of the scaling; models holds the costs
 * (tps_sim_models) pointing at the curves and contexts here. */
typedef struct {
  int source[TPS_SIM_MAXPROJ];          /* 0 measured, else TPS_SCALING_* + 1 */
  tps_gemm_curve *rep[TPS_SIM_MAXPROJ], *split[TPS_SIM_MAXPROJ];
  tps_pred pred[TPS_SIM_MAXPROJ];
  int have_pred[TPS_SIM_MAXPROJ];
  tps_partuse use[TPS_SIM_MAXPROJ];     /* parts scaling: where each projection's parts come from */
  tps_sim_models models;
} tps_simsrc;
/* Fill s for model m (described in file mpath, for messages).  0, or -1 with e naming the
 * projection that cannot be predicted.  Free s with tps_simsrc_free, also after a failure. */
int tps_simref_sources(const tps_simref *r, const tps_sim_model *m, const char *mpath, int scaling, const tps_gpu *gpu,
                       int tp, tps_simsrc *s, tps_err *e);
void tps_simsrc_free(tps_simsrc *s);
/* "measured", "model", "pessimistic", "spec" or "parts". */
const char *tps_simsrc_name(int source);

#ifdef __cplusplus
}
#endif
#endif
