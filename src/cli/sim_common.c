/* sim_common.c: reference data, prediction contexts and thresholds for simulate and decide
 * (see sim_common.h). */
#include "config.h"
#include "src/cli/sim_common.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <strings.h>
#include "src/io/fitfile.h"
#include "src/evidence/fit_from_file.h"
#include "src/cli/predict_common.h"
#include "src/base/util.h"
#include "model/predict/crossover.h"

int tps_simref_load(tps_simref *r, const tps_gpu_table *gt, const char *fit_file, const char *table_file,
                    const char *gpus_file, tps_err *e) {
  memset(r, 0, sizeof *r);
  tps_pred_opts_default(&r->po);
  char buf[4096];
  if (!table_file) {
    if (tps_data_path(TPS_BUNDLED_TABLE, buf, sizeof buf, e)) return -1;
    table_file = buf;
  }
  if (tps_table_read(table_file, &r->table, e)) return -1;
  r->have_table = 1;
  if (r->table.kind == TPS_TABLE_SPLIT && r->table.gpu[0]) {
    tps_err tmp;
    r->table_gpu = tps_gpus_find(gt, r->table.gpu, &tmp);
  }
  r->fit = calloc(1, sizeof *r->fit);
  if (!r->fit) { tps_simref_free(r); return tps_err_set(e, NULL, 0, "out of memory"); }
  if (fit_file) {
    if (tps_fitfile_read(fit_file, r->fit, e)) { tps_simref_free(r); return -1; }
    snprintf(r->fit_desc, sizeof r->fit_desc, "fit file %.400s", fit_file);
  } else {
    int status = 0;
    if (table_file == buf ? tps_bundled_fit(gpus_file, 0, r->fit, NULL, 0, &status, e)
                          : tps_fit_file(table_file, NULL, gpus_file, NULL, r->fit, &status, e)) {
      tps_simref_free(r);
      return -1;
    }
    snprintf(r->fit_desc, sizeof r->fit_desc, "fit of %.400s", table_file);
  }
  if (r->fit->kind != TPS_FIT_SPLIT) {
    tps_simref_free(r);
    return tps_err_set(e, fit_file ? fit_file : table_file, 0, "a split-vs-replicated fit is needed (GEMM and gather)");
  }
  r->ref_gpu = tps_gpus_find(gt, r->fit->gpu, e);
  if (!r->ref_gpu) { tps_simref_free(r); return -1; }
  return 0;
}

int tps_simref_parts(tps_simref *r, const tps_gpu_table *gt, const tps_cmdopt_values *v, long tmax, tps_err *e) {
  tps_partset_opts po = {tmax, TPS_PRED_DEFAULT_K, TPS_PRED_DEFAULT_N, v->measured_only, v->no_bundled, v->harness};
  if (tps_partset_open(&r->parts, gt, &po, e)) return -1;
  for (size_t i = 0; i < v->gemms.n; i++)
    if (tps_partset_user_gemm(r->parts, v->gemms.v[i], ((v->given >> TPS_OI_PATH) & 1u) ? v->path : NULL, e)) return -1;
  for (size_t i = 0; i < v->gathers.n; i++)
    if (tps_partset_user_gather(r->parts, v->gathers.v[i], e)) return -1;
  return 0;
}

void tps_simref_free(tps_simref *r) {
  tps_partset_free(r->parts);
  if (r->have_table) tps_table_free(&r->table);
  free(r->fit);
  memset(r, 0, sizeof *r);
}

/* The measured table matches this projection on this target. */
static int simref_measured(const tps_simref *r, const tps_gpu *gpu, int tp, const tps_gemm_shape *shape,
                        const tps_path *path) {
  const tps_table *t = &r->table;
  if (!r->have_table || t->kind != TPS_TABLE_SPLIT || !r->table_gpu || t->nrows < 2) return 0;
  return strcmp(r->table_gpu->name, gpu->name) == 0 && t->tp == tp && t->k == shape->k && t->n == shape->n &&
         tps_path_find(t->kpath) == path && fabs(t->out_bytes_per_token - shape->n * shape->out_bytes) < 1e-9;
}

/* A prediction context (TPS_SCALING_MODEL or TPS_SCALING_SPEC) for one projection; 0, or -1
 * with e (impossible TP, a path that cannot run there). */
