/* harness.c: `calibrate --harness aic`.  Calibrate times with tpsplit bench's harness (L2
 * flushed, median of CUPTI spans); an engine tuned against AIConfigurator's numbers may want
 * the thresholds in that harness.  Each fitted GEMM part is converted at its sweep's rows by
 * src/evidence's harness conversion (this GPU's own bundled tables in both harnesses, else a
 * sibling's, else the cross-GPU model's two forms: doc/predict.md, "Harness"), and the
 * break-even uses fit x ratio (the ratio a tps_mcurve over the rows, monotone log-log: GSL's
 * Steffen; the nearest end's ratio outside them). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/core/harness.h"
#include "src/cli/calibrate/cal.h"
#include "src/cli/tpsplit.h"
#include "src/evidence/evidence.h"

double cal_gemm_eval(double m, void *ctx) {
  const gpart *p = ctx;
  double t = tps_cal_gemm_fn(m, (void *)&p->fit);
  if (!p->h_ratio) return t;
  return t * tps_mcurve_eval_clamped(p->h_ratio, m);
}

double cal_gemm_w90(const gpart *p) { return p->h_ratio ? hypot(p->fit.w90, TPS_Z90 * p->h_rsd) : p->fit.w90; }

int cal_harness(run_t *r) {
  if (r->o->harness != TPS_HARNESS_AIC) return TPS_EXIT_OK;
  if (!r->gpu) {
    tps_die_msg("--harness aic: this GPU (%s) is not in the GPU table, so no model converts its bench times",
                r->dev.gpu_name);
    return TPS_EXIT_USAGE;
  }
  tps_err e;
  tps_partset *ps = NULL;
  tps_partset_opts po = {r->o->t_max, TPS_PRED_DEFAULT_K, TPS_PRED_DEFAULT_N, 0, 0, -1};
  if (tps_partset_open(&ps, &r->gt, &po, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  int rc = TPS_EXIT_OK;
  for (int i = 0; i < r->nparts && rc == TPS_EXIT_OK; i++) {
    gpart *p = &r->part[i];
    if (!p->fitted || !p->rec.npts) continue;
    const tps_path *path = tps_path_get(p->path);
    /* the sweep's rows are ascending and distinct (sweep.c merges them so) */
    double x[TPS_CAL_MAX_PTS], t0[TPS_CAL_MAX_PTS], t[TPS_CAL_MAX_PTS];
    for (size_t j = 0; j < p->rec.npts; j++) {
      x[j] = (double)p->rec.rows[j];
      t[j] = t0[j] = tps_cal_gemm_fn(x[j], &p->fit);
    }
    int c = tps_partset_harness_convert(ps, r->gpu, path, p->k, p->n, TPS_HARNESS_BENCH, TPS_HARNESS_AIC, x, t,
                                        p->rec.npts, p->h_how, sizeof p->h_how, &p->h_rsd, &e);
    if (c < 0) { tps_err_print(&e); rc = TPS_EXIT_FAIL; break; }
    if (c == 1) {
      tps_die_msg("--harness aic: %ldx%ld %s cannot be converted (%s); leave it out with --paths or calibrate "
                  "in the bench harness", p->k, p->n, path->name, p->h_how);
      rc = TPS_EXIT_USAGE;
      break;
    }
    for (size_t j = 0; j < p->rec.npts; j++) t[j] /= t0[j];
    if (!(p->h_ratio = tps_mcurve_alloc(x, t, p->rec.npts))) {
      tps_die_msg("--harness aic: %ldx%ld %s: its %zu rows give no ratio curve", p->k, p->n, path->name,
                  p->rec.npts);
      rc = TPS_EXIT_FAIL;
      break;
    }
    cal_say("%ldx%ld %s: %s", p->k, p->n, path->name, p->h_how);
  }
  tps_partset_free(ps);
  return rc;
}
