/* test_interp.c: measured GEMM curves between their points (model/predict/parts.h, issue 27
 * item 8), expected values by hand:
 *  - twins: M and M+1 measured apart from other rows, M+1 the faster, are one point, the
 *    geometric mean of the two at M (the H200 pair: 120.0 us at 4352, 115.3 at 4353:
 *    sqrt = 117.6265 us at 4352), spread half |log ratio| = 0.5 log(120/115.3) = 0.019977; a
 *    rising pair (a tile step), rows 1, 2, 3 (a dense sweep below 64) and a pair with a
 *    neighbour 4 rows away are not merged;
 *  - the model's shape: between measured points (m, t) = (1000, 100) and (2000, 150) with a
 *    model t = 10.05 + 0.1 m (110.05 and 210.05 there: ratios 0.908678 and 0.714116), at
 *    1500 rows: w = log 1.5 / log 2 = 0.584963, ratio exp(log 0.908678 + w (log 0.714116 -
 *    log 0.908678)) = 0.78951, model 160.05 -> 126.36 us (a straight log-log line: 126.77;
 *    the model is straighter in m); exact at the points; kept between the two times where the
 *    model's shape would leave them (a flat pair). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/core/path.h"
#include "model/predict/parts.h"
#include "model/numeric/robust.h"
#include "tests/unit/expect.h"

static int near(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

int main(void) {
  /* twins (model/numeric/robust.h): a falling pair is one point at M, their geometric mean
   * sqrt(120.0 x 115.3) = 117.62653 us, spread 0.5 log(120/115.3) = 0.019977; a rising pair
   * (1024: 40, 1025: 44, a tile step) stays two points */
  double x[7] = {512, 1024, 1025, 4096, 4352, 4353, 8192}, t[7] = {30, 40, 44, 100, 120.0, 115.3, 200};
  tps_mcurve *c = tps_mcurve_alloc(x, t, 7);
  CHECK(c && tps_mcurve_n(c) == 6, "falling twins merged, rising kept: %zu points, want 6", c ? tps_mcurve_n(c) : 0);
  CHECK(c && near(tps_mcurve_twin_spread(c), 0.5 * log(120.0 / 115.3), 1e-12) && near(0.5 * log(120.0 / 115.3), 0.019977, 1e-4),
        "twin spread %g, want 0.019977", c ? tps_mcurve_twin_spread(c) : 0);
  CHECK(c && near(tps_mcurve_eval(c, 4352), 117.62653, 1e-6), "4352: %g, want 117.62653", c ? tps_mcurve_eval(c, 4352) : 0);
  CHECK(c && near(tps_mcurve_eval(c, 1024), 40, 1e-12) && near(tps_mcurve_eval(c, 1025), 44, 1e-12), "rising pair exact");
  tps_loo_curve *lc = tps_loo_curve_measured(x, t, 7); /* the same rule in the curves of fit --loo-gpu */
  CHECK(lc && near(tps_loo_curve_eval(lc, 4352), 117.62653, 1e-6), "loo curve 4352: %g", lc ? tps_loo_curve_eval(lc, 4352) : 0);
  tps_loo_curve_free(lc);
  tps_mcurve_free(c);
  /* not twins: a dense sweep below 64 rows, a pair with a neighbour 4 rows away */
  double dx[4] = {1, 2, 3, 8}, dt[4] = {5, 4.9, 4.8, 5};
  c = tps_mcurve_alloc(dx, dt, 4);
  CHECK(c && tps_mcurve_n(c) == 4 && tps_mcurve_twin_spread(c) == 0, "a dense sweep below 64 rows is not twins");
  tps_mcurve_free(c);
  double nx[4] = {1000, 2000, 2001, 2005}, nt[4] = {50, 90, 88, 95};
  c = tps_mcurve_alloc(nx, nt, 4);
  CHECK(c && tps_mcurve_n(c) == 4, "a neighbour 4 rows away: not twins");
  tps_mcurve_free(c);
  /* a falling pair that ends the table: one point at the last row (the range kept) */
  double ex[3] = {1000, 2000, 2001}, et[3] = {50, 90, 88};
  c = tps_mcurve_alloc(ex, et, 3);
  CHECK(c && tps_mcurve_n(c) == 2 && tps_mcurve_xhi(c) == 2001 && near(tps_mcurve_eval(c, 2001), sqrt(90.0 * 88.0), 1e-12),
        "end pair at 2001");
  tps_mcurve_free(c);
  /* a GEMM part with a model t = 10 + 0.1 m: the gemm.h model of a path with no compute and a
   * 1-row tile: floor 10 us, streaming (K N wb + R K ab + R N ob) / bw with K = N = 1, wb = ab
   * = 2 (bf16), out 2: bytes 2 + 4 R, bw 0.04 GB/s (40 bytes/us): 0.05 + 0.1 R; so 10.05 +
   * 0.1 m: at 1000, 2000, 1500: 110.05, 210.05, 160.05 */
  tps_path lin = tps_path_dense_bf16;
  lin.row_tile = 1;
  lin.col_tile = 1;
  tps_part p;
  memset(&p, 0, sizeof p);
  p.what = TPS_PART_GEMM;
  double mx[3] = {500, 1000, 2000}, mt[3] = {60, 100, 150};
  p.meas = tps_mcurve_alloc(mx, mt, 3);
  p.meas_rsd = TPS_PART_MEASURED_RSD;
  p.model.kind = TPS_PM_GEMM;
  p.model.gm.kind = TPS_GEMM_PARAMETRIC;
  p.model.gm.path = &lin;
  p.model.gm.sms = 1;
  p.model.gm.p[TPS_GP_FLOOR_US] = 10;
  p.model.gm.p[TPS_GP_BW_GBPS] = 0.04;
  p.model.gm.p[TPS_GP_TFLOPS] = 1e12;
  p.model.gm.p[TPS_GP_SHARP] = 64;
  p.model.shape = (tps_gemm_shape){1, 1, 2};
  double m15 = tps_part_model_eval(&p.model, 1500, 0);
  CHECK(near(m15, 160.05, 1e-6), "model at 1500: %g, want 160.05", m15);
  CHECK(tps_part_finish(&p) == TPS_OK, "finish");
  double w = log(1.5) / log(2.0), r = exp(log(100 / 110.05) + w * (log(150 / 210.05) - log(100 / 110.05)));
  double v = tps_part_eval(&p, 1500, NULL);
  CHECK(p.lr && near(v, 160.05 * r, 1e-9) && near(v, 126.36, 1e-3), "1500 rows: %g, want %g (126.36)", v, 160.05 * r);
  CHECK(near(tps_part_eval(&p, 1000, NULL), 100, 1e-12) && near(tps_part_eval(&p, 2000, NULL), 150, 1e-12), "exact at the points");
  CHECK(tps_part_tabulate(&p, 2000) == TPS_OK && near(p.tab[1500], v, 1e-9), "table %g = direct %g", p.tab[1500], v);
  /* the shape would overshoot a flat measured pair: kept between the two times */
  double fx[2] = {1000, 2000}, ft[2] = {100, 100};
  tps_part_free(&p);
  p.meas = tps_mcurve_alloc(fx, ft, 2);
  CHECK(tps_part_finish(&p) == TPS_OK, "finish flat");
  v = tps_part_eval(&p, 1500, NULL);
  CHECK(near(v, 100, 1e-9), "flat pair: %g, want 100", v);
  tps_part_free(&p);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}
