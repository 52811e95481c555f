/* calib.h: calibration on the GPU at hand (`tpsplit calibrate`): which M a short sweep
 * measures, the calibrated GEMM model of one (shape, path) fitted to that sweep, and the
 * break-even, 90% interval and threshold of one (shape, path, TP, backend).  Pure C (GSL),
 * no I/O: src/cli/calibrate/ measures and writes, src/io/thresholds.c reads and checks.
 *
 * Calibrated GEMM model of one (K, N, path) on one GPU, from n sweep points (M_i, t_i):
 *
 *   shaped:  t(M) = base(M) * exp(r(M))
 *            base = the structural model of the path (model/latency/xgemm.h for the cuBLASLt paths,
 *            tps_xw8 for our w8a16 kernels on SM90) with its parameters fitted to the sweep
 *            of THIS GPU (its datasheet from data/gpus.tsv as input); r = log(t_i / base(M_i))
 *            interpolated linearly in log M between the sweep points, held flat outside.
 *            The base carries what lies between the points (wave and tile steps, the w8a16
 *            dispatch: stream kernel with 16..128-token tiles and one launch per tile, wgmma
 *            above 384 rows), the residual pins the curve to every measured point exactly.
 *   steffen: monotone Steffen interpolation of log t in log M (model/numeric/robust.h curves), held
 *            flat below the first point, the last two points' slope above the last.
 *
 * TPS_CAL_AUTO takes shaped wherever the path has a base on this GPU, else Steffen.  Why
 * (`tpsplit calibrate --simulate`: the sweep taken from full tables, the other rows scored):
 * on our H200 tables (12-point sweep, 11 rows held out per path) shaped misses by a median
 * 1.7% / 1.0% / 0.6% (max 6.5% / 3.1% / 3.4%) for dense-bf16 / native-fp8 / w8a16, Steffen
 * by 3.2% / 2.7% / 3.2% (max 4.9% / 5.8% / 25.7%: w8a16 is a staircase, 64 -> 65 rows go from
 * a 64-token tile to a 128-token one, 128 -> 129 from one launch to two, which only its
 * dispatch model places); on AIConfigurator's dense tables (every 256 rows and each side of
 * the tile steps; A100, H100, B200, L40S, RTX PRO 6000, bf16 and fp8, N 1536 and 2048)
 * shaped has the lower median on 12 of 18 and the lower max on 12 of 18.  Neither places
 * cuBLASLt's own heuristic switches (H100 bf16 N 2048: 70 us at 2560 rows, 101 at 2561),
 * which set the max errors there (25-40%).
 * Both methods' leave-one-point-out errors (a point left out doubles the gap around it) are
 * reported; the 90% half-width of the method used (log space) is the 90% quantile of its
 * leave-one-point-out |log errors|, at least TPS_CAL_MIN_W, so it errs wide.
 *
 * Times in us, sizes in bytes, M in rows, T in tokens. */
#ifndef TPS_MODEL_CALIB_H
#define TPS_MODEL_CALIB_H
#include <stddef.h>
#include "model/predict/crossover.h"
#include "model/core/gpu.h"
#include "model/numeric/robust.h"
#include "model/latency/xgemm.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_CAL_MAX_PTS 64      /* sweep points of one (shape, path) at most */
#define TPS_CAL_MIN_W 0.02      /* smallest 90% half-width in log space (2%): no zero-width interval */
#define TPS_CAL_T_MAX 16384     /* default largest token count a threshold covers */

/* ------------------------------------------------------------------ sweep points */

typedef struct {
  int path;                  /* tps_path_id (model/core/path.h) */
  long k, n;
  const tps_gpu *gpu;        /* datasheet of this GPU (NULL: the points are log-spaced only) */
  long t_max;                /* largest T a threshold covers (rows up to t_max are needed) */
  int npoints;               /* points wanted (>= 2) */
} tps_cal_sweep_req;

