/* fit_core.c: the parts every fit uses: parameter targets and their names, theta written
 * into the models, the model value of a point, input checks, and the quantities derived
 * from a fit with their standard errors (delta method) and draws of theta (see fit.h). */
#include "model/fit/fit.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_vector.h>
#include "model/fit/fit_impl.h"

/* ------------------------------------------------------------------ names and targets */

static const char *const ag_target_names[] = {
  "ag_custom_floor_us", "ag_custom_gbps", "ag_nccl_bw_scale",
  "ag_lat_LL_us", "ag_lat_LL128_us", "ag_lat_Simple_us",
  "ag_busbw_LL_gbps", "ag_busbw_LL128_gbps", "ag_busbw_Simple_gbps"};

const char *tps_fit_target_name(int t) {
  if (t >= 0 && t < TPS_GEMM_NPAR) return tps_gemm_par_names[t];
  if (t >= TPS_FT_AG_CUSTOM_FLOOR && t < TPS_FT_END) return ag_target_names[t - TPS_FT_AG_CUSTOM_FLOOR];
  return NULL;
}

int tps_fit_target_from_name(const char *name) {
  if (!name) return -1;
  for (int t = 0; t < TPS_GEMM_NPAR; t++)
    if (strcmp(name, tps_gemm_par_names[t]) == 0) return t;
  for (int t = TPS_FT_AG_CUSTOM_FLOOR; t < TPS_FT_END; t++)
    if (strcmp(name, ag_target_names[t - TPS_FT_AG_CUSTOM_FLOOR]) == 0) return t;
  return -1;
}

int tps_fit_par_index(const tps_fit *f, const char *name) {
  for (int j = 0; j < f->npar; j++)
    if (strcmp(f->par_name[j], name) == 0) return j;
  return -1;
}

int tps_fit_fail(char *msg, size_t msgsz, int status, const char *fmt, ...) {
  if (msg && msgsz) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msgsz, fmt, ap);
    va_end(ap);
  }
  return status;
}

/* ------------------------------------------------------------------ theta <-> models */

/* Copy f's models and write theta into them. -1 when a value is outside its domain. */
int tps_fit_apply_theta(const tps_fit *f, const double *th, tps_gemm_model *g, tps_ag_model *a) {
  *g = f->gemm;
  *a = f->ag;
  for (int j = 0; j < f->npar; j++) {
    int t = f->par_target[j];
    double v = th[j];
    if (!isfinite(v)) return -1;
    if (t >= 0 && t < TPS_GEMM_NPAR) {
      int positive = t == TPS_GP_BW_GBPS || t == TPS_GP_TFLOPS;
      if (t == TPS_GP_SHARP ? v < 1 : positive ? !(v > 0) : v < 0) return -1;
      g->p[t] = v;
    } else if (t == TPS_FT_AG_CUSTOM_FLOOR) {
      if (v < 0) return -1;
      a->custom_floor_us = v;
    } else if (t == TPS_FT_AG_CUSTOM_GBPS) {
      if (!(v > 0)) return -1;
      a->custom_gbps = v;
    } else if (t == TPS_FT_AG_NCCL_SCALE) {
      if (!(v > 0)) return -1;
      for (int p = 0; p < TPS_NPROTO; p++) a->busbw_gbps[p] = v * f->nccl_busbw_ref[p];
    } else if (t >= TPS_FT_AG_LAT0 && t < TPS_FT_AG_LAT0 + TPS_NPROTO) {
      if (v < 0) return -1;
      a->lat_us[t - TPS_FT_AG_LAT0] = v;
    } else if (t >= TPS_FT_AG_BW0 && t < TPS_FT_AG_BW0 + TPS_NPROTO) {
      if (!(v > 0)) return -1;
      a->busbw_gbps[t - TPS_FT_AG_BW0] = v;
    } else {
      return -1;
    }
  }
  return 0;
}

/* Current value of a target in (g, a). */
static double target_value(const tps_fit *f, int t, const tps_gemm_model *g, const tps_ag_model *a) {
  if (t >= 0 && t < TPS_GEMM_NPAR) return g->p[t];
  if (t == TPS_FT_AG_CUSTOM_FLOOR) return a->custom_floor_us;
  if (t == TPS_FT_AG_CUSTOM_GBPS) return a->custom_gbps;
  if (t == TPS_FT_AG_NCCL_SCALE) {
    for (int p = 0; p < TPS_NPROTO; p++)
      if (f->nccl_busbw_ref[p] > 0) return a->busbw_gbps[p] / f->nccl_busbw_ref[p];
    return NAN;
  }
  if (t >= TPS_FT_AG_LAT0 && t < TPS_FT_AG_LAT0 + TPS_NPROTO) return a->lat_us[t - TPS_FT_AG_LAT0];
  if (t >= TPS_FT_AG_BW0 && t < TPS_FT_AG_BW0 + TPS_NPROTO) return a->busbw_gbps[t - TPS_FT_AG_BW0];
  return NAN;
}

