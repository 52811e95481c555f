/* predict.c: prediction contexts, crossover, uncertainty, sensitivity and inverse
 * questions.  The equations, modes and choices are documented in predict.h; this file
 * notes only implementation details.  Pure C, no I/O.  Times in us, bytes, GB/s. */
#include "predict.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

const char *const tps_scaling_names[TPS_NSCALINGS] = {"model", "pessimistic", "spec"};
const char *const tps_scaling_desc[TPS_NSCALINGS] = {
  "a reference fit transferred to the target by peak x efficiency, HBM and link bandwidth",
  "the seed vLLM pull request's rule on the H20 table (GEMM 2x/3.7x/6.7x faster at <=256/512/>=1024 "
  "rows, gather as measured), for TP8 marlin-w8a16 on SM90 targets",
  "datasheet x path priors, no measurement"};
const char *const tps_pk_names[TPS_PK_N] = {
  "gemm_floor_us", "gemm_bw_gbps", "gemm_tflops", "gemm_sharp", "gather_floor_us",
  "gather_custom_gbps", "nccl_lat_us", "nccl_busbw_gbps", "internode_gbps", "gather_time"};

int tps_scaling_find(const char *name) {
  for (int i = 0; name && i < TPS_NSCALINGS; i++)
    if (strcasecmp(name, tps_scaling_names[i]) == 0) return i;
  return -1;
}

void tps_pred_opts_default(tps_pred_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = TPS_GATHER_AUTO;
  o->cap_bytes = 0;
  o->ib_gbps = TPS_PRED_DEFAULT_IB_GBPS;
  o->node_gpus = TPS_PRED_DEFAULT_NODE_GPUS;
  o->internode_lat_us = TPS_PRED_DEFAULT_INTERNODE_LAT_US;
}

/* ------------------------------------------------------------------ the pessimistic rule */
/* Speedup of an H100/H200 GEMM of m rows over H20 (brief): 2 for m <= 256, 3.7 at 512,
 * 6.7 for m >= 1024, linear in log2(m) in between. */
static double pess_speedup(long m) {
  double x = log2((double)m);
  if (x <= 8.0) return 2.0;
  if (x <= 9.0) return 2.0 + (3.7 - 2.0) * (x - 8.0);
  if (x <= 10.0) return 3.7 + (6.7 - 3.7) * (x - 9.0);
  return 6.7;
}

static double curve_eval(tps_gemm_curve *c, long m) {
  tps_gemm_model g;
  memset(&g, 0, sizeof g);
  g.kind = TPS_GEMM_CURVE;
  g.curve = c;
  return tps_gemm_time_us(&g, NULL, m);
}

/* ------------------------------------------------------------------ evaluation */
long tps_pred_rows_per_rank(const tps_pred *p, long tokens) { return (tokens + p->tp - 1) / p->tp; }

double tps_pred_gemm_us(const tps_pred *p, long rows) {
  if (!p->applicable || rows < 1) return NAN;
  if (p->scaling == TPS_SCALING_PESSIMISTIC)
    return curve_eval(p->ref_gemm, rows) / (pess_speedup(rows) * p->gemm_div);
  return tps_gemm_time_us(&p->gemm, &p->shape, rows);
}

/* The gathered buffer: TP equal shards of ceil(T/TP) rows (an all-gather moves equal
 * shards; the rows past T are padding), as in the fit (model/fit.c). */
static double gathered_bytes(const tps_pred *p, long tokens) {
  return (double)p->tp * (double)tps_pred_rows_per_rank(p, tokens) * p->out_bytes_per_token;
}

static int cap_tokens_ok(const tps_pred *p, long tokens, double cap) {
  return cap > 0 && gathered_bytes(p, tokens) / p->tp <= cap;
}

double tps_pred_gather_us(const tps_pred *p, long tokens, int *backend) {
  if (backend) *backend = TPS_GATHER_NCCL;
  if (!p->applicable || tokens < 1) return NAN;
  if (p->tp == 1) return 0.0;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) {
    if (backend && cap_tokens_ok(p, tokens, p->ag.custom_cap_bytes)) *backend = TPS_GATHER_CUSTOM;
    return curve_eval(p->ref_gather, tokens) * p->gather_mul;
  }
  return tps_ag_time_us(&p->ag, gathered_bytes(p, tokens), p->tp, p->backend, backend, NULL);
}

double tps_pred_replicated_us(const tps_pred *p, long tokens) { return tps_pred_gemm_us(p, tokens); }

double tps_pred_split_us(const tps_pred *p, long tokens, int *backend) {
  return tps_pred_gemm_us(p, tps_pred_rows_per_rank(p, tokens)) + tps_pred_gather_us(p, tokens, backend);
}

