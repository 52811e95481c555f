/* fit_gather.c: the all-gather fit (tps_fit_allgather): the custom backend's floor and
 * bandwidth, or the NCCL protocols chosen by BIC and named after the fit (see fit.h). */
#include "model/fit/fit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/fit/fit_impl.h"

/* The fitted NCCL regimes (protocols on) are told apart by their parameters only; name
 * them: sorted by latency (the envelope goes from low latency and bandwidth to high), they
 * are mapped in order onto the protocols (LL, LL128, Simple) so that their parameters are
 * nearest the priors in log space.  Relabelling changes no model value. */
static void name_regimes(tps_fit *f, const tps_fit_priors *pri) {
  int reg[TPS_NPROTO], k = 0;
  for (int p = 0; p < TPS_NPROTO; p++)
    if (f->ag.busbw_gbps[p] > 0) reg[k++] = p;
  for (int a = 1; a < k; a++)
    for (int b = a; b > 0 && f->ag.lat_us[reg[b]] < f->ag.lat_us[reg[b - 1]]; b--) {
      int t = reg[b]; reg[b] = reg[b - 1]; reg[b - 1] = t;
    }
  int best[TPS_NPROTO] = {0, 1, 2};
  double best_d = INFINITY;
  for (int mask = 1; mask < (1 << TPS_NPROTO); mask++) {
    int c[TPS_NPROTO], n = 0;
    for (int p = 0; p < TPS_NPROTO; p++)
      if ((mask >> p) & 1) c[n++] = p;
    if (n != k) continue;
    double d = 0;
    for (int i = 0; i < k; i++) {
      double pl = pri->v[TPS_FT_AG_LAT0 + c[i]], pb = pri->v[TPS_FT_AG_BW0 + c[i]];
      double l = f->ag.lat_us[reg[i]], b = f->ag.busbw_gbps[reg[i]];
      if (pl > 0 && l > 0) d += pow(log(l / pl), 2);
      if (pb > 0 && b > 0) d += pow(log(b / pb), 2);
    }
    if (d < best_d) { best_d = d; memcpy(best, c, sizeof c); }
  }
  tps_ag_model old = f->ag;
  double ref[TPS_NPROTO];
  memcpy(ref, f->nccl_busbw_ref, sizeof ref);
  for (int p = 0; p < TPS_NPROTO; p++) {
    f->ag.busbw_gbps[p] = 0;
    f->ag.lat_us[p] = pri->v[TPS_FT_AG_LAT0 + p];
  }
  for (int i = 0; i < k; i++) {
    f->ag.lat_us[best[i]] = old.lat_us[reg[i]];
    f->ag.busbw_gbps[best[i]] = old.busbw_gbps[reg[i]];
    f->nccl_busbw_ref[best[i]] = ref[reg[i]];
  }
  for (int j = 0; j < f->npar; j++) {
    int t = f->par_target[j];
    for (int i = 0; i < k; i++) {
      if (t == TPS_FT_AG_LAT0 + reg[i]) { f->par_target[j] = TPS_FT_AG_LAT0 + best[i]; break; }
      if (t == TPS_FT_AG_BW0 + reg[i]) { f->par_target[j] = TPS_FT_AG_BW0 + best[i]; break; }
    }
    snprintf(f->par_name[j], sizeof f->par_name[j], "%s", tps_fit_target_name(f->par_target[j]));
  }
  char off[64] = "";
  for (int p = 0; p < TPS_NPROTO; p++)
    if (!(f->ag.busbw_gbps[p] > 0)) {
      size_t len = strlen(off);
      snprintf(off + len, sizeof off - len, "%s%s", len ? ", " : "", tps_proto_names[p]);
    }
  if (off[0]) {
    size_t len = strlen(f->fixed_note);
    snprintf(f->fixed_note + len, sizeof f->fixed_note - len, "%sprotocols off (the BIC-selected fit has %d "
             "regime%s): %s", len ? "; " : "", k, k > 1 ? "s" : "", off);
  }
}

