/* xgemm.c: cross-GPU GEMM latency model (equations and units in xgemm.h). */
#include "model/latency/xgemm.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/numeric/robust.h"
#include "model/core/path.h"
#include "model/core/status.h"
#include "model/core/w8plan.h"

const char *const tps_xg_path_names[TPS_XG_NPATH] = {"dense-bf16", "native-fp8", "fp8-block", "nvfp4"};

int tps_xg_quantizes(tps_xg_path path) { return path == TPS_XG_FP8 || path == TPS_XG_FP8BLOCK || path == TPS_XG_NVFP4; }
const char *const tps_xg_par_names[TPS_XG_NPAR] = {
    "floor_us", "stream_eff", "l2_bytes_clk_sm", "sat_frac", "eff_max", "operand_bytes_clk_sm", "tile_us",
    "splitk_us", "streamk_us", "quant_bytes", "floor_bench_us"};

/* Candidate output tiles (rows x columns) and split-K parts. */
static const int tiles[][2] = {{16, 128}, {32, 128}, {64, 64}, {64, 128}, {128, 128}, {128, 256}, {256, 128}};
static const int splits[] = {1, 2, 4, 8};
#define NTILES (int)(sizeof tiles / sizeof tiles[0])
#define NSPLITS (int)(sizeof splits / sizeof splits[0])
#define SPLITK_MIN_K 256

int tps_xg_tiling(int idx, int *tm, int *tn, int *sk) {
  if (idx < 0 || idx >= NTILES * (NSPLITS + 1)) return -1;
  *tm = tiles[idx / (NSPLITS + 1)][0];
  *tn = tiles[idx / (NSPLITS + 1)][1];
  *sk = idx % (NSPLITS + 1) == NSPLITS ? 0 : splits[idx % (NSPLITS + 1)];
  return 0;
}

const tps_path *tps_xg_path_row(tps_xg_path path) {
  for (int i = 0; i < TPS_NPATHS; i++)
    if (tps_paths[i]->model == TPS_PATH_MODEL_XGEMM && tps_paths[i]->xgemm_form == (int)path) return tps_paths[i];
  return NULL;
}

/* Bytes per element: weight, activation (as the GEMM reads it), output. */
static void elem_bytes(tps_xg_path p, double *wb, double *ab, double *ob) {
  const tps_path *row = tps_xg_path_row(p);
  *wb = row ? row->weight_bytes : NAN;
  *ab = row ? row->act_bytes : NAN;
  *ob = 2.0; /* bf16 output */
}

static double peak_of(const tps_gpu *g, tps_xg_path p) {
  return p == TPS_XG_NVFP4 ? g->fp4_tflops : p == TPS_XG_FP8 || p == TPS_XG_FP8BLOCK ? g->fp8_tflops : g->bf16_tflops;
}

int tps_xg_supported(const tps_gpu *gpu, tps_xg_path path) {
  return gpu && gpu->sms > 0 && peak_of(gpu, path) > 0 && gpu->hbm_gbps > 0;
}

/* Priors: the brief's rules of thumb.  floor: >= 2.5 us per cuBLAS GEMM in a graph plus
 * the pipeline fill (4 us); stream_eff 0.875 (skinny GEMMs stream at 85-90% of HBM);
 * eff_max 0.8 (large bf16 GEMMs reach ~80% of peak on Hopper), fp8 0.6 (assumed lower);
 * fp8-block and nvfp4 start from their path rows' compute_eff and floor_us (path.c, from the
 * AIConfigurator tables' large-M and M = 1 rows); the rest are order-of-magnitude starting
 * values for the fit. */
