/* parts.c: measured curves, the models behind them, and their evaluation (see parts.h). */
#include "model/predict/parts.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include "model/predict/pred_impl.h"

const char *const tps_prov_names[TPS_PROV_N] = {"measured", "fitted", "sibling", "transferred", "spec-only"};
const char tps_prov_letters[TPS_PROV_N + 1] = "mfbts";

char tps_prov_letter(const char *name) {
  if (!name) return '?';
  if (!strcmp(name, "none")) return '-';
  for (int i = 0; i < TPS_PROV_N; i++)
    if (!strcmp(name, tps_prov_names[i])) return tps_prov_letters[i];
  return '?';
}

/* ------------------------------------------------------------------ measured curves */
struct tps_mcurve {
  size_t n;
  double *lx, *ly;     /* log x, log t */
  gsl_interp *interp;  /* evaluated without an accelerator: shared by threads */
};

tps_mcurve *tps_mcurve_alloc(const double *x, const double *t, size_t n) {
  if (!x || !t || n < 2) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (!(x[i] > 0) || !isfinite(x[i]) || !(t[i] > 0) || !isfinite(t[i])) return NULL;
    if (i && !(x[i] > x[i - 1])) return NULL;
  }
  tps_mcurve *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->n = n;
  c->lx = malloc(n * sizeof *c->lx);
  c->ly = malloc(n * sizeof *c->ly);
  c->interp = gsl_interp_alloc(n >= 3 ? gsl_interp_steffen : gsl_interp_linear, n);
  if (!c->lx || !c->ly || !c->interp) { tps_mcurve_free(c); return NULL; }
  for (size_t i = 0; i < n; i++) { c->lx[i] = log(x[i]); c->ly[i] = log(t[i]); }
  if (gsl_interp_init(c->interp, c->lx, c->ly, n) != GSL_SUCCESS) { tps_mcurve_free(c); return NULL; }
  return c;
}

void tps_mcurve_free(tps_mcurve *c) {
  if (!c) return;
  if (c->interp) gsl_interp_free(c->interp);
  free(c->lx);
  free(c->ly);
  free(c);
}

double tps_mcurve_xlo(const tps_mcurve *c) { return c ? exp(c->lx[0]) : NAN; }
double tps_mcurve_xhi(const tps_mcurve *c) { return c ? exp(c->lx[c->n - 1]) : NAN; }
size_t tps_mcurve_n(const tps_mcurve *c) { return c ? c->n : 0; }

double tps_mcurve_max(const tps_mcurve *c, double xa, double xb) {
  double m = 0;
  if (!c || !(xa > 0) || !(xb >= xa)) return 0;
  double la = log(xa), lb = log(xb);
  for (size_t i = 0; i < c->n; i++)
    if (c->lx[i] >= la && c->lx[i] <= lb && exp(c->ly[i]) > m) m = exp(c->ly[i]);
  return m;
}

double tps_mcurve_eval(const tps_mcurve *c, double x) {
  if (!c || !(x > 0)) return NAN;
  double lx = log(x);
  /* the ends exactly (exp(log(x)) may miss them by an ulp) */
  const double eps = 1e-12;
  if (lx < c->lx[0] - eps || lx > c->lx[c->n - 1] + eps) return NAN;
  if (lx <= c->lx[0]) return exp(c->ly[0]);
  if (lx >= c->lx[c->n - 1]) return exp(c->ly[c->n - 1]);
  double y;
  if (gsl_interp_eval_e(c->interp, c->lx, c->ly, lx, NULL, &y) != GSL_SUCCESS) return NAN;
  return exp(y);
}

/* ------------------------------------------------------------------ models */
double tps_part_model_eval(const tps_part_model *m, double x, int ranks) {
  if (!m || !(x > 0)) return NAN;
  switch (m->kind) {
  case TPS_PM_XGEMM: return tps_xg_time_us(&m->xg, &m->gpu, &m->harness, (long)ceil(x), m->n, m->k, NULL);
  case TPS_PM_XW8: return tps_xw8_time_us(&m->w8, &m->gpu, (long)ceil(x), m->n, m->k, NULL);
  case TPS_PM_GEMM: return tps_gemm_time_us(&m->gm, &m->shape, (long)ceil(x));
  case TPS_PM_XGATHER:
    return tps_xga_time_us(&m->xa, &m->gpu, x, ranks, tps_xga_term(m->backend), NULL);
  case TPS_PM_AG: return tps_ag_time_us(&m->ag, x, ranks, m->backend, NULL, NULL);
  default: return NAN;
  }
}

/* ------------------------------------------------------------------ parts */
int tps_part_finish(tps_part *p) {
  p->anchor_lo = p->anchor_hi = 1.0;
  if (!p->meas || p->model.kind == TPS_PM_NONE) return TPS_OK;
  double xs[2] = {tps_mcurve_xlo(p->meas), tps_mcurve_xhi(p->meas)};
  double *a[2] = {&p->anchor_lo, &p->anchor_hi};
  for (int i = 0; i < 2; i++) {
    double mv = tps_part_model_eval(&p->model, xs[i], p->ranks), me = tps_mcurve_eval(p->meas, xs[i]);
    if (!(mv > 0) || !isfinite(mv) || !(me > 0)) return TPS_EINVAL;
    *a[i] = me / mv;
  }
  return TPS_OK;
}

