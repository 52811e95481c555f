/* predict_common.h: what `predict`, `crossover` and the main job share: the reference (a fit
 * file, or a fit of the bundled H20 table), prediction contexts by scaling, the
 * crossover grid and its printing.  I/O lives here; the model is in model/predict.h. */
#ifndef TPS_PREDCLI_H
#define TPS_PREDCLI_H
#include <stddef.h>
#include <jansson.h>
#include "src/base/err.h"
#include "src/io/gpus.h"
#include "src/io/table.h"
#include "model/fit/fit.h"
#include "src/evidence/fit_from_file.h"
#include "model/predict/predict.h"
#include "model/predict/crossover.h"
#include "model/predict/uncertainty.h"
#include "src/evidence/evidence.h"
#include "src/cli/cmdopt.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Everything a prediction may be built from. */
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
/* The same from a command's options: scaling, --fit, --gpus-file, and for the parts scaling
 * the partset (--k, --n, --measured-only, tmax) with the --gemm and --gather files read
 * (path_hint: the --path asked, for AIC tables without dtype=). */
int tps_predref_load_opts(tps_predref *r, const tps_cmdopt_values *v, long tmax, const tps_path *path_hint, int *fit_failed,
                          tps_err *e);

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

/* ---------------------------------------------------------------- the crossover grid */
typedef struct {
  const tps_gpu *gpu;
  int tp;
  const tps_path *path;
  int status;               /* TPS_OK, TPS_NA (why), other = error */
  char why[160];
  tps_crossover cx;
  tps_interval iv;
  long threshold;           /* -1 when never */
  tps_partuse use;          /* scaling parts: where its parts come from */
  int custom_possible;
  int backend;
  int uncertain;            /* 1: iv also covers the GPU's uncertain facts at -10%/+10% (gpu_doubt.h) */
  int never;                /* 1: iv reaches "never" with a measured part: why (tps_never_note) */
  long never_from, never_at;
  double never_x;
} tps_gridcell;

/* An interval that reaches "never" on a GPU with a measured part, explained (issue 27 item 9):
 * from T1 (the interval's low end, 1 when it has none) on, the nominal split stays within x of
 * the replicated time, x = max |split(T) / replicated(T) - 1| over T1..tmax (8 points per
 * octave, model/predict/excess.h): scale errors of that size in a part move the break-even
 * past tmax.  1 with *t1, *x and *at (the T of the largest); 0 when it does not apply (not the
 * parts scaling, the interval ends below never, or no part measured). */
int tps_never_note(const tps_pred *p, int scaling, const tps_partuse *use, const tps_interval *iv, long tmax, long *t1,
                   double *x, long *at);

typedef struct tps_grid_s {
  size_t n;
  tps_gridcell *cell;
  long tmax;
  int scaling;
  int nsamples;
  double level;
  const tps_predref *ref;
} tps_grid;

/* Evaluate every GPU x TP x path.  0, or -1 with e on an error that is not "n/a", -2 with
 * e on an input error of the parts scaling (a --gemm/--gather file, --measured-only): exit 2. */
int tps_grid_run(const tps_predref *r, int scaling, const tps_gpu *const *gpus, size_t ngpu, const int *tps,
                 size_t ntp, const tps_path *const *paths, size_t npath, const tps_pred_opts *po,
                 const tps_unc_opts *uo, long tmax, long rounding, tps_grid *g, tps_err *e);
void tps_grid_free(tps_grid *g);
/* Print the grid as an aligned table (stdout); the parts scaling adds the GEMM and gather
 * sources of each row ([n]: tps_partset_print_sources). */
void tps_grid_print(const tps_grid *g);
/* The grid as JSON: {"cells": [...], "not_applicable": [...], ...}. */
json_t *tps_grid_json(const tps_grid *g);

#ifdef __cplusplus
}
#endif
#endif