/* Write one value into f's models (fixing a parameter at its prior). */
void tps_fit_set_target(tps_fit *f, int t, double v) {
  if (t >= 0 && t < TPS_GEMM_NPAR) f->gemm.p[t] = v;
  else if (t == TPS_FT_AG_CUSTOM_FLOOR) f->ag.custom_floor_us = v;
  else if (t == TPS_FT_AG_CUSTOM_GBPS) f->ag.custom_gbps = v;
  else if (t == TPS_FT_AG_NCCL_SCALE)
    for (int p = 0; p < TPS_NPROTO; p++) f->ag.busbw_gbps[p] = v * f->nccl_busbw_ref[p];
  else if (t >= TPS_FT_AG_LAT0 && t < TPS_FT_AG_LAT0 + TPS_NPROTO) f->ag.lat_us[t - TPS_FT_AG_LAT0] = v;
  else if (t >= TPS_FT_AG_BW0 && t < TPS_FT_AG_BW0 + TPS_NPROTO) f->ag.busbw_gbps[t - TPS_FT_AG_BW0] = v;
}

int tps_fit_set_theta(tps_fit *f, const double *theta) {
  tps_gemm_model g;
  tps_ag_model a;
  if (tps_fit_apply_theta(f, theta, &g, &a) != 0) return -1;
  f->gemm = g;
  f->ag = a;
  return 0;
}

/* ------------------------------------------------------------------ model of one point */

static long rows_per_rank(const tps_fit *f, long tokens) { return (tokens + f->tp - 1) / f->tp; }

/* The gather of a split of T tokens: every rank contributes its ceil(T/tp) rows, so the
 * gathered buffer is tp * ceil(T/tp) * out_bytes_per_token (= T * out_bytes_per_token
 * when tp divides T) and the custom backend's cap applies to ceil(T/tp) rows. */
double tps_fit_gather_of(const tps_fit *f, const tps_ag_model *a, long tokens, int *backend) {
  int used = -1;
  double total = (double)f->tp * (double)rows_per_rank(f, tokens) * f->out_bytes_per_token;
  double t = tps_ag_time_us(a, total, f->tp, f->gather, &used, NULL);
  if (backend) *backend = used;
  return t;
}

double tps_fit_point_model(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a,
                          const tps_fit_point *pt) {
  switch (f->kind) {
  case TPS_FIT_SPLIT: {
    long T = (long)pt->x;
    if (pt->series == 0) return tps_gemm_time_us(g, &f->shape, T);
    return tps_gemm_time_us(g, &f->shape, rows_per_rank(f, T)) + tps_fit_gather_of(f, a, T, NULL);
  }
  case TPS_FIT_GEMM:
    return tps_gemm_time_us(g, &f->shape, (long)pt->x);
  case TPS_FIT_ALLGATHER:
    return tps_ag_time_us(a, pt->x, f->tp, f->gather, NULL, NULL);
  }
  return NAN;
}


/* ------------------------------------------------------------------ setup helpers */

void tps_fit_add_par(tps_fit *f, int target, double x0, double *x0v) {
  int j = f->npar++;
  f->par_target[j] = target;
  snprintf(f->par_name[j], sizeof f->par_name[j], "%s", tps_fit_target_name(target));
  x0v[j] = x0;
}

void tps_fit_remove_par(tps_fit *f, int j, double *x0v) {
  for (int k = j; k + 1 < f->npar; k++) {
    f->par_target[k] = f->par_target[k + 1];
    memcpy(f->par_name[k], f->par_name[k + 1], sizeof f->par_name[k]);
    x0v[k] = x0v[k + 1];
  }
  f->npar--;
}

void tps_fit_note_fixed(tps_fit *f, const char *name, double v, const char *why) {
  size_t len = strlen(f->fixed_note);
  snprintf(f->fixed_note + len, sizeof f->fixed_note - len, "%s%s=%.4g (%s)", len ? "; " : "", name, v, why);
}

int tps_fit_check_times(const double *t, size_t n, const char *what, char *msg, size_t msgsz) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(t[i]) || !(t[i] > 0))
      return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "%s[%zu] = %g: latencies must be finite and > 0", what, i, t[i]);
  return 0;
}

void tps_fit_init(tps_fit *f, tps_fit_kind kind) {
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->loo_med_abs = f->loo_max_abs = NAN;
}

tps_gpu tps_fit_generic_gpu(void) {
  tps_gpu g;
  memset(&g, 0, sizeof g);
  snprintf(g.name, sizeof g.name, "generic");
  g.link_gbps = TPS_FIT_GENERIC_LINK_GBPS;
  g.hbm_gbps = TPS_FIT_GENERIC_HBM_GBPS;
  g.nvlink = 1;
  return g;
}

/* GEMM parameters and starting values from the GEMM points (rows m[], times t[]). */

