/* pred_impl.h: what the prediction modules (predict.c, crossover.c,
 * uncertainty.c, sensitivity.c) share among themselves; not part of the API. */
#ifndef TPS_PRED_IMPL_H
#define TPS_PRED_IMPL_H
#include "model/predict/crossover.h"
#include "model/predict/predict.h"

/* predict.c: recompute the effective models from the base ones and the knobs. */
void tps_pred_apply_knobs(tps_pred *p);
/* predict.c: the base models of a model-scaling context from a fit (nominal or drawn). */
int tps_pred_build_from_fit(tps_pred *p, const tps_fit *f);
/* predict.c: the gather at T comes from a part (not the allgather.h model). */
int tps_pred_gather_is_part(const tps_pred *p, long tokens);
/* predict.c: the largest gather time over T in [a, b] (one backend piece). */
double tps_pred_gather_max_us(const tps_pred *p, long a, long b);
/* crossover.c: the context can be scanned on 1..tmax (applicable, 1 <= tmax <= TPS_PRED_MAX_TMAX). */
int tps_pred_tmax_ok(const tps_pred *p, long tmax);

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
#define TPS_GEMMGRID_SLOTS 8192
typedef struct tps_gemmgrid {
  long tmax;
  const tps_path *path; /* the GEMM path it was built for */
  int built;
  int *first;         /* key index of m's first launch */
  int *rest;          /* m' whose launch list is the rest of m's; 0: none left; -1: unknown */
  long nkeys;
  long kR[TPS_GEMMGRID_SLOTS / 2];
  double L[TPS_GEMMGRID_SLOTS / 2];
  /* per model */
  const tps_pred *p;
  int table;          /* g, pmax, smin filled; else GEMM values are direct calls */
  int mono;           /* GEMM known nondecreasing in m: no table needed for bounds */
  double *g;          /* GEMM(m), m = 1..tmax */
  double *pmax;       /* max of g over [1, m] */
  double *smin;       /* min of g over [m, tmax] */
  /* parts contexts: g, pmax, smin hold the GEMM part's own times (loaded once); a context
   * (a draw, a knob setting) multiplies them by gmul = its gscale / its throughput knob */
  const tps_part *part;
  double gmul;
  /* parts contexts whose every gather is a part: the gather at r = ceil(T/TP) rows per rank,
   * r = 1..nr, without the context's factor (ascale / its backend's bandwidth knob), the
   * backend at r, and the running maximum of the gather within each backend's piece (an
   * upper bound of the gather over any [a, b] inside one piece) */
  const double *gat, *gatmax;     /* the table in use: the grid's own, or the context's gtab */
  const unsigned char *gatb;
  double *own_gat, *own_gatmax;   /* the grid's own (own_cap rows), valid for gat_parts when nr */
  unsigned char *own_gatb;
  long nr, own_cap;
  const tps_part *gat_parts[TPS_NGATHERS];
  int gat_ok;
} tps_gemmgrid;

/* A gather table made once (tps_gathertab_new, _fill) and what it was made for. */
typedef struct tps_gathertab {
  long nr;                        /* rows per rank 1..nr */
  int ok;                         /* 0: a row's gather is not a part (searches make direct calls) */
  double *gat, *gatmax;
  unsigned char *gatb;
  /* the key: what tps_pred_gather_us reads of a parts context, its factors aside */
  const tps_part *apart[TPS_NGATHERS];
  int tp, backend, custom_possible, applicable;
  double cap_bytes, out_bytes_per_token;
} tps_gathertab;
/* crossover.c: the structure of p's launches on 1..tmax (NULL when out of memory). */
tps_gemmgrid *tps_gemmgrid_build(const tps_pred *p, long tmax);
/* Bind to the models of p (a copy of the context it was built for, or a draw of it): the
 * GEMM on the whole grid, its prefix maxima and suffix minima, when table is asked or the
 * GEMM is not known to be monotone (mono). */
void tps_gemmgrid_load(tps_gemmgrid *c, const tps_pred *p, int table);
/* The GEMM of p (a gemm.h model on c's path) on 0..c->tmax into g (g[0]: its floor): the
 * sums of launch times through c's structure (L: one per key, c->nkeys), checked at four
 * rows; direct calls when c was not built or a check fails.  c is only read. */
void tps_gemmgrid_sums(const tps_gemmgrid *c, const tps_pred *p, double *L, double *g);
void tps_gemmgrid_free(tps_gemmgrid *c);
/* split(t) - replicated(t) of the bound context; the two times. */
double tps_gemmgrid_diff(tps_gemmgrid *c, long t);
void tps_gemmgrid_times(tps_gemmgrid *c, long t, double *replicated_us, double *split_us);
/* The gather at t, and an upper bound of it over [a, b] (one backend piece). */
double tps_gemmgrid_gather(tps_gemmgrid *c, long t);
double tps_gemmgrid_gather_max(tps_gemmgrid *c, long a, long b);
/* max of GEMM over rows [1, m]; min over rows [m, tmax] (direct calls without a table). */
double tps_gemmgrid_pmax(tps_gemmgrid *c, long m);
double tps_gemmgrid_smin(tps_gemmgrid *c, long m);

/* crossover.c: the dense crossover and the bisection break-even of p on a grid structure
 * (built here when gs is NULL). */
int tps_pred_crossover_on(const tps_pred *p, long tmax, tps_crossover *c, tps_gemmgrid *gs);
int tps_pred_breakeven_on(const tps_pred *p, long tmax, long *be, tps_gemmgrid *gs);

#endif
