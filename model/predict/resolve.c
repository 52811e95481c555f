/* resolve.c: which model answers a part (see resolve.h). */
#include "model/predict/resolve.h"
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "model/latency/allgather.h"
#include "model/latency/gemm.h"
#include "model/predict/predict.h"

#include "model/numeric/robust.h"
#define SAME(a, b) ((a) && (b) && strcmp((a)->name, (b)->name) == 0)

static void copy_str(char *d, size_t n, const char *s) {
  if (!n) return;
  snprintf(d, n, "%s", s ? s : "");
}

static const tps_gpu *find_gpu(const tps_resolve_models *mv, const char *name) {
  for (size_t i = 0; i < mv->ngpus; i++)
    if (!strcmp(mv->gpus[i].name, name)) return &mv->gpus[i];
  return NULL;
}

static const tps_res_xgemm *xg_for(const tps_resolve_models *mv, int path, const tps_gpu *g) {
  const tps_res_xgemm *all = NULL;
  for (int i = 0; i < mv->nxg; i++) {
    if (mv->xg[i].path != path) continue;
    if (!strcmp(mv->xg[i].held, g->name)) return &mv->xg[i];
    if (!strcmp(mv->xg[i].held, "-")) all = &mv->xg[i];
  }
  return all;
}


static const tps_res_xgather *xa_for(const tps_resolve_models *mv, const tps_gpu *g) {
  const tps_res_xgather *all = NULL;
  int pcie = !g->nvlink;
  for (int i = 0; i < mv->nxa; i++) {
    if (mv->xa[i].pcie != pcie) continue;
    if (!strcmp(mv->xa[i].held, g->name)) return &mv->xa[i];
    if (!strcmp(mv->xa[i].held, "-")) all = &mv->xa[i];
  }
  return all;
}


/* "(the same fabric as H100-SXM)": a training GPU with the target's bus bandwidth. */
static void same_fabric(const tps_resolve_models *mv, const tps_gpu *g, const char *trained, char *buf, size_t sz) {
  buf[0] = 0;
  char list[400];
  copy_str(list, sizeof list, trained);
  for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
    const tps_gpu *h = find_gpu(mv, s);
    if (h && !SAME(h, g) && h->nvlink == g->nvlink && !strcmp(h->fabric, g->fabric) && h->links == g->links &&
        h->nccl_link_gbps == g->nccl_link_gbps && h->link_gbps == g->link_gbps) {
      snprintf(buf, sz, "; %s has the %s's fabric (%s, %d links x %.1f GB/s in NCCL's model), so the same bus bandwidth B",
               g->name, h->name, h->fabric[0] ? h->fabric : h->nvlink ? "NVLink" : "PCIe", h->links, h->nccl_link_gbps);
      return;
    }
  }
}