/* The first-phase rows of a sweep, ascending and distinct, into rows[0..cap): 1 and t_max,
 * then
 *  - w8a16 on SM90 (a staircase, model/latency/xgemm.h tps_xw8): the top row of each stream-kernel
 *    regime (token tiles 16, 32, 48, 64, 128; 2 and 3 launches: 256, 384), the wgmma
 *    128-token tile's (1024), then the 256-token tile's wave tops farthest (in log rows)
 *    from the rows chosen;
 *  - the other paths: one at a time, the candidate row (2^j and 3 * 2^(j-1)) where monotone
 *    interpolation of the rows chosen so far misses the path's prior model on this GPU
 *    (xgemm priors) the most: the points go where the curve bends (the floor ending, the
 *    stream/compute turn);
 *  - no datasheet: the candidates farthest in log rows from the rows chosen.
 * Returns the number of rows (npoints, or fewer when the candidates run out). */
size_t tps_cal_sweep_rows(const tps_cal_sweep_req *q, long *rows, size_t cap);

/* The second-phase rows: the ones the break-even needs.  For each TP tps[i] with an
 * estimated break-even be[i] > 0 (tokens, from a first fit), the rows T* and ceil(T* / tp);
 * a row within a factor near (e.g. 1.15) of a row already in have[] (or already added) is
 * not added.  Returns the number written to rows[0..cap), ascending. */
size_t tps_cal_breakeven_rows(const long *have, size_t nhave, const int *tps, const double *be, size_t ntps,
                              long t_max, double near, long *rows, size_t cap);

/* Sizes of an all-gather sweep at tp ranks: the gathered bytes T * out_bytes of npoints
 * tokens log-spaced from 1 to t_max, each rounded to a multiple of 16 tp (16-byte parts,
 * as bench allgather takes them); with cap_per_rank > 0 only sizes whose per-rank part is
 * at most cap_per_rank (the custom one-shot backend), spread over that range.  Ascending,
 * distinct; returns the count. */
size_t tps_cal_gather_sizes(double out_bytes, int tp, long t_max, int npoints, double cap_per_rank, long *sizes,
                            size_t cap);

/* ------------------------------------------------------------------ calibrated GEMM */

typedef enum { TPS_CAL_STEFFEN = 0, TPS_CAL_SHAPED = 1, TPS_CAL_AUTO = 2 } tps_cal_method;
extern const char *const tps_cal_method_names[3]; /* "steffen", "shaped", "auto" */
/* Method of a name, -1 when unknown. */
int tps_cal_method_parse(const char *name);

enum { TPS_CAL_BASE_NONE = 0, TPS_CAL_BASE_XGEMM = 1, TPS_CAL_BASE_XW8 = 2 };
extern const char *const tps_cal_base_names[3]; /* "none", "xgemm", "xw8" */

typedef struct {
  int path;                  /* tps_path_id */
  long k, n;
  int harness;               /* TPS_XG_FLUSHED (tpsplit bench) or TPS_XG_AIC (model/latency/xgemm.h) */
  tps_gpu gpu;               /* copy of the datasheet; have_gpu 0: none (Steffen only) */
  int have_gpu;
  size_t npts;
  long rows[TPS_CAL_MAX_PTS];
  double t_us[TPS_CAL_MAX_PTS];
  int method;                /* TPS_CAL_STEFFEN or TPS_CAL_SHAPED: the one used */
  int base;                  /* TPS_CAL_BASE_*: the structural model of the shaped method */
  int base_status;           /* status of the base fit (TPS_OK, or why shaped is unavailable) */
  tps_xg_model xg;           /* base = xgemm (dense-bf16, native-fp8) */
  tps_xw8_model w8;          /* base = xw8 (w8a16 on SM90) */
  double lres[TPS_CAL_MAX_PTS]; /* log(t_i / base(M_i)) */
  /* leave-one-point-out over the interior points: |relative error| median and max, per
   * method (NaN when not available) */
  double lopo_med[2], lopo_max[2];
  size_t lopo_n;
  double w90;                /* 90% half-width of the method used, log space */
  double w90_by[2];          /* the same per method (NaN: that method unavailable) */
  tps_loo_curve *steffen;    /* the Steffen curve of the points */
} tps_cal_gemm;

