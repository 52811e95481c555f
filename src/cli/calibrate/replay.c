/* replay.c: `tpsplit calibrate --replay`, offline: for each table (pieces of one shape and
 * path joined by '+': bench gemm tables, a calibrate result's sweep; or an AIConfigurator
 * table FILE:dtype=D,n=N) a mock bench returns its times at its rows nearest to the rows
 * asked; the fixed first-phase sweep and the adaptive one are scored on the rows in neither
 * (model/calib/calib_choose.c tps_cal_replay; this file reads the tables and prints). */
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
#include "model/core/status.h"

/* One replayed table: its label and what tps_cal_replay (model/calib/calib.h) made of it. */
typedef struct {
  char label[512];
  tps_cal_replay_res r;
} reprow;

typedef struct {
  long *m;
  double *t;
  size_t n, cap;
} mtab;

/* Add rows (ascending in, any order kept out) not yet in the table: the first piece wins. */
static int mtab_add(mtab *x, const long *m, const double *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int dup = 0;
    for (size_t j = 0; j < x->n && !dup; j++) dup = x->m[j] == m[i];
    if (dup || !(t[i] > 0)) continue;
    if (x->n == x->cap) {
      size_t c = x->cap ? 2 * x->cap : 256;
      long *a = realloc(x->m, c * sizeof *a);
      if (!a) return -1;
      x->m = a;
      double *b = realloc(x->t, c * sizeof *b);
      if (!b) return -1;
      x->t = b;
      x->cap = c;
    }
    x->m[x->n] = m[i];
    x->t[x->n++] = t[i];
  }
  return 0;
}

static void mtab_sort(mtab *x) {
  for (size_t i = 1; i < x->n; i++)
    for (size_t j = i; j > 0 && x->m[j - 1] > x->m[j]; j--) {
      long a = x->m[j]; x->m[j] = x->m[j - 1]; x->m[j - 1] = a;
      double b = x->t[j]; x->t[j] = x->t[j - 1]; x->t[j - 1] = b;
    }
}

/* Read one replay spec (pieces joined by '+'): the merged table, its shape, path, GPU and
 * harness.  A thresholds JSON piece gives its calibration's (K, N, path) sweep of the shape
 * and path the table pieces name. */
