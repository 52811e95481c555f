/* crossover.h: the break-even token count of a prediction context, and the win bands of
 * any split/replicated pair of curves (calibrate's too: model/calib/calib.h).
 *
 * Break-even: on the integer grid T = 1..tmax, the smallest T0 such that split(T) <
 * replicated(T) for every T in [T0, tmax]; -1 when the split does not win at tmax.
 * Every sign change of replicated - split is listed too, and the win bands they bound.
 * The threshold an answer writes is chosen by its cost: model/predict/excess.h. */
#ifndef TPS_CROSSOVER_H
#define TPS_CROSSOVER_H
#include <stddef.h>
#include "model/predict/predict.h"
#include "model/core/status.h"
#include "model/predict/excess.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The TP sizes of the crossover grid by default (crossover, the main job, its figures):
 * TP 2, 4, 8 in one 8-GPU NVLink domain, 16 across two. */
#define TPS_GRID_NTP 4
extern const int tps_grid_tp[TPS_GRID_NTP];

/* ---- win bands: where the split is faster, on a token grid
 *
 * A win band is a maximal range [from, to] of the grid's token counts where split(T) <
 * replicated(T); between two win bands lies a losing gap, and its depth is the smallest
 * speedup replicated(T) / split(T) seen inside it (<= 1).  The break-even is the start of
 * the band that reaches tmax (none when the last band ends before tmax).  Grids:
 *   TPS_BANDS_DENSE  every integer T in [tmin, tmax] (predict, crossover);
 *   TPS_BANDS_LOG64  64 points per octave, floor(2^(j/64) + 0.5) (every integer up to ~92),
 *                    tmin and tmax included; a change of sign between two neighbouring
 *                    points is placed at the integer by scanning the integers between them
 *                    from the winning side, as far as the split keeps winning (calibrate,
 *                    model/calib/calib.h; a band narrower than the grid spacing can be missed).
 * The gap depth is taken over the grid points and the integers scanned inside the gap. */
#define TPS_BANDS_MAX 128
enum { TPS_BANDS_DENSE = 0, TPS_BANDS_LOG64 = 1 };

typedef struct {
  long tmin, tmax;
  int grid;                               /* TPS_BANDS_DENSE or TPS_BANDS_LOG64 */
  size_t nbands;                          /* win bands found (may exceed the stored ones) */
  long from_tokens[TPS_BANDS_MAX];        /* band i: the split wins on [from_tokens[i], to_tokens[i]] */
  long to_tokens[TPS_BANDS_MAX];          /* tmax: the band reaches the end of the range */
  double gap_min_speedup[TPS_BANDS_MAX];  /* the losing gap after band i (up to band i + 1): smallest
                                           * replicated / split in it; NaN where not known (a time <= 0)
                                           * and after the last band */
  long breakeven;                         /* start of the band that reaches tmax; -1: none */
} tps_bands;

/* The two times at T tokens, us.  Returns TPS_OK, or a status that ends the scan with it. */
typedef int (*tps_bands_fn)(long t, void *ctx, double *replicated_us, double *split_us);

/* The win bands of fn on [tmin, tmax] on a grid.  TPS_OK; TPS_EINVAL for tmin < 1, tmin >
 * tmax, an unknown grid, or a time that is NaN; a status fn returned. */
int tps_bands_find(tps_bands_fn fn, void *ctx, long tmin, long tmax, int grid, tps_bands *b);

#define TPS_CROSS_MAXCHG 32
typedef struct {
  long tmin, tmax;
  size_t nchg;                     /* sign changes found (may exceed the stored ones) */
  long chg[TPS_CROSS_MAXCHG];      /* first T of the new sign */
  int chg_wins[TPS_CROSS_MAXCHG];  /* 1: split wins from chg[i]; 0: stops winning there */
  long breakeven;                  /* smallest T0 with split winning on [T0, tmax]; -1 never */
  tps_bands bands;                 /* the same scan as win bands (the sign changes are their
                                    * edges); gap depths NaN from tps_crossover_find */
} tps_crossover;

/* Generic: diff(T) = split(T) - replicated(T) (< 0: split wins) on T = tmin..tmax (the
 * dense grid of tps_bands_find, with the difference alone: no gap depths).
 * Returns TPS_EINVAL when diff is NaN somewhere or tmin > tmax. */
int tps_crossover_find(double (*diff)(long t, void *arg), void *arg, long tmin, long tmax,
                       tps_crossover *c);
/* The same on a prediction (dense scan, every integer T), with the gap depths of its
 * win bands (c->bands). */
int tps_pred_crossover(const tps_pred *p, long tmax, tps_crossover *c);
/* Break-even only (the dense scan's).  *be = -1 when never. */
int tps_pred_breakeven(const tps_pred *p, long tmax, long *be);
/* The same break-even by bisection: GEMM(1..tmax) is tabulated (cheaply, see pred_impl.h),
 * each gather backend is nondecreasing in T, so on [a, b] split <= max GEMM over rows
 * <= ceil(b/TP) + gather(b) and replicated >= min GEMM over [a, tmax]; intervals where
 * the bound decides are skipped.  Exact (equal to tps_pred_breakeven), much faster;
 * used by the bootstrap. */
int tps_pred_breakeven_fast(const tps_pred *p, long tmax, long *be);

/* The threshold a prediction writes: tps_threshold_choose (model/predict/excess.h) on its own
 * replicated and split times up to tmax; -1: never.  ex (may be NULL) gets its excess on
 * them (n 0 when nothing could be scored, and then -1). */
long tps_pred_threshold(const tps_pred *p, long tmax, tps_excess *ex);

/* A parts context's gather on the rows per rank of T = 1..tmax, without its factors (the
 * table a break-even search makes: pred_impl.h), to be shared read-only by the contexts of
 * the same gathers (tps_pred.gtab; the partset: one per GPU, TP and gather backend), in any
 * threads.  A context whose gathers, TP, backend, cap or bytes per token differ from p's
 * does not use it.  NULL: out of memory. */
struct tps_gathertab *tps_gathertab_new(const tps_pred *p, long tmax); /* p's key, not filled */
void tps_gathertab_fill(struct tps_gathertab *t, const tps_pred *p);  /* the rows of p (made for p) */
int tps_gathertab_fits(const struct tps_gathertab *t, const tps_pred *p, long tmax); /* made for p? */
void tps_gathertab_free(struct tps_gathertab *t);

#ifdef __cplusplus
}
#endif
#endif