/* ------------------------------------------------------------------ knobs */
static void apply_knobs(tps_pred *p) {
  const double *k = p->knob;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) {
    p->gemm_div = k[TPS_PK_GEMM_TFLOPS];
    p->gather_mul = k[TPS_PK_AG_TIME];
    return;
  }
  p->gemm = p->gemm0;
  p->gemm.p[TPS_GP_FLOOR_US] *= k[TPS_PK_GEMM_FLOOR];
  p->gemm.p[TPS_GP_BW_GBPS] *= k[TPS_PK_GEMM_BW];
  p->gemm.p[TPS_GP_TFLOPS] *= k[TPS_PK_GEMM_TFLOPS];
  p->gemm.p[TPS_GP_SHARP] *= k[TPS_PK_GEMM_SHARP];
  if (p->gemm.p[TPS_GP_SHARP] < 1.0) p->gemm.p[TPS_GP_SHARP] = 1.0;
  p->ag = p->ag0;
  p->ag.custom_floor_us *= k[TPS_PK_AG_FLOOR];
  p->ag.custom_gbps *= k[TPS_PK_AG_CUSTOM_BW];
  for (int i = 0; i < TPS_NPROTO; i++) {
    p->ag.lat_us[i] *= k[TPS_PK_AG_NCCL_LAT];
    p->ag.busbw_gbps[i] *= k[TPS_PK_AG_NCCL_BW];
  }
  p->ag.internode_gbps *= k[TPS_PK_AG_INTERNODE];
}

int tps_pred_set_shape(tps_pred *p, const tps_gemm_shape *s, double out_bytes_per_token) {
  if (!s || s->k < 1 || s->n < 1 || !(s->out_bytes > 0)) return TPS_EINVAL;
  if (p->scaling == TPS_SCALING_PESSIMISTIC &&
      (s->k != p->shape.k || s->n != p->shape.n || s->out_bytes != p->shape.out_bytes))
    return TPS_EINVAL; /* the rule scales the measured curve of one shape */
  p->shape = *s;
  p->out_bytes_per_token = out_bytes_per_token > 0 ? out_bytes_per_token : s->n * s->out_bytes;
  return TPS_OK;
}

int tps_pred_set_knob(tps_pred *p, int knob, double value) {
  if (knob < 0 || knob >= TPS_PK_N || !(value > 0) || !isfinite(value)) return TPS_EINVAL;
  p->knob[knob] = value;
  apply_knobs(p);
  return TPS_OK;
}

static int custom_possible(const tps_pred *p) {
  return p->backend != TPS_GATHER_NCCL && p->ag0.custom_gbps > 0 && p->ag0.custom_cap_bytes > 0 &&
         p->tp <= p->opts.node_gpus;
}

int tps_pred_knob_used(const tps_pred *p, int knob) {
  if (p->scaling == TPS_SCALING_PESSIMISTIC) return knob == TPS_PK_GEMM_TFLOPS || knob == TPS_PK_AG_TIME;
  switch (knob) {
  case TPS_PK_GEMM_FLOOR: case TPS_PK_GEMM_BW: case TPS_PK_GEMM_TFLOPS: case TPS_PK_GEMM_SHARP:
    return 1;
  case TPS_PK_AG_FLOOR: case TPS_PK_AG_CUSTOM_BW:
    return p->tp > 1 && custom_possible(p);
  case TPS_PK_AG_NCCL_LAT: case TPS_PK_AG_NCCL_BW:
    return p->tp > 1 && p->backend != TPS_GATHER_CUSTOM;
  case TPS_PK_AG_INTERNODE:
    return p->tp > p->opts.node_gpus;
  default:
    return 0;
  }
}

/* ------------------------------------------------------------------ building contexts */
static int na(tps_pred *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int na(tps_pred *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->why, sizeof p->why, fmt, ap);
  va_end(ap);
  p->applicable = 0;
  return TPS_NA;
}

/* Common part: check target, TP, path; fill opts and identity. */
static int init_common(tps_pred *p, const tps_gpu *gpu, int tp, const tps_path *path, const tps_pred_opts *o) {
  memset(p, 0, sizeof *p);
  if (!gpu || !path) return TPS_EINVAL;
  if (o) p->opts = *o; else tps_pred_opts_default(&p->opts);
  if (p->opts.node_gpus < 1) p->opts.node_gpus = TPS_PRED_DEFAULT_NODE_GPUS;
  if (!(p->opts.ib_gbps > 0)) p->opts.ib_gbps = TPS_PRED_DEFAULT_IB_GBPS;
  if (p->opts.internode_lat_us < 0) p->opts.internode_lat_us = TPS_PRED_DEFAULT_INTERNODE_LAT_US;
  p->gpu = *gpu;
  p->tp = tp;
  p->path = path;
  p->backend = p->opts.backend;
  for (int i = 0; i < TPS_PK_N; i++) p->knob[i] = 1.0;
  p->gemm_div = p->gather_mul = 1.0;
  p->applicable = 1;
  if (tp < 1 || tp > 64 || (tp > p->opts.node_gpus && tp % p->opts.node_gpus != 0)) return TPS_EINVAL;
  if (p->backend < TPS_GATHER_NCCL || p->backend > TPS_GATHER_AUTO) return TPS_EINVAL;
  if (!(path->flags & TPS_PATH_F_MODEL)) return na(p, "%s has no model (bench only)", path->name);
  int cc = gpu->cc_major * 10 + gpu->cc_minor;
  if (cc == 0)
    return na(p, "%s is not a CUDA GPU (the three paths are CUDA kernels)", gpu->name);
  if (path->fp8_peak && !(gpu->fp8_tflops > 0)) return na(p, "%s has no fp8 tensor cores", gpu->name);
  if (cc < path->min_cc) return na(p, "%s needs compute capability >= %.1f", path->name, path->min_cc / 10.0);
  if (p->backend == TPS_GATHER_CUSTOM && !gpu->nvlink) return na(p, "%s has no NVLink: no custom one-shot gather", gpu->name);
  if (p->backend == TPS_GATHER_CUSTOM && tp > p->opts.node_gpus)
    return na(p, "%s: the custom one-shot gather does not cross nodes (TP %d)", gpu->name, tp);
  return TPS_OK;
}