static int replay_read(const char *spec, const tps_gpu_table *gt, mtab *x, long *k, long *n, int *path,
                       const tps_gpu **gpu, int *harness, tps_err *e) {
  char buf[2048];
  snprintf(buf, sizeof buf, "%s", spec);
  char *piece[16];
  int np = 0;
  for (char *s = buf, *p; np < 16 && s; s = p) {
    p = strchr(s, '+');
    if (p) *p++ = 0;
    piece[np++] = s;
  }
  *k = *n = 0;
  *path = -1;
  *gpu = NULL;
  *harness = TPS_XG_FLUSHED;
  const char *json[16];
  int nj = 0;
  for (int i = 0; i < np; i++) {
    const char *s = piece[i];
    size_t L = strlen(s);
    if (L > 5 && !strcmp(s + L - 5, ".json")) { json[nj++] = s; continue; }
    if (tps_meas_sniff_spec(s) == TPS_MEAS_AIC) {
      char *file = NULL, gname[64];
      tps_aic_filter f;
      tps_aic_file a;
      if (np > 1) return tps_err_set(e, s, 0, "an AIConfigurator table is replayed alone (no '+')");
      if (tps_aic_parse_spec(s, &file, &f, e) || tps_meas_load_aic(file, &f, &a, e)) { free(file); return -1; }
      free(file);
      long *M = NULL;
      double *T = NULL;
      size_t nm = 0;
      const tps_path *dp = tps_path_by_aic_dtype(f.dtype);
      int p = dp ? (int)dp->id : -1;
      int rc = 0;
      if (p < 0 || f.n < 1 || a.kind != TPS_AIC_GEMM)
        rc = tps_err_set(e, s, 0, "choose a GEMM table's dtype (bfloat16 or fp8) and n, e.g. FILE:dtype=bfloat16,n=2048");
      else if (!(*gpu = tps_gpus_find(gt, tps_aic_gpu_name(a.gpu, gname, sizeof gname), e))) rc = -1;
      else if (tps_aic_gemm_curve(&a, f.dtype, f.n, f.k ? f.k : a.g[0].k, &M, &T, &nm, e)) rc = -1;
      else {
        *k = f.k ? f.k : a.g[0].k;
        *n = f.n;
        *path = p;
        *harness = TPS_XG_AIC;
        if (mtab_add(x, M, T, nm)) rc = tps_err_set(e, s, 0, "out of memory");
      }
      free(M);
      free(T);
      tps_aic_free(&a);
      if (rc) return -1;
      continue;
    }
    tps_table t;
    if (tps_table_read(s, &t, e)) return -1;
    const tps_path *p = tps_path_find(t.kpath);
    char shortname[128];
    tps_bench_gpu_short(t.gpu, shortname, sizeof shortname);
    int rc = 0;
    if (t.kind != TPS_TABLE_GEMM || !p || t.k < 1 || t.n < 1)
      rc = tps_err_set(e, s, 0, "not a bench gemm table with '#@ path', '#@ k' and '#@ n'");
    else if (*path >= 0 && (t.k != *k || t.n != *n || (int)p->id != *path))
      rc = tps_err_set(e, s, 0, "%ldx%ld %s: the other pieces are %ldx%ld %s", t.k, t.n, p->name, *k, *n, tps_path_name(*path));
    else if (!*gpu && !(*gpu = tps_gpus_find(gt, shortname, e))) rc = -1;
    else {
      *k = t.k;
      *n = t.n;
      *path = p->id;
      if (mtab_add(x, t.rows, t.time_us, t.nrows)) rc = tps_err_set(e, s, 0, "out of memory");
    }
    tps_table_free(&t);
    if (rc) return -1;
  }
  if (*path < 0) return tps_err_set(e, spec, 0, "no bench gemm or AIConfigurator table among its pieces");
  for (int i = 0; i < nj; i++) {
    tps_thr_file f;
    if (tps_thr_read(json[i], &f, e)) return -1;
    int found = 0;
    for (size_t d = 0; d < f.ndev && !found; d++)
      for (size_t j = 0; j < f.dev[d].ngemm && !found; j++) {
        const tps_thr_gemm *g = &f.dev[d].gemm[j];
        if (g->k != *k || g->n != *n || g->path != *path || !g->npts) continue;
        found = 1;
        if (mtab_add(x, g->rows, g->t_us, g->npts)) found = -1;
      }
    tps_thr_free(&f);
    if (found <= 0)
      return tps_err_set(e, json[i], 0, found < 0 ? "out of memory" : "no measured calibration of %ldx%ld %s", *k, *n,
                         tps_path_name(*path));
  }
  mtab_sort(x);
  return 0;
}

/* The replay options of the command line. */
static tps_cal_replay_opts replay_opts(const opts *o) {
  tps_cal_replay_opts r;
  memset(&r, 0, sizeof r);
  r.points = o->points;
  r.method = o->method;
  r.t_max = o->t_max;
  r.row_s = o->row_s;
  r.share_s = o->budget_s / o->replay_parts;
  r.adapt = o->adapt;
  r.heldout = !o->no_heldout && o->method == TPS_CAL_AUTO; /* a method forced is kept */
  return r;
}