/* The GEMM model of (gpu, path, k, n): the part's model (kind, prov, rsd, text). */
int tps_resolve_gemm_model(const tps_resolve_models *mv, const tps_gpu *gpu, const tps_path *path, long k, long n, int aic_harness,
                      tps_part_model *m, char *src, size_t srcsz, char *from, size_t fromsz) {
  memset(m, 0, sizeof *m);
  m->gpu = *gpu;
  m->n = n;
  m->k = k;
  m->shape.k = k;
  m->shape.n = n;
  m->shape.out_bytes = TPS_PRED_DEFAULT_OUT_BYTES;
  src[0] = from[0] = 0;
  int xp = path->model == TPS_PATH_MODEL_XGEMM && path->xgemm_form >= 0 && path->xgemm_form < TPS_XG_NPATH ? path->xgemm_form : -1;
  if (xp >= 0 && tps_xg_supported(gpu, (tps_xg_path)xp)) {
    const tps_res_xgemm *r = xg_for(mv, xp, gpu);
    if (r) {
      m->kind = TPS_PM_XGEMM;
      m->prov = TPS_PROV_TRANSFERRED;
      m->xg = r->m;
      m->harness.kind = aic_harness ? TPS_XG_AIC : TPS_XG_FLUSHED;
      m->rsd = r->sigma / TPS_Z90;
      if (isfinite(tps_part_model_eval(m, 1, 0)) && isfinite(tps_part_model_eval(m, (double)mv->tmax, 0))) {
        copy_str(from, fromsz, r->trained);
        snprintf(src, srcsz, "transferred: the cross-GPU GEMM model (model/latency/xgemm.h, %s) fitted on %s (%s), by %s's SMs, clock, "
                 "%s peak, HBM and L2%s; 90%% +-%.0f%%", path->name, r->trained, mv->xgpu_file, gpu->name,
                 tps_path_peak_name(path), aic_harness ? " (AIConfigurator harness)" : " (L2 flushed, as tpsplit bench)",
                 100 * (exp(r->sigma) - 1));
        return 0;
      }
    }
  }
  if (path->model == TPS_PATH_MODEL_OWN && gpu->cc_major * 10 + gpu->cc_minor == path->own_cc && mv->w8) {
    const tps_gpu *fg = mv->w8_gpu;
    if (fg) {
      m->kind = TPS_PM_XW8;
      tps_xw8_transfer(&m->w8, mv->w8, fg, gpu);
      if (SAME(fg, gpu)) {
        m->prov = TPS_PROV_FITTED;
        m->rsd = mv->w8_sigma / TPS_Z90;
        snprintf(src, srcsz, "fitted: our W8A16 kernels' model (model/latency/xgemm.h, tps_xw8: the launches of the kernels' dispatch rule, model/core/w8plan.h) "
                 "fitted to %s; 90%% +-%.0f%% (leave one M out)", mv->w8_file, 100 * (exp(mv->w8_sigma) - 1));
      } else {
        const tps_res_xgemm *r = xg_for(mv, TPS_XG_BF16, gpu);
        double s = r && r->sigma > mv->w8_sigma ? r->sigma : mv->w8_sigma;
        m->prov = TPS_PROV_TRANSFERRED;
        m->rsd = s / TPS_Z90;
        copy_str(from, fromsz, fg->name);
        snprintf(src, srcsz, "transferred: our W8A16 kernels' model fitted on %s (%s), by HBM bandwidth and bf16 peak per SM "
                 "(the same SM90 kernels; not validated on another GPU: the dense-bf16 model's cross-GPU spread, 90%% +-%.0f%%)",
                 fg->name, mv->w8_file, 100 * (exp(s) - 1));
      }
      return 0;
    }
  }
  if (path->model == TPS_PATH_MODEL_TABLE_FIT) {
    if (mv->h20 && tps_gemm_transfer(&m->gm, &mv->h20->gemm, mv->h20_gpu, gpu, path) == 0) {
      m->kind = TPS_PM_GEMM;
      if (SAME(mv->h20_gpu, gpu)) {
        m->prov = TPS_PROV_FITTED;
        m->rsd = mv->h20->rms_rel;
        snprintf(src, srcsz, "fitted: the Marlin GEMM model (model/latency/gemm.h) fitted to %s", mv->h20_file);
      } else {
        m->prov = TPS_PROV_TRANSFERRED;
        m->rsd = path->compute_eff_rsd;
        copy_str(from, fromsz, mv->h20_gpu->name);
        snprintf(src, srcsz, "transferred: the Marlin GEMM fit of %s (%s), by peak x efficiency and HBM bandwidth (model/latency/gemm.h); "
                 "spread: the path prior's %.0f%% on compute, %.0f%% on streaming", mv->h20_file, mv->h20_gpu->name,
                 100 * path->compute_eff_rsd, 100 * path->stream_eff_rsd);
      }
      return 0;
    }
  }
  if (tps_gemm_from_spec(&m->gm, path, gpu) == 0) {
    m->kind = TPS_PM_GEMM;
    m->prov = TPS_PROV_SPEC;
    m->rsd = path->compute_eff_rsd;
    snprintf(src, srcsz, "spec-only: %s's datasheet x the %s priors (%s)%s%s", gpu->name, path->name, path->source,
             path->spec_note[0] ? "; " : "", path->spec_note);
    return 0;
  }
  return -1;
}


