/* test_excess.c: the cost of a threshold (model/predict/excess.h) on costs whose excess is
 * known by hand: replicated = 1 us everywhere, split = 0.5 us from T0 = 64 tokens on and
 * LOW x 1 us below (2 or 1.25).  The grid up to 16384 at 8 points per octave: below 16,
 * round(2^(i/8)) for i = 0..31 gives 1..13 and 15 (14 values: 1.414 -> 1, 1.542 -> 2, 14.67 -> 15,
 * no 14); from 16 on, 8 distinct points per octave (spacing >= 16 x 0.09 > 1) for the octaves
 * 16..8192 (80) and 16384: 95 points, 30 below 64 and 65 from 64 on; [64, 128) holds 8 of them,
 * [50, 64) two (53.8 -> 54, 58.7 -> 59). */
#include <math.h>
#include <stdio.h>
#include "model/predict/excess.h"
#include "tests/unit/expect.h"

#define T0 64
static double low = 2.0;
static double repl_fn(long T, void *ctx) { (void)T; (void)ctx; return 1.0; }
static double split_fn(long T, void *ctx) { (void)ctx; return T >= T0 ? 0.5 : low; }
/* within 2% of replicated from 1000 on (1.02 and 0.99 alternating by parity) */
static double flat_fn(long T, void *ctx) { (void)ctx; return T < 1000 ? 3.0 : T % 2 ? 1.02 : 0.99; }

/* bands: the split wins (0.5) on [64, 128), loses by `gap` (1 + gap) on [128, 1024) and wins
 * (0.5) from 1024 on; below 64 it loses 2x.  Grid points: [64, 128) 8, [128, 1024) 24, from
 * 1024 on 33 (4 octaves of 8 and 16384), below 64 30. */
static double gap = 0.5;
static double band_fn(long T, void *ctx) { (void)ctx; return T < 64 ? 2.0 : T < 128 ? 0.5 : T < 1024 ? 1.0 + gap : 0.5; }

/* one crossing at 100 (not a grid point) */
static double split100_fn(long T, void *ctx) { (void)ctx; return T >= 100 ? 0.5 : 2.0; }

static int near(double a, double b) { return fabs(a - b) <= 1e-12; }

