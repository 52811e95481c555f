/* parts.c: measured curves, the models behind them, and their evaluation (see parts.h). */
#include "model/predict/parts.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include "model/predict/pred_impl.h"
#include "model/predict/crossover.h"
#include "model/numeric/robust.h"

const char *const tps_prov_names[TPS_PROV_N] = {"measured", "converted", "fitted", "sibling", "transferred", "spec-only"};
const char tps_prov_letters[TPS_PROV_N + 1] = "mcfbts";

char tps_prov_letter(const char *name) {
  if (!name) return '?';
  if (!strcmp(name, "none")) return '-';
  for (int i = 0; i < TPS_PROV_N; i++)
    if (!strcmp(name, tps_prov_names[i])) return tps_prov_letters[i];
  return '?';
}

int tps_prov_is_own_measurement(int prov) { return prov == TPS_PROV_MEASURED || prov == TPS_PROV_CONVERTED; }

/* ------------------------------------------------------------------ measured curves */
struct tps_mcurve {
  size_t n;
  double *lx, *ly;     /* log x, log t */
  gsl_interp *interp;  /* evaluated without an accelerator: shared by threads */
  double twin_spread;  /* largest half |log ratio| of a merged M, M+1 pair (0: none) */
  double xlo, xhi;     /* exp of the ends of lx (asked per evaluation: once here) */
  double *ey;          /* exp(ly) */
};

tps_mcurve *tps_mcurve_alloc(const double *x, const double *t, size_t n) {
  if (!x || !t || n < 2) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (!(x[i] > 0) || !isfinite(x[i]) || !(t[i] > 0) || !isfinite(t[i])) return NULL;
    if (i && !(x[i] > x[i - 1])) return NULL;
  }
  tps_mcurve *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->lx = malloc(n * sizeof *c->lx);
  c->ly = malloc(n * sizeof *c->ly);
  c->ey = malloc(n * sizeof *c->ey);
  if (!c->lx || !c->ly || !c->ey) { tps_mcurve_free(c); return NULL; }
  /* twins as one point where the second is the faster (model/numeric/robust.h) */
  size_t k = tps_twins_merge(x, t, n, c->lx, c->ly, &c->twin_spread);
  for (size_t i = 0; i < k; i++) { c->lx[i] = log(c->lx[i]); c->ly[i] = log(c->ly[i]); c->ey[i] = exp(c->ly[i]); }
  c->n = k;
  c->xlo = k ? exp(c->lx[0]) : NAN;
  c->xhi = k ? exp(c->lx[k - 1]) : NAN;
  c->interp = gsl_interp_alloc(k >= 3 ? gsl_interp_steffen : gsl_interp_linear, k);
  if (!c->interp || gsl_interp_init(c->interp, c->lx, c->ly, k) != GSL_SUCCESS) { tps_mcurve_free(c); return NULL; }
  return c;
}

double tps_mcurve_twin_spread(const tps_mcurve *c) { return c ? c->twin_spread : 0; }

void tps_mcurve_free(tps_mcurve *c) {
  if (!c) return;
  if (c->interp) gsl_interp_free(c->interp);
  free(c->lx);
  free(c->ly);
  free(c->ey);
  free(c);
}

double tps_mcurve_xlo(const tps_mcurve *c) { return c ? c->xlo : NAN; }
double tps_mcurve_xhi(const tps_mcurve *c) { return c ? c->xhi : NAN; }
size_t tps_mcurve_n(const tps_mcurve *c) { return c ? c->n : 0; }

double tps_mcurve_max(const tps_mcurve *c, double xa, double xb) {
  double m = 0;
  if (!c || !(xa > 0) || !(xb >= xa)) return 0;
  double la = log(xa), lb = log(xb);
  for (size_t i = 0; i < c->n; i++)
    if (c->lx[i] >= la && c->lx[i] <= lb && c->ey[i] > m) m = c->ey[i];
  return m;
}