void tps_xg_prior(tps_xg_model *m, tps_xg_path path) {
  memset(m, 0, sizeof *m);
  m->path = path;
  m->sharp = 4.0;
  m->p[TPS_XG_FLOOR_US] = path == TPS_XG_FP8 ? 8.0 : path == TPS_XG_FP8BLOCK ? tps_path_fp8_block.floor_us
                          : path == TPS_XG_NVFP4 ? tps_path_nvfp4.floor_us : 4.0;
  m->p[TPS_XG_STREAM_EFF] = 0.875;
  m->p[TPS_XG_L2_BPC_SM] = 16.0;
  m->p[TPS_XG_SAT_FRAC] = 0.5;
  m->p[TPS_XG_EFF_MAX] = path == TPS_XG_FP8 ? 0.6 : path == TPS_XG_FP8BLOCK ? tps_path_fp8_block.compute_eff
                          : path == TPS_XG_NVFP4 ? tps_path_nvfp4.compute_eff : 0.8;
  m->p[TPS_XG_OPERAND_BPC] = 64.0;
  m->p[TPS_XG_STREAMK_US] = 1.0;
  m->p[TPS_XG_FLOOR_BENCH_US] = m->p[TPS_XG_FLOOR_US];
  m->p[TPS_XG_TILE_US] = 1.0;
  m->p[TPS_XG_SPLITK_US] = 1.0;
  m->p[TPS_XG_QUANT_BYTES] = tps_xg_quantizes(path) ? 5.0 : 0.0;
}

int tps_xg_par_free(tps_xg_path path, int j) {
  if (j < 0 || j >= TPS_XG_NPAR) return 0;
  if (j == TPS_XG_QUANT_BYTES) return tps_xg_quantizes(path);
  return 1;
}

static inline double qnorm(double a, double b, double q) {
  double mx = a > b ? a : b;
  if (!(mx > 0)) return 0.0;
  if (q == 4.0 && mx < INFINITY) {
    /* the larger over itself is exactly 1: one division, the same sum (1 + r^4 = r^4 + 1) */
    double r = a > b ? b / mx : a / mx;
    return mx * sqrt(sqrt(1.0 + r * r * r * r));
  }
  double x = a / mx, y = b / mx;
  if (q == 4.0) return mx * sqrt(sqrt(x * x * x * x + y * y * y * y));
  return mx * pow(pow(x, q) + pow(y, q), 1.0 / q);
}

/* Dense bf16 tensor flop per clock per SM of an architecture (NVIDIA architecture
 * whitepapers: A100 312 TFLOPS = 108 SMs x 1.41 GHz x 2048; H100 SXM 989 = 132 x 1.83 GHz
 * x 4096; L40S 362 = 142 x 2.52 GHz x 1024; B200 x 8192; RTX PRO 6000 503.8 = 188 x 2.617 GHz
 * x 1024).  0 when unknown.  A fact of the architecture (the compute capability), not of one
 * GPU: a new GPU of a known architecture is one row of data/gpus.tsv, no edit here. */
static double flop_per_clk_sm(const tps_gpu *g) {
  int cc = g->cc_major * 10 + g->cc_minor;
  switch (cc) {
    case 80: return 2048;
    case 86: case 87: case 89: return 1024;
    case 90: return 4096;
    case 100: case 103: return 8192;
    case 120: case 121: return 1024;
    default: return 0;
  }
}

double tps_xg_clock_ghz(const tps_gpu *g) {
  double r = flop_per_clk_sm(g);
  if (!(r > 0) || g->sms < 1 || !(g->bf16_tflops > 0)) return NAN;
  return g->bf16_tflops * 1e3 / ((double)g->sms * r);
}

/* Architectures whose vendor GEMMs run persistent kernels with a stream-K tile scheduler
 * (CUTLASS 3 / cuBLASLt SM90 and SM100 kernels): their work need not come in whole waves. */
static int persistent_sched(const tps_gpu *g) {
  int cc = g->cc_major * 10 + g->cc_minor;
  return cc == 90 || cc == 100 || cc == 103;
}

/* What tps_xg_time_us computes before it looks at the rows: the GPU's rates under the
 * model's parameters and each tiling's time per wave (tile + tile_us), which do not depend on
 * M.  A fit evaluates the points of one GPU, N and K in a row: resid() builds this once per
 * such run of points under one set of parameters.  Each value is the same expression as in
 * the one-call form it replaces, so every time is the same, bit for bit. */