int tps_fit_check_shape(const tps_gemm_shape *s, const tps_path *path, int sms, char *msg, size_t msgsz) {
  if (!path) return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "no kernel path given");
  if (s->k < 1 || s->n < 1 || !(s->out_bytes > 0))
    return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "GEMM shape k=%ld n=%ld out_bytes=%g is not valid", s->k, s->n, s->out_bytes);
  if (sms < 1) return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "the number of SMs (%d) must be >= 1", sms);
  return 0;
}

/* ------------------------------------------------------------------ derived quantities */

typedef double (*eval_fn)(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, long tokens, int *backend);

static double eval_rep(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, long T, int *b) {
  (void)a; (void)b;
  return tps_gemm_time_us(g, &f->shape, T);
}
static double eval_gather(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, long T, int *b) {
  (void)g;
  return tps_fit_gather_of(f, a, T, b);
}
static double eval_split(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, long T, int *b) {
  return tps_gemm_time_us(g, &f->shape, rows_per_rank(f, T)) + tps_fit_gather_of(f, a, T, b);
}

/* Value at f's current models; se by the delta method around them (central differences). */
static double delta(const tps_fit *f, eval_fn fn, long T, double *se, int *backend) {
  double v = fn(f, &f->gemm, &f->ag, T, backend);
  if (!se) return v;
  *se = NAN;
  if (!isfinite(v) || f->npar < 1) return v;
  int p = f->npar;
  double th[TPS_FIT_MAXPAR], grad[TPS_FIT_MAXPAR];
  for (int j = 0; j < p; j++) th[j] = target_value(f, f->par_target[j], &f->gemm, &f->ag);
  for (int j = 0; j < p; j++) {
    double h = 1e-5 * (fabs(th[j]) > 1e-3 ? fabs(th[j]) : 1e-3);
    double tp_[TPS_FIT_MAXPAR], tm[TPS_FIT_MAXPAR];
    memcpy(tp_, th, sizeof tp_);
    memcpy(tm, th, sizeof tm);
    tp_[j] += h;
    tm[j] -= h;
    tps_gemm_model g1, g2;
    tps_ag_model a1, a2;
    int okp = tps_fit_apply_theta(f, tp_, &g1, &a1) == 0, okm = tps_fit_apply_theta(f, tm, &g2, &a2) == 0;
    double fp = okp ? fn(f, &g1, &a1, T, NULL) : NAN, fm = okm ? fn(f, &g2, &a2, T, NULL) : NAN;
    if (isfinite(fp) && isfinite(fm)) grad[j] = (fp - fm) / (2 * h);
    else if (isfinite(fp)) grad[j] = (fp - v) / h;
    else if (isfinite(fm)) grad[j] = (v - fm) / h;
    else return v;
  }
  double var = 0;
  for (int a = 0; a < p; a++)
    for (int b = 0; b < p; b++) var += grad[a] * f->cov[a * p + b] * grad[b];
  *se = sqrt(var > 0 ? var : 0);
  return v;
}

double tps_fit_replicated_us(const tps_fit *f, long tokens, double *se_us) {
  return delta(f, eval_rep, tokens, se_us, NULL);
}
double tps_fit_split_us(const tps_fit *f, long tokens, double *se_us, int *backend) {
  if (f->tp < 1) return NAN;
  return delta(f, eval_split, tokens, se_us, backend);
}
double tps_fit_gather_us(const tps_fit *f, long tokens, double *se_us, int *backend) {
  if (f->tp < 1) return NAN;
  return delta(f, eval_gather, tokens, se_us, backend);
}

int tps_fit_sample_theta(const tps_fit *f, const gsl_rng *r, double *theta) {
  size_t p = (size_t)f->npar;
  if (p == 0) return 0;
  gsl_matrix *A = gsl_matrix_alloc(p, p), *V = gsl_matrix_alloc(p, p);
  gsl_vector *ev = gsl_vector_alloc(p);
  gsl_eigen_symmv_workspace *w = gsl_eigen_symmv_alloc(p);
  int rc = -1;
  if (A && V && ev && w) {
    for (size_t a = 0; a < p; a++)
      for (size_t b = 0; b < p; b++) gsl_matrix_set(A, a, b, f->cov[a * p + b]);
    if (gsl_eigen_symmv(A, ev, V, w) == GSL_SUCCESS) {
      double lmax = gsl_vector_max(ev);
      rc = 0;
      double z[TPS_FIT_MAXPAR];
      for (size_t k = 0; k < p; k++) {
        double l = gsl_vector_get(ev, k);
        if (l < -1e-9 * (lmax > 0 ? lmax : 1)) rc = -1;
        z[k] = gsl_ran_gaussian(r, 1.0) * sqrt(l > 0 ? l : 0);
      }
      for (size_t a = 0; a < p; a++) {
        double s = f->theta[a];
        for (size_t k = 0; k < p; k++) s += gsl_matrix_get(V, a, k) * z[k];
        theta[a] = s;
      }
    }
  }
  if (w) gsl_eigen_symmv_free(w);
  if (ev) gsl_vector_free(ev);
  if (V) gsl_matrix_free(V);
  if (A) gsl_matrix_free(A);
  return rc;
}
