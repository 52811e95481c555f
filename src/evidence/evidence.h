/* evidence.h: where each part of a prediction comes from (the "parts" scaling, the default of
 * predict, crossover, plot, simulate, decide and the main job), and the text that says so.
 *
 * Per part, the first that applies (model/predict/parts.h for what a part is):
 *  GEMM of (GPU, kernel path, K, N):
 *   1. a file the user gave (--gemm FILE): a `tpsplit bench gemm` table, a split table
 *      (its replicated column: rows = tokens), an AIConfigurator GEMM table
 *      (FILE:dtype=bfloat16|fp8[,backend=B]: its rows at K; N measured or interpolated
 *      log-linearly between the measured N either side, at every M measured at both), or
 *      a fit file (its GEMM, transferred to the target when the fit is of another GPU);
 *   2. a measurement the project bundles for that GPU and path (data/parts.tsv: one row
 *      per measured part) that holds the asked shape;
 *   3. a model: dense-bf16 / native-fp8: the cross-GPU GEMM model (model/latency/xgemm.h) fitted on
 *      every bundled GPU but the target (data/xgpu.fit, `tpsplit fit --xgpu`); w8a16 on SM90:
 *      our kernels' model on their dispatch rule fitted to data/h100_w8a16_grid_5120x1792_w8a16.tsv
 *      (transferred by HBM and per-SM peak to other SM90 GPUs); marlin-w8a16: the fit of the bundled H20 table transferred by
 *      peak x efficiency and HBM bandwidth; else spec-only (datasheet x path priors).
 *   Between measured points the measurement, outside them the model (anchored), flagged.
 *  all-gather of (GPU, TP, backend):
 *   1. --gather [BACKEND=]FILE: an nccl-tests all_gather_perf log or a `tpsplit bench
 *      allgather` log (its ranks = the TP), an AIConfigurator NCCL table (FILE[:op=
 *      all_gather]: num_gpus = the TP), a split table (split - replicated(ceil(T/TP)) at
 *      its TP: its backend rule), or a fit file (its gather, transferred);
 *   2. a bundled measurement (data/parts.tsv) at that TP;
 *   3. a model: NCCL: the cross-GPU all-gather model (model/latency/xgather.h) of the GPU's fabric
 *      fitted on every bundled GPU but the target; custom one-shot: xgather's priors (from
 *      the H20 split table, by link bandwidth); TP beyond one node: spec-only (allgather.h,
 *      inter-node bandwidth).
 *  BACKEND is nccl, custom or auto; without it the file's own (nccl-tests and AIC: nccl; a
 *  bench log: its '# Gather:' line; a split table: its '#@ gather').
 *
 * Errors (one line naming the file and line, or the missing shape; the commands exit 2
 * before any output): unreadable or malformed files, an AIC dtype that is not a path, a
 * shape or TP the file does not hold, a file of another GPU than the target, a gather log of
 * another collective, and (--measured-only) a measured range that does not reach the
 * question. */
#ifndef TPS_PARTSRC_H
#define TPS_PARTSRC_H
#include <stddef.h>
#include <jansson.h>
#include "src/base/err.h"
#include "src/io/gpus.h"
#include "model/fit/fit.h"
#include "model/predict/parts.h"
#include "model/predict/predict.h"
#include "src/io/table.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The bundled files. */
#define TPS_PARTS_TABLE "parts.tsv"
#define TPS_XGPU_FIT "xgpu.fit"

/* One resolved part and what it is made of. */
typedef struct {
  tps_part part;
  int id;                  /* 1.. in order of first use (the [n] of printed tables) */
  int prov;                /* TPS_PROV_* of the measurement, else of the model */
  int user;                /* from --gemm / --gather */
  char gpu[32];            /* the target */
  char what[128];          /* "GEMM dense-bf16 on H200-SXM, K 5120 N 1792, bench harness", "gather nccl TP8" */
  char src[1100];           /* one line: where the values come from (files and lines, how) */
  char model_src[600];     /* the model outside the measured range ("" none) */
  char file[512];          /* measured: the file (as found) */
  long line_lo, line_hi;   /* its lines used */
  double xlo, xhi;         /* measured range (rows or bytes), NaN when not measured */
  char from[400];          /* transferred: the GPUs the model was fitted on */
  int harness;             /* GEMM: the harness its values represent (TPS_HARNESS_*) */
} tps_part_source;

/* The model outside the measured range, "" where there is none or model/ could not anchor it
 * to the measured ends when it built the part (tps_part.model_dropped). */