/* Replay one table spec: read its pieces, replay (model/calib/calib_choose.c tps_cal_replay). */
static int replay_one(const char *spec, const tps_gpu_table *gt, const tps_cal_replay_opts *ro, reprow *out, tps_err *e) {
  memset(out, 0, sizeof *out);
  snprintf(out->label, sizeof out->label, "%s", spec);
  mtab x = {0};
  long k, n;
  int path, harness;
  const tps_gpu *gpu;
  int rc = replay_read(spec, gt, &x, &k, &n, &path, &gpu, &harness, e);
  if (!rc) {
    int st = tps_cal_replay(x.m, x.t, x.n, path, k, n, gpu, harness, ro, &out->r);
    if (st == TPS_ETOOFEW) rc = tps_err_set(e, spec, 0, "%zu rows up to %ld: too few to replay", out->r.nm, ro->t_max);
    else if (st == TPS_ENOMEM) rc = tps_err_set(e, spec, 0, "out of memory");
    else if (st != TPS_OK) rc = tps_err_set(e, spec, 0, "the first-phase fit failed: %s", tps_strstatus(st));
  }
  free(x.m);
  free(x.t);
  return rc;
}

/* A per-method object {"steffen": v[0], "shaped": v[1]}. */
static json_t *by_method_json(const double *v) {
  json_t *o = json_object();
  tps_json_set_num(o, "steffen", v[TPS_CAL_STEFFEN]);
  tps_json_set_num(o, "shaped", v[TPS_CAL_SHAPED]);
  return o;
}

