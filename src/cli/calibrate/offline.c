/* offline.c: the offline modes of `tpsplit calibrate` that need no GPU: --check (a
 * calibration against full bench gemm tables, src/io/thresholds.h tps_thr_check) and
 * --simulate (the sweep rows taken from full tables, the other rows scored, per method). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/cli/calibrate/cal.h"
#include "src/cli/tpsplit.h"
#include "src/base/jsonout.h"
#include "src/base/util.h"
#include "src/io/aic.h"
#include "src/io/measure.h"
#include "src/io/table.h"
#include "src/cli/thr_excess.h"

/* --check FILE BENCH...: the calibration in FILE against full bench gemm tables. */
int cal_check(const opts *o) {
  tps_err e;
  tps_err_clear(&e);
  tps_thr_file f;
  if (tps_thr_read(o->check, &f, &e)) { tps_err_print(&e); return tps_err_exit_code(&e); }
  tps_gpu_table gt;
  if (tps_gpus_load(NULL, &gt, &e)) { tps_err_print(&e); tps_thr_free(&f); return TPS_EXIT_USAGE; }
  tps_thr_check_row *rows;
  size_t n;
  int rc;
  if (tps_thr_check_scored(&f, NULL, o->args, (size_t)o->nargs, o->tol_med, o->tol_max, &gt, &rows, &n, &e)) {
    tps_err_print(&e);
    rc = TPS_EXIT_USAGE;
  } else {
    int all;
    if (o->json) {
      all = tps_thr_check_within(rows, n);
      if (tps_json_print(tps_thr_check_json(rows, n, o->tol_med, o->tol_max))) all = -1;
    } else {
      all = tps_thr_check_print(stdout, rows, n, o->tol_med, o->tol_max, o->per_row);
    }
    rc = all > 0 ? TPS_EXIT_OK : TPS_EXIT_FAIL;
    tps_thr_check_free(rows, n);
  }
  tps_gpus_free(&gt);
  tps_thr_free(&f);
  return rc;
}

/* ------------------------------------------------------------------ --simulate */

typedef struct {
  char label[160];
  char what[64];
  size_t swept, scored;
  double med[2], max[2];
  long rows[TPS_CAL_MAX_PTS];
  double t_us[TPS_CAL_MAX_PTS];
  size_t nrows;
  /* -o: the calibration record of a bench table */
  int bench;                 /* 1: a tpsplit bench table (not AIConfigurator's) */
  char gpu_name[64];
  const tps_gpu *gpu;
  long k, n;
  int path;
  tps_cal_gemm fit;          /* the auto method's fit */
  int fitted;
} simrow;

/* The sweep rows of a table: calibrate's rows, each taken to the nearest (in log rows)
 * row of the table not taken yet; then both methods fitted and scored on the others. */
static int simulate_one(const char *label, const char *what, int path, long k, long n, const tps_gpu *gpu, int harness,
                        const long *M, const double *T, size_t nm, const opts *o, simrow *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->label, sizeof out->label, "%s", label);
  snprintf(out->what, sizeof out->what, "%s", what);
  long tmax = M[nm - 1] < o->t_max ? M[nm - 1] : o->t_max;
  tps_cal_sweep_req q = {path, k, n, gpu, tmax, o->points};
  long rows[TPS_CAL_MAX_PTS];
  size_t nr = tps_cal_sweep_rows(&q, rows, TPS_CAL_MAX_PTS);
  char *used = calloc(nm, 1);
  double *rel = calloc(nm, sizeof *rel);
  if (!used || !rel) { free(used); free(rel); return -1; }
  for (size_t i = 0; i < nr; i++) {
    size_t best = nm;
    double bd = INFINITY;
    for (size_t j = 0; j < nm; j++) {
      if (used[j] || M[j] > tmax) continue;
      double dd = fabs(log((double)M[j] / (double)rows[i]));
      if (dd < bd) { bd = dd; best = j; }
    }
    if (best < nm) used[best] = 1;
  }
  long sr[TPS_CAL_MAX_PTS];
  double st[TPS_CAL_MAX_PTS];
  for (size_t j = 0; j < nm; j++)
    if (used[j] && out->nrows < TPS_CAL_MAX_PTS) { sr[out->nrows] = M[j]; st[out->nrows] = T[j]; out->nrows++; }
  memcpy(out->rows, sr, out->nrows * sizeof *sr);
  memcpy(out->t_us, st, out->nrows * sizeof *st);
  out->swept = out->nrows;
  out->gpu = gpu;
  out->k = k;
  out->n = n;
  out->path = path;
  out->fitted = tps_cal_gemm_fit(&out->fit, path, k, n, gpu, NULL, harness, sr, st, out->nrows, o->method) == TPS_OK;
  for (int m = 0; m < 2; m++) {
    tps_cal_gemm g;
    out->med[m] = out->max[m] = NAN;
    if (tps_cal_gemm_fit(&g, path, k, n, gpu, NULL, harness, sr, st, out->nrows, m) == TPS_OK && g.method == m) {
      size_t s = tps_cal_gemm_score(&g, M, T, nm, rel);
      for (size_t j = 0; j < nm; j++) if (M[j] > tmax && isfinite(rel[j])) { rel[j] = NAN; s--; }
      tps_loo_err se = tps_loo_summary(rel, nm);
      out->scored = s;
      out->med[m] = se.med_abs;
      out->max[m] = se.max_abs;
    }
    tps_cal_gemm_free(&g);
  }
  free(used);
  free(rel);
  return 0;
}

