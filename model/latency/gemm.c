/* gemm.c: GEMM latency model (see gemm.h for the equations and units). */
#include "model/latency/gemm.h"
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_errno.h>

const char *const tps_gemm_par_names[TPS_GEMM_NPAR] = {"floor_us", "bw_gbps", "tflops",
                                                       "sharp", "launch_us", "reduce_us"};

struct tps_gemm_curve {
  size_t n;
  double *x, *y;           /* log m, log t */
  gsl_interp *interp;
  gsl_interp_accel *acc;
};

/* Iterator over the launches of a GEMM of m rows (vLLM marlin host loop for sliced paths:
 * blocks of rt rows, slices of sb blocks, at most max_par slices per launch; pad = rows of
 * padding in the last block).  Output-tiled paths: one launch of the padded rows. */
typedef struct { long rt, sb, max_par, blocks, pad, i; int sliced; } launch_it;

static void launch_begin(launch_it *it, const tps_path *path, long m) {
  it->rt = path->row_tile > 0 ? path->row_tile : 1;
  it->blocks = (m + it->rt - 1) / it->rt;
  it->pad = it->blocks * it->rt - m;
  it->sliced = path->slice_rows > 0;
  it->sb = it->sliced && path->slice_rows / it->rt > 0 ? path->slice_rows / it->rt : 1;
  it->max_par = path->max_par > 0 ? path->max_par : 1;
  it->i = 0;
}

/* Next launch: rows (padded) and par (slices). 0 when done. */
static int launch_next(launch_it *it, long *rows, long *par) {
  if (it->i >= it->blocks) return 0;
  if (!it->sliced) { *rows = it->blocks * it->rt; *par = 1; it->i = it->blocks; return 1; }
  long b = it->blocks - it->i, p = 1;
  if (b > it->sb) {
    p = (it->rt * b - it->pad) / (it->rt * it->sb);
    if (p > it->max_par) p = it->max_par;
    if (p < 1) p = 1;
    it->i += it->sb * (p - 1);
    b = it->sb;
  }
  it->i += it->sb;
  *rows = b * it->rt * p;
  *par = p;
  return 1;
}

long tps_gemm_launches(const tps_path *path, long m, long *rows, long *par, long cap) {
  if (!path || m < 1) return 0;
  launch_it it;
  long r, p, nl = 0;
  launch_begin(&it, path, m);
  while (launch_next(&it, &r, &p)) {
    if (nl < cap) { rows[nl] = r; par[nl] = p; }
    nl++;
  }
  return nl;
}

/* The launch model; *fixed_us (may be NULL) gets the part of it that moves with neither HBM
 * nor the tensor rate: floor + per launch (launch + serial reduction). */
static double parametric_us(const tps_gemm_model *g, const tps_gemm_shape *s, long m, double *fixed_us) {
  const tps_path *p = g->path;
  double K = (double)s->k, N = (double)s->n;
  double floor_us = g->p[TPS_GP_FLOOR_US], bw = g->p[TPS_GP_BW_GBPS], tf = g->p[TPS_GP_TFLOPS];
  double q = g->p[TPS_GP_SHARP], launch_us = g->p[TPS_GP_LAUNCH_US], red_us = g->p[TPS_GP_REDUCE_US];
  if (!(bw > 0) || !(tf > 0) || !(q >= 1) || g->sms < 1 || !(floor_us >= 0) || !(launch_us >= 0) ||
      !(red_us >= 0) || K < 1 || N < 1 || !(s->out_bytes > 0))
    return NAN;
  double ct = p->col_tile > 0 ? p->col_tile : N;
  double ntiles = ceil(N / ct);
  double wbytes = K * N * p->weight_bytes;
  double per_row_us = 2.0 * K * N / (tf * 1e6);
  launch_it it;
  long rl, pl;
  double t = floor_us, fx = floor_us;
  launch_begin(&it, p, m);
  while (launch_next(&it, &rl, &pl)) {
    double R = (double)rl, P = (double)pl;
    double waves = 1.0;
    double red = 0.0;
    if (p->slice_rows > 0) {
      double blk = R / P / p->row_tile;            /* 16-row blocks per slice */
      double splits = g->sms / (P * ntiles);       /* blocks summing one column tile */
      if (splits > 1) red = red_us * blk * (splits - 1.0);
    } else {
      /* fewer output tiles than SMs: split K (at most K/256 ways) to fill the SMs */
      double tiles = (R / p->row_tile) * ntiles;
      double splitk = floor(g->sms / tiles), kmax = floor(K / TPS_GEMM_SPLITK_MIN_K);
      if (splitk > kmax) splitk = kmax;
      if (splitk < 1) splitk = 1;
      tiles *= splitk;
      waves = ceil(tiles / g->sms) * g->sms / tiles;
    }
    double ts = (wbytes + R * K * p->act_bytes + R * N * s->out_bytes) / (bw * 1e3);
    double tc = R * per_row_us * waves;
    /* q-norm, scaled to avoid overflow of pow for large q */
    double mx = ts > tc ? ts : tc;
    double comb = mx * pow(pow(ts / mx, q) + pow(tc / mx, q), 1.0 / q);
    t += launch_us + comb + red;
    fx += launch_us + red;
  }
  if (fixed_us) *fixed_us = fx;
  return t;
}

