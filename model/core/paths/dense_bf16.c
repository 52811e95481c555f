/* dense_bf16.c: the kernel path dense-bf16, a named type (model/core/path.h); the sources [..] of its
 * values: model/core/paths/README. */
#include "model/core/path.h"

const tps_path tps_path_dense_bf16 = {
  .id = TPS_PATH_DENSE_BF16,
  .flags = TPS_PATH_F_MODEL | TPS_PATH_F_BENCH,
  .name = "dense-bf16",
  .aliases = "bf16",
  .desc = "vendor bf16 GEMM (cuBLASLt), bf16 weights and activations",
  .weight_bytes = 2.0,              /* [FMT] bf16 */
  .act_bytes = 2.0,
  .fp8_peak = 0,
  .row_tile = 64,                   /* [K] (assumed tile) */
  .col_tile = 128,                  /* [K] (assumed tile) */
  .min_cc = 70,                     /* [K] */
  .compute_eff = 0.80,              /* [B2] */
  .compute_eff_rsd = 0.10,          /* [A] a vendor GEMM is well tuned: +-10% */
  .stream_eff = 0.875,              /* [B3] middle of 85-90% */
  .stream_eff_rsd = 0.05,           /* [B3] half the 85-90% range */
  .floor_us = 2.5,                  /* [B4] */
  .source = "large bf16 GEMMs ~80% of peak on Hopper; skinny GEMMs 85-90% of HBM; >=2.5 us per cuBLAS GEMM in a graph (project brief)",
  .sibling_fixed_us = 8.0,          /* [L] H100 <-> H200 bench tables: median 2.0% (copying: 13.9-16.2%) */
  .sibling_alpha = 1.0,             /* [L] the full HBM ratio where the weights stream */
  .model = TPS_PATH_MODEL_XGEMM,
  .xgemm_form = 0,
  .aic_dtype = "bfloat16",
  .spec_note = "",
};
