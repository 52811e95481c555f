/* simrun.h: one simulation of a model's chunked prefill, from what is split and the cost of
 * each projection to per-chunk and per-prompt savings with intervals (the driver of
 * `tpsplit simulate`; the primitives are model/sim/sim.h).
 *
 *  - chunk sizes: the full chunk and every distinct last chunk of the prompts, increasing;
 *  - each chunk evaluated (tps_sim_chunk_eval) with the split gated by the threshold;
 *  - each prompt from its full and last chunk (tps_sim_prompt_eval), with a baseline TTFT
 *    the predicted TTFT and its change (tps_sim_ttft);
 *  - intervals (central `level` of nsamples draws, mt19937 from seed): each predicted
 *    projection's replicated and split time at the chunk (tps_sim_pred_interval), each
 *    chunk's saving and each prompt's saving (tps_sim_sample_savings: one draw per kernel
 *    path and one for the gather per sample, shared by every chunk of the prompt).
 * Pure C, no I/O; int functions return a tps_status. */
#ifndef TPS_SIMRUN_H
#define TPS_SIMRUN_H
#include <stddef.h>
#include "model/sim/sim.h"
#include "model/core/status.h"
#include "model/predict/uncertainty.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_SIMRUN_MAXCHUNKS 64      /* distinct chunk sizes of one run */
#define TPS_SIMRUN_SAMPLES 2000      /* draws of each interval */
#define TPS_SIMRUN_SEED 20261202UL   /* their seed */

/* The split mask named by a comma list: "none", "all", or projection names (every
 * projection of a name, whatever its width).  TPS_EINVAL with *bad = the index of the first
 * unknown name. */
int tps_sim_mask_from_names(const tps_sim_model *m, char *const *names, size_t n, unsigned *mask, size_t *bad);
/* The distinct names of the projections in mask, in order, joined by sep ("none" when the
 * mask is empty).  Returns buf. */
const char *tps_sim_mask_names(const tps_sim_model *m, unsigned mask, const char *sep, char *buf, size_t bufsz);
/* The projection whose predicted threshold gates the split: the first split one on the main
 * stream, else the first split one; m->nproj when nothing is split. */
size_t tps_sim_threshold_proj(const tps_sim_model *m, unsigned mask);

typedef struct {
  const tps_sim_model *model;
  const tps_sim_kind *kinds;
  size_t nkinds;
  const tps_sim_models *costs;     /* per projection: measured curves or a prediction */
  unsigned split_mask;
  long threshold;                  /* a chunk is split when it has >= threshold tokens; <= 0 never */
  long chunk_tokens;
  const long *prompt_tokens;
  size_t nprompt;
  const double *baseline_ttft_ms;  /* one per prompt, or NULL */
  double level;                    /* of the intervals; 0 = TPS_INTERVAL_LEVEL */
  int nsamples;                    /* 0 = TPS_SIMRUN_SAMPLES */
  unsigned long seed;              /* 0 = TPS_SIMRUN_SEED */
} tps_simrun_in;

typedef struct {
  size_t nchunks;
  tps_sim_chunk *chunk;            /* [nchunks], by increasing tokens */
  double *chunk_lo_us, *chunk_hi_us; /* interval of each chunk's saving (all layers) */
  size_t full;                     /* index of the chunk of chunk_tokens */
  size_t nprompt;
  tps_sim_prompt *prompt;          /* [nprompt] */
  double *prompt_lo_ms, *prompt_hi_ms; /* interval of each prompt's saving */
  double *ttft_ms, *ttft_change_pct;   /* predicted TTFT and its change; NaN without a baseline */
  double *ttft_lo_ms, *ttft_hi_ms;     /* its interval (baseline - saving interval) */
  double proj_lo_us[TPS_SIM_MAXPROJ][2], proj_hi_us[TPS_SIM_MAXPROJ][2]; /* at the chunk: [0] replicated,
                                    * [1] split; NaN for measured projections */
} tps_simrun_out;

/* TPS_OK; TPS_EINVAL (no prompt, a chunk or prompt < 1 token, more than
 * TPS_SIMRUN_MAXCHUNKS chunk sizes); TPS_ECOST (a cost is not finite); TPS_ENOMEM.  Free
 * out with tps_simrun_free, also after a failure. */
int tps_simrun(const tps_simrun_in *in, tps_simrun_out *out);
void tps_simrun_free(tps_simrun_out *out);

#ifdef __cplusplus
}
#endif
#endif
