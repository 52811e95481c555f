/* xgather.c: cross-GPU all-gather model (equations and sources in xgather.h). */
#include "xgather.h"
#include <math.h>
#include <string.h>
#include "loo.h"
#include "status.h"

const char *const tps_xga_proto_names[TPS_XGA_NPROTO] = {"LL", "LL128", "Simple"};
const char *const tps_xga_backend_names[TPS_XGA_NBACKEND] = {"nccl", "nccl-symm", "custom"};
const char *const tps_xga_backend_source[TPS_XGA_NBACKEND] = {
    "fitted: AIConfigurator nccl-tests all_gather tables (NCCL 2.27.3/2.29.2, 2/4/8 GPUs) of the training GPUs, "
    "transferred by NCCL's per-link bandwidth x links",
    "one published point: Megatron-LM PR 5596, H100 TP8 2 MiB 10.9 us symmetric (20.2 us ordinary); bandwidth "
    "of the fitted Simple protocol; not validated elsewhere",
    "priors of model/allgather.c (6 us floor, 75% of the NVLink line rate: the H20 split table's one-shot "
    "gather), per-rank input <= 2 MiB; not a cross-GPU fit"};

/* Megatron-LM PR 5596: 2 MiB all-gather at TP8 on H100 (NVLink4: 20.6 GB/s x 18 links). */
#define SYMM_REF_BYTES (2.0 * 1024 * 1024)
#define SYMM_REF_US 10.9
#define SYMM_REF_N 8
#define SYMM_REF_BUS_GBPS (20.6 * 18)

double tps_xga_bus_gbps(const tps_gpu *g) {
  if (!g) return 0;
  if (g->nvlink && g->links > 0 && g->nccl_link_gbps > 0) return g->nccl_link_gbps * g->links;
  return g->link_gbps > 0 ? g->link_gbps : 0;
}

/* Priors: the brief's rules of thumb (NCCL ~80-90% of line rate; 8-GPU floors 10-13 us on
 * Hopper; LL carries half its line in payload, LL128 ~94%), as starting values. */
void tps_xga_prior(tps_xga_model *m, int pcie) {
  memset(m, 0, sizeof *m);
  m->pcie = pcie;
  const double a[TPS_XGA_NPROTO] = {5.0, 6.0, 8.0}, b[TPS_XGA_NPROTO] = {0.6, 0.9, 1.5},
               f[TPS_XGA_NPROTO] = {0.35, 0.8, 0.9};
  for (int p = 0; p < TPS_XGA_NPROTO; p++) {
    m->p[TPS_XGA_PAR(p, TPS_XGA_A)] = a[p];
    m->p[TPS_XGA_PAR(p, TPS_XGA_B)] = b[p];
    m->p[TPS_XGA_PAR(p, TPS_XGA_F)] = pcie ? 0.3 * f[p] : f[p];
  }
  m->custom_floor_us = 6.0;
  m->custom_eff = 0.75;
  m->symm_lat_us = 5.0;
}

static double proto_us(const tps_xga_model *m, double B, double S, int n, int p) {
  double a = m->p[TPS_XGA_PAR(p, TPS_XGA_A)], b = m->p[TPS_XGA_PAR(p, TPS_XGA_B)], f = m->p[TPS_XGA_PAR(p, TPS_XGA_F)];
  return a + b * (n - 1) + S * (n - 1) / n / (f * B * 1e3);
}

double tps_xga_time_us(const tps_xga_model *m, const tps_gpu *gpu, double total_bytes, int n, int backend, int *proto) {
  if (proto) *proto = -1;
  if (!m || !gpu || n < 1 || !(total_bytes >= 0)) return NAN;
  if (n == 1) return 0.0;
  double B = tps_xga_bus_gbps(gpu);
  if (!(B > 0)) return NAN;
  switch (backend) {
    case TPS_XGA_CUSTOM:
      if (!gpu->nvlink || total_bytes / n > TPS_XGA_CUSTOM_CAP_BYTES) return NAN;
      return m->custom_floor_us + total_bytes * (n - 1) / n / (m->custom_eff * gpu->link_gbps * 1e3);
    case TPS_XGA_NCCL_SYMM:
      return m->symm_lat_us + total_bytes * (n - 1) / n / (m->p[TPS_XGA_PAR(TPS_XGA_SIMPLE, TPS_XGA_F)] * B * 1e3);
    case TPS_XGA_NCCL: {
      double best = INFINITY;
      for (int p = 0; p < TPS_XGA_NPROTO; p++) {
        double t = proto_us(m, B, total_bytes, n, p);
        if (t < best) { best = t; if (proto) *proto = p; }
      }
      return best;
    }
    default: return NAN;
  }
}

typedef struct {
  tps_xga_model *m;
  const tps_xga_point *pts;
  size_t n;
  double x0[TPS_XGA_NPAR];
} fitctx;

static void unpack(tps_xga_model *m, const double *x) {
  for (int j = 0; j < TPS_XGA_NPAR; j++) {
    double v = exp(x[j]);
    if (j % 3 == TPS_XGA_F && v > 1.0) v = 1.0;
    m->p[j] = v;
  }
}

static int resid(const double *x, double *r, double *w, void *vc) {
  fitctx *c = vc;
  unpack(c->m, x);
  for (size_t i = 0; i < c->n; i++) {
    const tps_xga_point *q = &c->pts[i];
    double t = tps_xga_time_us(c->m, q->gpu, q->bytes, q->n, TPS_XGA_NCCL, NULL);
    r[i] = isfinite(t) && t > 0 ? log(t / q->t_us) : 10.0;
    w[i] = q->weight;
  }
  for (int j = 0; j < TPS_XGA_NPAR; j++) {
    r[c->n + j] = TPS_LOO_LOSS_SCALE * (x[j] - c->x0[j]) / 2.0;
    w[c->n + j] = 0.02;
  }
  return 0;
}

int tps_xga_fit(tps_xga_model *m, const tps_xga_point *pts, size_t npts) {
  if (npts < TPS_XGA_NPAR + 1) return TPS_ETOOFEW;
  for (size_t i = 0; i < npts; i++)
    if (!(pts[i].t_us > 0) || !(pts[i].bytes > 0) || pts[i].n < 2 || !(tps_xga_bus_gbps(pts[i].gpu) > 0))
      return TPS_EBADDATA;
  fitctx c = {m, pts, npts, {0}};
  tps_xga_model prior;
  tps_xga_prior(&prior, m->pcie);
  double x[TPS_XGA_NPAR];
  for (int j = 0; j < TPS_XGA_NPAR; j++) {
    x[j] = log(m->p[j]);
    c.x0[j] = log(prior.p[j]);
  }
  int st = tps_robust_fit(x, TPS_XGA_NPAR, npts + TPS_XGA_NPAR, resid, &c, TPS_LOO_LOSS_SCALE, 200, 2, NULL);
  unpack(m, x);
  double fS = m->p[TPS_XGA_PAR(TPS_XGA_SIMPLE, TPS_XGA_F)];
  double bw_us = SYMM_REF_BYTES * (SYMM_REF_N - 1) / SYMM_REF_N / (fS * SYMM_REF_BUS_GBPS * 1e3);
  m->symm_lat_us = SYMM_REF_US - bw_us > 0.5 ? SYMM_REF_US - bw_us : 0.5;
  return st;
}