/* System-level gather settings on top of a model for n ranks. */
static void ag_system(tps_ag_model *a, const tps_pred *p, double cap_default) {
  a->ranks = p->tp;
  a->ranks_per_node = p->opts.node_gpus;
  a->internode_gbps = p->opts.ib_gbps / 8.0; /* Gb/s -> GB/s */
  a->internode_lat_us = p->opts.internode_lat_us;
  if (p->gpu.nvlink && a->custom_gbps > 0) {
    a->custom_cap_bytes = p->opts.cap_bytes > 0 ? p->opts.cap_bytes : cap_default > 0 ? cap_default : TPS_GATHER_CUSTOM_CAP_BYTES;
  } else {
    a->custom_gbps = 0;
    a->custom_cap_bytes = 0;
  }
}

/* Gather of the target from the reference's fitted gather: each fitted quantity times the
 * ratio of the spec-only models (target / reference).  The spec model carries the link
 * bandwidth and NCCL's n-1 ring steps, the fit the calibration. */
static void ag_transfer(tps_ag_model *dst, const tps_ag_model *src, const tps_gpu *sg, int sn, const tps_pred *p) {
  tps_ag_model ss, ds;
  tps_ag_from_spec(&ss, sg, sn);
  tps_ag_from_spec(&ds, &p->gpu, p->tp);
  *dst = ds;
  for (int i = 0; i < TPS_NPROTO; i++) {
    if (src->lat_us[i] > 0 && ss.lat_us[i] > 0) dst->lat_us[i] = src->lat_us[i] * ds.lat_us[i] / ss.lat_us[i];
    if (ss.busbw_gbps[i] > 0) dst->busbw_gbps[i] = src->busbw_gbps[i] * ds.busbw_gbps[i] / ss.busbw_gbps[i];
  }
  if (ds.custom_gbps > 0 && src->custom_gbps > 0 && ss.custom_gbps > 0) {
    dst->custom_floor_us = src->custom_floor_us * (ss.custom_floor_us > 0 ? ds.custom_floor_us / ss.custom_floor_us : 1.0);
    dst->custom_gbps = src->custom_gbps * ds.custom_gbps / ss.custom_gbps;
  }
  ag_system(dst, p, src->custom_cap_bytes);
}

/* Base models of a model-mode context from a fit (nominal or a bootstrap sample). */
static int build_from_fit(tps_pred *p, const tps_fit *f) {
  if (tps_gemm_transfer(&p->gemm0, &f->gemm, &p->ref_gpu, &p->gpu, p->path) != 0) return -1;
  int sn = f->ag.ranks > 0 ? f->ag.ranks : f->tp;
  ag_transfer(&p->ag0, &f->ag, &p->ref_gpu, sn > 0 ? sn : p->tp, p);
  return 0;
}

int tps_pred_init_model(tps_pred *p, const tps_fit *fit, const tps_gpu *ref_gpu, const tps_gpu *gpu, int tp,
                        const tps_path *path, const tps_pred_opts *o) {
  int rc = init_common(p, gpu, tp, path, o);
  if (rc != TPS_OK) return rc;
  if (!fit || !ref_gpu || fit->gemm.kind != TPS_GEMM_PARAMETRIC || !fit->gemm.path) return TPS_EINVAL;
  p->scaling = TPS_SCALING_MODEL;
  p->ref_gpu = *ref_gpu;
  p->fit = fit;
  p->shape = fit->shape;
  p->out_bytes_per_token = fit->out_bytes_per_token;
  if (!(p->out_bytes_per_token > 0) || p->shape.k < 1 || p->shape.n < 1) return TPS_EINVAL;
  if (build_from_fit(p, fit) != 0) return na(p, "%s cannot be transferred to %s", path->name, gpu->name);
  int same_gpu = strcmp(ref_gpu->name, gpu->name) == 0, same_path = path == fit->gemm.path;
  int sn = fit->ag.ranks > 0 ? fit->ag.ranks : fit->tp;
  p->compute_rsd = same_gpu && same_path ? 0.0 : path->compute_eff_rsd;
  p->stream_rsd = same_gpu && same_path ? 0.0 : path->stream_eff_rsd;
  p->gather_rsd = same_gpu && tp == sn ? 0.0 : TPS_PRED_GATHER_RSD;
  apply_knobs(p);
  return TPS_OK;
}

static int build_spec(tps_pred *p) {
  if (tps_gemm_from_spec(&p->gemm0, p->path, &p->gpu) != 0) return -1;
  tps_ag_from_spec(&p->ag0, &p->gpu, p->tp);
  ag_system(&p->ag0, p, 0);
  return 0;
}