/* The gather model of (gpu, tp, backend): 0 ok, 1 none here (spec-only in the context). */
int tps_resolve_gather_model(const tps_resolve_models *mv, const tps_gpu *gpu, int tp, int backend, tps_part_model *m, char *src, size_t srcsz,
                        char *from, size_t fromsz) {
  memset(m, 0, sizeof *m);
  m->gpu = *gpu;
  m->backend = backend;
  src[0] = from[0] = 0;
  if (tp > TPS_PRED_DEFAULT_NODE_GPUS || tp == 1) return 1; /* one rank: no gather unless measured */
  if (tps_gather_term_of(backend) == TPS_GATHER_TERM_ONESHOT) {
    if (tps_gather_refuses(backend, gpu->nvlink, tp, TPS_PRED_DEFAULT_NODE_GPUS)) return 1;
    if (mv->h20 && mv->h20->ag.custom_gbps > 0) {
      /* the custom gather fitted to the H20 split table, moved by the spec models' ratio
       * (link bandwidth; the floor by the spec floors), as the model scaling moves it */
      const tps_fit *f = mv->h20;
      int fn = f->ag.ranks > 0 ? f->ag.ranks : f->tp;
      tps_ag_model ss, ds;
      tps_ag_from_spec(&ss, mv->h20_gpu, fn);
      tps_ag_from_spec(&ds, gpu, tp);
      m->kind = TPS_PM_AG;
      m->ag = ds;
      m->ag.custom_floor_us = f->ag.custom_floor_us * (ss.custom_floor_us > 0 ? ds.custom_floor_us / ss.custom_floor_us : 1.0);
      m->ag.custom_gbps = ss.custom_gbps > 0 ? f->ag.custom_gbps * ds.custom_gbps / ss.custom_gbps : f->ag.custom_gbps;
      m->ag.custom_cap_bytes = f->ag.custom_cap_bytes > 0 ? f->ag.custom_cap_bytes : tps_gather_cap_default();
      m->ag.ranks = tp;
      m->ag.ranks_per_node = TPS_PRED_DEFAULT_NODE_GPUS;
      int same = SAME(mv->h20_gpu, gpu) && fn == tp;
      m->prov = same ? TPS_PROV_FITTED : TPS_PROV_TRANSFERRED;
      m->rsd = same ? f->rms_rel : TPS_PRED_GATHER_RSD;
      if (!same) copy_str(from, fromsz, mv->h20_gpu->name);
      snprintf(src, srcsz, "%s: the custom one-shot gather fitted to %s (%s TP%d: %.2f us + S (n-1)/n / %.0f GB/s)%s: here %.2f us + "
               "S (n-1)/n / %.0f GB/s; spread %.0f%%", same ? "fitted" : "transferred", mv->h20_file, mv->h20_gpu->name, fn,
               f->ag.custom_floor_us, f->ag.custom_gbps, same ? "" : ", moved by link bandwidth and ring steps",
               m->ag.custom_floor_us, m->ag.custom_gbps, 100 * m->rsd);
      return 0;
    }
    tps_xga_prior(&m->xa, 0);
    m->kind = TPS_PM_XGATHER;
    m->prov = TPS_PROV_TRANSFERRED;
    m->rsd = TPS_PRED_GATHER_RSD;
    copy_str(from, fromsz, "H20");
    snprintf(src, srcsz, "transferred: the custom one-shot gather of model/latency/xgather.c, %.0f us + S (n-1)/n / (%.2f x %.0f GB/s), "
             "priors from the H20 split table moved by link bandwidth (not a cross-GPU fit); spread %.0f%%", m->xa.custom_floor_us,
             m->xa.custom_eff, gpu->link_gbps, 100 * TPS_PRED_GATHER_RSD);
    return 0;
  }
  if (tps_gather_term_of(backend) != TPS_GATHER_TERM_RING) return 1; /* a rule: the backends it picks */
  const tps_res_xgather *r = xa_for(mv, gpu);
  if (!r || !(tps_xga_bus_gbps(gpu) > 0)) return 1;
  m->kind = TPS_PM_XGATHER;
  m->prov = TPS_PROV_TRANSFERRED;
  m->xa = r->m;
  m->rsd = r->sigma / TPS_Z90;
  copy_str(from, fromsz, r->trained);
  char fab[300];
  same_fabric(mv, gpu, r->trained, fab, sizeof fab);
  snprintf(src, srcsz, "transferred: the cross-GPU NCCL all-gather model (model/latency/xgather.h, LL/LL128/Simple) of %s GPUs fitted on %s "
           "(%s), by %s's bus bandwidth B = %.1f GB/s%s; 90%% +-%.0f%%", r->pcie ? "PCIe" : "NVLink", r->trained,
           mv->xgpu_file, gpu->name, tps_xga_bus_gbps(gpu), fab, 100 * (exp(r->sigma) - 1));
  return 0;
}


