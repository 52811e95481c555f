/* xgather.c: cross-GPU all-gather model (equations and sources in xgather.h). */
#include "model/latency/xgather.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/numeric/robust.h"
#include "model/core/status.h"

const char *const tps_xga_proto_names[TPS_XGA_NPROTO] = {"LL", "LL128", "Simple"};
const char *const tps_xga_backend_names[TPS_XGA_NBACKEND] = {"nccl", "nccl-symm", "custom"};
const char *const tps_xga_backend_source[TPS_XGA_NBACKEND] = {
    "fitted: AIConfigurator nccl-tests all_gather tables (NCCL 2.27.3/2.29.2, 2/4/8 GPUs) of the training GPUs, "
    "transferred by NCCL's per-link bandwidth x links",
    "one published point: Megatron-LM PR 5596, H100 TP8 2 MiB 10.9 us symmetric (20.2 us ordinary); bandwidth "
    "of the fitted Simple protocol; not validated elsewhere",
    "priors of model/latency/allgather.c (6 us floor, 75% of the NVLink line rate: the H20 split table's one-shot "
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

/* Priors: NCCL's own tuning model (src/graph/tuning.cc, ncclTopoTuneModel, ring algorithm,
 * one node): latency baseLat + (n-1) hwLat with baseLat LL/LL128/Simple = 6.6/14.0/8.4 us
 * and hwLat on NVLink 0.6/1.9/3.4 us (PCIe 1.0/2.5/5.7); bus bandwidth per protocol: LL
 * 1/3 of the ring's (all-gather) capped at llMaxBw = 87.7 GB/s (Ampere/Hopper, one node),
 * LL128 0.92 of it, Simple all of it (0.9 here: nccl-tests' busbw reaches 85-90% of NCCL's
 * per-link x links, the brief's rule of thumb).  LL128 is off on PCIe (NCCL enables it
 * only with NVLink between the GPUs).  The smooth minimum's sharpness starts at 8. */
void tps_xga_prior(tps_xga_model *m, int pcie) {
  memset(m, 0, sizeof *m);
  m->pcie = pcie;
  const double a[TPS_XGA_NPROTO] = {6.6, 14.0, 8.4}, bn[TPS_XGA_NPROTO] = {0.6, 1.9, 3.4},
               bp[TPS_XGA_NPROTO] = {1.0, 2.5, 5.7}, f[TPS_XGA_NPROTO] = {1.0 / 3.0, 0.92, 0.9};
  for (int p = 0; p < TPS_XGA_NPROTO; p++) {
    m->p[TPS_XGA_PAR(p, TPS_XGA_A)] = a[p];
    m->p[TPS_XGA_PAR(p, TPS_XGA_B)] = pcie ? bp[p] : bn[p];
    m->p[TPS_XGA_PAR(p, TPS_XGA_F)] = f[p];
  }
  m->p[TPS_XGA_LLCAP] = 87.7;
  m->p[TPS_XGA_SHARP] = 8.0;
  for (int p = 0; p < TPS_XGA_NPROTO; p++) m->p[TPS_XGA_PHI(p)] = p == TPS_XGA_LL ? 1.0 / 3.0 : 1.0;
  m->custom_floor_us = 6.0;
  m->custom_eff = 0.75;
  m->symm_lat_us = 5.0;
}

/* Is protocol p used on this fabric?  (LL128 needs NVLink: NCCL's pEnable.) */
static int proto_on(const tps_xga_model *m, int p) { return !(m->pcie && p == TPS_XGA_LL128); }

/* The protocol's bus bandwidth once all its channels run, GB/s. */
static double proto_gbps(const tps_xga_model *m, double B, int p) {
  double bw = m->p[TPS_XGA_PAR(p, TPS_XGA_F)] * B;
  if (p == TPS_XGA_LL && bw > m->p[TPS_XGA_LLCAP]) bw = m->p[TPS_XGA_LLCAP];
  return bw;
}

/* Bytes of the whole buffer per channel before NCCL adds a channel: its thread threshold
 * (bytes per thread: LL 8 x nRanks, LL128 8, Simple 64) x the protocol's threads per
 * channel (512, 640, 512) (NCCL src/include/device.h, enqueue.c: channels are cut while
 * nBytes < nc x nt x threshold). */
static double chan_bytes(int p, int n) {
  switch (p) {
    case TPS_XGA_LL: return 8.0 * n * 512;
    case TPS_XGA_LL128: return 8.0 * 640;
    default: return 64.0 * 512;
  }
}

/* Time of protocol p: latency + bytes / bandwidth, the bandwidth that of the channels the
 * size opens (one per chan_bytes, each at phi_p x the per-link bandwidth: NCCL's graph
 * gives every channel one link's bwIntra) up to the protocol's full bus bandwidth. */
static double proto_us(const tps_xga_model *m, double B, double link, double S, int n, int p) {
  double a = m->p[TPS_XGA_PAR(p, TPS_XGA_A)], b = m->p[TPS_XGA_PAR(p, TPS_XGA_B)];
  double full = proto_gbps(m, B, p), ch = S / chan_bytes(p, n);
  double ramp = m->p[TPS_XGA_PHI(p)] * link * (ch > 1 ? ch : 1);
  double bw = ramp < full ? ramp : full;
  return a + b * (n - 1) + S * (n - 1) / n / (bw * 1e3);
}

int tps_xga_term(int gather_backend) {
  return tps_gather_term_of(gather_backend) == TPS_GATHER_TERM_ONESHOT ? TPS_XGA_CUSTOM : TPS_XGA_NCCL;
}

double tps_xga_time_us(const tps_xga_model *m, const tps_gpu *gpu, double total_bytes, int n, int backend, int *proto) {
  if (proto) *proto = -1;
  if (!m || !gpu || n < 1 || !(total_bytes >= 0)) return NAN;
  if (n == 1) return 0.0;
  double B = tps_xga_bus_gbps(gpu);
  if (!(B > 0)) return NAN;
  switch (backend) {
    case TPS_XGA_CUSTOM:
      if (!gpu->nvlink || total_bytes / n > tps_gather_cap_default()) return NAN;
      return m->custom_floor_us + total_bytes * (n - 1) / n / (m->custom_eff * gpu->link_gbps * 1e3);
    case TPS_XGA_NCCL_SYMM:
      return m->symm_lat_us + total_bytes * (n - 1) / n / (proto_gbps(m, B, TPS_XGA_SIMPLE) * 1e3);
    case TPS_XGA_NCCL: {
      double link = gpu->nvlink && gpu->links > 0 ? B / gpu->links : B;
      /* smooth minimum (sum t_p^-k)^(-1/k), computed relative to the fastest protocol */
      double t[TPS_XGA_NPROTO], best = INFINITY, k = m->p[TPS_XGA_SHARP];
      for (int p = 0; p < TPS_XGA_NPROTO; p++) {
        t[p] = proto_on(m, p) ? proto_us(m, B, link, total_bytes, n, p) : INFINITY;
        if (t[p] < best) { best = t[p]; if (proto) *proto = p; }
      }
      if (!(best > 0) || !isfinite(best)) return best;
      double s = 0;
      for (int p = 0; p < TPS_XGA_NPROTO; p++) if (isfinite(t[p])) s += pow(best / t[p], k);
      return best * pow(s, -1.0 / k);
    }
    default: return NAN;
  }
}

/* the pull of each parameter to its prior: log-sd log 2, weight 0.05 (a GPU's points weigh 1) */
#define XGA_PRIOR_LOG_SD 0.693
#define XGA_PRIOR_W 0.05
typedef struct {
  tps_xga_model *m;
  const tps_xga_point *pts;
  size_t n;
  double x0[TPS_XGA_NPAR];
} fitctx;

static void unpack(tps_xga_model *m, const double *x) {
  for (int j = 0; j < TPS_XGA_NPAR; j++) {
    double v = exp(x[j]);
    if (j < 3 * TPS_XGA_NPROTO && j % 3 == TPS_XGA_F && v > 1.0) v = 1.0;
    if (j == TPS_XGA_SHARP && v < 2.0) v = 2.0;
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
    r[c->n + j] = TPS_LOO_LOSS_SCALE * (x[j] - c->x0[j]) / XGA_PRIOR_LOG_SD;
    w[c->n + j] = XGA_PRIOR_W;
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

int tps_xga_same_fabric(const tps_gpu *a, const tps_gpu *b) {
  return a && b && a != b && strcmp(a->name, b->name) != 0 && a->nvlink == b->nvlink && !strcmp(a->fabric, b->fabric) &&
         a->links == b->links && a->links > 0 && a->nccl_link_gbps > 0 && a->nccl_link_gbps == b->nccl_link_gbps &&
         a->link_gbps == b->link_gbps;
}

void tps_xga_fabric_weights(const tps_gpu *const *g, const int *use, int ns, double *w) {
  for (int i = 0; i < ns; i++) {
    int c = 1;
    for (int j = 0; j < ns && use[i]; j++) c += j != i && use[j] && tps_xga_same_fabric(g[i], g[j]);
    w[i] = use[i] ? 1.0 / c : 0.0;
  }
}

int tps_xga_fit_except(tps_xga_model *m, const tps_xga_set *s, int ns, int skip, int pcie) {
  size_t n = 0;
  const tps_gpu *g[64] = {0};
  int use[64] = {0};
  double w[64];
  if (ns > 64) return TPS_EINVAL;
  for (int i = 0; i < ns; i++) {
    g[i] = s[i].gpu;
    use[i] = i != skip && (s[i].gpu->nvlink == 0) == pcie;
    if (use[i]) n += s[i].n;
  }
  tps_xga_fabric_weights(g, use, ns, w);
  tps_xga_prior(m, pcie);
  if (!n) return TPS_ETOOFEW;
  tps_xga_point *p = calloc(n, sizeof *p);
  if (!p) return TPS_ENOMEM;
  size_t k = 0;
  for (int i = 0; i < ns; i++) {
    if (i == skip || (s[i].gpu->nvlink == 0) != pcie) continue;
    for (size_t j = 0; j < s[i].n; j++) {
      p[k] = s[i].p[j];
      p[k++].weight = w[i] / (double)s[i].n;
    }
  }
  int st = tps_xga_fit(m, p, k);
  free(p);
  return st;
}