/* -o with --simulate: a thresholds file whose calibration section holds the simulated
 * sweeps of the bench tables (one GPU), so that --check can score it against the tables. */
static int simulate_write(const opts *o, const simrow *rows) {
  tps_thr_file f;
  tps_thr_init(&f);
  tps_thr_device *d = NULL;
  int rc = TPS_EXIT_OK;
  for (int i = 0; i < o->nargs && rc == TPS_EXIT_OK; i++) {
    const simrow *s = &rows[i];
    if (!s->bench) { tps_die_msg("--simulate -o: %s is not a tpsplit bench table", s->label); rc = TPS_EXIT_USAGE; break; }
    if (!d) {
      d = tps_thr_add_device(&f, s->gpu_name);
      snprintf(d->gpu_spec, sizeof d->gpu_spec, "%s", s->gpu->name);
      d->sms = s->gpu->sms;
      d->cc_major = s->gpu->cc_major;
      d->cc_minor = s->gpu->cc_minor;
      d->gpus_visible = 1;
      snprintf(d->driver, sizeof d->driver, "unknown (simulated from tables)");
      snprintf(d->cuda_runtime, sizeof d->cuda_runtime, "unknown");
      tps_thr_add_note(&f, "simulated: the sweep rows taken from full bench tables (calibrate --simulate), no GPU used; no gather, so no thresholds");
    } else if (strcmp(d->name, s->gpu_name)) {
      tps_die_msg("--simulate -o: %s is of %s, the others of %s: one GPU per file", s->label, s->gpu_name, d->name);
      rc = TPS_EXIT_USAGE;
      break;
    }
    tps_thr_gemm *g = tps_thr_add_gemm(d);
    g->k = s->k;
    g->n = s->n;
    g->path = s->path;
    snprintf(g->status, sizeof g->status, "measured");
    snprintf(g->reason, sizeof g->reason, "simulated from %s", s->label);
    g->npts = s->nrows;
    memcpy(g->rows, s->rows, s->nrows * sizeof *s->rows);
    memcpy(g->t_us, s->t_us, s->nrows * sizeof *s->t_us);
    if (s->fitted) {
      g->method = s->fit.method;
      g->base = s->fit.base;
      g->w90_log = s->fit.w90;
      memcpy(g->lopo_med, s->fit.lopo_med, sizeof g->lopo_med);
      memcpy(g->lopo_max, s->fit.lopo_max, sizeof g->lopo_max);
    }
  }
  tps_err e;
  tps_err_clear(&e);
  if (rc == TPS_EXIT_OK && tps_thr_write(&f, o->out, &e)) { tps_err_print(&e); rc = tps_err_exit_code(&e); }
  tps_thr_free(&f);
  return rc;
}