int tps_resolve_gather_fit(tps_part_model *m, const tps_ag_model *fit, int fit_ranks, double rms_rel, const tps_gpu *fit_gpu,
                           const tps_gpu *gpu, int tp, int backend) {
  m->kind = TPS_PM_AG;
  m->gpu = *gpu;
  m->backend = backend;
  m->ag = *fit;
  if (!fit_gpu || strcmp(fit_gpu->name, gpu->name) != 0 || fit_ranks != tp) {
    tps_ag_model ss, ds;
    tps_ag_from_spec(&ss, fit_gpu ? fit_gpu : gpu, fit_ranks > 0 ? fit_ranks : tp);
    tps_ag_from_spec(&ds, gpu, tp);
    tps_ag_model d = ds;
    for (int q = 0; q < TPS_NPROTO; q++) {
      if (fit->lat_us[q] > 0 && ss.lat_us[q] > 0) d.lat_us[q] = fit->lat_us[q] * ds.lat_us[q] / ss.lat_us[q];
      if (ss.busbw_gbps[q] > 0) d.busbw_gbps[q] = fit->busbw_gbps[q] * ds.busbw_gbps[q] / ss.busbw_gbps[q];
    }
    if (ds.custom_gbps > 0 && fit->custom_gbps > 0 && ss.custom_gbps > 0) {
      d.custom_floor_us = fit->custom_floor_us * (ss.custom_floor_us > 0 ? ds.custom_floor_us / ss.custom_floor_us : 1.0);
      d.custom_gbps = fit->custom_gbps * ds.custom_gbps / ss.custom_gbps;
    }
    d.custom_cap_bytes = fit->custom_cap_bytes > 0 ? fit->custom_cap_bytes : tps_gather_cap_default();
    m->ag = d;
    m->prov = TPS_PROV_TRANSFERRED;
    m->rsd = TPS_PRED_GATHER_RSD;
  } else {
    m->prov = TPS_PROV_FITTED;
    m->rsd = rms_rel;
  }
  m->ag.ranks = tp;
  m->ag.ranks_per_node = TPS_PRED_DEFAULT_NODE_GPUS;
  m->ag.internode_gbps = TPS_PRED_DEFAULT_IB_GBPS / 8.0;
  m->ag.internode_lat_us = TPS_PRED_DEFAULT_INTERNODE_LAT_US;
  return m->prov;
}

/* ------------------------------------------------------------------ measured siblings */
int tps_resolve_gemm_sibling(const tps_gpu *sib, const tps_gpu *tgt) {
  if (!sib || !tgt || SAME(sib, tgt)) return 0;
  if (sib->arch[0] && tgt->arch[0]) return !strcmp(sib->arch, tgt->arch); /* the GPU table's family */
  return sib->cc_major > 0 && sib->cc_major == tgt->cc_major;
}