static int simref_pred(const tps_simref *r, tps_pred *p, int scaling, const tps_gpu *gpu, int tp,
                    const tps_path *path, const tps_gemm_shape *shape, tps_partuse *use, tps_err *e) {
  tps_pred_opts o = r->po;
  memset(p, 0, sizeof *p);
  double obpt = shape->n * shape->out_bytes;
  int rc;
  if (scaling == TPS_SCALING_PARTS) {
    if (!r->parts) return tps_err_set(e, NULL, 0, "the parts scaling needs tps_simref_parts");
    rc = tps_partset_context(r->parts, gpu, tp, path, &o, shape, obpt, p, use, e);
    if (rc == TPS_EBADDATA) return -1;
  } else if (scaling == TPS_SCALING_SPEC) {
    rc = tps_pred_init_spec(p, gpu, tp, path, shape, obpt, &o);
  } else if (scaling == TPS_SCALING_MODEL) {
    rc = tps_pred_init_model(p, r->fit, r->ref_gpu, gpu, tp, path, &o);
    /* The transferred efficiencies, for this projection's own shape and gathered bytes. */
    if (rc == TPS_OK) rc = tps_pred_set_shape(p, shape, obpt);
  } else {
    return tps_err_set(e, NULL, 0, "scaling '%s' is not supported here (parts, model or spec)",
                       scaling >= 0 && scaling < TPS_NSCALINGS ? tps_scaling_names[scaling] : "?");
  }
  if (rc == TPS_NA) return tps_err_set(e, NULL, 0, "%s on %s: %s", path->name, gpu->name, p->why);
  if (rc != TPS_OK)
    return tps_err_set(e, NULL, 0, "cannot predict %s on %s at TP %d (TP must be 1..64, a multiple of 8 beyond one node)",
                       path->name, gpu->name, tp);
  return 0;
}

int tps_simref_threshold(const tps_simref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                         const tps_gemm_shape *shape, long tmax, tps_sim_thr *t, tps_err *e) {
  memset(t, 0, sizeof *t);
  t->threshold = t->breakeven = -1;
  tps_pred p;
  if (tmax < 1) tmax = TPS_PRED_DEFAULT_TMAX;
  if (simref_pred(r, &p, scaling, gpu, tp, path, shape, &t->use, e)) { tps_pred_free(&p); return -1; }
  long be = -1;
  int rc = tps_pred_breakeven(&p, tmax, &be);
  const long thr = rc == TPS_OK ? tps_pred_threshold(&p, tmax, NULL) : -1;
  tps_pred_free(&p);
  if (rc != TPS_OK) return tps_err_set(e, NULL, 0, "break-even of %s on %s TP%d could not be computed", path->name, gpu->name, tp);
  t->breakeven = be;
  char parts[300] = "";
  if (scaling == TPS_SCALING_PARTS) {
    char gs[64], as[160];
    tps_partuse_gemm_short(&t->use, gs, sizeof gs);
    tps_partuse_gather_short(&t->use, r->po.backend, tp, as, sizeof as);
    snprintf(parts, sizeof parts, " (GEMM %s, gather %s)", gs, as);
  }
  char bes[64];
  if (be < 1) snprintf(bes, sizeof bes, "the split never wins for good up to %ld tokens", tmax);
  else snprintf(bes, sizeof bes, "break-even %ld tokens", be);
  t->threshold = thr;
  snprintf(t->source, sizeof t->source, "%s prediction: %s on %s TP%d %s%s, threshold of least predicted excess%s",
           tps_scaling_names[scaling], bes, gpu->name, tp, path->name, parts, thr > 0 ? "" : ": never split");
  return 0;
}

const char *tps_simsrc_name(int source) {
  return source == 0 ? "measured" : source > 0 && source <= TPS_NSCALINGS ? tps_scaling_names[source - 1] : "?";
}

void tps_simsrc_free(tps_simsrc *s) {
  for (size_t j = 0; j < TPS_SIM_MAXPROJ; j++) {
    tps_gemm_curve_free(s->rep[j]);
    tps_gemm_curve_free(s->split[j]);
    if (s->have_pred[j]) tps_pred_free(&s->pred[j]);
  }
  memset(s, 0, sizeof *s);
}

int tps_simref_sources(const tps_simref *r, const tps_sim_model *m, const char *mpath, int scaling, const tps_gpu *gpu,
                       int tp, tps_simsrc *s, tps_err *e) {
  memset(s, 0, sizeof *s);
  s->models.nproj = m->nproj;
  for (size_t j = 0; j < m->nproj; j++) {
    const tps_sim_proj *p = &m->proj[j];
    tps_gemm_shape shape = {m->hidden, p->n, p->out_bytes};
    if (simref_measured(r, gpu, tp, &shape, p->path)) {
      s->rep[j] = tps_gemm_curve_alloc(r->table.tokens, r->table.replicated_us, r->table.nrows);
      s->split[j] = tps_gemm_curve_alloc(r->table.tokens, r->table.split_us, r->table.nrows);
      if (!s->rep[j] || !s->split[j]) return tps_err_set(e, r->table.path, 0, "cannot interpolate the measured columns");
    } else {
      if (simref_pred(r, &s->pred[j], scaling, gpu, tp, p->path, &shape, &s->use[j], e)) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        tps_pred_free(&s->pred[j]);
        return tps_err_set(e, mpath, 0, "projection %s: %s", p->name, msg);
      }
      s->have_pred[j] = 1;
      s->source[j] = scaling + 1;
    }
    s->models.p[j].rep_curve = s->rep[j];
    s->models.p[j].split_curve = s->split[j];
    s->models.p[j].pred = s->have_pred[j] ? &s->pred[j] : NULL;
  }
  return 0;
}
