/* sim.h: what splitting input projections by token does to a model's prefill.
 *
 * A model is its hidden size, its number of decoder layers and its input projections (the
 * GEMMs that read the hidden state at the start of a layer), each with an output width, a
 * kernel path, an output dtype, the layers it appears in, whether it is split, and whether
 * it is a main-stream or an auxiliary projection (src/io/modeldesc.c reads it from
 * data/models/<name>.tsv).
 *
 * Layer kinds: layers holding the same set of projections share one stage time (for
 * DeepSeek-V4.1-Flash: plain layers, compressor+indexer layers, layer 20 with the 512-wide
 * compressor, indexer-only layers).
 *
 * Stage time of one layer for a chunk of T tokens, with t_j the time of projection j
 * (split_j ? GEMM(ceil(T/TP)) + ALLGATHER(T * n_j * out_bytes_j) : GEMM(T)):
 *     T <= side_max_tokens and the layer has aux projections:
 *         stage = max( sum_{main j} t_j , sum_{aux j} t_j )      (simple overlap model:
 *                 the aux GEMMs share one side stream and do not slow the main one)
 *     otherwise:
 *         stage = sum_j t_j                                        (one stream, serial)
 * "main" = nothing split (the baseline); "split" = the projections in split_mask split, and
 * only when T >= threshold (the gate's token condition); below it the split stage equals
 * the main one.
 *
 * Chunked prefill: a prompt of P tokens in chunks of C runs n = ceil(P/C) chunks, the last
 * holding P - (n-1)*C tokens.  Chunk saving = sum over layer kinds of
 * count * (main_us - split_us); prompt saving = sum over its chunks; with a baseline TTFT,
 * predicted = baseline - saving, change = -100 * saving / baseline  [%].
 *
 * Units: tokens, microseconds (per-layer and per-chunk), milliseconds (per prompt, TTFT).
 * Pure C, no I/O (GSL style: int status, caller-owned storage). */
#ifndef TPS_SIM_H
#define TPS_SIM_H
#include <stddef.h>
#include "model/core/path.h"
#include "model/latency/gemm.h"
#include "model/latency/allgather.h"
#include "model/predict/predict.h"
#include "model/core/status.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_SIM_MAXPROJ 16
#define TPS_SIM_MAXLAYERS 512
#define TPS_SIM_MAXKINDS 32

typedef struct {
  char name[32];
  long n;                 /* output features */
  double out_bytes;       /* bytes per output element (bf16 2, fp32 4) */
  const tps_path *path;
  int aux;                /* 1: auxiliary (side stream at or below side_max_tokens) */
  int split;              /* 1: split by token in the configuration described */
  unsigned char in_layer[TPS_SIM_MAXLAYERS]; /* 1 where the projection appears */
} tps_sim_proj;

typedef struct {
  char name[64];
  long hidden;            /* K of every input projection */
  int layers;
  long side_max_tokens;   /* aux projections overlap the main stream at T <= this; 0 never */
  size_t nproj;
  tps_sim_proj proj[TPS_SIM_MAXPROJ];
} tps_sim_model;

/* A set of layers holding the same projections. */
typedef struct {
  unsigned mask;          /* bit j: proj[j] present */
  int count;              /* layers of this kind */
  int first_layer;
  char label[160];        /* "plain" (main projections only) or aux names "compressor/1024+indexer/32" */
  char layer_list[256];   /* "0,1,3-7,..." */
} tps_sim_kind;

/* Cost of projection j at T tokens: replicated (GEMM of T rows on every rank) and split
 * (GEMM of ceil(T/TP) rows + all-gather of the output).  Returns 0, nonzero on failure. */
typedef int (*tps_sim_cost_fn)(void *ctx, size_t proj, long tokens, double *replicated_us,
                               double *split_us);
typedef struct {
  tps_sim_cost_fn fn;
  void *ctx;
} tps_sim_cost;

/* Functions returning int return a tps_status (model/core/status.h): TPS_OK, TPS_EINVAL,
 * TPS_ECOST (a cost callback failed), TPS_ENOMEM. */

/* Group the layers into kinds (in order of first layer). */
int tps_sim_kinds(const tps_sim_model *m, tps_sim_kind *kinds, size_t maxk, size_t *nk);

/* Split mask from the model's split column. */
unsigned tps_sim_default_mask(const tps_sim_model *m);

/* Stage time of a layer holding the projections in mask, with t_us[j] per projection. */
double tps_sim_stage_us(const tps_sim_model *m, unsigned mask, const double *t_us, long tokens);