int cal_replay(const opts *o) {
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  if (tps_gpus_load(NULL, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  const tps_cal_replay_opts ro = replay_opts(o);
  reprow *rows = calloc((size_t)o->nargs, sizeof *rows);
  tps_cal_replay_res *res = calloc((size_t)o->nargs + 1, sizeof *res);
  int rc = rows && res ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  if (rc != TPS_EXIT_OK) tps_die_msg("out of memory");
  for (int i = 0; i < o->nargs && rc == TPS_EXIT_OK; i++)
    if (replay_one(o->args[i], &gt, &ro, &rows[i], &e)) { tps_err_print(&e); rc = tps_err_exit_code(&e); }
  if (rc != TPS_EXIT_OK) goto out;
  for (int i = 0; i < o->nargs; i++) res[i] = rows[i].r;
  tps_cal_replay_sum sum;
  if (tps_cal_replay_summary(res, (size_t)o->nargs, &ro, &sum) != TPS_OK) {
    tps_die_msg("out of memory");
    rc = TPS_EXIT_FAIL;
    goto out;
  }
  if (o->json) {
    json_t *root = json_object(), *a = json_array();
    for (int i = 0; i < o->nargs; i++) {
      const tps_cal_replay_res *s = &rows[i].r;
      json_t *x = json_object(), *ad = json_array(), *ho = json_object(), *hr = json_array();
      json_object_set_new(x, "table", json_string(rows[i].label));
      json_object_set_new(x, "rows", json_integer((json_int_t)s->nm));
      json_object_set_new(x, "first_phase_rows", json_integer((json_int_t)s->n0));
      for (size_t j = 0; j < s->nadd; j++) {
        json_t *y = json_object();
        json_object_set_new(y, "m", json_integer(s->add[j]));
        json_object_set_new(y, "why", json_string(tps_cal_why_names[s->why[j]]));
        json_array_append_new(ad, y);
      }
      json_object_set_new(x, "adaptive_rows", ad);
      json_object_set_new(x, "snapped", json_integer((json_int_t)s->snapped));
      tps_json_set_num(x, "clock_s", s->clock_s);
      tps_json_set_num(x, "budget_share_s", ro.share_s);
      json_object_set_new(x, "scored", json_integer((json_int_t)s->scored));
      for (int m = 0; m < 2; m++) {
        json_t *y = json_object();
        tps_json_set_num(y, "median_abs_rel", s->med[m]);
        tps_json_set_num(y, "max_abs_rel", s->max[m]);
        json_object_set_new(y, "max_at_m", json_integer(s->worst_m[m]));
        json_object_set_new(x, m ? "adaptive" : "fixed", y);
      }
      /* the held-out check: the adaptive rows predicted by the first-phase fit */
      for (size_t j = 0; j < s->ho.n; j++) json_array_append_new(hr, json_integer(s->ho.rows[j]));
      json_object_set_new(ho, "rows", hr);
      json_object_set_new(ho, "max_abs_rel", by_method_json(s->ho.max_abs_rel));
      json_object_set_new(ho, "median_abs_rel", by_method_json(s->ho.med_abs_rel));
      json_object_set_new(ho, "first_phase_method", json_string(tps_cal_method_names[s->ho.prior]));
      json_object_set_new(ho, "method", json_string(tps_cal_method_names[s->ho.method]));
      json_object_set_new(x, "heldout", ho);
      json_array_append_new(a, x);
    }
    json_object_set_new(root, "tables", a);
    tps_json_set_num(root, "median_of_max_fixed", sum.med_max[0]);
    tps_json_set_num(root, "median_of_max_adaptive", sum.med_max[1]);
    json_object_set_new(root, "adaptive_worse", json_integer(sum.worse));
    tps_json_set_num(root, "adaptive_worst_rise", sum.worst_rise);
    json_object_set_new(root, "method_switched", json_integer(sum.switched));
    json_object_set_new(root, "over_cap", json_integer(sum.over_cap));
    json_object_set_new(root, "over_budget", json_integer(sum.over_budget));
    if (tps_json_print(root)) rc = TPS_EXIT_FAIL;
  } else {
    printf("# calibrate --replay: the mock bench returns the table's measured time at the table's row nearest (log M)\n"
           "# to each row asked (first phase: %d rows; adaptive: strictly inside the interval split, no interpolation);\n"
           "# clock %.2f s per row, budget %.0f s shared by %d parts, stop at %.0f%%, at most %d adaptive rows;\n"
           "# the adaptive fit's method chosen by the held-out check (the adaptive rows predicted by the first-phase fit);\n"
           "# fixed (first phase only) and adaptive fits scored on the same rows: the table's rows up to %ld in neither sweep\n",
           o->points, o->row_s, o->budget_s, o->replay_parts, 100 * o->adapt.budget_frac, o->adapt.max_rows, o->t_max);
    printf("table\trows\tfirst\tadded\tsnapped\tclock_s\tscored\tfixed_med\tfixed_max\tadapt_med\tadapt_max\t"
           "heldout_max_steffen\theldout_max_shaped\tmethod\tadded_rows\n");
    for (int i = 0; i < o->nargs; i++) {
      const tps_cal_replay_res *s = &rows[i].r;
      printf("%s\t%zu\t%zu\t%zu\t%zu\t%.1f/%.1f\t%zu\t%.2f%%\t%.2f%% (M %ld)\t%.2f%%\t%.2f%% (M %ld)\t%.2f%%\t%.2f%%\t%s%s\t",
             rows[i].label, s->nm, s->n0, s->nadd, s->snapped, s->clock_s, ro.share_s, s->scored, 100 * s->med[0],
             100 * s->max[0], s->worst_m[0], 100 * s->med[1], 100 * s->max[1], s->worst_m[1],
             100 * s->ho.max_abs_rel[TPS_CAL_STEFFEN], 100 * s->ho.max_abs_rel[TPS_CAL_SHAPED],
             tps_cal_method_names[s->ho.method], s->ho.method != s->ho.prior ? " (switched)" : "");
      for (size_t j = 0; j < s->nadd; j++) printf("%s%ld:%s", j ? "," : "", s->add[j], tps_cal_why_names[s->why[j]]);
      printf("%s\n", s->nadd ? "" : "-");
    }
    printf("# median over %zu tables of the max error: fixed %.2f%%, adaptive %.2f%%\n", sum.n, 100 * sum.med_max[0],
           100 * sum.med_max[1]);
    printf("# adaptive max worse than fixed on %d tables (by %.2f points at most); method switched by the held-out check on "
           "%d; over the row cap on %d; past %.0f%% of the budget share on %d\n",
           sum.worse, 100 * sum.worst_rise, sum.switched, sum.over_cap, 100 * o->adapt.budget_frac, sum.over_budget);
  }
out:
  free(rows);
  free(res);
  tps_gpus_free(&gt);
  return rc;
}