/* Fit the calibrated model of one (k, n, path) to npts sweep points (rows ascending,
 * distinct, >= 2 points; times > 0).  gpu: the datasheet (NULL: Steffen only).  start: the
 * base's starting parameters for xgemm paths (NULL: the priors of xgemm.c).  harness: how
 * the points were timed, TPS_XG_FLUSHED (tpsplit bench, calibrate) or TPS_XG_AIC
 * (AIConfigurator tables, for `calibrate --simulate` on them).  method:
 * TPS_CAL_AUTO, or one forced (TPS_CAL_SHAPED falls back to Steffen when the path has no
 * base on this GPU or the fit fails; base_status says why).  Deterministic.
 * TPS_OK, TPS_EINVAL (bad shape or path), TPS_EBADDATA (bad points), TPS_ETOOFEW (< 2),
 * TPS_ENOMEM.  Free with tps_cal_gemm_free (also after a failure). */
int tps_cal_gemm_fit(tps_cal_gemm *g, int path, long k, long n, const tps_gpu *gpu, const tps_xg_model *start,
                     int harness, const long *rows, const double *t_us, size_t npts, int method);
/* Time of m rows, us (NaN for m < 1 or an unfitted model). */
double tps_cal_gemm_time_us(const tps_cal_gemm *g, double m);
/* Time of m rows by one method (for comparisons; NaN when that method is unavailable). */
double tps_cal_gemm_time_by(const tps_cal_gemm *g, int method, double m);
void tps_cal_gemm_free(tps_cal_gemm *g);
/* Make method (TPS_CAL_STEFFEN or TPS_CAL_SHAPED) the one g uses, with its w90.  TPS_OK,
 * TPS_NA (shaped without a base fitted: g unchanged), TPS_EINVAL. */
int tps_cal_gemm_use_method(tps_cal_gemm *g, int method);
/* The tps_xg_path of a tps_path_id, -1 when xgemm has none. */
int tps_cal_xg_path(int path);

/* Score a calibrated model against measured (rows[i], t_us[i]): relative errors
 * (predicted - measured) / measured of the rows NOT among the sweep points into rel[i]
 * (NaN for sweep rows); returns how many were scored. */
size_t tps_cal_gemm_score(const tps_cal_gemm *g, const long *rows, const double *t_us, size_t n, double *rel);

/* ------------------------------------------------------------------ adaptive second phase */

/* After the first-phase sweep (tps_cal_sweep_rows) and a fit, the adaptive phase adds rows
 * where the fitted curve between two neighbouring sweep rows (lo, hi) is least certain.
 * Each interval of the sweep scores, in log units (|log t| of an error to expect):
 *   model  the largest departure of the calibrated model from the straight line in log-log
 *          through the two measured ends (16 points inside): the structural model expects a
 *          bend there (wave or tile step, the floor ending);
 *   slope  how far the measured slope d log t / d log M leaves the plausible range
 *          [0, slope_max]: time falling with M by more than 1% (a kernel switch, noise), or
 *          rising faster than slope_max (a step between the ends);
 *   rise   rise_w x log(t_hi / t_lo): between monotone ends a prediction inside can be off by
 *          up to the rise (a kernel switch placed anywhere between them);
 * an interval's score is the largest of the three.  The intervals scoring at least
 * min_score, narrower ones than min_ratio left out, are proposed best first, each at its
 * midpoint in log M rounded to the granularity of the rows kernels tile by
 * (tps_cal_adapt_round): the caller measures them, refits and asks again, up to max_rows
 * rows in all and while the budget allows (tps_cal_adapt_fits).  Deterministic. */

