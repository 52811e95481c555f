/* predict_common.h: what `predict`, `crossover` and the main job share: the reference's
 * options from a command's (the reference, tps_predref, and its contexts are
 * src/evidence/evidence.h's), the crossover grid and its printing. */
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

/* The reference's options from a command's (src/evidence/evidence.h, tps_predref_open):
 * scaling, --fit, --gpus-file, --k, --n, --measured-only, --no-bundled, --harness, the --gemm
 * and --gather files, and path_hint when --path was given; tmax: the question's largest T.
 * A command that plots then hands the reference's GPU table to the plots (tps_plot_use_gpus). */
tps_predref_opts tps_predref_opts_of(const tps_cmdopt_values *v, long tmax, const tps_path *path_hint);

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