/* One chunk of T tokens. */
typedef struct {
  long tokens;
  int split_on;                      /* T >= threshold and split_mask nonempty */
  double proj_rep_us[TPS_SIM_MAXPROJ];   /* per projection, replicated */
  double proj_split_us[TPS_SIM_MAXPROJ]; /* per projection, split */
  double kind_main_us[TPS_SIM_MAXKINDS];
  double kind_split_us[TPS_SIM_MAXKINDS];
  double main_us, split_us;          /* summed over all layers */
  double saving_us;                  /* main_us - split_us */
} tps_sim_chunk;

int tps_sim_chunk_eval(const tps_sim_model *m, const tps_sim_kind *kinds, size_t nk,
                       unsigned split_mask, long threshold, long tokens, const tps_sim_cost *cost,
                       tps_sim_chunk *out);

/* n = ceil(prompt/chunk) chunks, the last of *last_tokens tokens. */
int tps_sim_chunking(long prompt_tokens, long chunk_tokens, long *nchunks, long *last_tokens);

typedef struct {
  long prompt_tokens;
  long nchunks;
  long last_tokens;
  int last_split_on;
  int full_split_on;   /* the full chunks are split (meaningful when nchunks > 1) */
  double main_ms, split_ms, saving_ms; /* input-projection stage of the whole prefill */
} tps_sim_prompt;

/* full: the evaluated chunk of chunk_tokens tokens; last: the evaluated last chunk
 * (last->tokens must equal the chunking's last chunk). */
int tps_sim_prompt_eval(long prompt_tokens, long chunk_tokens, const tps_sim_chunk *full,
                        const tps_sim_chunk *last, tps_sim_prompt *out);

/* predicted = baseline - saving; change_pct = 100 * (predicted - baseline) / baseline. */
int tps_sim_ttft(double baseline_ms, double saving_ms, double *predicted_ms, double *change_pct);

/* ------------------------------------------------------------------ a standard cost provider
 * Per projection, the first that is set: measured curves of replicated and split time vs
 * tokens (for the projection, GPU and TP they were measured on: gemm.c's measured-curve
 * mode); a prediction context (model/predict/predict.h); a GEMM model plus an all-gather model.
 * replicated = GEMM(T), split = GEMM(ceil(T/TP)) + gather(T * n * out_bytes).
 * The ctx of tps_sim_cost is a tps_sim_models. */
typedef struct {
  tps_gemm_curve *rep_curve, *split_curve; /* both or neither; not owned */
  const tps_pred *pred;                    /* not owned; its shape must be the projection's */
  tps_gemm_model gemm;                     /* used when neither of the above */
  tps_gemm_shape shape;
  const tps_ag_model *ag;                  /* not owned */
  int gather_backend;                      /* tps_gather_id: the backend rule of the gather */
} tps_sim_proj_model;

typedef struct {
  int tp;                                  /* for the gemm + ag form */
  size_t nproj;
  tps_sim_proj_model p[TPS_SIM_MAXPROJ];
} tps_sim_models;

int tps_sim_models_cost(void *ctx, size_t proj, long tokens, double *replicated_us, double *split_us);

/* Interval of a predicted projection's replicated and split times at T tokens from the
 * prediction's prior spreads (model/predict/predict.h: compute_rsd, stream_rsd, gather_rsd), each
 * a lognormal factor exp(rsd * z) on the GEMM compute throughput, the GEMM streaming
 * bandwidth and the gather bandwidths (NCCL and custom), by Monte Carlo with gsl_rng
 * (mt19937, seed): the level/2 tails of nsamples draws (gsl_stats_quantile_from_sorted_data).
 * The fit's own parameter uncertainty is not included (it is much smaller than the priors'
 * spread when the GPU or path changes).  lo/hi: [0] replicated, [1] split. */
int tps_sim_pred_interval(const tps_pred *p, long tokens, double level, int nsamples, unsigned long seed,
                          double lo[2], double hi[2]);

/* Savings under the priors' spread, for intervals of chunk and prompt savings.  Per sample
 * one lognormal draw exp(rsd * z) per kernel path for the GEMM compute throughput and one
 * for the streaming bandwidth (shared by all projections on that path: one GPU), and one
 * for the gather bandwidths; rsd from each prediction (compute_rsd, stream_rsd,
 * gather_rsd); measured projections stay fixed.  saving_us[k * nsamples + s] = chunk
 * saving (us, all layers) at tokens[k] in sample s.  mt19937 seeded with seed. */
int tps_sim_sample_savings(const tps_sim_model *m, const tps_sim_kind *kinds, size_t nk, unsigned split_mask,
                           long threshold, const long *tokens, size_t ntok, const tps_sim_models *ms,
                           int nsamples, unsigned long seed, double *saving_us);

/* The central level interval of v[0..n) (sorted in place). */
int tps_sim_interval(double *v, size_t n, double level, double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif
