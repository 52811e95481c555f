/* sensitivity.c: how the break-even moves with each parameter, and the inverse questions
 * (which link bandwidth or GEMM throughput makes the split pay; see sensitivity.h). */
#include "model/predict/sensitivity.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include "model/predict/pred_impl.h"

int tps_pred_sensitivity(const tps_pred *p, long tmax, tps_sens *s, int *ns) {
  *ns = 0;
  if (!tps_pred_tmax_ok(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  tps_pred q = *p;
  tps_gemmgrid *gs = tps_gemmgrid_build(p, tmax);
  if (!gs) return TPS_ENOMEM;
  for (int k = 0; k < TPS_PK_N; k++) {
    if (!tps_pred_knob_used(p, k)) continue;
    s[*ns].knob = k;
    long be[2];
    for (int j = 0; j < 2; j++) {
      q.knob[k] = p->knob[k] * (j ? 1.1 : 0.9);
      tps_pred_apply_knobs(&q);
      tps_crossover c;
      int rc = tps_pred_crossover_on(&q, tmax, &c, gs);
      be[j] = c.breakeven;
      if (rc) { tps_gemmgrid_free(gs); return rc; }
    }
    q.knob[k] = p->knob[k];
    tps_pred_apply_knobs(&q);
    s[*ns].be_minus = be[0];
    s[*ns].be_plus = be[1];
    (*ns)++;
  }
  tps_gemmgrid_free(gs);
  return TPS_OK;
}

/* ------------------------------------------------------------------ inverse questions */
typedef struct {
  tps_pred q;
  const tps_pred *p;
  int what;
  long tokens;
} inv_arg;

static void inv_set(inv_arg *a, double x) {
  const double *k0 = a->p->knob;
  if (a->what == TPS_INV_LINK) {
    if (a->q.scaling == TPS_SCALING_PESSIMISTIC) {
      a->q.knob[TPS_PK_AG_TIME] = k0[TPS_PK_AG_TIME] / x;
    } else {
      a->q.knob[TPS_PK_AG_CUSTOM_BW] = k0[TPS_PK_AG_CUSTOM_BW] * x;
      a->q.knob[TPS_PK_AG_NCCL_BW] = k0[TPS_PK_AG_NCCL_BW] * x;
      a->q.knob[TPS_PK_AG_INTERNODE] = k0[TPS_PK_AG_INTERNODE] * x;
    }
  } else {
    a->q.knob[TPS_PK_GEMM_TFLOPS] = k0[TPS_PK_GEMM_TFLOPS] * x;
  }
  tps_pred_apply_knobs(&a->q);
}

int tps_pred_inverse_apply(tps_pred *p, int what, double x) {
  if (!(x > 0) || !isfinite(x) || (what != TPS_INV_LINK && what != TPS_INV_GEMM)) return TPS_EINVAL;
  inv_arg a;
  a.q = *p;
  a.p = p;
  a.what = what;
  a.tokens = 1;
  inv_set(&a, x);
  memcpy(p->knob, a.q.knob, sizeof p->knob);
  tps_pred_apply_knobs(p);
  return TPS_OK;
}

/* Whether, with the inverse knob at x, the split wins on every T in [tokens, tmax]. */
static int pays_from(const tps_pred *p, int what, double x, long tokens, long tmax, tps_gemmgrid *gs) {
  tps_pred q = *p;
  long be;
  if (tps_pred_inverse_apply(&q, what, x) != 0 || tps_pred_breakeven_on(&q, tmax, &be, gs) != 0) return 0;
  return be >= 1 && be <= tokens;
}

int tps_pred_inverse_from(const tps_pred *p, int what, long tokens, long tmax, double *x) {
  *x = NAN;
  if (!p->applicable) return TPS_NA;
  if (tokens < 1 || tokens > tmax || !tps_pred_tmax_ok(p, tmax) || (what != TPS_INV_LINK && what != TPS_INV_GEMM) ||
      (what == TPS_INV_LINK && p->tp == 1))
    return TPS_EINVAL;
  tps_gemmgrid *gs = tps_gemmgrid_build(p, tmax);
  if (!gs) return TPS_ENOMEM;
  gs->mono = p->scaling != TPS_SCALING_PESSIMISTIC && p->path->slice_rows == 0;
  double lo = log(1e-3), hi = log(1e3);
  /* LINK: the condition holds from some x up; GEMM: up to some x */
  int up = what == TPS_INV_LINK;
  int clo = pays_from(p, what, exp(lo), tokens, tmax, gs), chi = pays_from(p, what, exp(hi), tokens, tmax, gs);
  int rc = TPS_OK;
  if (up && !chi) { *x = INFINITY; rc = TPS_NA; }
  else if (up && clo) { *x = 0; rc = TPS_NA; }
  else if (!up && chi) { *x = INFINITY; rc = TPS_NA; }
  else if (!up && !clo) { *x = 0; rc = TPS_NA; }
  else {
    /* bisection in log x on the boundary of the condition (kept: lo fails, hi holds for LINK) */
    for (int it = 0; it < 60 && hi - lo > 1e-6; it++) {
      double mid = 0.5 * (lo + hi);
      int c = pays_from(p, what, exp(mid), tokens, tmax, gs);
      if (c == up) hi = mid; else lo = mid;
    }
    *x = exp(up ? hi : lo);
  }
  tps_gemmgrid_free(gs);
  return rc;
}

static double inv_f(double lx, void *arg) {
  inv_arg *a = arg;
  inv_set(a, exp(lx));
  return tps_pred_split_us(&a->q, a->tokens, NULL) - tps_pred_replicated_us(&a->q, a->tokens);
}

int tps_pred_inverse(const tps_pred *p, int what, long tokens, double *x) {
  *x = NAN;
  if (!p->applicable) return TPS_NA;
  if (tokens < 1 || (what != TPS_INV_LINK && what != TPS_INV_GEMM)) return TPS_EINVAL;
  if (what == TPS_INV_LINK && p->tp == 1) return TPS_EINVAL;
  inv_arg *a = malloc(sizeof *a);
  if (!a) return TPS_ENOMEM;
  a->q = *p;
  a->p = p;
  a->what = what;
  a->tokens = tokens;
  double lo = log(1e-3), hi = log(1e3);
  double flo = inv_f(lo, a), fhi = inv_f(hi, a);
  int rc = TPS_OK;
  if (isnan(flo) || isnan(fhi)) {
    rc = TPS_EINVAL;
  } else if (what == TPS_INV_LINK && !(fhi < 0)) {
    *x = INFINITY; rc = TPS_NA;   /* even 1000x the bandwidth: floors exceed the saving */
  } else if (what == TPS_INV_LINK && flo < 0) {
    *x = 0; rc = TPS_NA;          /* pays even at 1/1000 of the bandwidth */
  } else if (what == TPS_INV_GEMM && fhi < 0) {
    *x = INFINITY; rc = TPS_NA;   /* pays at any GEMM speed in the bracket */
  } else if (what == TPS_INV_GEMM && !(flo < 0)) {
    *x = 0; rc = TPS_NA;          /* never pays, even with a 1000x slower GEMM */
  } else {
    gsl_function F = {inv_f, a};
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!s) { free(a); return TPS_ENOMEM; }
    gsl_root_fsolver_set(s, &F, lo, hi);
    int status = GSL_CONTINUE;
    for (int it = 0; it < 200 && status == GSL_CONTINUE; it++) {
      if (gsl_root_fsolver_iterate(s) != GSL_SUCCESS) break;
      status = gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s), 1e-9, 0);
    }
    *x = exp(gsl_root_fsolver_root(s));
    gsl_root_fsolver_free(s);
    if (status != GSL_SUCCESS) rc = TPS_EINVAL;
  }
  free(a);
  return rc;
}
