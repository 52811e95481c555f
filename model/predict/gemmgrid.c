/* gemmgrid.c: the GEMM of a prediction context on the whole token grid, fast (the
 * structure and its use: pred_impl.h). */
#include "model/predict/pred_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tps_gemmgrid_free(tps_gemmgrid *c) {
  if (!c) return;
  free(c->first);
  free(c->rest);
  free(c->g);
  free(c->gat);
  free(c->gatmax);
  free(c->gatb);
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

/* Bind to a model: GEMM(1..tmax), prefix maxima (over the rows a rank can get, up to
 * ceil(tmax/tp)) and suffix minima, when a table is asked or the GEMM is not known to be
 * monotone.  With the structure: g[0] = floor, g[m] = L(first launch of m) + g[rest]. */
/* The gather table of a parts context (see pred_impl.h); c->gat_ok = 0 when a backend of
 * the context is not a part (the allgather.h model, whose draws move bandwidths). */
static void load_gather(tps_gemmgrid *c, const tps_pred *p) {
  if (p->scaling != TPS_SCALING_PARTS) { c->gat_ok = 0; return; }
  if (c->nr && !memcmp(c->gat_parts, p->apart, sizeof c->gat_parts)) { c->gat_ok = 1; return; }
  c->gat_ok = 0;
  c->nr = 0; /* built below, or not at all */
  long nr = (c->tmax + p->tp - 1) / p->tp;
  tps_pred q = *p;
  q.ascale = 1.0;
  q.knob[TPS_PK_AG_NCCL_BW] = q.knob[TPS_PK_AG_CUSTOM_BW] = 1.0;
  if (!c->gat) {
    c->gat = malloc((size_t)(nr + 1) * sizeof *c->gat);
    c->gatmax = malloc((size_t)(nr + 1) * sizeof *c->gatmax);
    c->gatb = malloc((size_t)(nr + 1));
    if (!c->gat || !c->gatmax || !c->gatb) {
      free(c->gat); free(c->gatmax); free(c->gatb);
      c->gat = c->gatmax = NULL; c->gatb = NULL;
      return;
    }
  }
  for (long r = 1; r <= nr; r++) {
    int b;
    double v = tps_pred_gather_us(&q, r * p->tp, &b);
    if (!tps_pred_gather_is_part(&q, r * p->tp) || !(v >= 0)) { memset(c->gat_parts, 0, sizeof c->gat_parts); return; }
    c->gat[r] = v;
    c->gatb[r] = (unsigned char)b;
    c->gatmax[r] = r > 1 && c->gatb[r - 1] == b && c->gatmax[r - 1] > v ? c->gatmax[r - 1] : v;
  }
  c->nr = nr;
  memcpy(c->gat_parts, p->apart, sizeof c->gat_parts);
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
    /* a part: its times once, then only the factor of this context */
    c->table = 1;
    c->gmul = p->gscale / p->knob[TPS_PK_GEMM_TFLOPS];
    if (c->part == p->gpart) return;
    c->part = p->gpart;
    const tps_part *gp = p->gpart;
    if (gp->tab && gp->ntab >= n) memcpy(c->g + 1, gp->tab + 1, (size_t)n * sizeof *c->g);
    else if (tps_part_fill(gp, n, c->g, NULL) != TPS_OK) /* one pass, not a model call per row */
      for (long m = 1; m <= n; m++) c->g[m] = tps_part_gemm_us(gp, m, NULL);
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