int cal_simulate(const opts *o) {
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  if (tps_gpus_load(NULL, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  simrow *rows = calloc((size_t)o->nargs, sizeof *rows);
  int rc = rows ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  for (int i = 0; i < o->nargs && rc == TPS_EXIT_OK; i++) {
    const char *spec = o->args[i];
    if (tps_meas_sniff_spec(spec) == TPS_MEAS_AIC) {
      char *file = NULL;
      tps_aic_filter f;
      tps_aic_file a;
      long *M = NULL;
      double *T = NULL;
      size_t nm = 0;
      char gname[64], what[64];
      if (tps_aic_parse_spec(spec, &file, &f, &e) || tps_meas_load_aic(file, &f, &a, &e)) { tps_err_print(&e); free(file); rc = tps_err_exit_code(&e); break; }
      const tps_path *dp = tps_path_by_aic_dtype(f.dtype);
      int path = dp ? (int)dp->id : -1;
      const tps_gpu *gpu = tps_gpus_find(&gt, tps_aic_gpu_name(a.gpu, gname, sizeof gname), &e);
      if (path < 0 || f.n < 1 || a.kind != TPS_AIC_GEMM) {
        tps_usage_msg("--simulate %s: choose a GEMM table's dtype (bfloat16 or fp8) and n, e.g. FILE:dtype=bfloat16,n=2048", spec);
        rc = TPS_EXIT_USAGE;
      } else if (!gpu) {
        tps_err_print(&e);
        rc = TPS_EXIT_USAGE;
      } else if (tps_aic_gemm_curve(&a, f.dtype, f.n, f.k ? f.k : a.g[0].k, &M, &T, &nm, &e)) {
        tps_err_print(&e);
        rc = TPS_EXIT_USAGE;
      } else {
        snprintf(what, sizeof what, "AIC %s %s", a.g[0].backend, a.g[0].version);
        simulate_one(spec, what, path, f.k ? f.k : a.g[0].k, f.n, gpu, TPS_XG_AIC, M, T, nm, o, &rows[i]);
      }
      free(M); free(T); free(file);
      tps_aic_free(&a);
      continue;
    }
    tps_table t;
    if (tps_table_read(spec, &t, &e)) { tps_err_print(&e); rc = tps_err_exit_code(&e); break; }
    const tps_path *p = tps_path_find(t.kpath);
    char shortname[128];
    tps_bench_gpu_short(t.gpu, shortname, sizeof shortname);
    const tps_gpu *gpu = tps_gpus_find(&gt, shortname, &e);
    if (t.kind != TPS_TABLE_GEMM || !p || t.k < 1 || t.n < 1) {
      tps_die_msg("--simulate %s: not a bench gemm table with '#@ path', '#@ k' and '#@ n'", spec);
      rc = TPS_EXIT_USAGE;
    } else if (!gpu) {
      tps_err_print(&e);
      rc = TPS_EXIT_USAGE;
    } else if (t.nrows < 4) {
      tps_die_msg("--simulate %s: %zu rows: too few to hold any out", spec, t.nrows);
      rc = TPS_EXIT_USAGE;
    } else {
      simulate_one(spec, "tpsplit bench", p->id, t.k, t.n, gpu, TPS_XG_FLUSHED, t.rows, t.time_us, t.nrows, o, &rows[i]);
      rows[i].bench = 1;
      snprintf(rows[i].gpu_name, sizeof rows[i].gpu_name, "%s", t.gpu);
    }
    tps_table_free(&t);
  }
  if (rc == TPS_EXIT_OK && o->json) {
    json_t *root = json_object(), *a = json_array();
    for (int i = 0; i < o->nargs; i++) {
      json_t *x = json_object(), *sw = json_array();
      json_object_set_new(x, "table", json_string(rows[i].label));
      json_object_set_new(x, "data", json_string(rows[i].what));
      for (size_t j = 0; j < rows[i].nrows; j++) json_array_append_new(sw, json_integer(rows[i].rows[j]));
      json_object_set_new(x, "sweep_rows", sw);
      json_object_set_new(x, "scored", json_integer((json_int_t)rows[i].scored));
      for (int m = 0; m < 2; m++) {
        json_t *y = json_object();
        tps_json_set_num(y, "median_abs_rel", rows[i].med[m]);
        tps_json_set_num(y, "max_abs_rel", rows[i].max[m]);
        json_object_set_new(x, tps_cal_method_names[m], y);
      }
      json_array_append_new(a, x);
    }
    json_object_set_new(root, "points", json_integer(o->points));
    json_object_set_new(root, "tables", a);
    if (tps_json_print(root)) rc = TPS_EXIT_FAIL;
  } else if (rc == TPS_EXIT_OK) {
    printf("# calibrate --simulate: the sweep (%d first-phase rows, each taken to the nearest row of the table) fitted,\n"
           "# every other row of the table (up to %ld) scored: |calibrated - measured| / measured, median and max\n",
           o->points, o->t_max);
    printf("table\tdata\tswept\tscored\tsteffen_med\tsteffen_max\tshaped_med\tshaped_max\n");
    int better = 0, both = 0;
    for (int i = 0; i < o->nargs; i++) {
      const simrow *s = &rows[i];
      printf("%s\t%s\t%zu\t%zu\t%.1f%%\t%.1f%%\t", s->label, s->what, s->swept, s->scored, 100 * s->med[0], 100 * s->max[0]);
      if (isfinite(s->med[1])) printf("%.1f%%\t%.1f%%\n", 100 * s->med[1], 100 * s->max[1]);
      else printf("-\t-\n");
      if (isfinite(s->med[0]) && isfinite(s->med[1])) { both++; better += s->med[1] < s->med[0]; }
    }
    printf("# shaped has the lower median on %d of %d tables\n", better, both);
  }
  if (rc == TPS_EXIT_OK && o->out) rc = simulate_write(o, rows);
  for (int i = 0; rows && i < o->nargs; i++) if (rows[i].fitted) tps_cal_gemm_free(&rows[i].fit);
  free(rows);
  tps_gpus_free(&gt);
  return rc;
}