typedef struct {
  const tps_gpu *gpu; /* the key (with the model's parameters): GPU, harness kind, N, K */
  int kind;
  long n, k;
  int ok; /* 0: the model answers NaN */
  int quant, prune;
  double N, K, sms, W, bw_e3, sat, floor_us, quant_hbm_e3;
  double nt[NTILES];
  double wave_us[NTILES][NSPLITS + 1]; /* tile + tile_us */
  char tried[NTILES][NSPLITS + 1];     /* 0: stream-K off this architecture, or K too short to split */
  double add_sk[NSPLITS + 1], add_st[NSPLITS + 1];
  double ab, ob;
} xg_fixed;

static void xg_fixed_init(xg_fixed *f, const tps_xg_model *m, const tps_gpu *gpu, const tps_xg_harness *h, long n,
                          long k) {
  f->gpu = gpu;
  f->kind = h ? h->kind : -1;
  f->n = n;
  f->k = k;
  f->ok = m && tps_xg_supported(gpu, m->path) && n >= 1 && k >= 1;
  if (!f->ok) return;
  const double *p = m->p;
  double wb;
  elem_bytes(m->path, &wb, &f->ab, &f->ob);
  double N = (double)n, K = (double)k, sms = (double)gpu->sms;
  f->N = N;
  f->K = K;
  f->sms = sms;
  f->W = K * N * wb;
  double hbm = p[TPS_XG_STREAM_EFF] * gpu->hbm_gbps;
  double bw = hbm;
  double ghz = tps_xg_clock_ghz(gpu);
  if (!isfinite(ghz)) ghz = 1.5;
  if (h && h->kind == TPS_XG_AIC && gpu->l2_mb > 0) {
    double l2 = gpu->l2_mb * 1e6;
    double copies = ceil(l2 / f->W);
    if (copies > 5) copies = 5;
    if (copies < 1) copies = 1;
    if (copies * f->W <= l2) {
      double l2bw = p[TPS_XG_L2_BPC_SM] * sms * ghz; /* B/clk x GHz = GB/s */
      if (l2bw > bw) bw = l2bw;
    }
  }
  f->bw_e3 = bw * 1e3;
  f->sat = p[TPS_XG_SAT_FRAC] * sms;
  double per_sm = peak_of(gpu, m->path) / sms * 1e6 * p[TPS_XG_EFF_MAX]; /* flop per us per SM */
  double feed = p[TPS_XG_OPERAND_BPC] * ghz * 1e3;                          /* operand bytes per us per SM */
  int sk_ok = persistent_sched(gpu);
  for (int t = 0; t < NTILES; t++) {
    double tm = tiles[t][0], tn = tiles[t][1];
    f->nt[t] = ceil(N / tn);
    for (int s = 0; s < NSPLITS + 1; s++) {
      /* s < NSPLITS: split-K in splits[s] parts, whole waves; s == NSPLITS: stream-K */
      int streamk = s == NSPLITS;
      double sk = streamk ? 1 : splits[s];
      f->tried[t][s] = !((streamk && !sk_ok) || (sk > 1 && K / sk < SPLITK_MIN_K));
      if (!f->tried[t][s]) continue;
      double kk = K / sk;
      double tile = 2.0 * tm * tn * kk / per_sm + (tm + tn) * kk * f->ab / feed;
      f->wave_us[t][s] = tile + p[TPS_XG_TILE_US];
    }
  }
  for (int s = 0; s < NSPLITS + 1; s++) {
    int streamk = s == NSPLITS;
    double sk = streamk ? 1 : splits[s];
    f->add_sk[s] = sk > 1 ? p[TPS_XG_SPLITK_US] : 0.0;
    f->add_st[s] = streamk ? p[TPS_XG_STREAMK_US] : 0.0;
  }
  f->quant = tps_xg_quantizes(m->path);
  f->quant_hbm_e3 = hbm * 1e3;
  f->floor_us = h && h->kind == TPS_XG_FLUSHED ? p[TPS_XG_FLOOR_BENCH_US] : p[TPS_XG_FLOOR_US];
  f->prune = m->sharp > 0;
}

static int xg_fixed_same(const xg_fixed *f, const tps_gpu *gpu, const tps_xg_harness *h, long n, long k) {
  return f->gpu == gpu && f->kind == (h ? h->kind : -1) && f->n == n && f->k == k;
}

/* The time of tiling (t, s) at M rows (mt its row tiles), or INFINITY where it cannot beat
 * tbest: not below it, or equal to it with ties lost (a tie goes to the smaller index). */
