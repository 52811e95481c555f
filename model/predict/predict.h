/* predict.h: prediction contexts: replicated vs split latency of one projection on a
 * target (GPU, TP, kernel path, gather backend).  The break-even of a context is
 * crossover.h, its interval uncertainty.h, its sensitivity and the inverse questions
 * sensitivity.h.  Pure C, no I/O (GSL style: int status, caller-owned objects).
 *
 *   replicated(T) = GEMM(T rows)                                                    [us]
 *   split(T)      = GEMM(ceil(T/TP) rows) + ALLGATHER(TP * ceil(T/TP) * out_bytes_per_token, TP)
 * (an all-gather moves TP equal shards: the rows past T are padding; as in the fit).  The
 * custom gather runs while its per-rank input, ceil(T/TP) * out_bytes_per_token, is at
 * most the cap (2 MiB: up to 585 rows of 3584 B, T <= 4680 at TP8).
 *
 * A prediction context (tps_pred) is built in one of three ways ("scalings"):
 *   model        from a fit on a reference GPU (the H20 table), transferred to the target:
 *                GEMM through tps_gemm_transfer (compute term by peak x path efficiency,
 *                streaming term by HBM bandwidth, floor kept), gather by the ratio of the
 *                spec-only NCCL/custom models of target and reference (link bandwidth,
 *                NCCL's ring latency in n-1 steps), so the fitted gather calibrates it;
 *   spec         datasheet x path priors only (tps_gemm_from_spec, tps_ag_from_spec);
 *   pessimistic  the seed vLLM pull request's rule (project brief) applied to the H20 table: a GEMM of >= 1024 rows
 *                runs 6.7x faster than on H20, one of 512 rows 3.7x, one of <= 256 rows
 *                2x (the factor is linear in log2(rows) in between), the gather no faster.
 *                The H20 GEMM is the measured replicated column interpolated with
 *                gemm.c's measured-curve mode (Steffen, monotone, in log-log); the H20
 *                gather at T is split(T) - GEMM(ceil(T/8)) at the measured T, interpolated
 *                the same way between them;
 *   parts        each part from what src/ resolved for the target (model/predict/parts.h): a
 *                measurement (interpolated in log-log, the model outside its range), a
 *                cross-GPU model transferred by the datasheet, or spec-only: GEMM =
 *                part(rows) / knob, gather = the backend's part(bytes) / knob; the spreads of
 *                the draws are the parts' (tps_pred_parts).  A GEMM given as a gemm.h model
 *                (the H20 Marlin fit transferred, spec-only) is evaluated as in "model".
 * TP 2, 4, 8 run in one NVLink domain (node_gpus = 8); TP 16 spans two nodes and its
 * gather is bounded by the per-GPU inter-node bandwidth (400 Gb/s InfiniBand = 50 GB/s
 * by default) plus one inter-node latency; no custom gather across nodes. */
#ifndef TPS_PREDICT_H
#define TPS_PREDICT_H
#include <stddef.h>
#include "model/core/gpu.h"
#include "model/core/path.h"
#include "model/latency/gemm.h"
#include "model/latency/allgather.h"
#include "model/fit/fit.h"
#include "model/core/status.h"
#include "model/predict/parts.h"
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_SCALING_MODEL = 0, TPS_SCALING_PESSIMISTIC = 1, TPS_SCALING_SPEC = 2, TPS_SCALING_PARTS = 3, TPS_NSCALINGS };
extern const char *const tps_scaling_names[TPS_NSCALINGS]; /* "model", "pessimistic", "spec", "parts" */
extern const char *const tps_scaling_desc[TPS_NSCALINGS];  /* one line each, for --help */
/* Index of a scaling name, or -1. */
int tps_scaling_find(const char *name);

/* The projection of the brief (fused_wqa_wkv of DeepSeek-V4.1-Flash), used when no fit
 * says otherwise (spec-only predictions). */
#define TPS_PRED_DEFAULT_K 5120
#define TPS_PRED_DEFAULT_N 1792
#define TPS_PRED_DEFAULT_OUT_BYTES 2.0
#define TPS_PRED_DEFAULT_IB_GBPS 400.0       /* per-GPU inter-node link, Gb/s */
#define TPS_PRED_DEFAULT_NODE_GPUS 8         /* NVLink domain */
#define TPS_PRED_DEFAULT_INTERNODE_LAT_US 4.0 /* NCCL tuning.cc: NET ring LL128 hwLat */
#define TPS_PRED_GATHER_RSD 0.15             /* gather moved to another GPU/TP/fabric */
#define TPS_PRED_DEFAULT_TMAX 16384
#define TPS_PRED_MAX_TMAX 65536L          /* largest T of a scan (8x the brief's 8192-token steps) */

typedef struct {
  int backend;             /* a tps_gather_id (default: the rule, auto) */
  double cap_bytes;        /* per-rank cap of the custom gather; 0 = the fit's, else 2 MiB */
  double ib_gbps;          /* per-GPU inter-node bandwidth, Gb/s (bits); 0 = 400 */
  int node_gpus;           /* GPUs per NVLink domain; 0 = 8 */
  double internode_lat_us; /* extra latency of a gather that crosses nodes; <0 = default */
} tps_pred_opts;
void tps_pred_opts_default(tps_pred_opts *o);