int tps_pred_init_spec(tps_pred *p, const tps_gpu *gpu, int tp, const tps_path *path, const tps_gemm_shape *shape,
                       double out_bytes_per_token, const tps_pred_opts *o) {
  int rc = init_common(p, gpu, tp, path, o);
  if (rc != TPS_OK) return rc;
  p->scaling = TPS_SCALING_SPEC;
  p->ref_gpu = *gpu;
  if (shape) p->shape = *shape;
  else { p->shape.k = TPS_PRED_DEFAULT_K; p->shape.n = TPS_PRED_DEFAULT_N; p->shape.out_bytes = TPS_PRED_DEFAULT_OUT_BYTES; }
  p->out_bytes_per_token = out_bytes_per_token > 0 ? out_bytes_per_token : p->shape.n * p->shape.out_bytes;
  if (p->shape.k < 1 || p->shape.n < 1 || !(p->shape.out_bytes > 0)) return TPS_EINVAL;
  if (build_spec(p) != 0) return na(p, "%s cannot run on %s", path->name, gpu->name);
  p->compute_rsd = path->compute_eff_rsd;
  p->stream_rsd = path->stream_eff_rsd;
  p->gather_rsd = TPS_PRED_GATHER_RSD;
  apply_knobs(p);
  return TPS_OK;
}

int tps_pred_init_pessimistic(tps_pred *p, const tps_split_data *d, const tps_gpu *table_gpu, const tps_gpu *gpu, int tp,
                              const tps_path *path, const tps_pred_opts *o) {
  int rc = init_common(p, gpu, tp, path, o);
  if (rc != TPS_OK) return rc;
  if (!d || !table_gpu || d->n < 2 || d->tp < 1 || !(d->out_bytes_per_token > 0)) return TPS_EINVAL;
  p->scaling = TPS_SCALING_PESSIMISTIC;
  p->ref_gpu = *table_gpu;
  p->table_tp = d->tp;
  p->shape = d->shape;
  p->out_bytes_per_token = d->out_bytes_per_token;
  if (d->path && d->path != path) return na(p, "the pessimistic rule scales the %s table only", d->path->name);
  if (tp != d->tp) return na(p, "the pessimistic rule scales the TP%d table: no gather measured at TP %d", d->tp, tp);
  if (gpu->cc_major != 9 || strcmp(gpu->name, table_gpu->name) == 0)
    return na(p, "the pessimistic rule was made for H100/H200 from H20 (SM90 targets other than %s)", table_gpu->name);
  if (p->backend != TPS_GATHER_AUTO) return na(p, "the pessimistic rule keeps the measured gather (auto)");
  /* H20 GEMM: the replicated column (rows = tokens). */
  p->ref_gemm = tps_gemm_curve_alloc(d->tokens, d->replicated_us, d->n);
  if (!p->ref_gemm) return TPS_EINVAL;
  /* H20 gather at the measured T: split(T) - GEMM(ceil(T/tp)). */
  double *g = malloc(d->n * sizeof *g);
  if (!g) return TPS_ENOMEM;
  for (size_t i = 0; i < d->n; i++) {
    long rows = (d->tokens[i] + d->tp - 1) / d->tp;
    g[i] = d->split_us[i] - curve_eval(p->ref_gemm, rows);
    if (!(g[i] > 0)) { free(g); return TPS_EINVAL; }
  }
  p->ref_gather = tps_gemm_curve_alloc(d->tokens, g, d->n);
  free(g);
  if (!p->ref_gather) return TPS_EINVAL;
  p->ag.custom_cap_bytes = d->gather_cap_bytes > 0 ? d->gather_cap_bytes : TPS_GATHER_CUSTOM_CAP_BYTES;
  p->ag0 = p->ag;
  apply_knobs(p);
  return TPS_OK;
}

void tps_pred_free(tps_pred *p) {
  if (!p) return;
  tps_gemm_curve_free(p->ref_gemm);
  tps_gemm_curve_free(p->ref_gather);
  p->ref_gemm = p->ref_gather = NULL;
}

/* ------------------------------------------------------------------ crossover */
long tps_threshold(long be, long rounding) {
  if (be < 1) return -1;
  if (rounding > 0) return (be + rounding - 1) / rounding * rounding;
  long t = 1;
  while (t < be) t *= 2;
  return t;
}

int tps_crossover_find(double (*diff)(long t, void *arg), void *arg, long tmin, long tmax, tps_crossover *c) {
  memset(c, 0, sizeof *c);
  c->tmin = tmin;
  c->tmax = tmax;
  c->breakeven = -1;
  if (tmin < 1 || tmin > tmax) return TPS_EINVAL;
  int prev = 0;
  long start = -1; /* first T of the current winning run */
  for (long t = tmin; t <= tmax; t++) {
    double d = diff(t, arg);
    if (isnan(d)) return TPS_EINVAL;
    int win = d < 0;
    if (t == tmin) {
      if (win) start = t;
    } else if (win != prev) {
      if (c->nchg < TPS_CROSS_MAXCHG) { c->chg[c->nchg] = t; c->chg_wins[c->nchg] = win; }
      c->nchg++;
      if (win) start = t;
    }
    prev = win;
  }
  c->breakeven = prev ? start : -1;
  return TPS_OK;
}

/* The GEMM on the whole grid, fast.  gemm.h's model is additive over launches:
 * t(m) = floor + sum_l L(R_l, P_l), each launch's cost depending only on its padded rows
 * R_l and slices P_l, and the launch list of m (tps_gemm_launches) does not depend on the
 * parameters.  So, once per context, each m = 1..tmax is stored as its first launch (an
 * index into the distinct (R, P) pairs) plus the m' < m whose launch list is the rest
 * (for Marlin: m - 1024 after a full 16-slice launch; 64 after a 64-row one).  Each model
 * (nominal, bootstrap sample, knob setting) then needs only L(R, P) = t(R) - floor for the
 * pairs, read from the model itself at a row count R whose launch list is exactly (R, P),
 * and GEMM(1..tmax) costs one addition per m instead of a model call (~1.4 us for the
 * Marlin model at large m).  Each model's table is checked against direct calls at a few
 * sizes; when they differ, or the structure does not apply (pessimistic curves), every
 * value is a direct call. */