static inline double xg_cand(const xg_fixed *f, const tps_xg_model *m, int t, int s, double M, double mt,
                             double base_bytes, double tbest, int wins_tie) {
  double N = f->N, sms = f->sms;
  int streamk = s == NSPLITS;
  double sk = streamk ? 1 : splits[s];
  double ctas = mt * f->nt[t] * sk;
  double waves = streamk ? (ctas > sms ? ctas / sms : 1.0) : ceil(ctas / sms);
  double tc = waves * f->wave_us[t][s];
  double add_sk = f->add_sk[s], add_st = f->add_st[s];
  /* a candidate that cannot win is skipped before its stream time and combination: for
   * q > 0, qnorm(ts, tc) >= max(ts, tc) >= tc, and the rounded sums keep that order, so a
   * bound lb = (max + add_sk) + add_st >= tbest means tt >= tbest (bit for bit the answer of
   * trying every candidate) */
  double lb = (tc + add_sk) + add_st;
  if (f->prune && (wins_tie ? lb > tbest : lb >= tbest)) return INFINITY;
  double occ = (streamk ? (ctas > sms ? sms : ctas) : ctas) / f->sat;
  if (occ > 1) occ = 1;
  double bytes = base_bytes + (sk > 1 ? 2.0 * sk * M * N * 4.0 : 0.0);
  double ts = bytes / (f->bw_e3 * occ);
  lb = ((ts > tc ? ts : tc) + add_sk) + add_st;
  if (f->prune && (wins_tie ? lb > tbest : lb >= tbest)) return INFINITY;
  return qnorm(ts, tc, m->sharp) + add_sk + add_st;
}

/* The time at `rows` rows: the best tiling (the first of the smallest time).  hint (-1: none)
 * is tried first, usually the previous point's best: a low bound early lets the others be
 * skipped; the answer does not depend on it. */
static double xg_time_rows(const xg_fixed *f, const tps_xg_model *m, long rows, int hint, int *best) {
  if (best) *best = -1;
  if (!f->ok || rows < 1) return NAN;
  const double *p = m->p;
  double M = (double)rows, K = f->K;
  double base_bytes = f->W + M * K * f->ab + M * f->N * f->ob;
  double mt[NTILES];
  for (int t = 0; t < NTILES; t++) mt[t] = ceil(M / tiles[t][0]);
  double tbest = INFINITY;
  int bidx = -1;
  if (hint >= 0 && hint < NTILES * (NSPLITS + 1) && f->tried[hint / (NSPLITS + 1)][hint % (NSPLITS + 1)]) {
    int t = hint / (NSPLITS + 1), s = hint % (NSPLITS + 1);
    double tt = xg_cand(f, m, t, s, M, mt[t], base_bytes, tbest, 0);
    if (tt < tbest) tbest = tt, bidx = hint;
  }
  for (int t = 0; t < NTILES; t++)
    for (int s = 0; s < NSPLITS + 1; s++) {
      int idx = t * (NSPLITS + 1) + s;
      if (idx == hint || !f->tried[t][s]) continue;
      int wins_tie = bidx >= 0 && idx < bidx;
      double tt = xg_cand(f, m, t, s, M, mt[t], base_bytes, tbest, wins_tie);
      if (tt < tbest || (wins_tie && tt == tbest)) tbest = tt, bidx = idx;
    }
  if (best) *best = bidx;
  double quant = f->quant ? M * K * p[TPS_XG_QUANT_BYTES] / f->quant_hbm_e3 : 0.0;
  return f->floor_us + quant + tbest;
}

double tps_xg_time_us(const tps_xg_model *m, const tps_gpu *gpu, const tps_xg_harness *h, long rows, long n,
                      long k, int *best) {
  if (best) *best = -1;
  if (!m || !tps_xg_supported(gpu, m->path) || rows < 1 || n < 1 || k < 1) return NAN;
  xg_fixed f;
  xg_fixed_init(&f, m, gpu, h, n, k);
  return xg_time_rows(&f, m, rows, -1, best);
}