double tps_mcurve_eval_clamped(const tps_mcurve *c, double x) {
  if (!c || !(x > 0)) return NAN;
  const double lo = c->xlo, hi = c->xhi;
  return tps_mcurve_eval(c, x < lo ? lo : x > hi ? hi : x);
}

double tps_mcurve_eval(const tps_mcurve *c, double x) {
  if (!c || !(x > 0)) return NAN;
  double lx = log(x);
  /* the ends exactly (exp(log(x)) may miss them by an ulp) */
  const double eps = 1e-12;
  if (lx < c->lx[0] - eps || lx > c->lx[c->n - 1] + eps) return NAN;
  if (lx <= c->lx[0]) return c->ey[0];
  if (lx >= c->lx[c->n - 1]) return c->ey[c->n - 1];
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
  case TPS_PM_GEMM: return tps_gemm_time_env_us(&m->gm, &m->shape, (long)ceil(x)); /* more rows never faster */
  case TPS_PM_XGATHER:
    return tps_xga_time_us(&m->xa, &m->gpu, x, ranks, tps_xga_term(m->backend), NULL);
  case TPS_PM_AG: return tps_ag_time_us(&m->ag, x, ranks, m->backend, NULL, NULL);
  default: return NAN;
  }
}

/* ------------------------------------------------------------------ parts */
/* The model's value at m rows as the shape between measured points uses it: exact for gemm.h
 * models (their running maximum is tabulated in one pass) and up to SHAPE_DENSE rows; above,
 * linear in m between the multiples of SHAPE_STEP (the smallest row tile of every path: a
 * model call per 16 rows instead of per row; the shape between two measurements hundreds of
 * rows apart is its bends, not each row).  cache (may be NULL): the last two nodes. */
/* On (issue 27 item 8); -DTPS_PART_MODEL_SHAPE=0 builds the log-log interpolation of the raw
 * rows (doc/fitting.md: measured both ways). */
#ifndef TPS_PART_MODEL_SHAPE
#define TPS_PART_MODEL_SHAPE 1
#endif
#define SHAPE_DENSE 256
#define SHAPE_STEP 16
typedef struct { long a, b; double va, vb; } node_cache;
static double model_node(const tps_part *p, long m, node_cache *nc) {
  if (p->model.kind == TPS_PM_GEMM || m <= SHAPE_DENSE || m % SHAPE_STEP == 0) return tps_part_model_eval(&p->model, (double)m, p->ranks);
  long a = m / SHAPE_STEP * SHAPE_STEP, b = a + SHAPE_STEP;
  node_cache local = {0, 0, 0, 0};
  if (!nc) nc = &local;
  if (nc->a != a) {
    if (nc->b == a) { nc->va = nc->vb; } else nc->va = tps_part_model_eval(&p->model, (double)a, p->ranks);
    nc->a = a;
    nc->b = 0;
  }
  if (nc->b != b) { nc->vb = tps_part_model_eval(&p->model, (double)b, p->ranks); nc->b = b; }
  return nc->va + (nc->vb - nc->va) * (double)(m - a) / SHAPE_STEP;
}

/* model_node at every m of [m0, m1] into v[m - m0] (NULL: out of memory): a cross-GPU model's
 * nodes (the rows up to SHAPE_DENSE, the multiples of SHAPE_STEP around the rest) in one pass
 * (tps_xg_times_us), then the same interpolation. */
