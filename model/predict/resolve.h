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

#ifdef __cplusplus
}
#endif
#endif