double tps_xg_time_hint_us(const tps_xg_model *m, const tps_gpu *gpu, const tps_xg_harness *h, long rows, long n, long k,
                           int *hint) {
  int best = -1;
  if (!m || !tps_xg_supported(gpu, m->path) || rows < 1 || n < 1 || k < 1) return NAN;
  xg_fixed f;
  xg_fixed_init(&f, m, gpu, h, n, k);
  double t = xg_time_rows(&f, m, rows, hint ? *hint : -1, &best);
  if (hint && best >= 0) *hint = best;
  return t;
}

void tps_xg_times_us(const tps_xg_model *m, const tps_gpu *gpu, const tps_xg_harness *h, const long *rows, size_t nrows,
                     long n, long k, double *t) {
  int ok = m && tps_xg_supported(gpu, m->path) && n >= 1 && k >= 1;
  xg_fixed f;
  if (ok) xg_fixed_init(&f, m, gpu, h, n, k);
  int hint = -1; /* the previous row's best tiling, tried first (resid() does the same) */
  for (size_t i = 0; i < nrows; i++) t[i] = ok && rows[i] >= 1 ? xg_time_rows(&f, m, rows[i], hint, &hint) : NAN;
}

double tps_xg_bench_floor_spec_us(tps_xg_path path) {
  return TPS_XG_KERNEL_FLOOR_US + (tps_xg_quantizes(path) ? TPS_XG_BENCH_QUANT_NODES * TPS_XG_NODE_US : 0.0);
}

/* ------------------------------------------------------------------ fit */

typedef struct {
  tps_xg_model *m;
  int idx[TPS_XG_NPAR], np;
  const tps_xg_point *pts;
  size_t n;
  double x0[TPS_XG_NPAR]; /* log prior values: a weak pull for parameters the data leave loose */
} fitctx;

/* Weight and log-scale of the prior pull: a parameter e^2 = 7.4x from its prior costs as much
 * as one point of weight PRIOR_W at a 5% residual... (soft-L1: linear beyond). */
#define PRIOR_W 0.02
#define PRIOR_LOGSD 2.0

static void unpack(const fitctx *c, const double *x) {
  for (int j = 0; j < c->np; j++) {
    double v = exp(x[j]);
    int id = c->idx[j];
    if ((id == TPS_XG_STREAM_EFF || id == TPS_XG_EFF_MAX) && v > 1.2) v = 1.2;
    if (id == TPS_XG_SAT_FRAC && v > 1.0) v = 1.0;
    c->m->p[id] = v;
  }
}

static int resid(const double *x, double *r, double *w, void *vctx) {
  fitctx *c = vctx;
  unpack(c, x);
  xg_fixed f;
  int hint = -1; /* the previous point's best tiling, tried first */
  for (size_t i = 0; i < c->n; i++) {
    const tps_xg_point *q = &c->pts[i];
    if (i == 0 || !xg_fixed_same(&f, q->gpu, &q->harness, q->n, q->k))
      xg_fixed_init(&f, c->m, q->gpu, &q->harness, q->n, q->k);
    double t = xg_time_rows(&f, c->m, q->m, hint, &hint);
    r[i] = isfinite(t) && t > 0 ? log(t / q->t_us) : 10.0;
    w[i] = q->weight;
  }
  for (int j = 0; j < c->np; j++) {
    r[c->n + j] = TPS_LOO_LOSS_SCALE * (x[j] - c->x0[j]) / PRIOR_LOGSD;
    w[c->n + j] = PRIOR_W;
  }
  return 0;
}

