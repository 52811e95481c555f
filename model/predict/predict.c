/* predict.c: prediction contexts: building them (model, spec, pessimistic scalings),
 * evaluating replicated and split latencies, and the knobs.  The equations and choices are
 * documented in predict.h.  Pure C, no I/O.  Times in us, bytes, GB/s. */
#include "model/predict/predict.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "model/predict/pred_impl.h"

const char *const tps_scaling_names[TPS_NSCALINGS] = {"model", "pessimistic", "spec", "parts"};
const char *const tps_scaling_desc[TPS_NSCALINGS] = {
  "a reference fit transferred to the target by peak x efficiency, HBM and link bandwidth",
  "the seed vLLM pull request's rule on the H20 table (GEMM 2x/3.7x/6.7x faster at <=256/512/>=1024 "
  "rows, gather as measured), for TP8 marlin-w8a16 on SM90 targets",
  "datasheet x path priors, no measurement",
  "each part (GEMM, gather) from a measurement where one exists (bundled, --gemm, --gather), else the "
  "cross-GPU model transferred to the target, else spec-only; each part's source is printed"};
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
  o->backend = tps_gather_rule();
  o->cap_bytes = 0;
  o->ib_gbps = TPS_PRED_DEFAULT_IB_GBPS;
  o->node_gpus = TPS_PRED_DEFAULT_NODE_GPUS;
  o->internode_lat_us = TPS_PRED_DEFAULT_INTERNODE_LAT_US;
}

/* ------------------------------------------------------------------ the pessimistic rule */
/* Speedup of an H100/H200 GEMM of m rows over H20 (the seed pull request's rule): 2 for m <= 256, 3.7 at 512,
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
  if (p->gpart)
    return tps_part_gemm_us(p->gpart, rows, NULL) * (rows >= p->gcov_lo && rows <= p->gcov_hi ? p->gscale : p->gscale_out) /
           p->knob[TPS_PK_GEMM_TFLOPS];
  return tps_gemm_time_us(&p->gemm, &p->shape, rows);
}

/* The gathered buffer: TP equal shards of ceil(T/TP) rows (an all-gather moves equal
 * shards; the rows past T are padding), as in the fit (model/fit/fit_core.c). */
static double gathered_bytes(const tps_pred *p, long tokens) {
  return (double)p->tp * (double)tps_pred_rows_per_rank(p, tokens) * p->out_bytes_per_token;
}
double tps_pred_gathered_bytes(const tps_pred *p, long tokens) { return gathered_bytes(p, tokens); }

static int cap_tokens_ok(const tps_pred *p, long tokens, double cap) {
  return cap > 0 && gathered_bytes(p, tokens) / p->tp <= cap;
}

/* Parts: the backend that runs at T (a rule's pick, tps_gather_pick: custom while the
 * per-rank input is under the cap and a custom gather exists here, else NCCL; a capped
 * backend asked above its cap or where it cannot run falls back, as tps_ag_time_us does) and
 * the part behind it (NULL: p->ag, the allgather.h model, for that backend). */
static int parts_backend(const tps_pred *p, long tokens, const tps_part **part) {
  double cap = p->ag.custom_cap_bytes;
  int b = tps_gather_pick(p->backend, gathered_bytes(p, tokens) / p->tp, cap, cap > 0 && tps_pred_custom_possible(p));
  const tps_part *a = tps_gather_is_rule(p->backend) ? p->apart[p->backend] : NULL;
  /* a measured curve of the rule, where it was measured (or has a model); outside, the
   * rule over this GPU's backends */
  if (a && (a->model.kind != TPS_PM_NONE || tps_part_covers(a, gathered_bytes(p, tokens), gathered_bytes(p, tokens))))
    *part = a;
  else
    *part = p->apart[b];
  return b;
}

/* Any measured gather part. */
static int any_apart(const tps_pred *p) {
  for (int b = 0; b < TPS_NGATHERS; b++)
    if (p->apart[b]) return 1;
  return 0;
}

int tps_pred_bw_knob(int backend) {
  return tps_gather_term_of(backend) == TPS_GATHER_TERM_ONESHOT ? TPS_PK_AG_CUSTOM_BW : TPS_PK_AG_NCCL_BW;
}