/* Multiplicative knobs (1 = nominal), for sensitivity and inverse questions. */
enum {
  TPS_PK_GEMM_FLOOR = 0, /* GEMM floor_us */
  TPS_PK_GEMM_BW,        /* GEMM streaming bandwidth */
  TPS_PK_GEMM_TFLOPS,    /* GEMM compute throughput (pessimistic: all speedup factors) */
  TPS_PK_GEMM_SHARP,     /* GEMM combination exponent q (kept >= 1) */
  TPS_PK_AG_FLOOR,       /* custom gather floor */
  TPS_PK_AG_CUSTOM_BW,   /* custom gather bandwidth */
  TPS_PK_AG_NCCL_LAT,    /* NCCL per-protocol latencies */
  TPS_PK_AG_NCCL_BW,     /* NCCL per-protocol bus bandwidths */
  TPS_PK_AG_INTERNODE,   /* inter-node bandwidth (TP beyond one node) */
  TPS_PK_AG_TIME,        /* pessimistic: the whole derived gather time */
  TPS_PK_N
};
extern const char *const tps_pk_names[TPS_PK_N];

/* What a parts context is built from (borrowed: must outlive the context). */
typedef struct {
  const tps_part *gemm;              /* the GEMM part, or NULL: gemm_model */
  tps_gemm_model gemm_model;         /* gemm.h model when gemm is NULL (parametric) */
  const tps_part *gather[TPS_NGATHERS]; /* per backend id (at the rule's id: a measured curve
                                      * of the auto rule); NULL: the spec model of allgather.h */
  tps_gemm_shape shape;
  double out_bytes_per_token;        /* 0: n * out_bytes */
  double compute_rsd, stream_rsd, gather_rsd; /* spreads of the draws (lognormal) */
  double compute_rsd_out;            /* the GEMM part's spread outside its measured rows (compute_rsd inside) */
} tps_pred_parts;

typedef struct {
  int scaling;                /* TPS_SCALING_* */
  tps_gpu gpu;                /* target */
  tps_gpu ref_gpu;            /* model: the fit's GPU; pessimistic: the table's GPU */
  int tp;
  const tps_path *path;
  int backend;                /* requested gather backend */
  tps_pred_opts opts;
  tps_gemm_shape shape;
  double out_bytes_per_token;
  /* models: base (nominal or sampled) and effective (base x knobs) */
  tps_gemm_model gemm0, gemm;
  tps_ag_model ag0, ag;
  double knob[TPS_PK_N];
  /* pessimistic: H20 GEMM and derived gather curves (owned), the table's TP */
  tps_gemm_curve *ref_gemm, *ref_gather;
  int table_tp;
  double gemm_div, gather_mul; /* effective pessimistic knobs */
  /* uncertainty sources */
  const tps_fit *fit;         /* model: borrowed, must outlive the context */
  /* parts: borrowed parts (NULL: the gemm.h / allgather.h model above) and the draw factors
   * of their times (1 nominal) */
  const tps_part *gpart;
  const tps_part *apart[TPS_NGATHERS];
  double gscale, ascale;
  double compute_rsd, stream_rsd, gather_rsd;
  /* the GEMM part's draw outside its measured rows [gcov_lo, gcov_hi] (empty: lo > hi): its own spread,
   * compute_rsd_out, and factor, gscale_out, from the same normal draw as gscale (1 nominal).  A measured row
   * keeps the measured spread when the question leaves the table (one factor a part gave it the model's). */
  double gscale_out, compute_rsd_out, gcov_lo, gcov_hi;
  /* parts: the gather on every row per rank, made once for the contexts of one GPU, TP and
   * gather (tps_gathertab_new, crossover.h; borrowed, NULL: each search makes its own; used
   * only where it was made for this context's gathers) */
  const struct tps_gathertab *gtab;
  int applicable;             /* 0: this path cannot run here (why says so) */
  char why[160];
} tps_pred;

/* Functions returning int return a tps_status (model/core/status.h). */
/* Build a context.  TPS_NA (with p->why) when the path cannot run on the GPU, the
 * TP is impossible for the scaling, etc.; the context is then not usable but may be
 * freed.  msg may be NULL. */
int tps_pred_init_model(tps_pred *p, const tps_fit *fit, const tps_gpu *ref_gpu,
                        const tps_gpu *gpu, int tp, const tps_path *path,
                        const tps_pred_opts *o);
int tps_pred_init_spec(tps_pred *p, const tps_gpu *gpu, int tp, const tps_path *path,
                       const tps_gemm_shape *shape, double out_bytes_per_token,
                       const tps_pred_opts *o);
/* d: the H20 split-vs-replicated table (d->tp, d->out_bytes_per_token, d->path,
 * d->gather_cap_bytes used); table_gpu: the GPU it was measured on.  Only the table's TP
 * and path, and only SM90 targets other than the table's GPU (the rule was made for
 * H100/H200 from H20). */
