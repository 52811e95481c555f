/* resolve.h: which model answers a part of a prediction when no measurement does, and
 * where it comes from (issue 26 item 4: the policy lives in model/, pure, testable without
 * files).  src/evidence/evidence.c loads the files (data/xgpu.fit, the bundled H20 table,
 * data/h200_gemm_w8a16.tsv) into a tps_resolve_models view and asks these functions; the
 * measured parts themselves are chosen there (a file beats every model).
 *
 * GEMM of (GPU, path, K, N), the first that applies:
 *   1. dense-bf16 / native-fp8: the cross-GPU GEMM model (model/latency/xgemm.h) fitted on
 *      every bundled GPU but the target (the row held out for it, else the all-GPU row);
 *   2. w8a16 on SM90: our kernels' model fitted on one GPU, transferred by HBM and bf16
 *      peak per SM to another SM90 GPU;
 *   3. marlin-w8a16: the fit of the bundled H20 table, transferred by peak x efficiency
 *      and HBM bandwidth;
 *   4. spec-only: the datasheet x the path's priors.
 * Before these models, a measured sibling (issue 27 item 2): when the target's own
 * measurement is missing, a GPU of its architecture family (the GPU table's arch column,
 * else the compute capability major: H20/H100/H200/H800; B200/B300/GB200/GB300) whose GEMM
 * of this path is measured answers,
 * its measured times moved by the spec ratio of the regime (tps_resolve_sibling_gemm_us);
 * for a gather, a GPU of the same fabric (the table's fabric family, link count, NCCL's
 * per-link bandwidth: the same bus bandwidth) answers with its measured times as they are.
 * all-gather of (GPU, TP, backend): none for TP 1 or beyond one 8-GPU node (spec-only in the
 *   context); custom: the H20 fit moved by link bandwidth (else xgather's priors); NCCL: the
 *   cross-GPU all-gather model of the GPU's fabric (NVLink or PCIe). */
