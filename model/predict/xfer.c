/* xfer.c: transfer accuracy (see xfer.h). */
#include "model/predict/xfer.h"
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "model/numeric/robust.h"
#include "model/predict/resolve.h"

static int pos(double v) { return isfinite(v) && v > 0; }

tps_xfer_err tps_xfer_score(const double *meas, const double *pred, const double *hw, size_t n) {
  tps_xfer_err r = {0, NAN, NAN, 0, 0};
  double *a = malloc((n ? n : 1) * sizeof *a);
  if (!a) return r;
  for (size_t i = 0; i < n; i++) {
    if (!pos(meas[i]) || !pos(pred[i])) continue;
    a[r.n++] = fabs(pred[i] / meas[i] - 1.0);
    if (!hw || !(isfinite(hw[i]) && hw[i] >= 0)) continue;
    r.nint++;
    if (fabs(log(pred[i] / meas[i])) <= hw[i]) r.covered++;
  }
  if (r.n) {
    gsl_sort(a, 1, r.n);
    r.med_abs = gsl_stats_median_from_sorted_data(a, 1, r.n);
    r.max_abs = a[r.n - 1];
  }
  free(a);
  return r;
}

double tps_xfer_gemm_answer(const tps_gpu *sib, const tps_gpu *tgt, const tps_path *path, double m, long n, long k,
                            double t_sib_us, double t_model_us, double hw_model, double *hw, int *from_sib) {
  double t = sib && pos(t_sib_us) ? tps_resolve_sibling_gemm_us(sib, tgt, path, m, n, k, t_sib_us, NULL, NULL) : NAN;
  int s = pos(t);
  if (from_sib) *from_sib = s;
  *hw = s ? TPS_Z90 * tps_resolve_sibling_gemm_rsd(sib, tgt) : hw_model;
  return s ? t : t_model_us;
}

double tps_xfer_gather_answer(double t_sib_us, double t_model_us, double hw_model, double *hw, int *from_sib) {
  int s = pos(t_sib_us);
  if (from_sib) *from_sib = s;
  *hw = s ? TPS_Z90 * TPS_RESOLVE_SIBLING_GATHER_RSD : hw_model;
  return s ? t_sib_us : t_model_us;
}

int tps_xfer_gemm_met(double med, double med_copy) {
  if (!(med <= TPS_XFER_GEMM_MED)) return 0;
  return isnan(med_copy) || med <= med_copy + TPS_XFER_GEMM_SIB_SLACK;
}

int tps_xfer_gather_met(double med) { return med <= TPS_XFER_GATHER_MED; }

int tps_xfer_cover_met(size_t covered, size_t n) { return n > 0 && (double)covered >= TPS_XFER_COVER * (double)n; }
