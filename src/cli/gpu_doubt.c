/* gpu_doubt.c: the uncertain facts of a GPU and the break-evens they allow (gpu_doubt.h). */
#include "config.h"
#include "src/cli/gpu_doubt.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/core/status.h"
#include "model/predict/crossover.h"

/* The facts the flags name, and how a copy of the GPU moves them by a factor. */
enum { F_SMS, F_L2, F_PEAK, F_HBM, F_LINK, F_CLOCK, F_N };
static const struct { unsigned flag; const char *name; } facts[F_N] = {
  {TPS_GPU_U_SMS, "sms"},       {TPS_GPU_U_L2, "l2_mb"},        {TPS_GPU_U_PEAK, "peak_tflops"},
  {TPS_GPU_U_HBM, "hbm_gbps"},  {TPS_GPU_U_LINK, "link_gbps"},  {TPS_GPU_U_CLOCK, "clock_mhz"},
};

/* The fact's table value ("148", "2250/4500"), 0 when it is 0 (unknown): nothing to move. */
static double fact_value(const tps_gpu *g, int f, char *buf, size_t sz) {
  switch (f) {
  case F_SMS: snprintf(buf, sz, "%d?", g->sms); return g->sms;
  case F_L2: snprintf(buf, sz, "%g?", g->l2_mb); return g->l2_mb;
  case F_PEAK: snprintf(buf, sz, "%g/%g? (bf16/fp8)", g->bf16_tflops, g->fp8_tflops); return g->bf16_tflops;
  case F_HBM: snprintf(buf, sz, "%g?", g->hbm_gbps); return g->hbm_gbps;
  case F_LINK: snprintf(buf, sz, "%g?", g->link_gbps); return g->link_gbps;
  default: snprintf(buf, sz, "%g/%g? (base/boost)", g->base_mhz, g->boost_mhz); return 0;
  }
}

static void move(tps_gpu *g, int f, double x) {
  switch (f) {
  case F_SMS: g->sms = (int)lround(g->sms * x); if (g->sms < 1) g->sms = 1; break;
  case F_L2: g->l2_mb *= x; break;
  case F_PEAK: g->bf16_tflops *= x; g->fp8_tflops *= x; g->fp4_tflops *= x; break;
  case F_HBM: g->hbm_gbps *= x; break;
  case F_LINK: g->link_gbps *= x; g->nccl_link_gbps *= x; break;
  default: break;
  }
}

static int breakeven_at(const tps_predref *r, int scaling, const tps_gpu *gpu, int f, double x, int tp, const tps_path *path,
                        const tps_pred_opts *o, long tmax, long *be) {
  tps_gpu g = *gpu;
  move(&g, f, x);
  tps_pred p;
  memset(&p, 0, sizeof p);
  int st = tps_predref_context_use(r, scaling, &g, tp, path, o, &p, NULL, NULL);
  if (st == TPS_OK) st = tps_pred_breakeven_fast(&p, tmax, be);
  tps_pred_free(&p);
  return st;
}

int tps_doubt_eval(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                   const tps_pred_opts *o, long tmax, tps_doubt *d) {
  memset(d, 0, sizeof *d);
  for (int f = 0; f < F_N && d->n < TPS_DOUBT_MAX; f++) {
    if (!(gpu->uncertain & facts[f].flag)) continue;
    tps_doubt_fact *x = &d->f[d->n++];
    x->fact = facts[f].name;
    x->be_minus = x->be_plus = -1;
    if (!(fact_value(gpu, f, x->value, sizeof x->value) > 0)) continue;
    int st = breakeven_at(r, scaling, gpu, f, 0.9, tp, path, o, tmax, &x->be_minus);
    if (st == TPS_OK) st = breakeven_at(r, scaling, gpu, f, 1.1, tp, path, o, tmax, &x->be_plus);
    if (st != TPS_OK) return st;
    x->moved = 1;
  }
  return TPS_OK;
}

int tps_doubt_widen(const tps_doubt *d, double *lo, double *hi) {
  int moved = 0;
  for (int i = 0; i < d->n; i++) {
    if (!d->f[i].moved) continue;
    const long be[2] = {d->f[i].be_minus, d->f[i].be_plus};
    for (int k = 0; k < 2; k++) {
      double v = be[k] < 0 ? INFINITY : (double)be[k];
      if (isnan(*lo) || v < *lo) { *lo = v; moved = 1; }
      if (isnan(*hi) || v > *hi) { *hi = v; moved = 1; }
    }
  }
  return moved;
}

void tps_doubt_describe(const tps_doubt *d, const tps_gpu *gpu, char *buf, size_t sz) {
  size_t off = 0;
  buf[0] = '\0';
  if (d->n == 0) return;
  off += (size_t)snprintf(buf, sz, "uncertain facts of %s in the GPU table:", gpu->name);
  int moved = 0;
  for (int i = 0; i < d->n && off < sz; i++) {
    const tps_doubt_fact *x = &d->f[i];
    char m[24], p[24];
    snprintf(m, sizeof m, x->be_minus < 0 ? "never" : "%ld", x->be_minus);
    snprintf(p, sizeof p, x->be_plus < 0 ? "never" : "%ld", x->be_plus);
    if (x->moved) off += (size_t)snprintf(buf + off, sz - off, "%s %s %s (break-even %s/%s at -10%%/+10%%)", i ? ";" : "", x->fact, x->value, m, p);
    else if (!strcmp(x->fact, "clock_mhz")) off += (size_t)snprintf(buf + off, sz - off, "%s %s %s (no model reads it)", i ? ";" : "", x->fact, x->value);
    else off += (size_t)snprintf(buf + off, sz - off, "%s %s %s (unknown: the models take 0)", i ? ";" : "", x->fact, x->value);
    moved |= x->moved;
  }
  if (moved && off < sz) snprintf(buf + off, sz - off, "; the interval covers these break-evens");
}