static double *model_nodes(const tps_part *p, long m0, long m1) {
  const tps_part_model *pm = &p->model;
  long d1 = m1 < SHAPE_DENSE ? m1 : SHAPE_DENSE, nd = d1 >= m0 ? d1 - m0 + 1 : 0;
  long j0 = m0 / SHAPE_STEP, j1 = m1 / SHAPE_STEP + 1, ns = j1 - j0 + 1;
  double *v = malloc((size_t)(m1 - m0 + 1) * sizeof *v), *w = malloc((size_t)(nd + ns) * sizeof *w);
  long *rows = malloc((size_t)(nd + ns) * sizeof *rows);
  if (!v || !w || !rows) { free(v); free(w); free(rows); return NULL; }
  for (long i = 0; i < nd; i++) rows[i] = m0 + i;
  for (long j = 0; j < ns; j++) rows[nd + j] = (j0 + j) * SHAPE_STEP;
  if (pm->kind == TPS_PM_XGEMM) tps_xg_times_us(&pm->xg, &pm->gpu, &pm->harness, rows, (size_t)(nd + ns), pm->n, pm->k, w);
  else for (long i = 0; i < nd + ns; i++) w[i] = rows[i] >= 1 ? tps_part_model_eval(pm, (double)rows[i], p->ranks) : NAN;
  for (long m = m0; m <= m1; m++) {
    if (m <= SHAPE_DENSE) { v[m - m0] = w[m - m0]; continue; }
    long a = m / SHAPE_STEP; /* m > SHAPE_DENSE >= m0's dense rows: a, a + 1 in j0..j1 */
    double va = w[nd + a - j0], vb = w[nd + a + 1 - j0];
    v[m - m0] = m % SHAPE_STEP == 0 ? va : va + (vb - va) * (double)(m - a * SHAPE_STEP) / SHAPE_STEP;
  }
  free(w);
  free(rows);
  return v;
}

/* The model's shape between two measured GEMM points (see parts.h): the model at x times the
 * measured/model ratio interpolated in log M between the neighbours, kept between their two
 * times; model_x its value at x (NaN: Steffen's).  *seg (may be NULL): where the search for
 * the neighbours starts, and where they were (a pass over increasing x walks, not bisects). */
static double shaped(const tps_part *p, double x, double model_x, size_t *seg) {
  const tps_mcurve *c = p->meas;
  double lx = log(x);
  if (!p->lr || !(model_x > 0) || !isfinite(model_x)) return tps_mcurve_eval(c, x);
  if (lx <= c->lx[0]) return c->ey[0];
  if (lx >= c->lx[c->n - 1]) return c->ey[c->n - 1];
  size_t lo = 0, hi = c->n - 1; /* c->lx[lo] <= lx < c->lx[hi] */
  if (seg && *seg < c->n - 1 && c->lx[*seg] <= lx) {
    for (lo = *seg; lo + 1 < c->n - 1 && c->lx[lo + 1] <= lx; lo++) {}
    hi = lo + 1;
  }
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (c->lx[mid] <= lx) lo = mid; else hi = mid;
  }
  if (seg) *seg = lo;
  if (lx == c->lx[lo]) return c->ey[lo];
  double w = (lx - c->lx[lo]) / (c->lx[hi] - c->lx[lo]);
  double v = model_x * exp(p->lr[lo] + w * (p->lr[hi] - p->lr[lo]));
  double a = c->ey[lo], b = c->ey[hi], mn = a < b ? a : b, mx = a < b ? b : a;
  return v < mn ? mn : v > mx ? mx : v;
}