#define GS_SLOTS 8192
typedef struct {
  long tmax;
  int built;
  int *first;         /* key index of m's first launch */
  int *rest;          /* m' whose launch list is the rest of m's; 0: none left; -1: unknown */
  long nkeys;
  long kR[GS_SLOTS / 2];
  double L[GS_SLOTS / 2];
  /* per model */
  const tps_pred *p;
  int table;          /* g, pmax, smin filled; else GEMM values are direct calls */
  int mono;           /* GEMM known nondecreasing in m: no table needed for bounds */
  double *g;          /* GEMM(m), m = 1..tmax */
  double *pmax;       /* max of g over [1, m] */
  double *smin;       /* min of g over [m, tmax] */
} gstruct;

static void gs_free(gstruct *c) {
  if (!c) return;
  free(c->first);
  free(c->rest);
  free(c->g);
  free(c);
}

/* splitmix64's finalizer: spreads keys that differ only in high bits */
static unsigned long mix64(unsigned long x) {
  x ^= x >> 30; x *= 0xbf58476d1ce4e5b9UL;
  x ^= x >> 27; x *= 0x94d049bb133111ebUL;
  return x ^ (x >> 31);
}

/* Build the launch structure for m = 1..tmax (built = 0 when it does not apply).  The
 * rest of m's launch list is looked for at m' = m - (rows of the first launch) and
 * checked launch by launch; where it is not there, rest = -1 (direct calls). */
static gstruct *gs_build(const tps_pred *p, long tmax) {
  gstruct *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->tmax = tmax;
  c->g = malloc(3 * (size_t)(tmax + 1) * sizeof *c->g);
  if (!c->g) { free(c); return NULL; }
  c->pmax = c->g + tmax + 1;
  c->smin = c->pmax + tmax + 1;
  if (p->scaling == TPS_SCALING_PESSIMISTIC || p->gemm.kind != TPS_GEMM_PARAMETRIC || !p->gemm.path) return c;
  enum { MAXL = 160 }; /* launches of one GEMM: 66 for Marlin at 65536 rows */
  long *pkey = calloc(GS_SLOTS, sizeof *pkey); /* (R, P) -> key index */
  int *pidx = malloc(GS_SLOTS * sizeof *pidx);
  c->first = malloc((size_t)(tmax + 1) * sizeof *c->first);
  c->rest = malloc((size_t)(tmax + 1) * sizeof *c->rest);
  int ok = pkey && pidx && c->first && c->rest;
  const tps_path *path = p->gemm.path;
  long rows[MAXL], par[MAXL], rows2[MAXL], par2[MAXL];
  for (long m = 1; ok && m <= tmax; m++) {
    long nl = tps_gemm_launches(path, m, rows, par, MAXL);
    if (nl < 1 || nl > MAXL) { ok = 0; break; }
    long key = rows[0] * 4096 + par[0];
    unsigned long h = mix64((unsigned long)key) % GS_SLOTS;
    while (pkey[h] && pkey[h] != key) h = (h + 1) % GS_SLOTS;
    if (!pkey[h]) {
      long r1, p1;
      if (c->nkeys >= GS_SLOTS / 2 || tps_gemm_launches(path, rows[0], &r1, &p1, 1) != 1 || r1 != rows[0] ||
          p1 != par[0]) { ok = 0; break; }
      pkey[h] = key;
      pidx[h] = (int)c->nkeys;
      c->kR[c->nkeys++] = rows[0];
    }
    c->first[m] = pidx[h];
    c->rest[m] = nl == 1 ? 0 : -1;
    long m2 = m - rows[0];
    if (nl > 1 && m2 >= 1 && m2 < m && tps_gemm_launches(path, m2, rows2, par2, MAXL) == nl - 1 &&
        memcmp(rows2, rows + 1, (nl - 1) * sizeof *rows) == 0 && memcmp(par2, par + 1, (nl - 1) * sizeof *par) == 0)
      c->rest[m] = (int)m2;
  }
  c->built = ok;
  free(pkey);
  free(pidx);
  return c;
}

/* Bind to a model: GEMM(1..tmax), prefix maxima (over the rows a rank can get, up to
 * ceil(tmax/tp)) and suffix minima, when a table is asked or the GEMM is not known to be
 * monotone.  With the structure: g[0] = floor, g[m] = L(first launch of m) + g[rest]. */
static void gs_load(gstruct *c, const tps_pred *p, int table) {
  c->p = p;
  c->table = table || !c->mono;
  if (!c->table) return;
  long n = c->tmax, np = (n + p->tp - 1) / p->tp;
  int fast = c->built;
  if (fast) {
    double fl = p->gemm.p[TPS_GP_FLOOR_US];
    for (long k = 0; k < c->nkeys; k++) c->L[k] = tps_gemm_time_us(&p->gemm, &p->shape, c->kR[k]) - fl;
    c->g[0] = fl;
    for (long m = 1; m <= n; m++)
      c->g[m] = c->rest[m] >= 0 ? c->L[c->first[m]] + c->g[c->rest[m]] : tps_pred_gemm_us(p, m);
    long probe[4] = {1, 97 < n ? 97 : n, n / 2 + 1, n};
    for (int i = 0; i < 4 && fast; i++) {
      double b = tps_pred_gemm_us(p, probe[i]);
      fast = fabs(c->g[probe[i]] - b) <= 1e-9 * fabs(b);
    }
  }
  if (!fast)
    for (long m = 1; m <= n; m++) c->g[m] = tps_pred_gemm_us(p, m);
  c->pmax[1] = c->g[1];
  for (long m = 2; m <= np; m++) c->pmax[m] = c->g[m] > c->pmax[m - 1] ? c->g[m] : c->pmax[m - 1];
  c->smin[n] = c->g[n];
  for (long m = n - 1; m >= 1; m--) c->smin[m] = c->g[m] < c->smin[m + 1] ? c->g[m] : c->smin[m + 1];
}