double tps_pred_gather_us(const tps_pred *p, long tokens, int *backend) {
  if (backend) *backend = tps_gather_fallback();
  if (!p->applicable || tokens < 1) return NAN;
  /* one rank: no gather, except where one was measured (a bench of the degenerate one-rank
   * gather, which a TP1 split table holds) */
  if (p->tp == 1 && !(p->scaling == TPS_SCALING_PARTS && any_apart(p))) return 0.0;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) {
    if (backend && cap_tokens_ok(p, tokens, p->ag.custom_cap_bytes))
      *backend = tps_gather_pick(p->backend, gathered_bytes(p, tokens) / p->tp, p->ag.custom_cap_bytes, 1);
    return curve_eval(p->ref_gather, tokens) * p->gather_mul;
  }
  if (p->scaling == TPS_SCALING_PARTS) {
    const tps_part *a;
    int b = parts_backend(p, tokens, &a);
    if (backend) *backend = b;
    if (!a) return tps_ag_time_us(&p->ag, gathered_bytes(p, tokens), p->tp, b, NULL, NULL);
    double k = p->knob[tps_pred_bw_knob(b)];
    return tps_part_eval(a, gathered_bytes(p, tokens), NULL) * p->ascale / k;
  }
  return tps_ag_time_us(&p->ag, gathered_bytes(p, tokens), p->tp, p->backend, backend, NULL);
}

int tps_pred_gather_is_part(const tps_pred *p, long tokens) {
  const tps_part *a;
  if (p->scaling != TPS_SCALING_PARTS) return 0;
  parts_backend(p, tokens, &a);
  return a != NULL;
}

int tps_pred_gemm_outside(const tps_pred *p, long rows) {
  int out = 0;
  if (p->scaling != TPS_SCALING_PARTS) return 0;
  if (!p->gpart) return 1;
  tps_part_gemm_us(p->gpart, rows, &out);
  return out;
}

int tps_pred_gather_outside(const tps_pred *p, long tokens) {
  int out = 0;
  if (p->scaling != TPS_SCALING_PARTS || (p->tp == 1 && !any_apart(p))) return 0;
  const tps_part *a;
  parts_backend(p, tokens, &a);
  if (!a) return 1;
  if (tps_gather_is_rule(p->backend) && p->apart[p->backend] && a != p->apart[p->backend]) return 1;
  tps_part_eval(a, gathered_bytes(p, tokens), &out);
  return out;
}

/* The largest gather time over T in [a, b] (one backend there): a measured curve need not
 * be monotone (nccl-tests' smallest sizes are noise), Steffen keeps it monotone between
 * its points, so the largest value is at an end or at a measured point inside. */
double tps_pred_gather_max_us(const tps_pred *p, long a, long b) {
  double g = tps_pred_gather_us(p, b, NULL), ga = tps_pred_gather_us(p, a, NULL);
  if (ga > g) g = ga;
  if (p->scaling != TPS_SCALING_PARTS || p->tp == 1) return g;
  const tps_part *pa;
  int be = parts_backend(p, b, &pa);
  if (!pa || !pa->meas) return g;
  double k = p->knob[tps_pred_bw_knob(be)];
  double v = tps_mcurve_max(pa->meas, gathered_bytes(p, a), gathered_bytes(p, b)) * p->ascale / k;
  return v > g ? v : g;
}

double tps_pred_replicated_us(const tps_pred *p, long tokens) { return tps_pred_gemm_us(p, tokens); }

double tps_pred_split_us(const tps_pred *p, long tokens, int *backend) {
  return tps_pred_gemm_us(p, tps_pred_rows_per_rank(p, tokens)) + tps_pred_gather_us(p, tokens, backend);
}