int tps_part_finish(tps_part *p) {
  p->anchor_lo = p->anchor_hi = 1.0;
  free(p->lr);
  p->lr = NULL;
  if (!p->meas || p->model.kind == TPS_PM_NONE) return TPS_OK;
  if (p->meas->twin_spread > p->meas_rsd) p->meas_rsd = p->meas->twin_spread;
  /* not the shape of a sliced path's model (Marlin: a step per 16-row block and per launch,
   * whose ratio to the measured points would saw-tooth between them): its measured points (the
   * H20 table, moved or not) keep Steffen's monotone curve */
  int shape = TPS_PART_MODEL_SHAPE && !(p->model.kind == TPS_PM_GEMM && p->model.gm.path && p->model.gm.path->slice_rows > 0);
  if (p->what == TPS_PART_GEMM && shape && p->meas->n >= 2 && (p->lr = malloc(p->meas->n * sizeof *p->lr))) {
    for (size_t i = 0; i < p->meas->n && p->lr; i++) {
      double mv = tps_part_model_eval(&p->model, exp(p->meas->lx[i]), p->ranks);
      if (mv > 0 && isfinite(mv)) p->lr[i] = p->meas->ly[i] - log(mv);
      else { free(p->lr); p->lr = NULL; }
    }
  }
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
      return p->lr ? shaped(p, x, model_node(p, (long)ceil(x), NULL), NULL) : tps_mcurve_eval(p->meas, x);
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

/* A gemm.h model on 1..tmax through the launch structure of the token grid (crossover.c) (a model call per
 * distinct launch instead of per m: Marlin's model costs ~1.4 us a call); 0 when done.  shared: the
 * path's structure, when built for this path and tmax (else built here). */
static int tabulate_gemm_model(const tps_part *p, long tmax, double *t, const tps_gemmgrid *shared) {
  tps_pred q;
  memset(&q, 0, sizeof q);
  q.scaling = TPS_SCALING_MODEL;
  q.applicable = 1;
  q.tp = 1;
  q.gemm = q.gemm0 = p->model.gm;
  q.shape = p->model.shape;
  q.gscale = q.ascale = 1.0;
  for (int i = 0; i < TPS_PK_N; i++) q.knob[i] = 1.0;
  tps_gemmgrid *own = NULL;
  if (!shared || shared->tmax != tmax || shared->path != q.gemm.path) {
    if (!(own = tps_gemmgrid_build(&q, tmax))) return -1;
    shared = own;
  }
  double *L = malloc((TPS_GEMMGRID_SLOTS / 2) * sizeof *L);
  if (L) tps_gemmgrid_sums(shared, &q, L, t);
  free(L);
  tps_gemmgrid_free(own);
  return L ? 0 : -1;
}

int tps_part_fill(const tps_part *p, long tmax, double *t, int *mono_out) { return tps_part_fill_on(p, tmax, t, mono_out, NULL); }

int tps_part_fill_on(const tps_part *p, long tmax, double *t, int *mono_out, const tps_gemmgrid *launches) {
  if (p->what != TPS_PART_GEMM || tmax < 1) return TPS_EINVAL;
  double *mt = NULL;
  t[0] = NAN;
  /* a gemm.h model: its launch sums through the grid structure, then the running maximum
   * (tps_gemm_time_env_us, on the table in one pass) */
  if (p->model.kind == TPS_PM_GEMM && p->model.gm.kind == TPS_GEMM_PARAMETRIC && p->model.gm.path) {
    mt = malloc((size_t)(tmax + 1) * sizeof *mt);
    if (mt && tabulate_gemm_model(p, tmax, mt, launches) == 0) tps_gemm_envelope(mt + 1, (size_t)tmax);
    else { free(mt); mt = NULL; }
  }
  int mono = 1;
  node_cache nc = {0, 0, 0, 0};
  size_t seg = 0;
  /* tps_part_covers(p, x, x) */
  const double clo = p->meas ? tps_mcurve_xlo(p->meas) : NAN, chi = p->meas ? tps_mcurve_xhi(p->meas) : NAN;
  /* the model's nodes over the covered rows (a few more at the ends), in one pass */
  long m0 = 1, m1 = 0;
  double *mv = NULL;
  if (p->meas && p->lr && !mt && p->model.kind != TPS_PM_GEMM) {
    m0 = clo * (1 - 1e-12) > 2 ? (long)floor(clo * (1 - 1e-12)) : 1;
    m1 = chi * (1 + 1e-12) < (double)tmax ? (long)ceil(chi * (1 + 1e-12)) : tmax;
    if (m1 >= m0) mv = model_nodes(p, m0, m1);
  }
  for (long m = 1; m <= tmax; m++) {
    double x = (double)m;
    if (p->meas && x >= clo * (1 - 1e-12) && x <= chi * (1 + 1e-12))
      t[m] = !p->lr ? tps_mcurve_eval(p->meas, x)
                    : shaped(p, x, mt ? mt[m] : mv && m >= m0 && m <= m1 ? mv[m - m0] : model_node(p, m, &nc), &seg);
    else if (mt) t[m] = mt[m] * (!p->meas ? 1.0 : x < clo ? p->anchor_lo : p->anchor_hi);
    else t[m] = tps_part_eval(p, x, NULL);
    if (!(t[m] > 0) || !isfinite(t[m])) { free(mt); free(mv); return TPS_EINVAL; }
    if (m > 1 && t[m] < t[m - 1]) mono = 0;
  }
  free(mt);
  free(mv);
  if (mono_out) *mono_out = mono;
  return TPS_OK;
}

int tps_part_tabulate(tps_part *p, long tmax) { return tps_part_tabulate_on(p, tmax, NULL); }

int tps_part_tabulate_on(tps_part *p, long tmax, const tps_gemmgrid *launches) {
  if (p->what != TPS_PART_GEMM || tmax < 1) return TPS_EINVAL;
  if (p->tab && p->ntab >= tmax) return TPS_OK;
  double *t = malloc((size_t)(tmax + 1) * sizeof *t);
  if (!t) return TPS_ENOMEM;
  int mono = 1, rc = tps_part_fill_on(p, tmax, t, &mono, launches);
  if (rc != TPS_OK) { free(t); return rc; }
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
  free(p->px);
  free(p->pt);
  p->px = p->pt = NULL;
  p->pn = 0;
  tps_mcurve_free(p->meas);
  free(p->tab);
  free(p->lr);
  p->lr = NULL;
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
  dst->p[TPS_XW8_PLAN_SCALE] /= per_sm; /* the rule's launch times: per-SM compute */
}

/* ------------------------------------------------------------------ built once */
int tps_part_build(tps_part *p, long tmax) {
  if (p->built) return p->built > 0 ? TPS_OK : TPS_EBADDATA;
  if (p->px) {
    p->meas = tps_mcurve_alloc(p->px, p->pt, p->pn);
    free(p->px);
    free(p->pt);
    p->px = p->pt = NULL;
    p->pn = 0;
    if (!p->meas) {
      p->built = -1;
      p->fail = TPS_PART_FAIL_CURVE;
      return TPS_EBADDATA;
    }
    if (p->anchor && tps_part_finish(p) != TPS_OK) {
      p->model.kind = TPS_PM_NONE;
      p->model_dropped = 1;
    }
  }
  /* a GEMM part answers both ends of the question (a grid's cells share its table of
   * 1..tmax; a single context evaluates it directly) */
  if (p->what == TPS_PART_GEMM && (!(tps_part_eval(p, 1, NULL) > 0) || !(tps_part_eval(p, (double)tmax, NULL) > 0))) {
    p->built = -1;
    p->fail = TPS_PART_FAIL_RANGE;
    return TPS_EBADDATA;
  }
  p->built = 1;
  return TPS_OK;
}

/* One cache per run: the lock guards every part's built and tab_state, the launch structures
 * and the gather tables; a table is made outside the lock by the thread that claimed it
 * (state 1), the others waiting on cond. */
typedef struct {
  struct tps_gathertab *t;
  int state; /* 0 not made, 1 being made, 2 made */
} gtab_slot;

struct tps_partcache {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  long tmax;
  int tables;
  const tps_path *lpath[16];
  struct tps_gemmgrid *lgrid[16];
  int nlaunch;
  gtab_slot **gtab;
  size_t ngtab, capgtab;
};

tps_partcache *tps_partcache_alloc(long tmax) {
  tps_partcache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->cond, NULL);
  c->tmax = tmax;
  return c;
}