int tps_pred_init_pessimistic(tps_pred *p, const tps_split_data *d, const tps_gpu *table_gpu,
                              const tps_gpu *gpu, int tp, const tps_path *path,
                              const tps_pred_opts *o);
/* From resolved parts (scaling "parts"): TPS_NA (why) as the others, TPS_EINVAL for a
 * shape, TP or part that does not fit. */
int tps_pred_init_parts(tps_pred *p, const tps_gpu *gpu, int tp, const tps_path *path, const tps_pred_parts *pp,
                        const tps_pred_opts *o);
void tps_pred_free(tps_pred *p);

/* ------------------------------------------------------------------ a context from its parts' sources
 * The parts of one context as resolved (src/evidence: which evidence answers each), not yet
 * built: tps_pred_init_ready builds them (once, tps_partcache), makes the context and decides
 * what the question may use: the spread of each part over the range it serves, whether the
 * question leaves a measured range, and the refusals of --measured-only (a sibling's
 * measurement, a model outside the measured range) or of a GEMM measured without a model
 * that the question leaves. */
typedef struct {
  tps_part *gemm;                       /* the GEMM part (required) */
  int gemm_prov;                        /* TPS_PROV_* of its evidence */
  tps_part *gather[TPS_NGATHERS];       /* per backend; NULL: the datasheet model */
  int gather_prov[TPS_NGATHERS];
  tps_gemm_shape shape;
  double out_bytes_per_token;
  long tmax;                            /* the question: T = 1..tmax */
  int measured_only;
} tps_pred_sources;

/* TPS_USE_CONVERTED: --measured-only and a GEMM timed in the other harness, converted by a model or a sibling's ratio */
enum { TPS_USE_OK = 0, TPS_USE_UNBUILT, TPS_USE_SIBLING, TPS_USE_OUTSIDE, TPS_USE_NOMODEL, TPS_USE_CONVERTED };
typedef struct {
  int gemm_outside;                     /* the question leaves the GEMM's measured range */
  int gather_outside[TPS_NGATHERS];     /* ... a used gather's (or it has no part) */
  int spec_gather;                      /* a gather the rule uses has no part: datasheet model */
  int refusal;                          /* TPS_USE_*: why the context was refused */
  int refused;                          /* -1: the GEMM, else the gather backend refused */
  double xlo, xhi;                      /* a refused gather: the bytes the question asks of it */
} tps_pred_check;

/* TPS_OK; TPS_NA (p->why) where the path cannot run; TPS_EBADDATA with chk->refusal set
 * (p freed); TPS_EINVAL as tps_pred_init_parts. */
int tps_pred_init_ready(tps_pred *p, tps_partcache *c, const tps_gpu *gpu, int tp, const tps_path *path,
                        const tps_pred_sources *s, const tps_pred_opts *o, tps_pred_check *chk);
/* The gather backends a context of requested backend uses at tp (into b, at most
 * TPS_NGATHERS; count returned): have[i] says a part of backend i exists. */
int tps_pred_backends_used(const int *have, int backend, int tp, int custom_possible, int *b);
/* A context's gather table from the cache (made once per GPU, TP and gathers; NULL outside
 * table mode or out of memory). */
const struct tps_gathertab *tps_partcache_gathertab(tps_partcache *c, const tps_pred *p);

/* Another projection on the same GPU, TP and path (the simulator's other GEMMs): the
 * GEMM shape and the gathered bytes per token (0 = n * out_bytes).  EINVAL for the
 * pessimistic scaling unless the shape is the table's. */
int tps_pred_set_shape(tps_pred *p, const tps_gemm_shape *s, double out_bytes_per_token);

/* Set a knob (1 = nominal) and recompute the effective models. */
int tps_pred_set_knob(tps_pred *p, int knob, double value);
/* Whether a knob means anything for this context. */
int tps_pred_knob_used(const tps_pred *p, int knob);

/* Latencies, us (NaN when unusable).  backend (may be NULL) gets the gather backend. */
double tps_pred_gemm_us(const tps_pred *p, long rows);
double tps_pred_gather_us(const tps_pred *p, long tokens, int *backend);
double tps_pred_replicated_us(const tps_pred *p, long tokens);
double tps_pred_split_us(const tps_pred *p, long tokens, int *backend);
/* The custom gather can run for this context (backend, NVLink, cap, one node). */
int tps_pred_custom_possible(const tps_pred *p);
/* The knob that scales a backend's bandwidth (by its latency term: one-shot or NCCL's). */
int tps_pred_bw_knob(int backend);
/* Rows per rank of the split: ceil(tokens / tp). */
long tps_pred_rows_per_rank(const tps_pred *p, long tokens);
/* The gathered buffer at T tokens: tp * ceil(T/tp) * out_bytes_per_token. */
double tps_pred_gathered_bytes(const tps_pred *p, long tokens);
/* Parts contexts: whether the GEMM of rows, the gather at tokens, came from outside the
 * measured range of their part (or had no measurement); 0 for other scalings. */
int tps_pred_gemm_outside(const tps_pred *p, long rows);
int tps_pred_gather_outside(const tps_pred *p, long tokens);

#ifdef __cplusplus
}
#endif
#endif