static inline const char *tps_part_source_model(const tps_part_source *s) {
  return s->part.model_dropped ? "" : s->model_src;
}

/* The parts of one context. */
typedef struct {
  const tps_part_source *gemm;                  /* NULL: gemm_model (then gemm_prov, gemm_src) */
  const tps_part_source *gather[TPS_NGATHERS];  /* per backend; NULL: spec (gather_src) */
  int gemm_prov;
  char gemm_src[600];
  int gemm_outside;                         /* the question leaves the measured range */
  int gather_outside[TPS_NGATHERS];
  char gather_spec_src[300];                /* the spec-only gather, when used */
} tps_partuse;

typedef struct tps_partset tps_partset;

typedef struct {
  long tmax;               /* largest T of the question (tables, coverage); 0 = 16384 */
  long k, n;               /* the GEMM shape asked (0: 5120 x 1792) */
  int measured_only;       /* no model outside a measured range: an error instead */
  int no_bundled;          /* ignore data/parts.tsv */
  int harness;             /* GEMM parts in this harness (TPS_HARNESS_*, model/core/harness.h),
                            * converted where measured in the other; -1: each as measured */
} tps_partset_opts;

/* Open: reads data/parts.tsv and data/xgpu.fit.  gt must outlive ps. */
int tps_partset_open(tps_partset **ps, const tps_gpu_table *gt, const tps_partset_opts *o, tps_err *e);
void tps_partset_free(tps_partset *ps);
/* The user's files (each read at once: errors before any output).  path_hint: the kernel
 * path asked (AIC tables: its dtype when FILE has no dtype=; NULL: the dtype's path). */
int tps_partset_user_gemm(tps_partset *ps, const char *spec, const tps_path *path_hint, tps_err *e);
int tps_partset_user_gather(tps_partset *ps, const char *spec, tps_err *e);
/* What the user's files measure: their GPUs (distinct, in order), their GEMM paths, their
 * gather ranks.  Counts returned; arrays at most max. */
size_t tps_partset_user_gpus(const tps_partset *ps, const tps_gpu **out, size_t max);
size_t tps_partset_user_paths(const tps_partset *ps, const tps_path **out, size_t max);
size_t tps_partset_user_tps(const tps_partset *ps, int *out, size_t max);
/* Whether any user file was given. */
int tps_partset_has_user(const tps_partset *ps);
/* Check that the user's files fit the targets: every GEMM file's GPU and path among them,
 * every gather file's GPU and TP.  -1 with e otherwise. */
int tps_partset_check_targets(const tps_partset *ps, const tps_gpu *const *gpus, size_t ngpu, const int *tps,
                              size_t ntp, const tps_path *const *paths, size_t npath, tps_err *e);

/* A context of the "parts" scaling for (gpu, tp, path) at the partset's shape (or shape
 * when not NULL: simulate's projections, with their gathered bytes per token).  Returns
 * TPS_OK, TPS_NA (p->why), or TPS_EBADDATA with e (exit 2).  use (may be NULL) gets the
 * parts.  Thread-safe (a lock around the cache; tps_partset_prepare first keeps it fast). */
int tps_partset_context(tps_partset *ps, const tps_gpu *gpu, int tp, const tps_path *path, const tps_pred_opts *po,
                        const tps_gemm_shape *shape, double out_bytes_per_token, tps_pred *p, tps_partuse *use,
                        tps_err *e);
/* Resolve (and tabulate) every part of these targets now, before threads share the set.
 * -1 with e on an input error; n/a targets are skipped. */
int tps_partset_prepare(tps_partset *ps, const tps_gpu *const *gpus, size_t ngpu, const int *tps, size_t ntp,
                        const tps_path *const *paths, size_t npath, const tps_pred_opts *po, tps_err *e);

/* GEMM times t at rows x[0..npts) of (gpu, path, k, n), timed by harness from (TPS_HARNESS_*),
 * converted in place to harness to by the evidence order of ev_resolve_gemm: the tables of
 * gpu itself or of a sibling timed by both, else the cross-GPU model's two harness forms.
 * 0 converted (how: one line saying by what; rsd: the spread it adds), 1 not possible (how
 * says why; t unchanged), -1 error with e. */
int tps_partset_harness_convert(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, int from, int to,
                                const double *x, double *t, size_t npts, char *how, size_t howsz, double *rsd, tps_err *e);