void tps_partcache_free(tps_partcache *c) {
  if (!c) return;
  for (int i = 0; i < c->nlaunch; i++) tps_gemmgrid_free(c->lgrid[i]);
  for (size_t i = 0; i < c->ngtab; i++) {
    tps_gathertab_free(c->gtab[i]->t);
    free(c->gtab[i]);
  }
  free(c->gtab);
  pthread_cond_destroy(&c->cond);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

void tps_partcache_tables(tps_partcache *c, int on) {
  pthread_mutex_lock(&c->lock);
  c->tables = on;
  pthread_mutex_unlock(&c->lock);
}

/* With the lock held: 1 when the caller must make the table of *state (state 1, lock
 * released: make it, then made()), else 0 once it is made (lock still held). */
static int claim(tps_partcache *c, int *state) {
  if (*state == 0) {
    *state = 1;
    pthread_mutex_unlock(&c->lock);
    return 1;
  }
  while (*state == 1) pthread_cond_wait(&c->cond, &c->lock);
  return 0;
}

/* The table is made: takes the lock, wakes the waiters, keeps the lock. */
static void made(tps_partcache *c, int *state) {
  pthread_mutex_lock(&c->lock);
  *state = 2;
  pthread_cond_broadcast(&c->cond);
}

/* The launch structure for a GEMM part's table (lock held): its path's, built on first use;
 * NULL where its model is not a gemm.h one (or out of memory). */
static const struct tps_gemmgrid *launches(tps_partcache *c, const tps_part *p) {
  if (p->model.kind != TPS_PM_GEMM || p->model.gm.kind != TPS_GEMM_PARAMETRIC || !p->model.gm.path) return NULL;
  const tps_path *path = p->model.gm.path;
  for (int i = 0; i < c->nlaunch; i++)
    if (c->lpath[i] == path) return c->lgrid[i];
  if (c->nlaunch >= (int)(sizeof c->lgrid / sizeof *c->lgrid)) return NULL;
  struct tps_gemmgrid *g = tps_gemmgrid_launches(path, c->tmax);
  if (g) {
    c->lpath[c->nlaunch] = path;
    c->lgrid[c->nlaunch++] = g;
  }
  return g;
}

/* Lock held on entry and on return. */
static int tabulate_locked(tps_partcache *c, tps_part *p) {
  if (p->what != TPS_PART_GEMM || p->tab_state == 2) return TPS_OK;
  if (p->tab_state == 0 && p->tab) { p->tab_state = 2; return TPS_OK; }
  const struct tps_gemmgrid *lg = p->tab_state == 0 ? launches(c, p) : NULL;
  int st = TPS_OK;
  if (claim(c, &p->tab_state)) {
    st = tps_part_tabulate_on(p, c->tmax, lg); /* on failure the contexts fill as they go */
    made(c, &p->tab_state);
  }
  return st;
}

int tps_partcache_ready(tps_partcache *c, tps_part *p) {
  pthread_mutex_lock(&c->lock);
  int st = tps_part_build(p, c->tmax);
  if (st == TPS_OK && c->tables) tabulate_locked(c, p);
  pthread_mutex_unlock(&c->lock);
  return st;
}

int tps_partcache_tabulate(tps_partcache *c, tps_part *p) {
  pthread_mutex_lock(&c->lock);
  int st = tps_part_build(p, c->tmax);
  if (st == TPS_OK && !p->tab) st = tabulate_locked(c, p);
  pthread_mutex_unlock(&c->lock);
  return st;
}

const struct tps_gathertab *tps_partcache_gathertab(tps_partcache *c, const tps_pred *p) {
  if (!c) return NULL;
  pthread_mutex_lock(&c->lock);
  if (!c->tables) { pthread_mutex_unlock(&c->lock); return NULL; }
  gtab_slot *g = NULL;
  for (size_t i = 0; i < c->ngtab && !g; i++)
    if (tps_gathertab_fits(c->gtab[i]->t, p, c->tmax)) g = c->gtab[i];
  if (!g) {
    if (c->ngtab == c->capgtab) {
      size_t nc = c->capgtab ? 2 * c->capgtab : 64;
      gtab_slot **a = realloc(c->gtab, nc * sizeof *a);
      if (!a) { pthread_mutex_unlock(&c->lock); return NULL; }
      c->gtab = a;
      c->capgtab = nc;
    }
    g = calloc(1, sizeof *g);
    if (g && !(g->t = tps_gathertab_new(p, c->tmax))) { free(g); g = NULL; }
    if (!g) { pthread_mutex_unlock(&c->lock); return NULL; }
    c->gtab[c->ngtab++] = g;
  }
  if (claim(c, &g->state)) {
    tps_gathertab_fill(g->t, p);
    made(c, &g->state);
  }
  pthread_mutex_unlock(&c->lock);
  return g->t;
}