static double curve_us(const tps_gemm_curve *c, long m) {
  double x = log((double)m);
  if (x < c->x[0]) {
    /* below the first point: time no lower than the first point (a floor). */
    return exp(c->y[0]);
  }
  if (x > c->x[c->n - 1]) {
    /* above: linear in m from the last two points (compute-bound regime). */
    double m1 = exp(c->x[c->n - 2]), m2 = exp(c->x[c->n - 1]);
    double t1 = exp(c->y[c->n - 2]), t2 = exp(c->y[c->n - 1]);
    double slope = (t2 - t1) / (m2 - m1);
    return t2 + slope * ((double)m - m2);
  }
  return exp(gsl_interp_eval(c->interp, c->x, c->y, x, c->acc));
}

double tps_gemm_time_us(const tps_gemm_model *g, const tps_gemm_shape *s, long m) {
  if (!g || m < 1) return NAN;
  if (g->kind == TPS_GEMM_CURVE) return g->curve ? curve_us(g->curve, m) : NAN;
  if (!g->path || !s) return NAN;
  return parametric_us(g, s, m, NULL);
}

double tps_gemm_fixed_us(const tps_gemm_model *g, const tps_gemm_shape *s, long m) {
  double fx = NAN;
  if (!g || m < 1 || g->kind != TPS_GEMM_PARAMETRIC || !g->path || !s) return NAN;
  return isfinite(parametric_us(g, s, m, &fx)) ? fx : NAN;
}

/* The running maximum of the launch model over 1..m (see gemm.h).  The model depends on m
 * only through its launch list; inside a run of m with the same full launches it grows with
 * the rows of the last one, so the maximum over 1..m is at m itself or at the ends of the
 * earlier runs: for sliced paths m' = 64j (no remainder launch) and 64j + 63 (the largest
 * remainder), for output-tiled paths the padded row counts below m. */
double tps_gemm_time_env_us(const tps_gemm_model *g, const tps_gemm_shape *s, long m) {
  double t = tps_gemm_time_us(g, s, m);
  if (!g || g->kind != TPS_GEMM_PARAMETRIC || !g->path || !isfinite(t)) return t;
  const tps_path *p = g->path;
  long step = p->slice_rows > 0 ? p->slice_rows : (p->row_tile > 0 ? p->row_tile : 1);
  for (long e = step; e < m; e += step) {
    double a = tps_gemm_time_us(g, s, e);
    if (a > t) t = a;
    if (p->slice_rows > 0 && e + step - 1 < m) {
      double b = tps_gemm_time_us(g, s, e + step - 1);
      if (b > t) t = b;
    }
  }
  if (p->slice_rows > 0 && step - 1 < m) {
    double b = tps_gemm_time_us(g, s, step - 1);
    if (b > t) t = b;
  }
  return t;
}

size_t tps_gemm_envelope(double *t, size_t n) {
  size_t raised = 0;
  for (size_t i = 1; i < n; i++)
    if (t[i] < t[i - 1]) { t[i] = t[i - 1]; raised++; }
  return raised;
}

double tps_gemm_peak_tflops(const tps_gpu *gpu, const tps_path *path) {
  return tps_path_peak_tflops(path, gpu);
}