typedef struct {
  int max_rows;              /* rows the adaptive phase adds at most per (shape, path) (16) */
  int per_round;             /* rows proposed per round at most (4) */
  double min_ratio;          /* an interval with hi / lo below this is not split (1.1) */
  double min_score;          /* an interval scoring below this (log units) is left (0.02) */
  double slope_max;          /* upper end of the plausible d log t / d log M (1.2) */
  double rise_w;             /* weight of the rise term (0.25) */
  double budget_frac;        /* the phase stops at this fraction of the budget (0.9) */
} tps_cal_adapt_opts;
void tps_cal_adapt_defaults(tps_cal_adapt_opts *o);

enum { TPS_CAL_WHY_MODEL = 1, TPS_CAL_WHY_SLOPE = 2, TPS_CAL_WHY_RISE = 3 };
extern const char *const tps_cal_why_names[4]; /* "", "model", "slope", "rise" */

typedef struct {
  long row;                  /* the row proposed */
  long lo, hi;               /* the sweep rows around it */
  double score;              /* log units */
  int why;                   /* TPS_CAL_WHY_*: the term that set the score */
  double model, slope, rise; /* the three terms */
} tps_cal_adapt_pick;

/* The rows to measure next for a fitted calibration g (its rows are the sweep so far):
 * at most cap picks, best first; an interval whose lower end is in skip_lo[0..nskip) is
 * not proposed (the caller could not measure inside it).  Returns the count (0: done). */
size_t tps_cal_adapt_rows(const tps_cal_gemm *g, const tps_cal_adapt_opts *o, const long *skip_lo, size_t nskip,
                          tps_cal_adapt_pick *picks, size_t cap);
/* The midpoint of (lo, hi) in log M rounded to a multiple of the largest power of two
 * <= mid / 8 (at most 128: the M tiles of cuBLASLt and our kernels are 8..256 rows; a
 * multiple is the last row of a tile count), a finer multiple when that leaves (lo, hi);
 * 0 when no whole row lies strictly inside. */
long tps_cal_adapt_round(long lo, long hi);
/* Whether a step estimated at est_s seconds, started at elapsed_s, ends within frac x
 * budget_s less reserve_s (the time kept for the steps after the adaptive phase). */
int tps_cal_adapt_fits(double elapsed_s, double est_s, double reserve_s, double budget_s, double frac);

/* tps_cal_gemm_fit without the leave-one-point-out refits (lopo_* NaN, w90 TPS_CAL_MIN_W):
 * the same curve, for the adaptive rounds and replays. */
int tps_cal_gemm_fit_quick(tps_cal_gemm *g, int path, long k, long n, const tps_gpu *gpu, const tps_xg_model *start,
                           int harness, const long *rows, const double *t_us, size_t npts, int method);
/* A refit that keeps the structural model of base (its parameters as fitted, its method) and
 * takes the residuals and the Steffen curve of the new points (a superset of base's, as the
 * adaptive phase and the break-even rows add them): a row added changes the curve only
 * between its neighbours.  lopo 1: leave-one-point-out over the residuals (base kept). */
int tps_cal_gemm_fit_frozen(tps_cal_gemm *g, const tps_cal_gemm *base, const long *rows, const double *t_us, size_t npts,
                            int lopo);

/* ------------------------------------------------------------------ held-out method choice */

/* The adaptive rows are an out-of-sample check of the two methods: before they join the fit,
 * each is predicted by the first-phase fit (the sweep without them) by Steffen and by shaped
 * (tps_cal_gemm_time_by), and the final method is chosen from these held-out errors.
 *   Rule: the other method replaces the first-phase fit's method when, over the held-out
 *   rows, both its max and its median |relative error| are smaller by more than
 *   TPS_CAL_HELDOUT_TIE (1 point, the bench's noise); otherwise (a tie, no held-out row,
 *   shaped unavailable: no base) the first-phase method stays (shaped where the path has a
 *   base on this GPU, see above).
 * Why both: the max of a few rows is one row, and a row where the first-phase method misses
 * (a kernel switch) is not the rows around it.  On the replay of data/calibrate/README.md
 * ("Offline replay") the max alone switched 8 of 24 tables to Steffen at the 60 s budget and
 * 6 of those 8 got a larger max error: the adaptive rows are midpoints rounded to whole tile
 * counts, on the fast side of a tile step, where a smooth interpolation does well, while the
 * largest errors lie one row past a tile step, which only the structural model places.
 * Choosing per interval between neighbouring rows did no better there (not done).
 * A row among the first-phase sweep rows is not held out (it is fitted, not predicted). */
