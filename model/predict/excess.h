/* excess.h: the cost of a split threshold (issue 27 items 5 and 9).  Pure C, no I/O.
 *
 * A threshold says "split when T >= threshold".  Against the true costs of both choices at
 * each T, its excess is
 *   excess(T) = (split(T) if T >= threshold else replicated(T)) / min(split(T), replicated(T)) - 1
 * (0 where the threshold chooses the faster one; 0.1: 10% slower than the better choice).
 * Scored on the grid T = round(2^(i/8)), i = 0, 1, .. (8 points per octave), deduplicated,
 * up to t_max (t_max itself is a point when it is a power of two).  A break-even error says
 * little; the excess says what it costs.
 *
 * The flatness of a split from T1 on, max over grid T >= T1 of |split(T)/replicated(T) - 1|,
 * says why an interval reaches "never": the two choices differ by at most that much there. */
#ifndef TPS_MODEL_EXCESS_H
#define TPS_MODEL_EXCESS_H
#include <math.h>
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_EXCESS_PER_OCTAVE 8
/* The decision-quality target of a predicted threshold (issue 27 item 5): mean <= 1%, worst <= 10%. */
#define TPS_EXCESS_TARGET_MEAN 0.01
#define TPS_EXCESS_TARGET_WORST 0.10
#define TPS_EXCESS_GRID_MAX 256 /* points of a grid up to 2^31 at 8 per octave, with room */

/* The grid up to t_max (>= 1): T = round(2^(i/8)) <= t_max, ascending, distinct, into
 * T[0..cap); returns how many (0 when t_max < 1). */
size_t tps_excess_grid(long t_max, long *T, size_t cap);

/* Both costs at T tokens, us (ctx the caller's); NaN or <= 0: the point is not scored. */
typedef struct {
  double (*replicated_us)(long T, void *ctx);
  double (*split_us)(long T, void *ctx);
  void *ctx;
} tps_costs;

typedef struct {
  size_t n;        /* grid points scored */
  double mean;     /* mean excess over them (0.01: 1%) */
  double worst;    /* the largest */
  long t_worst;    /* the smallest T where it is reached (0 when n is 0) */
} tps_excess;

/* Never split: pass TPS_EXCESS_NEVER (or any threshold > t_max). */
#define TPS_EXCESS_NEVER INFINITY

/* The excess of a threshold over the grid up to t_max.  Returns 0, or -1 when no point
 * could be scored (out->n 0, mean and worst NaN). */
int tps_excess_eval(const tps_costs *c, double threshold, long t_max, tps_excess *out);
/* The same on sampled costs at T[0..n) (any T, each point weighing the same). */
int tps_excess_sampled(const long *T, const double *replicated_us, const double *split_us, size_t n, double threshold,
                       tps_excess *out);

/* The single threshold that comes nearest the target (mean <= mean_target and worst <=
 * worst_target) on the grid up to t_max: of "never" and every grid T, the one with the least
 * max(mean / mean_target, worst / worst_target) (<= 1: it meets the target; ties: the least
 * mean, then the least worst, then never, then the smallest T).  What any engine that reads one threshold could at best get from these
 * costs: where it misses, no single threshold meets the target (the split wins in bands, or
 * by too little for too long).  *threshold gets the T (TPS_EXCESS_NEVER for never).  0, or -1
 * when no point could be scored. */
int tps_excess_best(const tps_costs *c, long t_max, double mean_target, double worst_target, double *threshold,
                    tps_excess *out);

/* max over grid T in [t1, t_max] of |split(T) / replicated(T) - 1|; *t_at (may be NULL) gets
 * the T where it is reached.  NaN when no grid point of [t1, t_max] can be scored. */
double tps_split_flatness(const tps_costs *c, long t1, long t_max, long *t_at);

/* ---- the threshold an answer writes (split_from_tokens, every command's `threshold`)
 *
 * Of never and every grid T up to t_max, the threshold of least excess on the answer's own
 * costs (tps_excess_best with the targets above), moved down to the first T of the win run
 * it starts: the integers just below it, down to the grid point before, where the split
 * still wins (split < replicated; grid points in between do not exist, so the excess is the
 * same).  Where the split wins once and for good (one sign change), that is the break-even
 * itself; where it wins in bands, the threshold the costs favour, which may be an earlier
 * band's start.  (Decision, issue 27 item 5: the next power of two above the break-even,
 * written before, met the leave-one-GPU-out target in 20 of 33 dense/fp8 rows against 27 of
 * 33 for the break-even; doc/decision-quality.md.)  *threshold gets the T, -1 for never; *out
 * its excess on the grid.  0, or -1 when no point could be scored (*threshold -1). */
int tps_threshold_choose(const tps_costs *c, long t_max, long *threshold, tps_excess *out);
/* A threshold rounded up to a multiple of rounding (a user's --round R); rounding <= 0 or a
 * threshold < 1 (never) returns it unchanged.  Rounded past t_max it is -1, never: within the
 * answer's range the split is not taken (a thresholds file's null, "never up to max_tokens";
 * a number past max_tokens would claim a range the answer did not look at). */
long tps_threshold_round(long threshold, long rounding, long t_max);

#ifdef __cplusplus
}
#endif
#endif