int tps_gemm_from_spec(tps_gemm_model *g, const tps_path *path, const tps_gpu *gpu) {
  int cc = gpu->cc_major * 10 + gpu->cc_minor;
  double peak = tps_gemm_peak_tflops(gpu, path);
  if (cc < path->min_cc || !(peak > 0) || !(gpu->hbm_gbps > 0) || gpu->sms < 1) return -1;
  g->kind = TPS_GEMM_PARAMETRIC;
  g->path = path;
  g->sms = gpu->sms;
  g->curve = NULL;
  g->p[TPS_GP_FLOOR_US] = path->floor_us;
  g->p[TPS_GP_BW_GBPS] = gpu->hbm_gbps * path->stream_eff;
  g->p[TPS_GP_TFLOPS] = peak * path->compute_eff;
  g->p[TPS_GP_SHARP] = TPS_GEMM_DEFAULT_SHARP;
  g->p[TPS_GP_LAUNCH_US] = 0.0; /* the path's prior floor covers the one launch */
  g->p[TPS_GP_REDUCE_US] = path->reduce_us;
  return 0;
}

int tps_gemm_transfer(tps_gemm_model *dst, const tps_gemm_model *src, const tps_gpu *src_gpu,
                      const tps_gpu *dst_gpu, const tps_path *dst_path) {
  if (src->kind != TPS_GEMM_PARAMETRIC || !src->path) return -1;
  if (!dst_path) dst_path = src->path;
  int cc = dst_gpu->cc_major * 10 + dst_gpu->cc_minor;
  double src_peak = tps_gemm_peak_tflops(src_gpu, src->path), dst_peak = tps_gemm_peak_tflops(dst_gpu, dst_path);
  if (cc < dst_path->min_cc || !(src_peak > 0) || !(dst_peak > 0) || !(src_gpu->hbm_gbps > 0) ||
      !(dst_gpu->hbm_gbps > 0))
    return -1;
  *dst = *src;
  dst->path = dst_path;
  dst->sms = dst_gpu->sms;
  /* The measured efficiency (fraction of peak) carries over within a path; across paths the
   * prior efficiencies' ratio adjusts it. */
  double eff_ratio = dst_path->compute_eff / src->path->compute_eff;
  double stream_ratio = dst_path->stream_eff / src->path->stream_eff;
  dst->p[TPS_GP_TFLOPS] = src->p[TPS_GP_TFLOPS] * (dst_peak / src_peak) * eff_ratio;
  dst->p[TPS_GP_BW_GBPS] = src->p[TPS_GP_BW_GBPS] * (dst_gpu->hbm_gbps / src_gpu->hbm_gbps) * stream_ratio;
  if (dst_path != src->path) {
    if (src->path->floor_us > 0)
      dst->p[TPS_GP_FLOOR_US] = src->p[TPS_GP_FLOOR_US] * dst_path->floor_us / src->path->floor_us;
    dst->p[TPS_GP_REDUCE_US] = dst_path->reduce_us;
  }
  return 0;
}

tps_gemm_curve *tps_gemm_curve_alloc(const long *m, const double *t_us, size_t n) {
  if (n < 2) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (m[i] < 1 || !(t_us[i] > 0) || !isfinite(t_us[i])) return NULL;
    if (i && m[i] <= m[i - 1]) return NULL;
  }
  tps_gemm_curve *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->n = n;
  c->x = malloc(n * sizeof *c->x);
  c->y = malloc(n * sizeof *c->y);
  const gsl_interp_type *type = n >= 3 ? gsl_interp_steffen : gsl_interp_linear;
  c->interp = gsl_interp_alloc(type, n);
  c->acc = gsl_interp_accel_alloc();
  if (!c->x || !c->y || !c->interp || !c->acc) { tps_gemm_curve_free(c); return NULL; }
  for (size_t i = 0; i < n; i++) { c->x[i] = log((double)m[i]); c->y[i] = log(t_us[i]); }
  if (gsl_interp_init(c->interp, c->x, c->y, n) != GSL_SUCCESS) { tps_gemm_curve_free(c); return NULL; }
  return c;
}

void tps_gemm_curve_free(tps_gemm_curve *c) {
  if (!c) return;
  if (c->interp) gsl_interp_free(c->interp);
  if (c->acc) gsl_interp_accel_free(c->acc);
  free(c->x); free(c->y); free(c);
}