int tps_fit_allgather(const tps_ag_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz) {
  tps_fit_init(f, TPS_FIT_ALLGATHER);
  int st;
  if (!d || d->n < 1) return tps_fit_fail(msg, msgsz, TPS_ETOOFEW, "no points");
  if (d->ranks < 2) return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "an all-gather needs >= 2 ranks (got %d)", d->ranks);
  if (d->n > TPS_FIT_MAXPTS) return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "more than %d points", TPS_FIT_MAXPTS);
  for (size_t i = 0; i < d->n; i++)
    if (!(d->bytes[i] > 0) || !isfinite(d->bytes[i]) || (i && d->bytes[i] <= d->bytes[i - 1]))
      return tps_fit_fail(msg, msgsz, TPS_EBADDATA, "bytes[%zu] = %g: sizes must be > 0 and strictly increasing", i, d->bytes[i]);
  if ((st = tps_fit_check_times(d->time_us, d->n, "time_us", msg, msgsz))) return st;
  tps_gpu gg = d->gpu ? *d->gpu : tps_fit_generic_gpu();
  snprintf(f->gpu, sizeof f->gpu, "%s", gg.name);
  f->tp = d->ranks;
  const int oneshot = tps_gather_term_of(d->backend) == TPS_GATHER_TERM_ONESHOT;
  f->gather = oneshot ? d->backend : tps_gather_fallback();
  tps_ag_from_spec(&f->ag, &gg, d->ranks);
  f->ag.custom_cap_bytes = 1e300; /* a custom table measures the custom kernel at every size */
  f->gemm.kind = TPS_GEMM_PARAMETRIC;
  f->npts = d->n;
  for (size_t i = 0; i < d->n; i++) {
    f->pt[i].series = 0;
    f->pt[i].x = d->bytes[i];
    f->pt[i].measured_us = d->time_us[i];
  }
  tps_fit_start start;
  memset(&start, 0, sizeof start);
  double n = d->ranks, tmin = d->time_us[0];
  for (size_t i = 0; i < d->n; i++)
    if (d->time_us[i] < tmin) tmin = d->time_us[i];
  double big_bus = d->bytes[d->n - 1] * (n - 1) / n / (d->time_us[d->n - 1] * 1e3); /* GB/s */
  if (oneshot) {
    f->ag.custom_floor_us = 0.8 * tmin;
    f->ag.custom_gbps = big_bus * 1.1;
    tps_fit_add_par(f, TPS_FT_AG_CUSTOM_FLOOR, 0.8 * tmin, start.x0);
    tps_fit_add_par(f, TPS_FT_AG_CUSTOM_GBPS, big_bus * 1.1, start.x0);
  } else {
    /* The fastest protocol wins, so a protocol's parameters are seen only by the sizes
     * it wins.  Model selection: every non-empty subset of the protocols is fitted (the
     * others off, busbw 0: never fastest within the measured sizes, the data say nothing
     * about them), a subset counts only when each of its protocols is fastest at two or
     * more sizes and all its parameters are identified; the subset with the lowest BIC,
     * n ln(chi2/n) + p ln n, wins.  Starting values are shaped like the prior (LL ~40%
     * and LL128 ~92% of Simple's bandwidth at lower latency), scaled to the data's ends. */
    double bw0[TPS_NPROTO] = {0.4 * big_bus * 1.1, 0.92 * big_bus * 1.1, big_bus * 1.1};
    double lat0[TPS_NPROTO] = {0.9 * tmin, 1.2 * tmin, 1.6 * tmin};
    for (int p = 0; p < TPS_NPROTO; p++) {
      start.pri.v[TPS_FT_AG_LAT0 + p] = f->ag.lat_us[p];
      start.pri.v[TPS_FT_AG_BW0 + p] = f->ag.busbw_gbps[p];
    }
    tps_fit *both = malloc(2 * sizeof *both);
    if (!both) return tps_fit_fail(msg, msgsz, TPS_ENOMEM, "out of memory");
    tps_fit *base = &both[0], *candp = &both[1];
#define cand (*candp)
    *base = *f;
    int best_mask = 0;
    double best_bic = INFINITY;
    tps_fit_opts quick = {0, o ? o->max_iter : 0};
    static const int masks[3] = {4, 5, 7}; /* 1, 2, 3 regimes; named afterwards */
    for (int mi = 0; mi < 3; mi++) {
      int mask = masks[mi];
      cand = *base;
      for (int p = 0; p < TPS_NPROTO; p++) {
        int on = (mask >> p) & 1;
        cand.ag.busbw_gbps[p] = on ? bw0[p] : 0;
        cand.ag.lat_us[p] = lat0[p];
        cand.nccl_busbw_ref[p] = bw0[p];
        if (on) {
          tps_fit_add_par(&cand, TPS_FT_AG_LAT0 + p, lat0[p], start.x0);
          tps_fit_add_par(&cand, TPS_FT_AG_BW0 + p, bw0[p], start.x0);
        }
      }
      if (tps_fit_engine(&cand, &start, &quick, NULL, 0) != TPS_OK) continue;
      int wins[TPS_NPROTO] = {0, 0, 0}, ok = 1;
      for (size_t i = 0; i < d->n; i++) {
        int pr = -1;
        tps_ag_time_us(&cand.ag, d->bytes[i], d->ranks, tps_gather_fallback(), NULL, &pr);
        if (pr >= 0) wins[pr]++;
      }
      for (int p = 0; p < TPS_NPROTO; p++)
        if (((mask >> p) & 1) && wins[p] < 2) ok = 0;
      for (int j = 0; j < cand.npar; j++)
        if (!(cand.hi95[j] - cand.theta[j] < 0.5 * cand.theta[j])) ok = 0; /* identified within +-50% */
      double nn = (double)cand.npts;
      double bic = nn * log(cand.chi2 / nn + 1e-300) + cand.npar * log(nn);
      if (ok && bic < best_bic) { best_bic = bic; best_mask = mask; }
    }
#undef cand
    free(both);
    if (!best_mask)
      return tps_fit_fail(msg, msgsz, TPS_ENOCONV, "no subset of the NCCL protocols (LL, LL128, Simple) fits these "
                  "data with identified parameters");
    for (int p = 0; p < TPS_NPROTO; p++) {
      int on = (best_mask >> p) & 1;
      f->ag.busbw_gbps[p] = on ? bw0[p] : 0;
      f->ag.lat_us[p] = lat0[p];
      f->nccl_busbw_ref[p] = bw0[p];
      if (on) {
        tps_fit_add_par(f, TPS_FT_AG_LAT0 + p, lat0[p], start.x0);
        tps_fit_add_par(f, TPS_FT_AG_BW0 + p, bw0[p], start.x0);
      }
    }
    st = tps_fit_engine(f, &start, o, msg, msgsz);
    if (st == TPS_OK) name_regimes(f, &start.pri);
    return st;
  }
  return tps_fit_engine(f, &start, o, msg, msgsz);
}