/* Short names for a row: "measured", "measured+model" (outside the measured range),
 * "transferred", "fitted", "spec-only", with the part's [id]. */
void tps_partuse_gemm_short(const tps_partuse *u, char *buf, size_t sz);
void tps_partuse_gather_short(const tps_partuse *u, int backend, int tp, char *buf, size_t sz);
/* The backends whose gather a context of this backend rule uses (auto: nccl and custom, or
 * a measured auto curve), into b[]; returns how many. */
int tps_partuse_backends(const tps_partuse *u, int backend, int tp, int custom_possible, int *b);
/* JSON of the parts of a context: {"gemm": {...}, "gather": {"nccl": {...}, ...}}. */
json_t *tps_partuse_json(const tps_partuse *u, int backend, int tp, int custom_possible);
/* Print "# [id] what: src" for every part the set resolved so far that is marked used,
 * with prefix (e.g. "# "); parts are marked by tps_partset_mark. */
void tps_partset_mark(tps_partset *ps, const tps_partuse *u, int backend, int tp, int custom_possible);
void tps_partset_print_sources(const tps_partset *ps, const char *prefix);
json_t *tps_partset_sources_json(const tps_partset *ps);

/* ---------------------------------------------------------------- the reference
 * Everything a prediction may be built from, by scaling: the GPU table, a reference fit
 * (model), the bundled split table (pessimistic), the part set (parts). */
typedef struct tps_predref_s {
  tps_gpu_table gpus;       /* the GPU table (bundled or --gpus-file) */
  tps_fit fit;              /* reference fit (scaling model) */
  int have_fit;
  const tps_gpu *fit_gpu;   /* the GPU the fit was measured on */
  char fit_source[4200];     /* "FIT" or "fit of data/...tsv" (for the header lines) */
  tps_table table;          /* the bundled table (scaling pessimistic) */
  int have_table;
  tps_split_data split;     /* its arrays, for tps_pred_init_pessimistic */
  const tps_gpu *table_gpu;
  tps_partset *parts;       /* scaling parts: the measured and modelled parts */
} tps_predref;

/* Load what the scaling needs: GPU table (gpus_file or bundled), then for "model" the fit
 * file or a fit of the bundled table, for "pessimistic" the bundled table.  0, or -1 with e
 * (exit code 2 for input errors, *fit_failed = 1 when the fit itself failed: exit 1). */
int tps_predref_load(tps_predref *r, int scaling, const char *fit_file, const char *gpus_file, int *fit_failed,
                     tps_err *e);
void tps_predref_free(tps_predref *r);
/* What a command asks of its reference (src/cli/predict_common.c fills it from the options). */
typedef struct {
  int scaling;                 /* TPS_SCALING_* */
  const char *fit_file;        /* --fit (NULL: the bundled H20 table's fit, scaling model) */
  const char *gpus_file;       /* --gpus-file (NULL: data/gpus.tsv) */
  tps_partset_opts parts;      /* scaling parts: --k, --n (else the defaults), --measured-only, ... */
  const char *const *gemms;    /* --gemm FILE, in order */
  size_t ngemms;
  const char *const *gathers;  /* --gather [B=]FILE, in order */
  size_t ngathers;
  const tps_path *path_hint;   /* the --path asked, for AIC tables without dtype= (NULL: none) */
} tps_predref_opts;
/* The same from a command's options: tps_predref_load, then for the parts scaling the partset
 * with the --gemm and --gather files read (each at once: errors before any output); --k and
 * --n other than the defaults only with the parts scaling. */
int tps_predref_open(tps_predref *r, const tps_predref_opts *o, int *fit_failed, tps_err *e);

/* Build a context for (gpu, tp, path) by the scaling.  Returns TPS_PRED_* (NA with
 * p->why set). */
int tps_predref_context(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                        const tps_pred_opts *o, tps_pred *p);
/* The same with the parts used (may be NULL) and input errors in e (TPS_EBADDATA). */
int tps_predref_context_use(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                            const tps_pred_opts *o, tps_pred *p, tps_partuse *use, tps_err *e);
/* The provenance of a context that is not of the parts scaling, in the same JSON shape as
 * tps_partuse_json ({"gemm": {provenance, source}, "gather": {...}}). */
json_t *tps_predref_prov_json(const tps_predref *r, const tps_pred *p);

/* One line naming where the prediction comes from and how its interval is made. */
void tps_predref_describe(const tps_predref *r, int scaling, char *buf, size_t bufsz);

#ifdef __cplusplus
}
#endif
#endif