/* ------------------------------------------------------------------ knobs */
void tps_pred_apply_knobs(tps_pred *p) {
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
  if ((p->scaling == TPS_SCALING_PESSIMISTIC || p->gpart) &&
      (s->k != p->shape.k || s->n != p->shape.n || s->out_bytes != p->shape.out_bytes))
    return TPS_EINVAL; /* the rule scales the measured curve of one shape; a part is of one shape */
  p->shape = *s;
  p->out_bytes_per_token = out_bytes_per_token > 0 ? out_bytes_per_token : s->n * s->out_bytes;
  return TPS_OK;
}

int tps_pred_set_knob(tps_pred *p, int knob, double value) {
  if (knob < 0 || knob >= TPS_PK_N || !(value > 0) || !isfinite(value)) return TPS_EINVAL;
  p->knob[knob] = value;
  tps_pred_apply_knobs(p);
  return TPS_OK;
}

int tps_pred_custom_possible(const tps_pred *p) {
  return (tps_gather_is_rule(p->backend) || tps_gather_is_capped(p->backend)) && p->ag0.custom_gbps > 0 && p->ag0.custom_cap_bytes > 0 &&
         p->tp <= p->opts.node_gpus;
}

int tps_pred_knob_used(const tps_pred *p, int knob) {
  if (p->scaling == TPS_SCALING_PESSIMISTIC) return knob == TPS_PK_GEMM_TFLOPS || knob == TPS_PK_AG_TIME;
  if (p->scaling == TPS_SCALING_PARTS) {
    /* a part's time moves as a whole (GEMM: throughput; gather: bandwidth of its backend);
     * the allgather.h/gemm.h models where they stand in keep their own knobs */
    const int fb = tps_gather_fallback(), cb = tps_gather_capped(), rb = tps_gather_rule();
    int nccl_model = !p->apart[fb] && !p->apart[rb];
    int custom_model = !p->apart[cb] && !p->apart[rb];
    switch (knob) {
    case TPS_PK_GEMM_TFLOPS: return 1;
    case TPS_PK_GEMM_FLOOR: case TPS_PK_GEMM_BW: case TPS_PK_GEMM_SHARP: return !p->gpart;
    case TPS_PK_AG_CUSTOM_BW: return p->tp > 1 && tps_pred_custom_possible(p);
    case TPS_PK_AG_FLOOR: return p->tp > 1 && tps_pred_custom_possible(p) && custom_model;
    case TPS_PK_AG_NCCL_BW: return p->tp > 1 && !tps_gather_is_capped(p->backend);
    case TPS_PK_AG_NCCL_LAT: return p->tp > 1 && !tps_gather_is_capped(p->backend) && nccl_model;
    case TPS_PK_AG_INTERNODE: return p->tp > p->opts.node_gpus && nccl_model;
    default: return 0;
    }
  }
  switch (knob) {
  case TPS_PK_GEMM_FLOOR: case TPS_PK_GEMM_BW: case TPS_PK_GEMM_TFLOPS: case TPS_PK_GEMM_SHARP:
    return 1;
  case TPS_PK_AG_FLOOR: case TPS_PK_AG_CUSTOM_BW:
    return p->tp > 1 && tps_pred_custom_possible(p);
  case TPS_PK_AG_NCCL_LAT: case TPS_PK_AG_NCCL_BW:
    return p->tp > 1 && !tps_gather_is_capped(p->backend);
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
  p->gscale = p->ascale = p->gscale_out = 1.0;
  p->gcov_lo = 1, p->gcov_hi = 0;
  p->applicable = 1;
  if (tp < 1 || tp > 64) return TPS_EINVAL;
  if (!tps_gather_get(p->backend)) return TPS_EINVAL;
  if (tp > p->opts.node_gpus && tp % p->opts.node_gpus != 0) /* the reason, not "impossible" (issue 30) */
    return na(p, "TP %d beyond one %d-GPU node must be a multiple of %d (whole nodes: %d, %d, ...)", tp, p->opts.node_gpus,
              p->opts.node_gpus, 2 * p->opts.node_gpus, 3 * p->opts.node_gpus);
  if (!(path->flags & TPS_PATH_F_MODEL)) return na(p, "%s has no model (bench only)", path->name);
  int cc = gpu->cc_major * 10 + gpu->cc_minor;
  if (cc == 0)
    return na(p, "%s is not a CUDA GPU (every kernel path is CUDA kernels)", gpu->name);
  if (path->fp8_peak && !(gpu->fp8_tflops > 0)) return na(p, "%s has no fp8 tensor cores", gpu->name);
  if (path->fp4_peak && !(gpu->fp4_tflops > 0))
    return na(p, "%s has no FP4 tensor cores (%s needs Blackwell)", gpu->name, path->name);
  if (cc < path->min_cc) return na(p, "%s needs compute capability >= %.1f", path->name, path->min_cc / 10.0);
  const char *refused = tps_gather_refuses(p->backend, gpu->nvlink, tp, p->opts.node_gpus);
  if (refused && !gpu->nvlink) return na(p, "%s has no NVLink: no %s one-shot gather", gpu->name, tps_gather_name(p->backend));
  if (refused) return na(p, "%s: the %s one-shot gather does not cross nodes (TP %d)", gpu->name, tps_gather_name(p->backend), tp);
  return TPS_OK;
}

/* System-level gather settings on top of a model for n ranks. */
static void ag_system(tps_ag_model *a, const tps_pred *p, double cap_default) {
  a->ranks = p->tp;
  a->ranks_per_node = p->opts.node_gpus;
  a->internode_gbps = p->opts.ib_gbps / 8.0; /* Gb/s -> GB/s */
  a->internode_lat_us = p->opts.internode_lat_us;
  if (p->gpu.nvlink && a->custom_gbps > 0) {
    a->custom_cap_bytes = p->opts.cap_bytes > 0 ? p->opts.cap_bytes : cap_default > 0 ? cap_default : tps_gather_cap_default();
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
int tps_pred_build_from_fit(tps_pred *p, const tps_fit *f) {
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
  if (tps_pred_build_from_fit(p, fit) != 0) return na(p, "%s cannot be transferred to %s", path->name, gpu->name);
  int same_gpu = strcmp(ref_gpu->name, gpu->name) == 0, same_path = path == fit->gemm.path;
  int sn = fit->ag.ranks > 0 ? fit->ag.ranks : fit->tp;
  p->compute_rsd = same_gpu && same_path ? 0.0 : path->compute_eff_rsd;
  p->stream_rsd = same_gpu && same_path ? 0.0 : path->stream_eff_rsd;
  p->gather_rsd = same_gpu && tp == sn ? 0.0 : TPS_PRED_GATHER_RSD;
  tps_pred_apply_knobs(p);
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
  tps_pred_apply_knobs(p);
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
  if (!tps_gather_is_rule(p->backend)) return na(p, "the pessimistic rule keeps the measured gather (auto)");
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
  p->ag.custom_cap_bytes = d->gather_cap_bytes > 0 ? d->gather_cap_bytes : tps_gather_cap_default();
  p->ag0 = p->ag;
  tps_pred_apply_knobs(p);
  return TPS_OK;
}

int tps_pred_init_parts(tps_pred *p, const tps_gpu *gpu, int tp, const tps_path *path, const tps_pred_parts *pp,
                        const tps_pred_opts *o) {
  int rc = init_common(p, gpu, tp, path, o);
  if (rc != TPS_OK) return rc;
  if (!pp || pp->shape.k < 1 || pp->shape.n < 1 || !(pp->shape.out_bytes > 0)) return TPS_EINVAL;
  p->scaling = TPS_SCALING_PARTS;
  p->ref_gpu = *gpu;
  p->shape = pp->shape;
  p->out_bytes_per_token = pp->out_bytes_per_token > 0 ? pp->out_bytes_per_token : pp->shape.n * pp->shape.out_bytes;
  p->gscale = p->ascale = p->gscale_out = 1.0;
  p->gpart = pp->gemm;
  p->gcov_lo = 1, p->gcov_hi = 0;
  if (p->gpart && p->gpart->meas) p->gcov_lo = tps_mcurve_xlo(p->gpart->meas), p->gcov_hi = tps_mcurve_xhi(p->gpart->meas);
  if (p->gpart && p->gpart->what != TPS_PART_GEMM) return TPS_EINVAL;
  if (p->gpart) {
    /* the gemm.h model stays the spec one (knobs only): the part is the GEMM */
    if (tps_gemm_from_spec(&p->gemm0, path, gpu) != 0) memset(&p->gemm0, 0, sizeof p->gemm0);
  } else {
    if (pp->gemm_model.kind != TPS_GEMM_PARAMETRIC || !pp->gemm_model.path) return TPS_EINVAL;
    p->gemm0 = pp->gemm_model;
  }
  for (int b = 0; b < TPS_NGATHERS; b++) {
    p->apart[b] = pp->gather[b];
    if (p->apart[b] && p->apart[b]->what != TPS_PART_GATHER) return TPS_EINVAL;
  }
  /* one rank with a measured gather: a part for every backend the rule can pick (the custom
   * one-shot runs on one rank too), or none at all (no gather) */
  if (tp == 1 && any_apart(p)) {
    const int fb = tps_gather_fallback(), cb = tps_gather_capped(), rb = tps_gather_rule();
    if (!p->apart[fb] && !p->apart[rb]) p->apart[fb] = p->apart[cb];
  }
  /* the spec gather: the custom cap, the node size, and the backends no part covers */
  tps_ag_from_spec(&p->ag0, gpu, tp);
  ag_system(&p->ag0, p, 0);
  p->compute_rsd = pp->compute_rsd;
  p->compute_rsd_out = pp->compute_rsd_out > 0 ? pp->compute_rsd_out : pp->compute_rsd;
  p->stream_rsd = pp->stream_rsd;
  p->gather_rsd = pp->gather_rsd;
  tps_pred_apply_knobs(p);
  return TPS_OK;
}

void tps_pred_free(tps_pred *p) {
  if (!p) return;
  tps_gemm_curve_free(p->ref_gemm);
  tps_gemm_curve_free(p->ref_gather);
  p->ref_gemm = p->ref_gather = NULL;
}

/* ------------------------------------------------------------------ a context from its parts' sources */
/* The backends that split the T range at the custom cap: the rule, and a capped backend asked (it falls back above
 * its cap or where it cannot run: parts_backend). */
static int split_at_cap(int backend) { return tps_gather_is_rule(backend) || tps_gather_is_capped(backend); }

int tps_pred_backends_used(const int *have, int backend, int tp, int custom_possible, int *b) {
  /* one rank: no gather, unless a one-rank gather was measured */
  int any = 0;
  for (int i = 0; i < TPS_NGATHERS; i++) any |= have[i] != 0;
  if (tp <= 1 && !any) return 0;
  if (tps_gather_is_rule(backend) && have[tps_gather_rule()]) { b[0] = tps_gather_rule(); return 1; }
  if (split_at_cap(backend)) { /* both: each part is resolved, cited and drawn for the T it serves */
    int n = 0;
    if (custom_possible) b[n++] = tps_gather_capped();
    b[n++] = tps_gather_fallback();
    return n;
  }
  b[0] = backend;
  return 1;
}

/* The bytes gathered over the T that backend b serves under the context's rule (NaN: none). */
static void served_bytes(const tps_pred *p, long tmax, int b, double *xlo, double *xhi) {
  long tc = p->tp * (long)floor(p->ag.custom_cap_bytes / p->out_bytes_per_token); /* last T of the custom gather */
  long a = 1, z = tmax;
  if (split_at_cap(p->backend) && !tps_gather_is_rule(b) && p->ag.custom_cap_bytes > 0 && p->tp <= p->opts.node_gpus) {
    if (tps_gather_is_capped(b)) z = tc < tmax ? tc : tmax;
    else a = tc + 1;
  }
  if (a > z) { *xlo = *xhi = NAN; return; }
  *xlo = tps_pred_gathered_bytes(p, a);
  *xhi = tps_pred_gathered_bytes(p, z);
}

/* A refused context: why, which part (-1 the GEMM, else a gather backend) and, for a gather,
 * the bytes the question asks of it (NaN otherwise); p freed. */
static int refuse(tps_pred *p, tps_pred_check *chk, int why, int which, double xlo, double xhi) {
  chk->refusal = why;
  chk->refused = which;
  chk->xlo = xlo;
  chk->xhi = xhi;
  tps_pred_free(p);
  return TPS_EBADDATA;
}

int tps_pred_init_ready(tps_pred *p, tps_partcache *c, const tps_gpu *gpu, int tp, const tps_path *path,
                        const tps_pred_sources *s, const tps_pred_opts *o, tps_pred_check *chk) {
  memset(chk, 0, sizeof *chk);
  memset(p, 0, sizeof *p);
  chk->xlo = chk->xhi = NAN;
  if (tps_partcache_ready(c, s->gemm) != TPS_OK) return refuse(p, chk, TPS_USE_UNBUILT, -1, NAN, NAN);
  for (int b = 0; b < TPS_NGATHERS; b++)
    if (s->gather[b] && tps_partcache_ready(c, s->gather[b]) != TPS_OK) return refuse(p, chk, TPS_USE_UNBUILT, b, NAN, NAN);
  const long tmax = s->tmax;
  tps_pred_parts pp;
  memset(&pp, 0, sizeof pp);
  pp.shape = s->shape;
  pp.out_bytes_per_token = s->out_bytes_per_token;
  pp.gemm = s->gemm;
  pp.compute_rsd_out = tps_part_rsd(s->gemm, 1, (double)tmax); /* the spread where the question leaves the table */
  pp.compute_rsd = s->gemm->meas ? s->gemm->meas_rsd : pp.compute_rsd_out; /* inside its measured rows */
  int have[TPS_NGATHERS];
  for (int b = 0; b < TPS_NGATHERS; b++) {
    pp.gather[b] = s->gather[b];
    have[b] = s->gather[b] != NULL;
  }
  int st = tps_pred_init_parts(p, gpu, tp, path, &pp, o);
  if (st != TPS_OK) return st;
  /* spreads, coverage and the datasheet gather, for what this rule uses */
  const tps_part *g = s->gemm;
  chk->gemm_outside = !g->meas || !tps_part_covers(g, 1, (double)tmax);
  double grsd = 0;
  int bs[TPS_NGATHERS];
  int nb = tps_pred_backends_used(have, p->backend, tp, tps_pred_custom_possible(p), bs);
  for (int i = 0; i < nb; i++) {
    int b = bs[i];
    double xlo, xhi;
    served_bytes(p, tmax, b, &xlo, &xhi);
    if (isnan(xlo)) continue;
    const tps_part *a = s->gather[b];
    if (a) {
      double r = tps_part_rsd(a, xlo, xhi);
      if (r > grsd) grsd = r;
      chk->gather_outside[b] = !a->meas || !tps_part_covers(a, xlo, xhi);
    } else {
      chk->gather_outside[b] = 1;
      chk->spec_gather = 1;
      if (TPS_PRED_GATHER_RSD > grsd) grsd = TPS_PRED_GATHER_RSD;
    }
    if (s->measured_only && !chk->gather_outside[b] && a && s->gather_prov[b] == TPS_PROV_SIBLING)
      return refuse(p, chk, TPS_USE_SIBLING, b, xlo, xhi);
    if (s->measured_only && chk->gather_outside[b]) return refuse(p, chk, TPS_USE_OUTSIDE, b, xlo, xhi);
  }
  p->gather_rsd = grsd;
  if (s->measured_only && !chk->gemm_outside && s->gemm_prov == TPS_PROV_SIBLING) return refuse(p, chk, TPS_USE_SIBLING, -1, NAN, NAN);
  if (s->measured_only && !chk->gemm_outside && s->gemm_prov == TPS_PROV_CONVERTED) return refuse(p, chk, TPS_USE_CONVERTED, -1, NAN, NAN);
  if (s->measured_only && chk->gemm_outside) return refuse(p, chk, TPS_USE_OUTSIDE, -1, NAN, NAN);
  if (g->meas && g->model.kind == TPS_PM_NONE && chk->gemm_outside) return refuse(p, chk, TPS_USE_NOMODEL, -1, NAN, NAN);
  p->gtab = tps_partcache_gathertab(c, p);
  return TPS_OK;
}