int tps_xg_fit(tps_xg_model *m, const tps_xg_point *pts, size_t npts, int max_iter, int nstarts) {
  fitctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.pts = pts;
  c.n = npts;
  int flushed = 0;
  for (size_t i = 0; i < npts; i++) if (pts[i].harness.kind == TPS_XG_FLUSHED) flushed = 1;
  for (int j = 0; j < TPS_XG_NPAR; j++)
    if (tps_xg_par_free(m->path, j) && (j != TPS_XG_FLOOR_BENCH_US || flushed)) c.idx[c.np++] = j;
  if (npts < (size_t)c.np + 1) return TPS_ETOOFEW;
  for (size_t i = 0; i < npts; i++)
    if (!(pts[i].t_us > 0) || !tps_xg_supported(pts[i].gpu, m->path)) return TPS_EBADDATA;
  double x[TPS_XG_NPAR];
  tps_xg_model prior;
  tps_xg_prior(&prior, m->path);
  for (int j = 0; j < c.np; j++) {
    x[j] = log(m->p[c.idx[j]] > 0 ? m->p[c.idx[j]] : 1e-3);
    c.x0[j] = log(prior.p[c.idx[j]] > 0 ? prior.p[c.idx[j]] : 1e-3);
  }
  int st = tps_robust_fit(x, c.np, npts + (size_t)c.np, resid, &c, TPS_LOO_LOSS_SCALE, max_iter > 0 ? max_iter : 200, nstarts, NULL);
  unpack(&c, x);
  /* no tpsplit-bench point: that harness's floor (the GEMM kernel's own fixed cost) is not
   * identified: it stays at its prior.  The AIC floor does not stand in: it holds the
   * framework's other ops of the Linear (fp8: 12.5-17.9 us at M = 1 on every AIC GPU) */
  if (!flushed) m->p[TPS_XG_FLOOR_BENCH_US] = tps_xg_bench_floor_spec_us(m->path);
  return st;
}

/* ------------------------------------------------------------------ our W8A16 kernels */

const char *const tps_xw8_par_names[TPS_XW8_NPAR] = {"stream_us", "stream_gbps", "stream_tflops", "launch_us",
                                                     "plan_scale"};

/* Priors: streaming at 85% of HBM (brief: skinny GEMMs 85-90%), mma at 0.3 of the bf16 peak,
 * a 3 us stream launch; the rule's launch times as modelled on the H100 they came from, scaled
 * by this GPU's per-SM bf16 rate against the H100's (989 TFLOPS, 132 SMs); the fit moves them. */
void tps_xw8_prior(tps_xw8_model *m, const tps_gpu *gpu) {
  double hbm = gpu && gpu->hbm_gbps > 0 ? gpu->hbm_gbps : 3000;
  double peak = gpu && gpu->bf16_tflops > 0 ? gpu->bf16_tflops : 500;
  double per_sm = gpu && gpu->bf16_tflops > 0 && gpu->sms > 0 ? (gpu->bf16_tflops / gpu->sms) / (989.0 / 132) : 1.0;
  m->p[TPS_XW8_STREAM_US] = 3.0;
  m->p[TPS_XW8_STREAM_GBPS] = 0.85 * hbm;
  m->p[TPS_XW8_STREAM_TFLOPS] = 0.3 * peak;
  m->p[TPS_XW8_LAUNCH_US] = 0.5;
  m->p[TPS_XW8_PLAN_SCALE] = 1.0 / per_sm;
}

static int w8_geom(const tps_gpu *gpu, long n, long k, tps_w8_geom *g) {
  if (!gpu || gpu->sms < 1 || n < 1 || k < 64 || n > (1L << 30) || k > (1L << 30)) return -1;
  tps_w8_geom_default(g, gpu->sms, (int)n, (int)k);
  return 0;
}

static double w8_time(const tps_xw8_model *m, const tps_w8_geom *g, long rows, int *kind) {
  tps_w8_pick p;
  if (rows < 1 || rows > (1L << 30) || tps_w8_pick_default(g, (int)rows, &p) != 0) return NAN;
  if (kind) *kind = (int)p.kind;
  const double *q = m->p, N = (double)g->n, K = (double)g->k;
  if (p.kind == TPS_W8P_STREAM) {
    double bt = (double)p.bt, L = ceil((double)rows / bt);
    double W = K * N * tps_path_w8a16.weight_bytes;
    double ts = W / (q[TPS_XW8_STREAM_GBPS] * 1e3), tc = 2.0 * bt * N * K / (q[TPS_XW8_STREAM_TFLOPS] * 1e6);
    return L * (q[TPS_XW8_STREAM_US] + qnorm(ts, tc, 4.0));
  }
  double t = q[TPS_XW8_LAUNCH_US] + q[TPS_XW8_PLAN_SCALE] * p.us;
  if (p.head > 0) t += w8_time(m, g, rows - p.head, NULL);
  return t;
}