int tps_resolve_gather_sibling(const tps_gpu *sib, const tps_gpu *tgt) { return tps_xga_same_fabric(sib, tgt); }

static double logr(double a, double b) { return a > 0 && b > 0 ? fabs(log(a / b)) : 10.0; }

double tps_resolve_sibling_gemm_rsd(const tps_gpu *sib, const tps_gpu *tgt) {
  return TPS_RESOLVE_SIBLING_GEMM_RSD + 0.5 * logr((double)sib->sms, (double)tgt->sms);
}

double tps_resolve_sibling_distance(const tps_gpu *a, const tps_gpu *b) {
  return logr(a->hbm_gbps, b->hbm_gbps) + logr(a->bf16_tflops, b->bf16_tflops) + logr((double)a->sms, (double)b->sms);
}

static double peak_for(const tps_gpu *g, const tps_path *path) {
  double pk = tps_path_peak_tflops(path, g);
  return pk > 0 ? pk : path->fp4_peak ? 0 : g->bf16_tflops;
}

/* The roofline time of the GEMM on g, a 4-norm of the streaming and compute times (us). */
static double roof_us(const tps_gpu *g, const tps_path *path, double m, double n, double k) {
  double bytes = k * n * path->weight_bytes + m * k * path->act_bytes + m * n * 2.0;
  double ts = bytes / (g->hbm_gbps * 1e3), tc = 2.0 * m * n * k / (peak_for(g, path) * 1e6);
  double mx = ts > tc ? ts : tc, x = ts / mx, y = tc / mx;
  return mx * sqrt(sqrt(x * x * x * x + y * y * y * y));
}

double tps_resolve_sibling_gemm_us_with(const tps_gpu *sib, const tps_gpu *tgt, const tps_path *path, double m, long n,
                                        long k, double t_sib_us, double fixed_us, double alpha, double *hbm_ratio,
                                        double *peak_ratio) {
  if (hbm_ratio) *hbm_ratio = NAN;
  if (peak_ratio) *peak_ratio = NAN;
  if (!sib || !tgt || !path || !(m >= 1) || n < 1 || k < 1 || !(t_sib_us > 0) || !(sib->hbm_gbps > 0) ||
      !(tgt->hbm_gbps > 0) || !(peak_for(sib, path) > 0) || !(peak_for(tgt, path) > 0) || !(fixed_us >= 0) || !(alpha >= 0))
    return NAN;
  if (hbm_ratio) *hbm_ratio = tgt->hbm_gbps / sib->hbm_gbps;
  if (peak_ratio) *peak_ratio = peak_for(tgt, path) / peak_for(sib, path);
  double fl = fixed_us < 0.5 * t_sib_us ? fixed_us : 0.5 * t_sib_us;
  double r = roof_us(tgt, path, m, (double)n, (double)k) / roof_us(sib, path, m, (double)n, (double)k);
  return fl + (t_sib_us - fl) * pow(r, alpha);
}

double tps_resolve_sibling_gemm_us(const tps_gpu *sib, const tps_gpu *tgt, const tps_path *path, double m, long n, long k,
                                   double t_sib_us, double *hbm_ratio, double *peak_ratio) {
  if (!path) return NAN;
  double fx = path->sibling_fixed_us > 0 ? path->sibling_fixed_us : path->floor_us;
  double al = path->sibling_alpha > 0 ? path->sibling_alpha : 1.0;
  return tps_resolve_sibling_gemm_us_with(sib, tgt, path, m, n, k, t_sib_us, fx, al, hbm_ratio, peak_ratio);
}