#ifndef TPS_MODEL_RESOLVE_H
#define TPS_MODEL_RESOLVE_H
#include <stddef.h>
#include "model/core/gpu.h"
#include "model/core/path.h"
#include "model/fit/fit.h"
#include "model/latency/xgemm.h"
#include "model/latency/xgather.h"
#include "model/predict/parts.h"
#include "model/predict/predict.h"
#ifdef __cplusplus
extern "C" {
#endif

/* One cross-GPU GEMM fit: for path (TPS_XG_*), fitted with GPU `held` left out ("-": on
 * all), its held-out 90% log half-width sigma, the GPUs it was trained on. */
typedef struct { int path; char held[32]; double sigma; char trained[400]; tps_xg_model m; } tps_res_xgemm;
/* One cross-GPU all-gather fit, per fabric (pcie 0 NVLink, 1 PCIe). */
typedef struct { int pcie; char held[32]; double sigma; char trained[400]; tps_xga_model m; } tps_res_xgather;

/* What the evidence layer has loaded (pointers into its storage; NULL/0: not available). */
typedef struct {
  const tps_res_xgemm *xg;
  int nxg;
  const tps_res_xgather *xa;
  int nxa;
  const char *xgpu_file;       /* as shown in sources ("data/xgpu.fit") */
  const tps_xw8_model *w8;     /* our W8A16 kernels' model, NULL: none */
  const tps_gpu *w8_gpu;       /* the GPU it was fitted on */
  const char *w8_file;
  double w8_sigma;
  const tps_fit *h20;          /* the fit of the bundled Marlin table, NULL: none */
  const tps_gpu *h20_gpu;
  const char *h20_file;
  const tps_gpu *gpus;         /* every GPU of the table (names of training GPUs are looked up here) */
  size_t ngpus;
  long tmax;                   /* the question's largest token count */
} tps_resolve_models;

/* The GEMM model of (gpu, path, k, n) into m (kind, prov, rsd), its one-line source into src
 * and the GPUs it was fitted on into from ("" when fitted on the target).  aic_harness: the
 * part is measured in AIConfigurator's harness (the xgemm model answers in the same one).
 * 0, or -1 when no model applies. */
int tps_resolve_gemm_model(const tps_resolve_models *r, const tps_gpu *gpu, const tps_path *path, long k, long n,
                           int aic_harness, tps_part_model *m, char *src, size_t srcsz, char *from, size_t fromsz);
/* The gather model of (gpu, tp, backend): 0 with m, src, from; 1 none here (the context uses
 * the spec-only model). */
int tps_resolve_gather_model(const tps_resolve_models *r, const tps_gpu *gpu, int tp, int backend, tps_part_model *m,
                             char *src, size_t srcsz, char *from, size_t fromsz);

/* ------------------------------------------------------------------ harness conversion */
/* Measured GEMM times t at rows x (npts points) of (gpu, path, k, n), timed by harness from_h,
 * converted in place to harness to_h (model/core/harness.h) by the ratio of the cross-GPU
 * model's two harness forms at each row count (the model fitted with gpu left out when the
 * table has one: what the model learnt from the GPUs measured in both harnesses, carried to
 * this one).  rlo..rhi: the range of the ratios; trained: the GPUs the model was fitted on.
 * 0 converted; 1 no conversion possible (same harness, or no cross-GPU model of this path on
 * this GPU: our W8A16 kernels and Marlin have bench-harness evidence only); -1 bad input. */
int tps_resolve_harness_convert(const tps_resolve_models *mv, const tps_gpu *gpu, const tps_path *path, long k, long n,
                                int from_h, int to_h, const double *x, double *t, size_t npts, double *rlo, double *rhi,
                                char *trained, size_t trsz);
/* The same conversion by a measured sibling (a GPU of the same architecture and fabric,
 * tps_resolve_gemm_sibling) timed by both harnesses: its curve in harness from (fx, ft: rows,
 * us, nf points, rows increasing) and in harness to (tx, tt), each interpolated in log-log;
 * t[i] *= to(x[i]) / from(x[i]) with x[i] held to the rows both curves hold (outside them, the
 * ratio at their nearest end).  The better evidence where a sibling was measured both ways
 * (tests/unit/model/test_harness_data).  0 converted (rlo..rhi the ratios), 1 not (fewer than 2
 * points, or no row both curves hold), -1 no memory. */
int tps_resolve_harness_convert_sibling(const double *fx, const double *ft, size_t nf, const double *tx, const double *tt,
                                        size_t nt, const double *x, double *t, size_t npts, double *rlo, double *rhi);
/* Spread added to a converted curve (lognormal sd), from the held-out medians of
 * tests/unit/model/test_harness_data on the two GPUs measured by both harnesses (doc/predict.md,
 * "Harness"): by a sibling's two tables 1.7-3.5%, by the model 2.2-10.8%. */
#define TPS_RESOLVE_HARNESS_SIBLING_RSD 0.04
#define TPS_RESOLVE_HARNESS_MODEL_RSD 0.10

/* ------------------------------------------------------------------ measured siblings */
/* Spread of a sibling's measurement moved to the target (lognormal sd): GEMM and gather,
 * so that its 90% interval (TPS_Z90 x the spread) holds 90% of the held-out misses of the one
 * pair measured both (H100 <-> H200; `tpsplit fit --loo-gpu --only transfer`, its last line:
 * the 90% quantile of the sibling answers' |log error|; doc/transfer.md).  GEMM: 0.108 over
 * 676 points (AIC dense-bf16 and fp8, N 1536/2048, M 1..16384, and the bench tables, moved
 * by tps_resolve_sibling_gemm_us) -> 0.108 / TPS_Z90 = 0.066 (was 0.06, the median miss:
 * 14% of the points fell outside); gather: 0.082 over 132 points (2, 4, 8 GPUs, 64 KiB..64
 * MiB, as measured: nccl-tests' per-size noise reaches 20% at 4 MiB on 8 GPUs although the
 * medians differ by 2-5%) -> 0.050 (was 0.03: half the 8-GPU points fell outside).  One
 * pair: calibrated on it, so 90% there by construction, not a validation. */
#define TPS_RESOLVE_SIBLING_GEMM_RSD 0.066
#define TPS_RESOLVE_SIBLING_GATHER_RSD 0.050

/* The gather of a reference fit (fit: its all-gather model, fitted on fit_ranks ranks of
 * fit_gpu, rms_rel its relative error; fit_gpu NULL: unknown) for gpu at tp with a concrete
 * backend: the fit's own where it measured this GPU and TP (TPS_PROV_FITTED, spread rms_rel),
 * else moved by the ratio of the datasheet models of the two (per protocol: latency and bus
 * bandwidth; the custom gather's floor and bandwidth), with the default inter-node terms
 * (TPS_PROV_TRANSFERRED, spread TPS_PRED_GATHER_RSD).  m gets kind TPS_PM_AG; its prov is
 * returned. */
int tps_resolve_gather_fit(tps_part_model *m, const tps_ag_model *fit, int fit_ranks, double rms_rel, const tps_gpu *fit_gpu,
                           const tps_gpu *gpu, int tp, int backend);

/* The spread of a GEMM moved from sib to tgt: TPS_RESOLVE_SIBLING_GEMM_RSD when they have
 * the same SM count, widened by half the |log| ratio of SM counts otherwise ([A]: waves and
 * tiles per SM do not move with HBM and peak; H200 -> H20, 132 vs 78 SMs: 0.066 + 0.26). */
double tps_resolve_sibling_gemm_rsd(const tps_gpu *sib, const tps_gpu *tgt);
/* 1 when sib's GEMM measurements may answer for tgt (same architecture family: arch, else
 * the compute capability major), else 0. */
int tps_resolve_gemm_sibling(const tps_gpu *sib, const tps_gpu *tgt);
/* 1 when sib's gather measurements may answer for tgt (same scale-up fabric), else 0. */
int tps_resolve_gather_sibling(const tps_gpu *sib, const tps_gpu *tgt);
/* How far apart two GPUs' datasheets are (|log| ratios of HBM, bf16 peak and SMs summed):
 * of several siblings the nearest answers. */
double tps_resolve_sibling_distance(const tps_gpu *a, const tps_gpu *b);
/* A GEMM time t_sib_us measured on sib at m rows (N n, K k, path) moved to tgt: the part
 * above a fixed part fixed_us (at most half the time) scaled by r^alpha, r the ratio of the
 * roofline times, a 4-norm of (weights + operands) / HBM and 2mnk / peak, on the two GPUs
 * (peak: fp8 for paths bound by the fp8 rate, else bf16).  *hbm_ratio and *peak_ratio (may
 * be NULL) get tgt/sib of HBM and peak, for the provenance line.  NaN on bad input. */
double tps_resolve_sibling_gemm_us_with(const tps_gpu *sib, const tps_gpu *tgt, const tps_path *path, double m, long n,
                                        long k, double t_sib_us, double fixed_us, double alpha, double *hbm_ratio,
                                        double *peak_ratio);
/* The same with the path's learned correction (path->sibling_fixed_us, else floor_us;
 * path->sibling_alpha, else 1). */
double tps_resolve_sibling_gemm_us(const tps_gpu *sib, const tps_gpu *tgt, const tps_path *path, double m, long n, long k,
                                   double t_sib_us, double *hbm_ratio, double *peak_ratio);

/* A GEMM time t_sib_us measured on sib at m rows moved to tgt on a path whose fixed floor was
 * learnt from a table (Marlin: the fit of the H20 table, fit on fit_gpu): the fixed part
 * F(m) of the fit (model/latency/gemm.h tps_gemm_fixed_us: floor, each launch's fixed cost
 * and serial reduction steps, the steps counted by each GPU's SMs; at most half of t_sib_us,
 * F_tgt scaled with it) is kept, the rest moved by the regime's roofline ratio r (HBM where
 * the weights stream, tensor rate where it computes): F_tgt(m) + (t_sib_us - F_sib(m)) r.
 * *fixed_sib_us, *fixed_tgt_us (may be NULL) get the two fixed parts.  NaN on bad input. */
double tps_resolve_sibling_fit_us(const tps_gemm_model *fit, const tps_gpu *fit_gpu, const tps_gpu *sib, const tps_gpu *tgt,
                                  const tps_path *path, long m, long n, long k, double t_sib_us, double *fixed_sib_us,
                                  double *fixed_tgt_us);

/* Keep t[0..n) (times moved to the target, at increasing rows) non-decreasing wherever the
 * sibling's own times src[0..n) are: the regime ratio falls with M where the two GPUs'
 * balance of HBM and tensor rate differ (H20 -> H100: 1/1.19 streaming, 1/6.7 computing),
 * which would carve a dip where the sibling changes regime; a dip the sibling measured
 * (noise, a kernel change) is kept.  Returns how many points it raised. */
size_t tps_resolve_monotone(const double *src, double *t, size_t n);

/* The provenance record of one row of a prediction (issue 26 item 4): where the value of
 * each part at T tokens comes from, a TPS_PROV_* each; TPS_ROW_NONE where the split has no
 * such part (no gather: TP 1 without a measured one-rank gather; no GEMM part). */
enum { TPS_ROW_NONE = -1 };
typedef struct {
  int replicated;  /* the replicated GEMM, T rows */
  int split;       /* the split GEMM, ceil(T/TP) rows */
  int gather;      /* the gather of the split at T (the backend that runs there) */
  int backend;     /* that backend (tps_pred_split_us); -1 without a gather */
} tps_row_prov;
/* The record of row T of context p.  Parts scaling: gemm_prov is the TPS_PROV_* of the GEMM
 * part's measurement (p->gpart) as the evidence resolved it, gather_prov[b] that of the
 * gather part of backend b (p->apart[b]); a row inside a part's measured range takes it,
 * outside the part's model's (model.prov); a backend without a part is spec-only.  Other
 * scalings: spec-only; fitted on the fit's own GPU; else transferred.  Pure. */
tps_row_prov tps_resolve_row_prov(const tps_pred *p, int gemm_prov, const int gather_prov[TPS_NGATHERS], long t);
/* Whether the split at p has a gather: TP > 1, or a measured one-rank gather. */
int tps_resolve_has_gather(const tps_pred *p);

#ifdef __cplusplus
}
#endif
#endif
