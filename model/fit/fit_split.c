/* fit_split.c: the joint fit of a split-vs-replicated table (tps_fit_split): the GEMM
 * parameters against both columns and the gather's against the split one (see fit.h). */
#include "model/fit/fit.h"
#include <string.h>
#include "model/fit/fit_impl.h"

int tps_fit_split(const tps_split_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz) {
  tps_fit_init(f, TPS_FIT_SPLIT);
  int st;
  if (!d || d->n < 1) return tps_fit_fail(msg, msgsz, TPS_ETOOFEW, "no points");
  if ((st = tps_fit_check_shape(&d->shape, d->path, d->sms, msg, msgsz))) return st;
  if (d->tp < 2) return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "TP must be >= 2 for a split table (got %d)", d->tp);
  if (!(d->out_bytes_per_token > 0)) return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "out_bytes_per_token must be > 0");
  if (!tps_gather_get(d->gather))
    return tps_fit_fail(msg, msgsz, TPS_EINVAL, "gather backend %d is not a tps_gather_id", d->gather);
  if (2 * d->n > TPS_FIT_MAXPTS) return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "more than %d points", TPS_FIT_MAXPTS / 2);
  for (size_t i = 0; i < d->n; i++)
    if (d->tokens[i] < 1 || (i && d->tokens[i] <= d->tokens[i - 1]))
      return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "tokens[%zu] = %ld: tokens must be >= 1 and strictly increasing", i, d->tokens[i]);
  if ((st = tps_fit_check_times(d->replicated_us, d->n, "replicated_us", msg, msgsz))) return st;
  if ((st = tps_fit_check_times(d->split_us, d->n, "split_us", msg, msgsz))) return st;
  tps_gpu gg = d->gpu ? *d->gpu : tps_fit_generic_gpu();
  snprintf(f->gpu, sizeof f->gpu, "%s", gg.name);
  f->tp = d->tp;
  f->shape = d->shape;
  f->out_bytes_per_token = d->out_bytes_per_token;
  f->gather = d->gather;
  f->gemm.path = d->path;
  f->gemm.sms = d->sms;
  tps_ag_from_spec(&f->ag, &gg, d->tp);
  if (!gg.nvlink && f->ag.custom_gbps <= 0) {
    /* no custom backend prior on a non-NVLink GPU: give it one so custom tables still fit */
    tps_gpu nv = gg;
    nv.nvlink = 1;
    tps_ag_model tmp;
    tps_ag_from_spec(&tmp, &nv, d->tp);
    f->ag.custom_floor_us = tmp.custom_floor_us;
    f->ag.custom_gbps = tmp.custom_gbps;
  }
  f->ag.custom_cap_bytes = tps_gather_is_capped(d->gather) ? 1e300 : d->gather_cap_bytes > 0 ? d->gather_cap_bytes : tps_gather_cap_default();
  for (int p = 0; p < TPS_NPROTO; p++) f->nccl_busbw_ref[p] = f->ag.busbw_gbps[p];
  /* points: replicated column, then split column */
  f->npts = 2 * d->n;
  for (size_t s = 0; s < 2; s++)
    for (size_t i = 0; i < d->n; i++) {
      tps_fit_point *pt = &f->pt[s * d->n + i];
      pt->series = (int)s;
      pt->x = (double)d->tokens[i];
      pt->measured_us = s ? d->split_us[i] : d->replicated_us[i];
    }
  tps_fit_start start;
  memset(&start, 0, sizeof start);
  tps_fit_gemm_setup(f, d->tokens, d->replicated_us, d->n, d->gpu, &start);
  /* gather parameters: which backends do the split points use? */
  size_t ncustom = 0, nnccl = 0;
  for (size_t i = 0; i < d->n; i++) {
    int b = -1;
    tps_fit_gather_of(f, &f->ag, d->tokens[i], &b);
    if (tps_gather_term_of(b) == TPS_GATHER_TERM_ONESHOT) ncustom++; else nnccl++;
  }
  start.pri.v[TPS_FT_AG_CUSTOM_FLOOR] = f->ag.custom_floor_us;
  start.pri.v[TPS_FT_AG_CUSTOM_GBPS] = f->ag.custom_gbps;
  start.pri.v[TPS_FT_AG_NCCL_SCALE] = 1.0;
  start.prunable[TPS_FT_AG_CUSTOM_FLOOR] = 5;
  start.prunable[TPS_FT_AG_CUSTOM_GBPS] = 6;
  start.prunable[TPS_FT_AG_NCCL_SCALE] = 7;
  if (ncustom) {
    tps_fit_add_par(f, TPS_FT_AG_CUSTOM_FLOOR, f->ag.custom_floor_us, start.x0);
    tps_fit_add_par(f, TPS_FT_AG_CUSTOM_GBPS, f->ag.custom_gbps, start.x0);
  }
  if (nnccl) tps_fit_add_par(f, TPS_FT_AG_NCCL_SCALE, 1.0, start.x0);
  return tps_fit_engine(f, &start, o, msg, msgsz);
}