double tps_part_eval(const tps_part *p, double x, int *outside) {
  if (outside) *outside = 1;
  if (!p || !(x > 0)) return NAN;
  if (p->meas) {
    double lo = tps_mcurve_xlo(p->meas), hi = tps_mcurve_xhi(p->meas);
    /* GEMM rows are integers: a curve measured from 1 row covers every m >= 1 up to hi */
    if (x >= lo * (1 - 1e-12) && x <= hi * (1 + 1e-12)) {
      if (outside) *outside = 0;
      return tps_mcurve_eval(p->meas, x);
    }
    if (p->model.kind == TPS_PM_NONE) return NAN;
    return tps_part_model_eval(&p->model, x, p->ranks) * (x < lo ? p->anchor_lo : p->anchor_hi);
  }
  return tps_part_model_eval(&p->model, x, p->ranks);
}

int tps_part_covers(const tps_part *p, double xlo, double xhi) {
  if (!p || !p->meas) return 0;
  return xlo >= tps_mcurve_xlo(p->meas) * (1 - 1e-12) && xhi <= tps_mcurve_xhi(p->meas) * (1 + 1e-12);
}

/* A gemm.h model on 1..tmax through the launch structure of gemmgrid.c (a model call per
 * distinct launch instead of per m: Marlin's model costs ~1.4 us a call); 0 when done. */
static int tabulate_gemm_model(const tps_part *p, long tmax, double *t) {
  tps_pred q;
  memset(&q, 0, sizeof q);
  q.scaling = TPS_SCALING_MODEL;
  q.applicable = 1;
  q.tp = 1;
  q.gemm = q.gemm0 = p->model.gm;
  q.shape = p->model.shape;
  q.gscale = q.ascale = 1.0;
  for (int i = 0; i < TPS_PK_N; i++) q.knob[i] = 1.0;
  tps_gemmgrid *c = tps_gemmgrid_build(&q, tmax);
  if (!c) return -1;
  tps_gemmgrid_load(c, &q, 1);
  memcpy(t + 1, c->g + 1, (size_t)tmax * sizeof *t);
  tps_gemmgrid_free(c);
  return 0;
}

int tps_part_tabulate(tps_part *p, long tmax) {
  if (p->what != TPS_PART_GEMM || tmax < 1) return TPS_EINVAL;
  if (p->tab && p->ntab >= tmax) return TPS_OK;
  double *t = malloc((size_t)(tmax + 1) * sizeof *t);
  if (!t) return TPS_ENOMEM;
  t[0] = NAN;
  int mono = 1, direct = !(p->model.kind == TPS_PM_GEMM && !p->meas && p->model.gm.kind == TPS_GEMM_PARAMETRIC &&
                           p->model.gm.path && tabulate_gemm_model(p, tmax, t) == 0);
  for (long m = 1; m <= tmax; m++) {
    if (direct) t[m] = tps_part_eval(p, (double)m, NULL);
    if (!(t[m] > 0) || !isfinite(t[m])) { free(t); return TPS_EINVAL; }
    if (m > 1 && t[m] < t[m - 1]) mono = 0;
  }
  free(p->tab);
  p->tab = t;
  p->ntab = tmax;
  p->mono = mono;
  return TPS_OK;
}

double tps_part_gemm_us(const tps_part *p, long m, int *outside) {
  if (p->tab && m >= 1 && m <= p->ntab && !outside) return p->tab[m];
  return tps_part_eval(p, (double)m, outside);
}

double tps_part_rsd(const tps_part *p, double xlo, double xhi) {
  if (!p) return 0;
  if (!p->meas) return p->model.rsd;
  if (tps_part_covers(p, xlo, xhi) || p->model.kind == TPS_PM_NONE) return p->meas_rsd;
  return p->model.rsd > p->meas_rsd ? p->model.rsd : p->meas_rsd;
}

void tps_part_free(tps_part *p) {
  if (!p) return;
  tps_mcurve_free(p->meas);
  free(p->tab);
  p->meas = NULL;
  p->tab = NULL;
  p->ntab = 0;
}

void tps_xw8_transfer(tps_xw8_model *dst, const tps_xw8_model *src, const tps_gpu *from, const tps_gpu *to) {
  *dst = *src;
  if (!from || !to || from == to) return;
  double hbm = from->hbm_gbps > 0 && to->hbm_gbps > 0 ? to->hbm_gbps / from->hbm_gbps : 1.0;
  double peak = from->bf16_tflops > 0 && to->bf16_tflops > 0 ? to->bf16_tflops / from->bf16_tflops : 1.0;
  double per_sm = from->sms > 0 && to->sms > 0 ? peak * from->sms / to->sms : 1.0;
  dst->p[TPS_XW8_STREAM_GBPS] *= hbm;
  dst->p[TPS_XW8_STREAM_TFLOPS] *= peak;
  dst->p[TPS_XW8_BLOCK_TFLOPS_SM] *= per_sm;
}
