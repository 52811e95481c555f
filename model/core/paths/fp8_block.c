/* fp8_block.c: the kernel path fp8-block, a named type (model/core/path.h); the sources [..] of its
 * values: model/core/paths/README. */
#include "model/core/path.h"

/* W8A8 FP8 with block scales, as engines run DeepSeek-V3-style checkpoints: E4M3 weights with
 * one fp32 scale per 128x128 block, activations quantized to E4M3 on every run with one fp32
 * scale per row and 128 columns.  Bench: kernels/gemm/gemm_fp8block.cu (cuBLASLt's VEC128_32F
 * and BLK128x128_32F scale modes, SM90 only: the kernel refuses other GPUs itself).  Model:
 * what engines run (CUTLASS on SM89/90/120, DeepGEMM on SM100), measured in AIConfigurator's
 * fp8_block tables (data/aic/gemm_<gpu>_k5120_fp8_block.tsv.gz: H100, H200, B200, L40S, RTX PRO
 * 6000) and transferred by the cross-GPU model's fp8-block form.
 *  [AICB] those tables, K 5120 N 2048, M 16384: H100 413 us = 42% of the fp8 peak, B200 164 us
 *       = 47%; the SM89/SM120 CUTLASS kernels 25-28% (L40S, RTX PRO 6000); M = 1: 9.2-26 us
 *       (the framework's quantization op and the GEMM). */
const tps_path tps_path_fp8_block = {
  .id = TPS_PATH_FP8_BLOCK,
  .flags = TPS_PATH_F_MODEL | TPS_PATH_F_BENCH,
  .name = "fp8-block",
  .aliases = "fp8_block",           /* AIConfigurator's dtype name */
  .desc = "FP8 E4M3 GEMM with block scales: weights 128x128, activations 1x128 quantized on every run (fp32 scales)",
  .weight_bytes = 1.0 + 4.0 / (128.0 * 128.0), /* E4M3 + one fp32 scale per 128x128 block */
  .act_bytes = 1.0 + 4.0 / 128.0,   /* E4M3 + one fp32 scale per 1x128 block */
  .fp8_peak = 1,
  .row_tile = 64,                   /* [A] */
  .col_tile = 128,                  /* [A] */
  .min_cc = 89,                     /* [K] FP8 tensor cores; engines' CUTLASS kernels from SM89 (AIC has L40S rows) */
  .compute_eff = 0.45,              /* [AICB] 42-47% of the fp8 peak on SM90/SM100 */
  .compute_eff_rsd = 0.35,          /* [AICB] down to 25% on SM89/SM120 */
  .stream_eff = 0.85,               /* [B3] low end (scales read with the weights) */
  .stream_eff_rsd = 0.10,           /* [A] */
  .floor_us = 8.0,                  /* [AICB] below the 9.2-11.6 us of M = 1 on B200/H100 (quantization + GEMM) */
  .source = "AIConfigurator fp8_block tables: 42-47% of the fp8 peak at large M on H100/B200, 25-28% on L40S/RTX PRO 6000; "
            "weight streaming as native-fp8; floor from M = 1 (quantization op + GEMM)",
  .sibling_fixed_us = 8.0,          /* native-fp8's correction (learned on the bench tables, not on these), the
                                     * same quantize-then-FP8 structure; on the H100 <-> H200 AIC fp8_block pair
                                     * (tests/unit/model/test_sibling_data.c): median 2.6%, copying 5.1%, the full
                                     * spec ratio 9.6%, the grid's best 2.3% (6 us, 0.25: not taken, in sample) */
  .sibling_alpha = 0.25,
  .model = TPS_PATH_MODEL_XGEMM,
  .xgemm_form = 2,
  .aic_dtype = "fp8_block",
  .spec_note = "",
};