double tps_xw8_time_us(const tps_xw8_model *m, const tps_gpu *gpu, long rows, long n, long k, int *kind) {
  if (kind) *kind = -1;
  tps_w8_geom g;
  if (!m || w8_geom(gpu, n, k, &g) != 0) return NAN;
  return w8_time(m, &g, rows, kind);
}

static long w8_regime(const tps_w8_geom *g, long rows) {
  tps_w8_pick p;
  if (rows < 1 || tps_w8_pick_default(g, (int)rows, &p) != 0) return -1;
  /* the launches and their waves: the stream kernel's count, or the rule's modelled time
   * (a function of the launch's form and waves alone), to 1/1000 us */
  long own = p.kind == TPS_W8P_STREAM ? (rows + p.bt - 1) / p.bt : (long)llround(p.us * 1000);
  unsigned long h = 1469598103934665603UL;
  const long v[5] = {(long)p.kind, p.bt, p.splits, own, p.head > 0 ? w8_regime(g, rows - p.head) : 0};
  for (int i = 0; i < 5; i++) h = (h ^ (unsigned long)v[i]) * 1099511628211UL;
  return (long)(h >> 2);
}

long tps_xw8_regime(const tps_gpu *gpu, long rows, long n, long k) {
  tps_w8_geom g;
  if (w8_geom(gpu, n, k, &g) != 0) return -1;
  return w8_regime(&g, rows);
}

typedef struct {
  tps_xw8_model *m;
  tps_w8_geom g;
  const long *rows;
  const double *t;
  size_t npts;
  long skip;
  double hbm_gbps;
} w8ctx;

static int w8_resid(const double *x, double *r, double *w, void *vc) {
  w8ctx *c = vc;
  for (int j = 0; j < TPS_XW8_NPAR; j++) c->m->p[j] = exp(x[j]);
  /* weights come from HBM (L2 flushed): no faster than its bandwidth */
  if (c->m->p[TPS_XW8_STREAM_GBPS] > c->hbm_gbps) c->m->p[TPS_XW8_STREAM_GBPS] = c->hbm_gbps;
  for (size_t i = 0; i < c->npts; i++) {
    double t = w8_time(c->m, &c->g, c->rows[i], NULL);
    r[i] = isfinite(t) && t > 0 ? log(t / c->t[i]) : 10.0;
    w[i] = (long)i == c->skip ? 0.0 : 1.0;
  }
  return 0;
}

int tps_xw8_fit(tps_xw8_model *m, const tps_gpu *gpu, long n, long k, const long *rows, const double *t_us,
                size_t npts, long skip) {
  w8ctx c = {m, {0}, rows, t_us, npts, skip, 0};
  if (w8_geom(gpu, n, k, &c.g) != 0) return TPS_EBADDATA;
  c.hbm_gbps = gpu->hbm_gbps;
  size_t used = 0, nstream = 0, nother = 0;
  for (size_t i = 0; i < npts; i++) {
    if ((long)i == skip) continue;
    if (!(t_us[i] > 0) || rows[i] < 1 || rows[i] > (1L << 30)) return TPS_EBADDATA;
    used++;
    tps_w8_pick p;
    if (tps_w8_pick_default(&c.g, (int)rows[i], &p) != 0) return TPS_EBADDATA;
    if (p.kind == TPS_W8P_STREAM) nstream++; else nother++;
  }
  if (used < TPS_XW8_NPAR + 1 || nstream < 3 || nother < 2) return TPS_ETOOFEW;
  tps_xw8_prior(m, gpu);
  double x[TPS_XW8_NPAR];
  for (int j = 0; j < TPS_XW8_NPAR; j++) x[j] = log(m->p[j]);
  int st = tps_robust_fit(x, TPS_XW8_NPAR, npts, w8_resid, &c, TPS_LOO_LOSS_SCALE, 200, 2, NULL);
  for (int j = 0; j < TPS_XW8_NPAR; j++) m->p[j] = exp(x[j]);
  if (m->p[TPS_XW8_STREAM_GBPS] > gpu->hbm_gbps) m->p[TPS_XW8_STREAM_GBPS] = gpu->hbm_gbps;
  return st;
}