#define TPS_CAL_HELDOUT_TIE 0.01

typedef struct {
  size_t n;                  /* rows held out */
  long rows[TPS_CAL_MAX_PTS];
  double max_abs_rel[2];     /* per method: max |predicted / measured - 1| (NaN: method unavailable or n 0) */
  double med_abs_rel[2];     /* per method: median of the same */
  int prior;                 /* the first-phase fit's method */
  int method;                /* the method chosen */
} tps_cal_heldout;

/* Predict rows[0..n) (measured t_us[]) with the first-phase fit `first` by both methods and
 * choose by the rule above (out->prior: first's method, out->method: the one chosen).  TPS_OK, TPS_EINVAL (no fit, n past TPS_CAL_MAX_PTS), TPS_EBADDATA
 * (a row < 1 or a time not > 0), TPS_ENOMEM. */
int tps_cal_heldout_choose(const tps_cal_gemm *first, const long *rows, const double *t_us, size_t n,
                           tps_cal_heldout *out);

/* ------------------------------------------------------------------ offline replay */

/* The adaptive sweep replayed on a measured table (`tpsplit calibrate --replay`): a mock
 * bench returns the table's time at the table's row nearest (in log M) to each row asked:
 * the first-phase rows (tps_cal_sweep_rows up to the table's last row <= t_max) snap to the
 * nearest row not taken, an adaptive row to the nearest row strictly inside the interval it
 * splits (no interpolation; an interval with no row inside is skipped).  The clock charges
 * row_s per row against share_s, as calibrate's adaptive phase does (two rows kept for the
 * break-even step).  The fixed fit (first phase only, its method) and the adaptive one (the
 * first-phase base kept, tps_cal_gemm_fit_frozen, its method chosen from the held-out
 * adaptive rows when heldout is 1) are scored on the same rows: every table row up to t_max
 * in neither sweep. */

typedef struct {
  int points;                /* first-phase rows wanted */
  int method;                /* the first-phase fit's method (TPS_CAL_AUTO) */
  long t_max;                /* largest row replayed and scored */
  double row_s;              /* simulated seconds per measured row */
  double share_s;            /* this (shape, path)'s share of the budget, s */
  tps_cal_adapt_opts adapt;
  int heldout;               /* 1: the adaptive fit's method by tps_cal_heldout_choose; 0: the first phase's */
} tps_cal_replay_opts;

typedef struct {
  size_t nm;                 /* table rows up to t_max */
  size_t n0, nadd;           /* first-phase rows, adaptive rows */
  long add[TPS_CAL_MAX_PTS]; /* the adaptive rows, in the order measured */
  int why[TPS_CAL_MAX_PTS];  /* TPS_CAL_WHY_* of each */
  size_t snapped;            /* adaptive rows not at the proposed M */
  double clock_s;            /* simulated seconds at the end */
  size_t scored;             /* rows scored (in neither sweep) */
  double med[2], max[2];     /* |relative error| median and max: [0] fixed, [1] adaptive */
  long worst_m[2];           /* the row of each max */
  tps_cal_heldout ho;        /* the held-out check of the adaptive rows (ho.n 0: none added);
                              * ho.method: the adaptive fit's (the first phase's when heldout 0) */
} tps_cal_replay_res;

/* Replay one table M[0..n) ascending, distinct, times T[] > 0 (shape k x nn, path, gpu,
 * harness as tps_cal_gemm_fit).  TPS_OK, TPS_ETOOFEW (fewer than 8 rows up to t_max),
 * TPS_EINVAL, TPS_EBADDATA, TPS_ENOMEM, or the first-phase fit's status. */
