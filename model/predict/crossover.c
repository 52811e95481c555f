/* crossover.c: break-even, sign changes and thresholds (see crossover.h): the split and
 * replicated times of a prediction context on the whole token grid, fast (the grid: its
 * structure and use in pred_impl.h), the dense scan of every integer T and the bisection that
 * skips intervals a bound decides. */
#include "model/predict/crossover.h"
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "model/predict/pred_impl.h"

/* ------------------------------------------------------------------ the token grid */

void tps_gemmgrid_free(tps_gemmgrid *c) {
  if (!c) return;
  free(c->first);
  free(c->rest);
  free(c->g);
  free(c->own_gat);
  free(c->own_gatmax);
  free(c->own_gatb);
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
tps_gemmgrid *tps_gemmgrid_build(const tps_pred *p, long tmax) {
  tps_gemmgrid *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->tmax = tmax;
  c->path = p->gemm.path;
  c->gmul = 1.0;
  c->g = malloc(3 * (size_t)(tmax + 1) * sizeof *c->g);
  if (!c->g) { free(c); return NULL; }
  c->pmax = c->g + tmax + 1;
  c->smin = c->pmax + tmax + 1;
  if (p->scaling == TPS_SCALING_PESSIMISTIC || p->gpart || p->gemm.kind != TPS_GEMM_PARAMETRIC || !p->gemm.path)
    return c; /* curves and parts: direct calls (a part's GEMM is a table lookup) */
  enum { MAXL = 160 }; /* launches of one GEMM: 66 for Marlin at 65536 rows */
  long *pkey = calloc(TPS_GEMMGRID_SLOTS, sizeof *pkey); /* (R, P) -> key index */
  int *pidx = malloc(TPS_GEMMGRID_SLOTS * sizeof *pidx);
  c->first = malloc((size_t)(tmax + 1) * sizeof *c->first);
  c->rest = malloc((size_t)(tmax + 1) * sizeof *c->rest);
  int ok = pkey && pidx && c->first && c->rest;
  const tps_path *path = p->gemm.path;
  long rows[MAXL], par[MAXL], rows2[MAXL], par2[MAXL];
  for (long m = 1; ok && m <= tmax; m++) {
    long nl = tps_gemm_launches(path, m, rows, par, MAXL);
    if (nl < 1 || nl > MAXL) { ok = 0; break; }
    long key = rows[0] * 4096 + par[0];
    unsigned long h = mix64((unsigned long)key) % TPS_GEMMGRID_SLOTS;
    while (pkey[h] && pkey[h] != key) h = (h + 1) % TPS_GEMMGRID_SLOTS;
    if (!pkey[h]) {
      long r1, p1;
      if (c->nkeys >= TPS_GEMMGRID_SLOTS / 2 || tps_gemm_launches(path, rows[0], &r1, &p1, 1) != 1 || r1 != rows[0] ||
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

tps_gemmgrid *tps_gemmgrid_launches(const tps_path *path, long tmax) {
  tps_pred q;
  memset(&q, 0, sizeof q);
  q.scaling = TPS_SCALING_MODEL;
  q.gemm.kind = TPS_GEMM_PARAMETRIC;
  q.gemm.path = path;
  return tps_gemmgrid_build(&q, tmax);
}

void tps_gemmgrid_sums(const tps_gemmgrid *c, const tps_pred *p, double *L, double *g) {
  long n = c->tmax;
  int fast = c->built;
  if (fast) {
    double fl = p->gemm.p[TPS_GP_FLOOR_US];
    for (long k = 0; k < c->nkeys; k++) L[k] = tps_gemm_time_us(&p->gemm, &p->shape, c->kR[k]) - fl;
    g[0] = fl;
    for (long m = 1; m <= n; m++)
      g[m] = c->rest[m] >= 0 ? L[c->first[m]] + g[c->rest[m]] : tps_pred_gemm_us(p, m);
    long probe[4] = {1, 97 < n ? 97 : n, n / 2 + 1, n};
    for (int i = 0; i < 4 && fast; i++) {
      double b = tps_pred_gemm_us(p, probe[i]);
      fast = fabs(g[probe[i]] - b) <= 1e-9 * fabs(b);
    }
  }
  if (!fast)
    for (long m = 1; m <= n; m++) g[m] = tps_pred_gemm_us(p, m);
}

/* Bind to a model: GEMM(1..tmax), prefix maxima (over the rows a rank can get, up to
 * ceil(tmax/tp)) and suffix minima, when a table is asked or the GEMM is not known to be
 * monotone.  With the structure: g[0] = floor, g[m] = L(first launch of m) + g[rest]. */
/* The gather table of a parts context (see pred_impl.h); c->gat_ok = 0 when a backend of
 * the context is not a part (the allgather.h model, whose draws move bandwidths). */
/* The rows of a gather table (1..nr) of p, without its factors; 0 when a row's gather is not
 * a part. */
static int gather_rows(const tps_pred *p, long nr, double *gat, double *gatmax, unsigned char *gatb) {
  tps_pred q = *p;
  q.ascale = 1.0;
  q.knob[TPS_PK_AG_NCCL_BW] = q.knob[TPS_PK_AG_CUSTOM_BW] = 1.0;
  for (long r = 1; r <= nr; r++) {
    int b;
    double v = tps_pred_gather_us(&q, r * p->tp, &b);
    if (!tps_pred_gather_is_part(&q, r * p->tp) || !(v >= 0)) return 0;
    gat[r] = v;
    gatb[r] = (unsigned char)b;
    gatmax[r] = r > 1 && gatb[r - 1] == b && gatmax[r - 1] > v ? gatmax[r - 1] : v;
  }
  return 1;
}

static void gathertab_key(const tps_pred *p, tps_gathertab *k) {
  memcpy(k->apart, p->apart, sizeof k->apart);
  k->tp = p->tp;
  k->backend = p->backend;
  k->custom_possible = tps_pred_custom_possible(p);
  k->applicable = p->applicable;
  k->cap_bytes = p->ag.custom_cap_bytes;
  k->out_bytes_per_token = p->out_bytes_per_token;
}

static int gathertab_fits(const tps_gathertab *t, const tps_pred *p, long nr);
int tps_gathertab_fits(const tps_gathertab *t, const tps_pred *p, long tmax) {
  return t && p->tp >= 1 && gathertab_fits(t, p, (tmax + p->tp - 1) / p->tp);
}

static int gathertab_fits(const tps_gathertab *t, const tps_pred *p, long nr) {
  tps_gathertab k;
  gathertab_key(p, &k);
  return t->nr == nr && !memcmp(t->apart, k.apart, sizeof k.apart) && t->tp == k.tp && t->backend == k.backend &&
         t->custom_possible == k.custom_possible && t->applicable == k.applicable && t->cap_bytes == k.cap_bytes &&
         t->out_bytes_per_token == k.out_bytes_per_token;
}

tps_gathertab *tps_gathertab_new(const tps_pred *p, long tmax) {
  tps_gathertab *t = calloc(1, sizeof *t);
  if (!t || p->tp < 1 || tmax < 1) { free(t); return NULL; }
  gathertab_key(p, t);
  t->nr = (tmax + p->tp - 1) / p->tp;
  t->gat = malloc((size_t)(t->nr + 1) * sizeof *t->gat);
  t->gatmax = malloc((size_t)(t->nr + 1) * sizeof *t->gatmax);
  t->gatb = malloc((size_t)(t->nr + 1));
  if (!t->gat || !t->gatmax || !t->gatb) { tps_gathertab_free(t); return NULL; }
  return t;
}

void tps_gathertab_fill(tps_gathertab *t, const tps_pred *p) {
  t->ok = p->scaling == TPS_SCALING_PARTS && gathertab_fits(t, p, t->nr) && gather_rows(p, t->nr, t->gat, t->gatmax, t->gatb);
}

void tps_gathertab_free(tps_gathertab *t) {
  if (!t) return;
  free(t->gat);
  free(t->gatmax);
  free(t->gatb);
  free(t);
}

/* The gather table of a parts context (see pred_impl.h): the context's shared one where it
 * was made for it, else the grid's own (kept for the next load of the same gathers);
 * c->gat_ok = 0 when a backend of the context is not a part (the allgather.h model, whose
 * draws move bandwidths). */
static void load_gather(tps_gemmgrid *c, const tps_pred *p) {
  c->gat_ok = 0;
  if (p->scaling != TPS_SCALING_PARTS) return;
  long nr = (c->tmax + p->tp - 1) / p->tp;
  if (p->gtab && gathertab_fits(p->gtab, p, nr)) {
    if (!p->gtab->ok) return;
    c->gat = p->gtab->gat;
    c->gatmax = p->gtab->gatmax;
    c->gatb = p->gtab->gatb;
    c->gat_ok = 1;
    return;
  }
  if (!(c->nr && c->nr == nr && !memcmp(c->gat_parts, p->apart, sizeof c->gat_parts))) {
    c->nr = 0; /* built below, or not at all */
    if (nr > c->own_cap) {
      free(c->own_gat); free(c->own_gatmax); free(c->own_gatb);
      c->own_gat = malloc((size_t)(nr + 1) * sizeof *c->own_gat);
      c->own_gatmax = malloc((size_t)(nr + 1) * sizeof *c->own_gatmax);
      c->own_gatb = malloc((size_t)(nr + 1));
      c->own_cap = c->own_gat && c->own_gatmax && c->own_gatb ? nr : 0;
      if (!c->own_cap) return;
    }
    if (!gather_rows(p, nr, c->own_gat, c->own_gatmax, c->own_gatb)) { memset(c->gat_parts, 0, sizeof c->gat_parts); return; }
    c->nr = nr;
    memcpy(c->gat_parts, p->apart, sizeof c->gat_parts);
  }
  c->gat = c->own_gat;
  c->gatmax = c->own_gatmax;
  c->gatb = c->own_gatb;
  c->gat_ok = 1;
}

static double gat_factor(const tps_gemmgrid *c, int b) {
  const tps_pred *p = c->p;
  return p->ascale / p->knob[tps_pred_bw_knob(b)];
}

double tps_gemmgrid_gather(tps_gemmgrid *c, long t) {
  if (!c->gat_ok) return tps_pred_gather_us(c->p, t, NULL);
  long r = tps_pred_rows_per_rank(c->p, t);
  return c->gat[r] * gat_factor(c, c->gatb[r]);
}

double tps_gemmgrid_gather_max(tps_gemmgrid *c, long a, long b) {
  const tps_pred *p = c->p;
  if (!c->gat_ok)
    return p->scaling == TPS_SCALING_PARTS ? tps_pred_gather_max_us(p, a, b) : tps_pred_gather_us(p, b, NULL);
  long rb = tps_pred_rows_per_rank(p, b);
  return c->gatmax[rb] * gat_factor(c, c->gatb[rb]);
}

void tps_gemmgrid_load(tps_gemmgrid *c, const tps_pred *p, int table) {
  c->p = p;
  load_gather(c, p);
  long n = c->tmax, np = (n + p->tp - 1) / p->tp;
  if (p->gpart) {
    /* a part: its times once, then only the factor of this context; a context whose factors differ inside and
     * outside the part's measured rows (a draw of a part the question leaves) scales its own copy */
    c->table = 1;
    const double kn = p->knob[TPS_PK_GEMM_TFLOPS];
    const int two = p->gscale_out != p->gscale;
    c->gmul = two ? 1.0 : p->gscale / kn;
    if (c->part == p->gpart && !two) return;
    c->part = two ? NULL : p->gpart;
    const tps_part *gp = p->gpart;
    if (gp->tab && gp->ntab >= n) memcpy(c->g + 1, gp->tab + 1, (size_t)n * sizeof *c->g);
    else if (tps_part_fill(gp, n, c->g, NULL) != TPS_OK) /* one pass, not a model call per row */
      for (long m = 1; m <= n; m++) c->g[m] = tps_part_gemm_us(gp, m, NULL);
    if (two)
      for (long m = 1; m <= n; m++) c->g[m] *= (m >= p->gcov_lo && m <= p->gcov_hi ? p->gscale : p->gscale_out) / kn;
    c->pmax[1] = c->g[1];
    for (long m = 2; m <= np; m++) c->pmax[m] = c->g[m] > c->pmax[m - 1] ? c->g[m] : c->pmax[m - 1];
    c->smin[n] = c->g[n];
    for (long m = n - 1; m >= 1; m--) c->smin[m] = c->g[m] < c->smin[m + 1] ? c->g[m] : c->smin[m + 1];
    return;
  }
  c->part = NULL;
  c->gmul = 1.0;
  c->table = table || !c->mono;
  if (!c->table) return;
  tps_gemmgrid_sums(c, p, c->L, c->g);
  c->pmax[1] = c->g[1];
  for (long m = 2; m <= np; m++) c->pmax[m] = c->g[m] > c->pmax[m - 1] ? c->g[m] : c->pmax[m - 1];
  c->smin[n] = c->g[n];
  for (long m = n - 1; m >= 1; m--) c->smin[m] = c->g[m] < c->smin[m + 1] ? c->g[m] : c->smin[m + 1];
}

static double gs_g(tps_gemmgrid *c, long m) { return c->table ? c->g[m] * c->gmul : tps_pred_gemm_us(c->p, m); }
double tps_gemmgrid_pmax(tps_gemmgrid *c, long m) { return c->table ? c->pmax[m] * c->gmul : tps_pred_gemm_us(c->p, m); }
double tps_gemmgrid_smin(tps_gemmgrid *c, long m) { return c->table ? c->smin[m] * c->gmul : tps_pred_gemm_us(c->p, m); }

void tps_gemmgrid_times(tps_gemmgrid *c, long t, double *replicated_us, double *split_us) {
  *split_us = gs_g(c, tps_pred_rows_per_rank(c->p, t)) + tps_gemmgrid_gather(c, t);
  *replicated_us = gs_g(c, t);
}

double tps_gemmgrid_diff(tps_gemmgrid *c, long t) {
  double rep, split;
  tps_gemmgrid_times(c, t, &rep, &split);
  return split - rep;
}

/* ------------------------------------------------------------------ the scan */

const int tps_grid_tp[TPS_GRID_NTP] = {2, 4, 8, 16};

/* ---- win bands */

/* One grid point: win (split < replicated) and the speedup (NaN unless both times > 0). */
static int band_eval(tps_bands_fn fn, void *ctx, long t, int *win, double *speedup) {
  double rep = NAN, split = NAN;
  int st = fn(t, ctx, &rep, &split);
  if (st != TPS_OK) return st;
  if (isnan(rep) || isnan(split)) return TPS_EINVAL;
  *win = split < rep;
  *speedup = rep > 0 && split > 0 ? rep / split : NAN;
  return TPS_OK;
}

/* The grid point after t: t + 1 (dense), or the next distinct floor(2^(j/64) + 0.5) above t
 * (*j: the index reached); tmax at most. */
static long band_next(int grid, long t, long tmax, long *j) {
  long n = t + 1;
  if (grid == TPS_BANDS_LOG64)
    for (;; (*j)++) {
      double x = floor(exp2((double)*j / 64.0) + 0.5);
      if (x > (double)t) { n = x < (double)tmax ? (long)x : tmax; break; }
    }
  return n < tmax ? n : tmax;
}

static void gap_add(double *gap_min, double s) {
  if (!isnan(s) && (isnan(*gap_min) || s < *gap_min)) *gap_min = s;
}

int tps_bands_find(tps_bands_fn fn, void *ctx, long tmin, long tmax, int grid, tps_bands *b) {
  memset(b, 0, sizeof *b);
  b->tmin = tmin;
  b->tmax = tmax;
  b->grid = grid;
  b->breakeven = -1;
  for (size_t i = 0; i < TPS_BANDS_MAX; i++) b->gap_min_speedup[i] = NAN;
  if (!fn || tmin < 1 || tmin > tmax || (grid != TPS_BANDS_DENSE && grid != TPS_BANDS_LOG64)) return TPS_EINVAL;
  long prev = 0, from = 0, j = 0; /* the previous grid point (0: none); the current band's start (0: outside one) */
  double gap_min = NAN;           /* the smallest speedup since the last band ended */
  for (long t = tmin;; t = band_next(grid, t, tmax, &j)) {
    int w, w1;
    double s, s1;
    int st = band_eval(fn, ctx, t, &w, &s);
    if (st != TPS_OK) return st;
    if (w && !from) {
      /* a band starts in (prev, t]: down from t while the split keeps winning */
      from = t;
      while (prev && from - 1 > prev) {
        if ((st = band_eval(fn, ctx, from - 1, &w1, &s1)) != TPS_OK) return st;
        if (!w1) { gap_add(&gap_min, s1); break; }
        from--;
      }
      size_t k = b->nbands++;
      if (k < TPS_BANDS_MAX) b->from_tokens[k] = from;
      if (k >= 1 && k - 1 < TPS_BANDS_MAX) b->gap_min_speedup[k - 1] = gap_min;
    } else if (!w && from) {
      /* the band ends in [prev, t): up from prev while the split keeps winning */
      long to = prev;
      gap_min = NAN;
      while (to + 1 < t) {
        if ((st = band_eval(fn, ctx, to + 1, &w1, &s1)) != TPS_OK) return st;
        if (!w1) { gap_add(&gap_min, s1); break; }
        to++;
      }
      if (b->nbands - 1 < TPS_BANDS_MAX) b->to_tokens[b->nbands - 1] = to;
      from = 0;
    }
    if (!w) gap_add(&gap_min, s);
    prev = t;
    if (t >= tmax) break;
  }
  if (from) {
    if (b->nbands - 1 < TPS_BANDS_MAX) b->to_tokens[b->nbands - 1] = tmax;
    b->breakeven = from;
  }
  return TPS_OK;
}

/* The sign changes of c from its bands: each band's start (unless at tmin) and the token
 * after its end (unless at tmax). */
static void changes_of_bands(tps_crossover *c) {
  const tps_bands *b = &c->bands;
  size_t stored = b->nbands < TPS_BANDS_MAX ? b->nbands : TPS_BANDS_MAX;
  c->nchg = 0;
  for (size_t i = 0; i < stored; i++) {
    if (b->from_tokens[i] > c->tmin) {
      if (c->nchg < TPS_CROSS_MAXCHG) { c->chg[c->nchg] = b->from_tokens[i]; c->chg_wins[c->nchg] = 1; }
      c->nchg++;
    }
    if (b->to_tokens[i] < c->tmax) {
      if (c->nchg < TPS_CROSS_MAXCHG) { c->chg[c->nchg] = b->to_tokens[i] + 1; c->chg_wins[c->nchg] = 0; }
      c->nchg++;
    }
  }
  /* bands beyond the stored ones: two changes each, less the end at tmax */
  if (b->nbands > stored) c->nchg += 2 * (b->nbands - stored) - (b->breakeven >= 0);
  c->breakeven = b->breakeven;
}

typedef struct {
  double (*diff)(long t, void *arg);
  void *arg;
} diff_ctx;

/* A difference as the pair (replicated 0, split diff): the split wins where diff < 0. */
static int diff_pair(long t, void *ctx, double *rep, double *split) {
  const diff_ctx *d = ctx;
  *rep = 0;
  *split = d->diff(t, d->arg);
  return TPS_OK;
}

static int crossover_scan(tps_bands_fn fn, void *ctx, long tmin, long tmax, tps_crossover *c) {
  memset(c, 0, sizeof *c);
  c->tmin = tmin;
  c->tmax = tmax;
  c->breakeven = -1;
  int rc = tps_bands_find(fn, ctx, tmin, tmax, TPS_BANDS_DENSE, &c->bands);
  if (rc != TPS_OK) {
    c->bands.nbands = 0;
    c->bands.breakeven = -1;
    return rc;
  }
  changes_of_bands(c);
  return TPS_OK;
}

int tps_crossover_find(double (*diff)(long t, void *arg), void *arg, long tmin, long tmax, tps_crossover *c) {
  diff_ctx d = {diff, arg};
  return crossover_scan(diff ? diff_pair : NULL, &d, tmin, tmax, c);
}

static int dense_pair(long t, void *arg, double *rep, double *split) {
  tps_gemmgrid_times(arg, t, rep, split);
  return TPS_OK;
}

int tps_pred_tmax_ok(const tps_pred *p, long tmax) {
  return p->applicable && tmax >= 1 && tmax <= TPS_PRED_MAX_TMAX;
}

/* Dense scan of p with a structure (built here when gs is NULL). */
int tps_pred_crossover_on(const tps_pred *p, long tmax, tps_crossover *c, tps_gemmgrid *gs) {
  memset(c, 0, sizeof *c);
  c->breakeven = -1;
  if (!tps_pred_tmax_ok(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  tps_gemmgrid *mc = gs ? gs : tps_gemmgrid_build(p, tmax);
  if (!mc) return TPS_ENOMEM;
  tps_gemmgrid_load(mc, p, 1);
  int rc = crossover_scan(dense_pair, mc, 1, tmax, c);
  if (!gs) tps_gemmgrid_free(mc);
  return rc;
}

int tps_pred_crossover(const tps_pred *p, long tmax, tps_crossover *c) { return tps_pred_crossover_on(p, tmax, c, NULL); }

int tps_pred_breakeven(const tps_pred *p, long tmax, long *be) {
  tps_crossover c;
  int rc = tps_pred_crossover_on(p, tmax, &c, NULL);
  *be = c.breakeven;
  return rc;
}

/* Largest T in [a, b] where the split does not win (0 when none).  Inside [a, b] the
 * gather is nondecreasing (one backend), so split(T) <= max GEMM over rows
 * [1, ceil(b/tp)] + gather(b), and replicated(T) >= min GEMM over [a, tmax]: when the
 * first is below the second the split wins on all of [a, b].  (Parts: a measured gather
 * need not be monotone; its largest value over [a, b] stands for gather(b).) */
static long last_nonwin(tps_gemmgrid *c, long a, long b) {
  const tps_pred *p = c->p;
  if (b - a < 8) {
    for (long t = b; t >= a; t--)
      if (!(tps_gemmgrid_diff(c, t) < 0)) return t;
    return 0;
  }
  double gmax = tps_gemmgrid_gather_max(c, a, b);
  if (tps_gemmgrid_pmax(c, tps_pred_rows_per_rank(p, b)) + gmax < tps_gemmgrid_smin(c, a)) return 0;
  if (!(tps_gemmgrid_diff(c, b) < 0)) return b;
  long m = a + (b - a) / 2;
  long r = last_nonwin(c, m + 1, b);
  return r ? r : last_nonwin(c, a, m);
}

int tps_pred_breakeven_on(const tps_pred *p, long tmax, long *be, tps_gemmgrid *gs) {
  *be = -1;
  if (!tps_pred_tmax_ok(p, tmax)) return p->applicable ? TPS_EINVAL : TPS_NA;
  if (p->scaling == TPS_SCALING_PESSIMISTIC) return tps_pred_breakeven(p, tmax, be);
  tps_gemmgrid *mc = gs ? gs : tps_gemmgrid_build(p, tmax);
  if (!mc) return TPS_ENOMEM;
  tps_gemmgrid_load(mc, p, 0);
  /* Monotone pieces of the gather: the custom gather runs up to tc tokens, NCCL above. */
  long cuts[2];
  int nc = 0;
  if (tps_pred_custom_possible(p) || tps_gather_is_capped(p->backend)) {
    double x = p->tp * floor(p->ag.custom_cap_bytes / p->out_bytes_per_token); /* ceil(T/tp) rows <= cap */
    if (x >= 1 && x < (double)tmax) cuts[nc++] = (long)x;
  }
  cuts[nc++] = tmax;
  long t = 0;
  for (int i = nc - 1; i >= 0 && !t; i--) t = last_nonwin(mc, i ? cuts[i - 1] + 1 : 1, cuts[i]);
  if (!gs) tps_gemmgrid_free(mc);
  *be = t == tmax ? -1 : t + 1;
  return TPS_OK;
}

int tps_pred_breakeven_fast(const tps_pred *p, long tmax, long *be) { return tps_pred_breakeven_on(p, tmax, be, NULL); }

/* ------------------------------------------------------------------ the written threshold */

static double thr_replicated(long t, void *p) { return tps_pred_replicated_us(p, t); }
static double thr_split(long t, void *p) { return tps_pred_split_us(p, t, NULL); }

long tps_pred_threshold(const tps_pred *p, long tmax, tps_excess *ex) {
  tps_costs c = {thr_replicated, thr_split, (void *)p};
  tps_excess x;
  long t = -1;
  if (tps_threshold_choose(&c, tmax, &t, &x) != 0) x.n = 0;
  if (ex) *ex = x;
  return t;
}
