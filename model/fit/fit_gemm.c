/* fit_gemm.c: the GEMM fit (tps_fit_gemm) and the GEMM parameters every fit with a GEMM
 * starts from (see fit.h). */
#include "model/fit/fit.h"
#include <string.h>
#include "model/fit/fit_impl.h"

void tps_fit_gemm_setup(tps_fit *f, const long *m, const double *t, size_t n, const tps_gpu *gpu, tps_fit_start *start) {
  double *x0 = start->x0;
  tps_fit_priors *pri = &start->pri;
  int *prunable = start->prunable;
  const tps_path *path = f->gemm.path;
  double K = (double)f->shape.k, N = (double)f->shape.n;
  size_t imax = 0, imin = 0;
  for (size_t i = 0; i < n; i++) {
    if (m[i] > m[imax]) imax = i;
    if (t[i] < t[imin]) imin = i;
  }
  double tmin = t[imin];
  double tf0 = 2.0 * m[imax] * K * N / (t[imax] * 1e6) * 1.1;
  double bw_prior = (gpu && gpu->hbm_gbps > 0 ? gpu->hbm_gbps : TPS_FIT_GENERIC_HBM_GBPS) * path->stream_eff;
  int sliced = path->slice_rows > 0;
  f->gemm.kind = TPS_GEMM_PARAMETRIC;
  f->gemm.p[TPS_GP_SHARP] = TPS_GEMM_DEFAULT_SHARP;
  f->gemm.p[TPS_GP_BW_GBPS] = bw_prior;
  f->gemm.p[TPS_GP_LAUNCH_US] = 0;
  f->gemm.p[TPS_GP_REDUCE_US] = sliced ? path->reduce_us : 0;
  f->gemm.p[TPS_GP_FLOOR_US] = 0.3 * tmin;
  f->gemm.p[TPS_GP_TFLOPS] = tf0;
  pri->v[TPS_GP_BW_GBPS] = bw_prior;
  pri->v[TPS_GP_LAUNCH_US] = 0;
  pri->v[TPS_GP_REDUCE_US] = path->reduce_us;
  pri->v[TPS_GP_FLOOR_US] = path->floor_us;
  /* pruning priority (1 = first): see tps_fit_engine */
  prunable[TPS_GP_BW_GBPS] = 1;
  prunable[TPS_GP_FLOOR_US] = 2;
  prunable[TPS_GP_REDUCE_US] = 3;
  prunable[TPS_GP_LAUNCH_US] = 4;
  /* sliced paths: every launch pays launch_us and there is no separate floor (floor and
   * launch cost are not separable on the H20 data: only 96 tokens and >= 2048 tokens make
   * more than one launch) */
  if (sliced) f->gemm.p[TPS_GP_FLOOR_US] = 0;
  else tps_fit_add_par(f, TPS_GP_FLOOR_US, 0.5 * tmin, x0);
  tps_fit_add_par(f, TPS_GP_TFLOPS, tf0, x0);
  tps_fit_add_par(f, TPS_GP_BW_GBPS, bw_prior, x0);
  if (sliced) {
    tps_fit_add_par(f, TPS_GP_LAUNCH_US, 0.4 * tmin, x0);
    tps_fit_add_par(f, TPS_GP_REDUCE_US, path->reduce_us > 0 ? path->reduce_us : 0.01 * tmin, x0);
  }
}

int tps_fit_gemm(const tps_gemm_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz) {
  tps_fit_init(f, TPS_FIT_GEMM);
  int st;
  if (!d || d->n < 1) return tps_fit_fail(msg, msgsz, TPS_ETOOFEW, "no points");
  if ((st = tps_fit_check_shape(&d->shape, d->path, d->sms, msg, msgsz))) return st;
  if (d->n > TPS_FIT_MAXPTS) return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "more than %d points", TPS_FIT_MAXPTS);
  for (size_t i = 0; i < d->n; i++)
    if (d->rows[i] < 1 || (i && d->rows[i] <= d->rows[i - 1]))
      return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "rows[%zu] = %ld: rows must be >= 1 and strictly increasing", i, d->rows[i]);
  if ((st = tps_fit_check_times(d->time_us, d->n, "time_us", msg, msgsz))) return st;
  snprintf(f->gpu, sizeof f->gpu, "%s", d->gpu ? d->gpu->name : "generic");
  f->tp = 1;
  f->shape = d->shape;
  f->gemm.path = d->path;
  f->gemm.sms = d->sms;
  f->npts = d->n;
  for (size_t i = 0; i < d->n; i++) {
    f->pt[i].series = 0;
    f->pt[i].x = (double)d->rows[i];
    f->pt[i].measured_us = d->time_us[i];
  }
  tps_fit_start start;
  memset(&start, 0, sizeof start);
  tps_fit_gemm_setup(f, d->rows, d->time_us, d->n, d->gpu, &start);
  return tps_fit_engine(f, &start, o, msg, msgsz);
}