int tps_cal_replay(const long *M, const double *T, size_t n, int path, long k, long nn, const tps_gpu *gpu, int harness,
                   const tps_cal_replay_opts *o, tps_cal_replay_res *out);

typedef struct {
  size_t n;                  /* tables */
  double med_max[2];         /* median over the tables of the per-table max: [0] fixed, [1] adaptive (GSL) */
  int worse;                 /* tables whose adaptive max is above the fixed one (by > 1e-12) */
  double worst_rise;         /* the largest adaptive max - fixed max (0 when none is worse) */
  int over_cap;              /* tables past the adaptive row cap */
  int over_budget;           /* tables whose clock ended past budget_frac of the share */
  int switched;              /* tables whose held-out check changed the method */
} tps_cal_replay_sum;

/* Summary of n replayed tables.  TPS_OK, TPS_EINVAL, TPS_ENOMEM. */
int tps_cal_replay_summary(const tps_cal_replay_res *r, size_t n, const tps_cal_replay_opts *o, tps_cal_replay_sum *s);

/* ------------------------------------------------------------------ break-even */

/* A curve t(x) (x = rows for a GEMM, bytes for a gather); NaN or <= 0 = unavailable. */
typedef double (*tps_cal_fn)(double x, void *ctx);

typedef struct {
  tps_cal_fn gemm;           /* GEMM time of x rows */
  void *gemm_ctx;
  tps_cal_fn gather;         /* all-gather time of x gathered bytes at the TP */
  void *gather_ctx;
  double w_gemm, w_gather;   /* 90% half-widths of the parts, log space */
} tps_cal_parts;

typedef struct {
  double breakeven;          /* tokens from which the split stays faster up to t_max; 0: never */
  double lo, hi;             /* 90% interval of it (lo 0: the split never wins even moved up);
                              * hi 0: beyond t_max (the split may never win) */
  long threshold;            /* least excess on the nominal parts (model/predict/excess.h
                              * tps_threshold_choose); 0: never */
} tps_cal_be;

/* Break-even of a split at tp ranks (split(T) = gemm(ceil(T/tp)) + gather(T out_bytes) <
 * gemm(T) for every T' >= T up to t_max; grid of 64 points per octave refined to the
 * integer, as tps_loo_breakeven).  Interval: the break-evens of replicated - split moved by
 * -+ its 90% half-width, the parts' half-widths (w x value: the replicated GEMM, the split's
 * GEMM, its gather) added in quadrature (independent errors): lo <= breakeven <= hi, hi 0
 * when the split moved down never wins for good below t_max (and whenever breakeven is 0).
 * TPS_OK, TPS_EINVAL (tp < 2, out_bytes <= 0, t_max < 1, a negative width, a missing curve
 * or one that cannot be evaluated). */
int tps_cal_breakeven(const tps_cal_parts *p, int tp, double out_bytes, long t_max, tps_cal_be *out);
/* The win bands of the same nominal parts (model/predict/crossover.h tps_bands, grid
 * TPS_BANDS_LOG64: the grid and integer refinement of the break-even above, so the band
 * that reaches t_max starts at tps_cal_breakeven's breakeven), with the smallest speedup
 * replicated / split in each losing gap between two bands.  The widths are not used.
 * TPS_OK, TPS_EINVAL as tps_cal_breakeven. */
int tps_cal_bands(const tps_cal_parts *p, int tp, double out_bytes, long t_max, tps_bands *out);

/* Callback adaptor for a calibrated GEMM (ctx = const tps_cal_gemm *) and a measured curve
 * (ctx = const tps_loo_curve *). */
double tps_cal_gemm_fn(double m, void *ctx);
double tps_cal_curve_fn(double x, void *ctx);

/* Leave-one-point-out 90% half-width of a measured curve (Steffen in log-log) over its
 * interior points, at least TPS_CAL_MIN_W; TPS_CAL_MIN_W when n < 4. */
double tps_cal_curve_w90(const double *x, const double *t, size_t n);

#ifdef __cplusplus
}
#endif
#endif