double tps_resolve_sibling_fit_us(const tps_gemm_model *fit, const tps_gpu *fit_gpu, const tps_gpu *sib, const tps_gpu *tgt,
                                  const tps_path *path, long m, long n, long k, double t_sib_us, double *fixed_sib_us,
                                  double *fixed_tgt_us) {
  if (fixed_sib_us) *fixed_sib_us = NAN;
  if (fixed_tgt_us) *fixed_tgt_us = NAN;
  tps_gemm_model ms, mt;
  tps_gemm_shape sh = {k, n, TPS_PRED_DEFAULT_OUT_BYTES};
  if (!fit || !fit_gpu || !sib || !tgt || !path || m < 1 || !(t_sib_us > 0) || !(sib->hbm_gbps > 0) || !(tgt->hbm_gbps > 0) ||
      tps_gemm_transfer(&ms, fit, fit_gpu, sib, path) || tps_gemm_transfer(&mt, fit, fit_gpu, tgt, path))
    return NAN;
  double fs = tps_gemm_fixed_us(&ms, &sh, m), ft = tps_gemm_fixed_us(&mt, &sh, m);
  if (!(fs >= 0) || !(ft >= 0)) return NAN;
  if (fs > 0.5 * t_sib_us) { ft *= 0.5 * t_sib_us / fs; fs = 0.5 * t_sib_us; } /* the measured time keeps half */
  if (fixed_sib_us) *fixed_sib_us = fs;
  if (fixed_tgt_us) *fixed_tgt_us = ft;
  double r = roof_us(tgt, path, (double)m, (double)n, (double)k) / roof_us(sib, path, (double)m, (double)n, (double)k);
  return ft + (t_sib_us - fs) * r;
}

size_t tps_resolve_monotone(const double *src, double *t, size_t n) {
  size_t raised = 0;
  for (size_t i = 1; i < n; i++)
    if (src[i] >= src[i - 1] && t[i] < t[i - 1]) { t[i] = t[i - 1]; raised++; }
  return raised;
}

/* ------------------------------------------------------------------ harness conversion */
int tps_resolve_harness_convert(const tps_resolve_models *mv, const tps_gpu *gpu, const tps_path *path, long k, long n,
                                int from_h, int to_h, const double *x, double *t, size_t npts, double *rlo, double *rhi,
                                char *trained, size_t trsz) {
  if (from_h == to_h) return 1;
  if (from_h < 0 || from_h >= TPS_NHARNESS || to_h < 0 || to_h >= TPS_NHARNESS) return -1;
  int xp = path->model == TPS_PATH_MODEL_XGEMM && path->xgemm_form >= 0 && path->xgemm_form < TPS_XG_NPATH ? path->xgemm_form : -1;
  if (xp < 0 || !tps_xg_supported(gpu, (tps_xg_path)xp)) return 1;
  const tps_res_xgemm *r = xg_for(mv, xp, gpu);
  if (!r) return 1;
  tps_xg_harness hf = {from_h}, ht = {to_h};
  double *ratio = malloc((npts ? npts : 1) * sizeof *ratio);
  if (!ratio) return -1;
  for (size_t i = 0; i < npts; i++) {
    long m = (long)(x[i] + 0.5);
    double a = tps_xg_time_us(&r->m, gpu, &hf, m, n, k, NULL), b = tps_xg_time_us(&r->m, gpu, &ht, m, n, k, NULL);
    if (!(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b)) { free(ratio); return 1; }
    ratio[i] = b / a;
  }
  *rlo = INFINITY;
  *rhi = 0;
  for (size_t i = 0; i < npts; i++) {
    t[i] *= ratio[i];
    if (ratio[i] < *rlo) *rlo = ratio[i];
    if (ratio[i] > *rhi) *rhi = ratio[i];
  }
  free(ratio);
  copy_str(trained, trsz, r->trained);
  return 0;
}

