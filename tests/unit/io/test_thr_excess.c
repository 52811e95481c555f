/* test_thr_excess.c: the decision quality of a thresholds file against a bench (src/cli/
 * thr_excess.h) on parts whose costs are known by hand.  Bench: 1 us per row (M = 1, 2, 4 ..
 * 16384: a line in log-log, so the Steffen curve is that line everywhere); the file's measured
 * gathers at TP2: NCCL 0.25 us per 1000 bytes, custom 0.125 us per 1000 bytes (lines too); 1000
 * bytes per token.  Then replicated(T) = T and, NCCL, split(T) = ceil(T/2) + 0.25 T: 1.25 at
 * T = 1 (replicate), 0.75 T (even T) or 0.75 T + 0.5 (odd T) below T from T = 2 on: the
 * break-even is 2.  So split_from 2 costs nothing; split_from 4 replicates at T = 2 and 3,
 * 2 / 1.5 - 1 = 1/3 and 3 / 2.75 - 1 = 1/11 too slow (mean over the 95 grid points (1/3 +
 * 1/11) / 95); never splitting is 1/3 too slow at every even T (the worst: at an even T, which
 * one is rounding's).  Auto: the custom gather while the per-rank part is <= 2 MiB (T <= 4194),
 * split(T) = 0.625 T at even T: never splitting is 0.6 too slow there. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/core/backend.h"
#include "model/core/path.h"
#include "src/cli/thr_excess.h"
#include "tests/unit/expect.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-9; }

static void entry(tps_thr_device *d, int path, int backend, long split_from, double breakeven) {
  tps_thr_entry *e = tps_thr_add_entry(d);
  e->k = 5120;
  e->n = 1792;
  e->path = path;
  e->tp = 2;
  e->backend = backend;
  e->split_from = split_from;
  e->breakeven = breakeven;
  e->max_tokens = 16384;
  e->out_bytes_per_token = 1000;
}

static void gather(tps_thr_device *d, int backend, double us_per_kb) {
  tps_thr_gather *g = tps_thr_add_gather(d);
  g->tp = 2;
  g->backend = backend;
  snprintf(g->status, sizeof g->status, "measured");
  g->npts = 8;
  for (size_t i = 0; i < g->npts; i++) {
    g->bytes[i] = 1000.0 * pow(4, (double)i); /* 1000 .. 16384000 */
    g->t_us[i] = us_per_kb * g->bytes[i] / 1000.0;
  }
}

int main(void) {
  const int path = (int)tps_path_find("dense-bf16")->id;
  tps_thr_file f;
  memset(&f, 0, sizeof f);
  tps_thr_init(&f);
  tps_thr_device *d = tps_thr_add_device(&f, "Test GPU"); /* no gpu_spec: no model gathers */
  entry(d, path, TPS_GATHER_NCCL, 2, 2);
  entry(d, path, TPS_GATHER_NCCL, 4, 2);
  entry(d, path, TPS_GATHER_NCCL, 0, 0);
  entry(d, path, TPS_GATHER_AUTO, 0, 0);
  entry(d, path, TPS_GATHER_NCCL, 2, 2);
  d->e[4].n = 2112; /* another shape: not this bench's */
  gather(d, TPS_GATHER_NCCL, 0.25);
  gather(d, TPS_GATHER_CUSTOM, 0.125);
  long m[15];
  double t[15];
  for (int i = 0; i < 15; i++) { m[14 - i] = 1L << i; t[14 - i] = (double)(1L << i); } /* descending: sorted by the code */
  tps_thr_check_row r;
  memset(&r, 0, sizeof r);
  r.k = 5120;
  r.n = 1792;
  r.path = path;
  r.nm = 15;
  r.m = m;
  r.measured_us = t;
  tps_err e;
  tps_err_clear(&e);
  CHECK(tps_thr_check_excess(&f, NULL, &r, 1, NULL, &e) == 0, "scored");
  CHECK(r.nex == 4, "the 4 entries of 5120x1792 dense-bf16, got %zu", r.nex);
  const tps_thr_excess_row *x = r.ex;
  CHECK(x[0].npts == 95 && x[0].mean == 0 && x[0].worst == 0 && x[0].be_worst == 0, "split_from 2: %g %g", x[0].mean, x[0].worst);
  CHECK(!strcmp(x[0].gather, "measured"), "gather '%s'", x[0].gather);
  CHECK(near(x[1].mean, (1.0 / 3 + 1.0 / 11) / 95) && near(x[1].worst, 1.0 / 3) && x[1].at == 2, "split_from 4: %.12g %.12g at %ld",
        x[1].mean, x[1].worst, x[1].at);
  CHECK(x[1].be_worst == 0, "breakeven 2 as the threshold: %g", x[1].be_worst);
  CHECK(near(x[2].worst, 1.0 / 3) && x[2].at % 2 == 0 && x[2].mean > 0.3 && x[2].mean < 1.0 / 3, "never, nccl: %.12g at %ld, mean %g",
        x[2].worst, x[2].at, x[2].mean);
  CHECK(near(x[3].worst, 0.6) && x[3].at % 2 == 0 && x[3].at <= 4194 && x[3].backend == TPS_GATHER_AUTO, "never, auto: %.12g at %ld", x[3].worst, x[3].at);
  /* the table prints them; the largest over a part's thresholds */
  double mm, mw;
  tps_thr_check_excess_max(&r, 0, &mm, &mw);
  CHECK(near(mw, 0.6) && near(mm, x[3].mean), "max: %g %g", mm, mw);
  tps_thr_free(&f);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}