int main(void) {
  long T[TPS_EXCESS_GRID_MAX];
  size_t n = tps_excess_grid(16384, T, TPS_EXCESS_GRID_MAX);
  CHECK(n == 95, "grid of 95 points up to 16384, got %zu", n);
  CHECK(T[0] == 1 && T[12] == 13 && T[13] == 15 && T[14] == 16 && T[n - 1] == 16384, "grid ends: %ld %ld %ld %ld %ld", T[0],
        T[12], T[13], T[14], T[n - 1]);
  for (size_t i = 1; i < n; i++) CHECK(T[i] > T[i - 1], "grid ascending at %zu", i);
  CHECK(tps_excess_grid(0, T, TPS_EXCESS_GRID_MAX) == 0, "no grid below 1");
  CHECK(tps_excess_grid(1, T, TPS_EXCESS_GRID_MAX) == 1 && T[0] == 1, "grid up to 1: {1}");

  tps_costs c = {repl_fn, split_fn, NULL};
  tps_excess x;
  /* the right threshold costs nothing */
  CHECK(tps_excess_eval(&c, T0, 16384, &x) == 0 && x.n == 95 && x.mean == 0 && x.worst == 0, "threshold T0: %g %g", x.mean, x.worst);
  /* never split: 100% too slow on the 65 points from 64 on */
  tps_excess_eval(&c, TPS_EXCESS_NEVER, 16384, &x);
  CHECK(near(x.mean, 65.0 / 95) && near(x.worst, 1.0) && x.t_worst == 64, "never: mean %g worst %g at %ld", x.mean, x.worst, x.t_worst);
  /* always split: 100% too slow on the 30 points below 64 */
  tps_excess_eval(&c, 1, 16384, &x);
  CHECK(near(x.mean, 30.0 / 95) && near(x.worst, 1.0) && x.t_worst == 1, "always: mean %g worst %g at %ld", x.mean, x.worst, x.t_worst);
  /* one octave too high: [64, 128) replicated at 2x the split */
  tps_excess_eval(&c, 128, 16384, &x);
  CHECK(near(x.mean, 8.0 / 95) && near(x.worst, 1.0) && x.t_worst == 64, "128: mean %g worst %g at %ld", x.mean, x.worst, x.t_worst);
  /* too low: 54 and 59 split at 2x the replicated */
  tps_excess_eval(&c, 50, 16384, &x);
  CHECK(near(x.mean, 2.0 / 95) && near(x.worst, 1.0) && x.t_worst == 54, "50: mean %g worst %g at %ld", x.mean, x.worst, x.t_worst);
  /* a split 25% slower below T0: always splitting costs 25% there */
  low = 1.25;
  tps_excess_eval(&c, 1, 16384, &x);
  CHECK(near(x.mean, 30 * 0.25 / 95) && near(x.worst, 0.25), "always, 1.25: mean %g worst %g", x.mean, x.worst);
  low = 2.0;

  /* sampled costs */
  long st[3] = {1, 10, 100};
  double sr[3] = {10, 10, 10}, ss[3] = {20, 5, 5};
  CHECK(tps_excess_sampled(st, sr, ss, 3, 10, &x) == 0 && x.n == 3 && x.worst == 0, "sampled at the break-even: %g", x.worst);
  tps_excess_sampled(st, sr, ss, 3, 100, &x);
  CHECK(near(x.mean, 1.0 / 3) && near(x.worst, 1.0) && x.t_worst == 10, "sampled, 100: mean %g worst %g at %ld", x.mean, x.worst,
        x.t_worst);
  double bad[3] = {NAN, 10, -1};
  tps_excess_sampled(st, bad, ss, 3, 100, &x);
  CHECK(x.n == 1 && near(x.worst, 1.0), "sampled: NaN and negative points skipped (n %zu)", x.n);
  CHECK(tps_excess_sampled(st, bad, ss, 0, 100, &x) == -1 && x.n == 0 && isnan(x.mean), "no point: -1, NaN");

  /* the best single threshold, by max(mean / 1%, worst / 10%) */
  double thr = 0;
  CHECK(tps_excess_best(&c, 16384, 0.01, 0.10, &thr, &x) == 0 && thr == T0 && x.worst == 0 && x.mean == 0,
        "best of one crossing: its break-even, %g (worst %g)", thr, x.worst);
  tps_costs b = {repl_fn, band_fn, NULL};
  /* a 50% loss between the bands: splitting from 64 costs 24 x 0.5 / 95 on average (score
   * 12.6), from 1024 8 x 1.0 / 95 (score 10, its worst 100%): 1024 is the nearer, and misses */
  CHECK(tps_excess_best(&b, 16384, 0.01, 0.10, &thr, &x) == 0 && thr == 1024 && near(x.mean, 8.0 / 95) && near(x.worst, 1.0),
        "best with a 50%% gap: 1024, mean %g worst %g (thr %g)", x.mean, x.worst, thr);
  /* a 3% loss: from 64 on meets the target (mean 24 x 0.03 / 95 = 0.76%, worst 3%) */
  gap = 0.03;
  CHECK(tps_excess_best(&b, 16384, 0.01, 0.10, &thr, &x) == 0 && thr == 64 && near(x.mean, 24 * 0.03 / 95) && near(x.worst, 0.03),
        "best with a 3%% gap: 64, mean %g worst %g (thr %g)", x.mean, x.worst, thr);
  gap = 0.5;
  /* never splitting is best where the split never wins */
  tps_costs nv = {repl_fn, flat_fn, NULL};
  CHECK(tps_excess_best(&nv, 500, 0.01, 0.10, &thr, &x) == 0 && isinf(thr) && x.worst == 0, "best below 1000 of the flat costs: never (%g)",
        thr);

  /* the threshold an answer writes (tps_threshold_choose): the least-excess grid T moved down
   * the split's win run to the integer where it starts */
  long th = 0;
  CHECK(tps_threshold_choose(&c, 16384, &th, &x) == 0 && th == T0 && x.worst == 0, "written, one crossing at 64: %ld", th);
  tps_costs c100 = {repl_fn, split100_fn, NULL};
  /* the crossing at 100 lies between the grid points 99 and 108: the best grid T is 108, and
   * the split wins on 100..107, so the written threshold is 100, the break-even itself */
  CHECK(tps_excess_best(&c100, 16384, 0.01, 0.10, &thr, &x) == 0 && thr == 108, "best grid T of a crossing at 100: %g", thr);
  CHECK(tps_threshold_choose(&c100, 16384, &th, &x) == 0 && th == 100 && x.worst == 0 && x.mean == 0,
        "written, one crossing at 100: %ld (worst %g)", th, x.worst);
  /* a 50% gap between bands: 1024 (the last band's start; 1023 loses) */
  CHECK(tps_threshold_choose(&b, 16384, &th, &x) == 0 && th == 1024 && near(x.worst, 1.0), "written, 50%% gap: %ld", th);
  /* a 3% gap: the first band's start, 64 (63 loses), not the break-even 1024 */
  gap = 0.03;
  CHECK(tps_threshold_choose(&b, 16384, &th, &x) == 0 && th == 64 && near(x.worst, 0.03), "written, 3%% gap: %ld", th);
  gap = 0.5;
  CHECK(tps_threshold_choose(&nv, 500, &th, &x) == 0 && th == -1, "written where the split never wins: never (%ld)", th);
  CHECK(tps_threshold_round(100, 64, 16384) == 128 && tps_threshold_round(128, 64, 16384) == 128 && tps_threshold_round(100, 0, 16384) == 100 &&
            tps_threshold_round(-1, 64, 16384) == -1,
        "rounding: 100 -> 128 by 64, 128 stays, 0 keeps it, never stays never");
  /* past the range: 16300 by 1000 is 17000 > 16384, never within it; 16000 by 4096 is 16384, in */
  CHECK(tps_threshold_round(16300, 1000, 16384) == -1 && tps_threshold_round(16000, 4096, 16384) == 16384,
        "rounding past t_max: never; onto t_max: kept");

  /* flatness from T1 on */
  tps_costs f = {repl_fn, flat_fn, NULL};
  long at = 0;
  double fl = tps_split_flatness(&f, 1000, 16384, &at);
  CHECK(near(fl, 0.02) && at % 2 == 1 && at >= 1000, "flat from 1000: %g at %ld", fl, at);
  fl = tps_split_flatness(&f, 1, 16384, &at);
  CHECK(near(fl, 2.0) && at == 1, "flat from 1: %g at %ld", fl, at);
  CHECK(isnan(tps_split_flatness(&f, 20000, 16384, NULL)), "nothing from 20000 on: NaN");

  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}