static double gs_g(gstruct *c, long m) { return c->table ? c->g[m] : tps_pred_gemm_us(c->p, m); }
static double gs_pmax(gstruct *c, long m) { return c->table ? c->pmax[m] : tps_pred_gemm_us(c->p, m); }
static double gs_smin(gstruct *c, long m) { return c->table ? c->smin[m] : tps_pred_gemm_us(c->p, m); }

static double gs_diff(gstruct *c, long t) {
  const tps_pred *p = c->p;
  return gs_g(c, tps_pred_rows_per_rank(p, t)) + tps_pred_gather_us(p, t, NULL) - gs_g(c, t);
}

static double dense_diff(long t, void *arg) { return gs_diff(arg, t); }

static int check_tmax(const tps_pred *p, long tmax) {
  return p->applicable && tmax >= 1 && tmax <= TPS_PRED_MAX_TMAX;
}

/* Dense scan of p with a structure (built here when gs is NULL). */
static int crossover_dense(const tps_pred *p, long tmax, tps_crossover *c, gstruct *gs) {
  memset(c, 0, sizeof *c);
  c->breakeven = -1;
  if (!check_tmax(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  gstruct *mc = gs ? gs : gs_build(p, tmax);
  if (!mc) return TPS_ENOMEM;
  gs_load(mc, p, 1);
  int rc = tps_crossover_find(dense_diff, mc, 1, tmax, c);
  if (!gs) gs_free(mc);
  return rc;
}

int tps_pred_crossover(const tps_pred *p, long tmax, tps_crossover *c) { return crossover_dense(p, tmax, c, NULL); }

int tps_pred_breakeven(const tps_pred *p, long tmax, long *be) {
  tps_crossover c;
  int rc = crossover_dense(p, tmax, &c, NULL);
  *be = c.breakeven;
  return rc;
}

/* Largest T in [a, b] where the split does not win (0 when none).  Inside [a, b] the
 * gather is nondecreasing (one backend), so split(T) <= max GEMM over rows
 * [1, ceil(b/tp)] + gather(b), and replicated(T) >= min GEMM over [a, tmax]: when the
 * first is below the second the split wins on all of [a, b]. */
static long last_nonwin(gstruct *c, long a, long b) {
  const tps_pred *p = c->p;
  if (b - a < 8) {
    for (long t = b; t >= a; t--)
      if (!(gs_diff(c, t) < 0)) return t;
    return 0;
  }
  if (gs_pmax(c, tps_pred_rows_per_rank(p, b)) + tps_pred_gather_us(p, b, NULL) < gs_smin(c, a)) return 0;
  if (!(gs_diff(c, b) < 0)) return b;
  long m = a + (b - a) / 2;
  long r = last_nonwin(c, m + 1, b);
  return r ? r : last_nonwin(c, a, m);
}

static int breakeven_fast(const tps_pred *p, long tmax, long *be, gstruct *gs) {
  *be = -1;
  if (!check_tmax(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) return tps_pred_breakeven(p, tmax, be);
  gstruct *mc = gs ? gs : gs_build(p, tmax);
  if (!mc) return TPS_ENOMEM;
  gs_load(mc, p, 0);
  /* Monotone pieces of the gather: the custom gather runs up to tc tokens, NCCL above. */
  long cuts[2];
  int nc = 0;
  if (custom_possible(p) || p->backend == TPS_GATHER_CUSTOM) {
    double x = p->tp * floor(p->ag.custom_cap_bytes / p->out_bytes_per_token); /* ceil(T/tp) rows <= cap */
    if (x >= 1 && x < (double)tmax) cuts[nc++] = (long)x;
  }
  cuts[nc++] = tmax;
  long t = 0;
  for (int i = nc - 1; i >= 0 && !t; i--) t = last_nonwin(mc, i ? cuts[i - 1] + 1 : 1, cuts[i]);
  if (!gs) gs_free(mc);
  *be = t == tmax ? -1 : t + 1;
  return TPS_OK;
}

int tps_pred_breakeven_fast(const tps_pred *p, long tmax, long *be) { return breakeven_fast(p, tmax, be, NULL); }

/* ------------------------------------------------------------------ uncertainty */
static int sample_ok(const tps_pred *q, long tmax) {
  double a = tps_pred_split_us(q, 1, NULL) - tps_pred_replicated_us(q, 1);
  double b = tps_pred_split_us(q, tmax, NULL) - tps_pred_replicated_us(q, tmax);
  if (!isfinite(a) || !isfinite(b)) return 0;
  if (!(q->gemm.p[TPS_GP_FLOOR_US] >= 0)) return 0;
  if (q->ag.custom_gbps > 0 && !(q->ag.custom_floor_us >= 0)) return 0;
  for (int i = 0; i < TPS_NPROTO; i++)
    if (q->ag.busbw_gbps[i] > 0 && !(q->ag.lat_us[i] >= 0)) return 0;
  return 1;
}

static void scale_ag_bw(tps_ag_model *a, double f) {
  a->custom_gbps *= f;
  for (int i = 0; i < TPS_NPROTO; i++) a->busbw_gbps[i] *= f;
}

/* ------------------------------------------------------------------ draws */
struct tps_pred_draws {
  const tps_pred *p;
  int fit_part, prior_part, np;
  tps_fit *scratch;
  gsl_matrix *L;
  gsl_vector *mu, *x;
  gsl_rng *r;
};

void tps_pred_draws_free(tps_pred_draws *d) {
  if (!d) return;
  free(d->scratch);
  if (d->L) gsl_matrix_free(d->L);
  if (d->mu) gsl_vector_free(d->mu);
  if (d->x) gsl_vector_free(d->x);
  if (d->r) gsl_rng_free(d->r);
  free(d);
}

int tps_pred_draws_alloc(const tps_pred *p, unsigned long seed, tps_pred_draws **out) {
  *out = NULL;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) return TPS_NA;
  int fit_part = p->scaling == TPS_SCALING_MODEL && p->fit && p->fit->npar > 0;
  int prior_part = p->compute_rsd > 0 || p->stream_rsd > 0 || p->gather_rsd > 0;
  if (!fit_part && !prior_part) return TPS_NA;
  tps_pred_draws *d = calloc(1, sizeof *d);
  if (!d) return TPS_ENOMEM;
  d->p = p;
  d->fit_part = fit_part;
  d->prior_part = prior_part;
  d->r = gsl_rng_alloc(gsl_rng_mt19937);
  if (!d->r) { tps_pred_draws_free(d); return TPS_ENOMEM; }
  gsl_rng_set(d->r, seed);
  if (fit_part) {
    const int np = d->np = p->fit->npar;
    d->scratch = malloc(sizeof *d->scratch);
    d->L = gsl_matrix_alloc(np, np);
    d->mu = gsl_vector_alloc(np);
    d->x = gsl_vector_alloc(np);
    if (!d->scratch || !d->L || !d->mu || !d->x) { tps_pred_draws_free(d); return TPS_ENOMEM; }
    *d->scratch = *p->fit;
    double dmax = 0;
    for (int i = 0; i < np; i++) {
      gsl_vector_set(d->mu, i, p->fit->theta[i]);
      double v = p->fit->cov[i * np + i];
      if (v > dmax) dmax = v;
    }
    /* Cholesky factor of the covariance; a tiny ridge when it is only semi-definite
     * (a parameter held fixed has zero variance). */
    int ok = 0;
    for (int attempt = 0; attempt < 4 && !ok; attempt++) {
      double ridge = attempt ? dmax * pow(10.0, -12 + 3 * attempt) : 0.0;
      for (int i = 0; i < np; i++)
        for (int j = 0; j < np; j++)
          gsl_matrix_set(d->L, i, j, p->fit->cov[i * np + j] + (i == j ? ridge : 0.0)); /* packed, stride npar (fit.c) */
      ok = gsl_linalg_cholesky_decomp1(d->L) == GSL_SUCCESS;
    }
    if (!ok) {
      /* not a covariance at all: keep the standard errors only */
      gsl_matrix_set_zero(d->L);
      for (int i = 0; i < np; i++) {
        double v = p->fit->cov[i * np + i];
        gsl_matrix_set(d->L, i, i, v > 0 ? sqrt(v) : 0.0);
      }
    }
  }
  *out = d;
  return TPS_OK;
}

int tps_pred_draws_next(tps_pred_draws *d, tps_pred *q) {
  const tps_pred *p = d->p;
  *q = *p;
  q->ref_gemm = q->ref_gather = NULL; /* not owned by the copy (unused in these scalings) */
  if (d->fit_part) {
    gsl_ran_multivariate_gaussian(d->r, d->mu, d->L, d->x);
    if (tps_fit_set_theta(d->scratch, d->x->data) != 0 || build_from_fit(q, d->scratch) != 0) return 1;
  }
  if (d->prior_part) {
    q->gemm0.p[TPS_GP_TFLOPS] *= exp(p->compute_rsd * gsl_ran_gaussian(d->r, 1.0));
    q->gemm0.p[TPS_GP_BW_GBPS] *= exp(p->stream_rsd * gsl_ran_gaussian(d->r, 1.0));
    scale_ag_bw(&q->ag0, exp(p->gather_rsd * gsl_ran_gaussian(d->r, 1.0)));
  }
  apply_knobs(q);
  return 0;
}

int tps_pred_interval(const tps_pred *p, long tmax, const tps_unc_opts *o, tps_interval *iv) {
  return tps_pred_analyze(p, tmax, o, NULL, iv);
}

int tps_pred_analyze(const tps_pred *p, long tmax, const tps_unc_opts *o, tps_crossover *cx, tps_interval *iv) {
  memset(iv, 0, sizeof *iv);
  iv->lo = iv->hi = iv->median = NAN;
  if (cx) { memset(cx, 0, sizeof *cx); cx->breakeven = -1; }
  if (!check_tmax(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) return cx ? tps_pred_crossover(p, tmax, cx) : TPS_OK;
  int n = o && o->nsamples > 0 ? o->nsamples : TPS_PRED_DEFAULT_SAMPLES;
  double level = o && o->level > 0 && o->level < 1 ? o->level : TPS_INTERVAL_LEVEL;
  unsigned long seed = o ? o->seed : 0;
  int fit_part = p->scaling == TPS_SCALING_MODEL && p->fit && p->fit->npar > 0;
  int prior_part = p->compute_rsd > 0 || p->stream_rsd > 0 || p->gather_rsd > 0;
  iv->fit_part = fit_part;
  iv->prior_part = prior_part;
  if (!fit_part && !prior_part) {
    tps_crossover c0;
    int rc = tps_pred_crossover(p, tmax, &c0);
    if (cx) *cx = c0;
    iv->lo = iv->hi = iv->median = c0.breakeven < 0 ? INFINITY : (double)c0.breakeven;
    return rc;
  }
  double *bes = malloc((size_t)n * sizeof *bes);
  tps_pred_draws *dr = NULL;
  gstruct *gs = gs_build(p, tmax);
  int rc = TPS_ENOMEM;
  if (!bes || !gs || tps_pred_draws_alloc(p, seed, &dr) != TPS_OK) goto out;
  /* Output-tiled paths: GEMM(m) is nondecreasing for any positive parameters (padded
   * rows and waves only grow), so samples need no table when the nominal one is; Marlin's
   * launch structure makes it dip (127 -> 128 rows) and keeps the table. */
  if (cx) {
    rc = crossover_dense(p, tmax, cx, gs);
    if (rc) goto out;
    rc = TPS_ENOMEM;
  } else {
    gs_load(gs, p, 1);
  }
  gs->mono = p->path->slice_rows == 0;
  for (long m = 2; gs->mono && m <= tmax; m++) gs->mono = gs->g[m] >= gs->g[m - 1];
  tps_pred q;
  int got = 0, rejected = 0;
  while (got < n && rejected < 10 * n) {
    if (tps_pred_draws_next(dr, &q) != 0) { rejected++; continue; }
    long be;
    if (!sample_ok(&q, tmax) || breakeven_fast(&q, tmax, &be, gs) != 0) { rejected++; continue; }
    if (be < 0) iv->nnever++;
    bes[got++] = be < 0 ? (double)(tmax + 1) : (double)be; /* "never" sorts last */
  }
  iv->nsamples = got;
  iv->nrejected = rejected;
  if (got < 2) { rc = TPS_EINVAL; goto out; }
  gsl_sort(bes, 1, got);
  double a = (1.0 - level) / 2.0;
  double qv[3] = {gsl_stats_quantile_from_sorted_data(bes, 1, got, a),
                  gsl_stats_quantile_from_sorted_data(bes, 1, got, 1.0 - a),
                  gsl_stats_quantile_from_sorted_data(bes, 1, got, 0.5)};
  for (int i = 0; i < 3; i++) qv[i] = qv[i] > (double)tmax ? INFINITY : round(qv[i]);
  iv->lo = qv[0];
  iv->hi = qv[1];
  iv->median = qv[2];
  rc = TPS_OK;
out:
  gs_free(gs);
  free(bes);
  tps_pred_draws_free(dr);
  return rc;
}

/* ------------------------------------------------------------------ sensitivity */
int tps_pred_sensitivity(const tps_pred *p, long tmax, tps_sens *s, int *ns) {
  *ns = 0;
  if (!check_tmax(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  tps_pred q = *p;
  gstruct *gs = gs_build(p, tmax);
  if (!gs) return TPS_ENOMEM;
  for (int k = 0; k < TPS_PK_N; k++) {
    if (!tps_pred_knob_used(p, k)) continue;
    s[*ns].knob = k;
    long be[2];
    for (int j = 0; j < 2; j++) {
      q.knob[k] = p->knob[k] * (j ? 1.1 : 0.9);
      apply_knobs(&q);
      tps_crossover c;
      int rc = crossover_dense(&q, tmax, &c, gs);
      be[j] = c.breakeven;
      if (rc) { gs_free(gs); return rc; }
    }
    q.knob[k] = p->knob[k];
    apply_knobs(&q);
    s[*ns].be_minus = be[0];
    s[*ns].be_plus = be[1];
    (*ns)++;
  }
  gs_free(gs);
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
  apply_knobs(&a->q);
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
  apply_knobs(p);
  return TPS_OK;
}

/* Whether, with the inverse knob at x, the split wins on every T in [tokens, tmax]. */
static int pays_from(const tps_pred *p, int what, double x, long tokens, long tmax, gstruct *gs) {
  tps_pred q = *p;
  long be;
  if (tps_pred_inverse_apply(&q, what, x) != 0 || breakeven_fast(&q, tmax, &be, gs) != 0) return 0;
  return be >= 1 && be <= tokens;
}

int tps_pred_inverse_from(const tps_pred *p, int what, long tokens, long tmax, double *x) {
  *x = NAN;
  if (!p->applicable) return TPS_NA;
  if (tokens < 1 || tokens > tmax || !check_tmax(p, tmax) || (what != TPS_INV_LINK && what != TPS_INV_GEMM) ||
      (what == TPS_INV_LINK && p->tp == 1))
    return TPS_EINVAL;
  gstruct *gs = gs_build(p, tmax);
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
  gs_free(gs);
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
