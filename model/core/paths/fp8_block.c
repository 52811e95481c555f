/* fp8_block.c: the kernel path fp8-block, a named type (model/core/path.h); the sources [..] of its
 * values: model/core/paths/README. */
#include "model/core/path.h"

/* W8A8 FP8 with block scales, as engines run DeepSeek-V3-style checkpoints: E4M3 weights with
 * one fp32 scale per 128x128 block, activations quantized to E4M3 on every run with one fp32
 * scale per row and 128 columns (kernels/gemm/gemm_fp8block.cu, cuBLASLt's VEC128_32F and
 * BLK128x128_32F scale modes, SM90 only).  Bench only: no priors until it is measured. */
const tps_path tps_path_fp8_block = {
  .id = TPS_PATH_FP8_BLOCK,
  .flags = TPS_PATH_F_BENCH,
  .name = "fp8-block",
  .aliases = "fp8_block",           /* AIConfigurator's dtype name */
  .desc = "cuBLASLt FP8 E4M3 GEMM with block scales: weights 128x128, activations 1x128 quantized on every run (fp32 scales)",
  .weight_bytes = 1.0 + 4.0 / (128.0 * 128.0), /* E4M3 + one fp32 scale per 128x128 block */
  .act_bytes = 1.0 + 4.0 / 128.0,   /* E4M3 + one fp32 scale per 1x128 block */
  .fp8_peak = 1,
  .row_tile = 64,                   /* [A] */
  .col_tile = 128,                  /* [A] */
  .min_cc = 90,                     /* cuBLASLt's block-scaled FP8 modes exist on SM90 only */
  .source = "bench only",
  .model = TPS_PATH_MODEL_SPEC,
  .aic_dtype = "fp8_block",
  .spec_note = "",
};
