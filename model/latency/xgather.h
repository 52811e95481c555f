/* xgather.h: an all-gather latency model that transfers across GPUs.
 *
 * Backends a user can name, each with its model terms and provenance:
 *
 *  nccl: NCCL's three protocols, combined by a smooth minimum (what its tuner aims at):
 *      t_p(S, n) = a_p + b_p (n-1) + S (n-1)/n / bw_p(S)      p in {LL, LL128, Simple}
 *      bw_p(S)   = min(f_p B (LL also <= LLCAP), phi_p link max(1, S / c_p))  (channels
 *                  opened by size, c_p bytes each, at phi_p x one link: model/latency/xgather.c)
 *      t         = (sum_p t_p^-k)^(-1/k)   (LL128 off on PCIe; priors: NCCL's tuning.cc)
 *    S = the whole gathered buffer (nccl-tests' size), bytes; B = the fabric's bus
 *    bandwidth per GPU from the datasheet: NVLink: NCCL's topology model per-link bandwidth x
 *    links (20.0 SM80/NVLink3, 20.6 SM90/NVLink4, 40.1 SM100/NVLink5: the NVLink generation
 *    enters here); PCIe: the slot's link_gbps.  Shared parameters (a_p, b_p, f_p) per fabric
 *    kind (NVLink, PCIe), fitted to NCCL all_gather measurements (AIConfigurator nccl-tests
 *    tables, 2, 4 and 8 GPUs) of several GPUs at once.
 *  nccl-symm: NCCL on registered symmetric buffers (ncclCommWindowRegister, NCCL >= 2.27):
 *      t = symm_lat_us + S (n-1)/n / (f_Simple B)
 *    symm_lat_us from ONE published point (Megatron-LM PR 5596: 2 MiB at TP8 on H100,
 *    10.9 us symmetric vs 20.2 us ordinary), with Simple's fitted bandwidth; transferred by
 *    B only.  Not validated on any other GPU or size.
 *  custom: a one-shot NVLink pull between two barriers (vLLM custom all-gather of the seed
 *    PR), per-rank input S/n <= the backend's cap (model/core/backend.c, 2 MiB); above it the caller uses
 *    nccl:
 *      t = custom_floor_us + S (n-1)/n / (custom_eff * link_gbps)
 *    custom_floor_us and custom_eff from the H20 split table (the brief's vLLM PR: the split
 *    at 48..4096 tokens, one-shot gather) are priors, not a cross-GPU fit.
 * Times in us, bytes, GB/s (1e3 B/us). */
#ifndef TPS_MODEL_XGATHER_H
#define TPS_MODEL_XGATHER_H
#include <stddef.h>
#include "model/core/gpu.h"
#include "model/core/backend.h"
#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_XGA_LL = 0, TPS_XGA_LL128, TPS_XGA_SIMPLE, TPS_XGA_NPROTO };
extern const char *const tps_xga_proto_names[TPS_XGA_NPROTO]; /* "LL", "LL128", "Simple" */

enum { TPS_XGA_NCCL = 0, TPS_XGA_NCCL_SYMM, TPS_XGA_CUSTOM, TPS_XGA_NBACKEND };
extern const char *const tps_xga_backend_names[TPS_XGA_NBACKEND]; /* "nccl", "nccl-symm", "custom" */
/* One line of provenance per backend. */
extern const char *const tps_xga_backend_source[TPS_XGA_NBACKEND];

/* The term of this model that prices a gather backend of model/core/backend.h (by its
 * latency-term field: ring -> nccl, one-shot -> custom; a rule has none: nccl). */
int tps_xga_term(int gather_backend);

/* Parameter vector: per protocol a (us), b (us per peer), f (fraction of B); then LL's
 * payload cap (GB/s) and the sharpness k of the smooth minimum over the protocols. */
enum { TPS_XGA_A = 0, TPS_XGA_B = 1, TPS_XGA_F = 2 };
#define TPS_XGA_PAR(proto, what) (3 * (proto) + (what))
#define TPS_XGA_LLCAP (3 * TPS_XGA_NPROTO)
#define TPS_XGA_SHARP (3 * TPS_XGA_NPROTO + 1)
#define TPS_XGA_PHI(proto) (3 * TPS_XGA_NPROTO + 2 + (proto)) /* per-channel rate / per-link bandwidth */
#define TPS_XGA_NPAR (4 * TPS_XGA_NPROTO + 2)

typedef struct {
  int pcie;                  /* 0: NVLink parameters, 1: PCIe parameters */
  double p[TPS_XGA_NPAR];
  double symm_lat_us;        /* nccl-symm fixed latency */
  double custom_floor_us;    /* custom one-shot */
  double custom_eff;
} tps_xga_model;

/* The fabric's bus bandwidth per GPU B (GB/s, see above); 0 when unknown. */
double tps_xga_bus_gbps(const tps_gpu *gpu);
/* Priors (starting values; symm/custom terms set as documented). */
void tps_xga_prior(tps_xga_model *m, int pcie);

/* Time of one all-gather of total_bytes over n ranks, us (0 for n = 1, NaN when invalid).
 * proto (may be NULL): the NCCL protocol that won (-1 for custom and nccl-symm).  custom
 * above its cap returns NaN (the caller falls back to nccl). */
double tps_xga_time_us(const tps_xga_model *m, const tps_gpu *gpu, double total_bytes, int n, int backend,
                       int *proto);

typedef struct {
  const tps_gpu *gpu;
  int n;
  double bytes, t_us, weight;
} tps_xga_point;

/* Fit the NCCL parameters of m to the points (robust, as tps_xg_fit), then set
 * symm_lat_us from the Megatron-LM point through the fitted Simple bandwidth.
 * TPS_OK, TPS_ETOOFEW, TPS_EBADDATA or TPS_ENOCONV. */
int tps_xga_fit(tps_xga_model *m, const tps_xga_point *pts, size_t npts);

/* One GPU's points (the training sets of a leave-one-GPU-out). */
typedef struct {
  const tps_gpu *gpu;
  const tps_xga_point *p;
  size_t n;
} tps_xga_set;
/* 1 when GPUs a and b (distinct) share a scale-up fabric for NCCL: both NVLink or both PCIe,
 * the same fabric family, link count (> 0), NCCL per-link and per-direction bandwidths: the
 * same bus bandwidth B (H100 and H200: their measured gathers differ by 2-5%).  The gather
 * siblings of model/predict/resolve.h. */
int tps_xga_same_fabric(const tps_gpu *a, const tps_gpu *b);
/* The weight of each of ns GPUs g[i] in a fit (use[i] 0: not in it, weight 0): every fabric
 * weighs 1, shared evenly among its GPUs in the fit (tps_xga_same_fabric; a GPU with no
 * fabric sibling is a fabric of its own).  H100 and H200 are one NVLink4 fabric measured
 * twice: counting each as a GPU of its own pulls the fit to NVLink4 and away from the
 * other generations (doc/transfer.md: the held-out A100 and B200 medians). */
void tps_xga_fabric_weights(const tps_gpu *const *g, const int *use, int ns, double *w);
/* Fit m from the priors of its fabric (pcie) to the points of every set but skip (-1: none)
 * whose GPU is of that fabric, each fabric weighing 1 in all (tps_xga_fabric_weights; each
 * point its set's weight / the set's points).
 * TPS_ETOOFEW (no point), TPS_ENOMEM, or tps_xga_fit's status. */
int tps_xga_fit_except(tps_xga_model *m, const tps_xga_set *s, int ns, int skip, int pcie);

#ifdef __cplusplus
}
#endif
#endif