int tps_resolve_harness_convert_sibling(const double *fx, const double *ft, size_t nf, const double *tx, const double *tt,
                                        size_t nt, const double *x, double *t, size_t npts, double *rlo, double *rhi) {
  if (nf < 2 || nt < 2) return 1;
  tps_mcurve *cf = tps_mcurve_alloc(fx, ft, nf), *ct = tps_mcurve_alloc(tx, tt, nt);
  if (!cf || !ct) { tps_mcurve_free(cf); tps_mcurve_free(ct); return -1; }
  /* the ratio outside the rows both curves hold is the ratio at the nearest end of them: clamping each curve
   * apart divided one table's last row by the other's row far past it (a bench table to 8192 rows against an
   * AIConfigurator table to 32768: x0.21 at 32768 rows, where the rows both hold give x0.66..x1.05) */
  const double lo = fmax(tps_mcurve_xlo(cf), tps_mcurve_xlo(ct)), hi = fmin(tps_mcurve_xhi(cf), tps_mcurve_xhi(ct));
  double *ratio = malloc((npts ? npts : 1) * sizeof *ratio);
  int rc = !ratio ? -1 : !(lo <= hi) ? 1 : 0;
  for (size_t i = 0; i < npts && !rc; i++) {
    const double xc = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
    double a = tps_mcurve_eval_clamped(cf, xc), b = tps_mcurve_eval_clamped(ct, xc);
    if (!(a > 0) || !(b > 0)) rc = 1;
    else ratio[i] = b / a;
  }
  *rlo = INFINITY;
  *rhi = 0;
  for (size_t i = 0; i < npts && !rc; i++) {
    t[i] *= ratio[i];
    *rlo = fmin(*rlo, ratio[i]);
    *rhi = fmax(*rhi, ratio[i]);
  }
  free(ratio);
  tps_mcurve_free(cf);
  tps_mcurve_free(ct);
  return rc;
}

/* ------------------------------------------------------------------ the provenance of a row */
int tps_resolve_has_gather(const tps_pred *p) {
  if (p->tp > 1) return 1;
  for (int b = 0; p->scaling == TPS_SCALING_PARTS && b < TPS_NGATHERS; b++)
    if (p->apart[b]) return 1;
  return 0;
}

static int gemm_row(const tps_pred *p, int gemm_prov, long rows) {
  if (!p->gpart) return TPS_ROW_NONE;
  return tps_pred_gemm_outside(p, rows) && p->gpart->meas ? p->gpart->model.prov : gemm_prov;
}

tps_row_prov tps_resolve_row_prov(const tps_pred *p, int gemm_prov, const int gather_prov[TPS_NGATHERS], long t) {
  tps_row_prov r = {TPS_ROW_NONE, TPS_ROW_NONE, TPS_ROW_NONE, -1};
  const int gather = tps_resolve_has_gather(p);
  if (gather) tps_pred_split_us(p, t, &r.backend);
  if (p->scaling != TPS_SCALING_PARTS) {
    int same = strcmp(p->ref_gpu.name, p->gpu.name) == 0;
    int v = p->scaling == TPS_SCALING_SPEC ? TPS_PROV_SPEC
            : same && p->scaling == TPS_SCALING_MODEL ? TPS_PROV_FITTED : TPS_PROV_TRANSFERRED;
    r.replicated = r.split = r.gather = v;
    return r;
  }
  r.replicated = gemm_row(p, gemm_prov, t);
  r.split = gemm_row(p, gemm_prov, tps_pred_rows_per_rank(p, t));
  if (!gather) return r;
  const double x = tps_pred_gathered_bytes(p, t);
  /* a measured curve of the rule answers where it covers T, and where it has a model */
  const int rb = tps_gather_is_rule(p->backend) && p->apart[p->backend] ? p->backend : -1;
  if (rb >= 0 && tps_part_covers(p->apart[rb], x, x)) { r.gather = gather_prov[rb]; return r; }
  const int sb = rb >= 0 && p->apart[rb]->model.kind != TPS_PM_NONE ? rb : r.backend;
  const tps_part *s = sb >= 0 ? p->apart[sb] : NULL;
  if (!s) r.gather = TPS_PROV_SPEC;
  else r.gather = s->meas && tps_part_covers(s, x, x) ? gather_prov[sb] : s->model.prov;
  return r;
}
