/* nvfp4.c: the kernel path nvfp4, a named type (model/core/path.h); the sources [..] of its
 * values: model/core/paths/README. */
#include "model/core/path.h"

/* NVFP4 (Blackwell): E2M1 weights and activations, one E4M3 scale per 16 elements along K (and
 * a per-tensor fp32 scale), activations quantized on every run; the FP4 tensor peak bounds it
 * (tps_gpu.fp4_tflops: a GPU without FP4 tensor cores is refused).  Model only: AIConfigurator's
 * nvfp4 tables (B200, RTX PRO 6000: data/aic/gemm_<gpu>_k5120_nvfp4.tsv.gz) and the cross-GPU
 * model's nvfp4 form; no kernel of ours.
 *  [AICF] those tables, K 5120 N 2048: M 16384 158.8 us on B200 = 24% of its 9000 TFLOPS FP4
 *       peak, 408 us on RTX PRO 6000 = 42% of 2015; M = 1: 15.8 / 22.6 us. */
const tps_path tps_path_nvfp4 = {
  .id = TPS_PATH_NVFP4,
  .flags = TPS_PATH_F_MODEL,
  .name = "nvfp4",
  .aliases = "fp4",
  .desc = "NVFP4 GEMM (Blackwell): E2M1 weights and activations with one E4M3 scale per 16 elements, activations quantized on every run",
  .weight_bytes = 0.5 + 1.0 / 16.0, /* E2M1 + one E4M3 scale per 16 */
  .act_bytes = 0.5 + 1.0 / 16.0,
  .fp8_peak = 0,
  .fp4_peak = 1,                    /* the FP4 tensor peak bounds it */
  .row_tile = 128,                  /* [A] SM100 block-scaled MMA tiles */
  .col_tile = 128,                  /* [A] */
  .min_cc = 100,                    /* FP4 tensor cores: Blackwell (SM100, SM120) */
  .compute_eff = 0.30,              /* [AICF] 24% (B200) .. 42% (RTX PRO 6000) of the FP4 peak at K 5120 N 2048 */
  .compute_eff_rsd = 0.35,          /* [AICF] */
  .stream_eff = 0.80,               /* [A] below fp8 (scales every 16 elements) */
  .stream_eff_rsd = 0.15,           /* [A] */
  .floor_us = 12.0,                 /* [AICF] below the 15.8 / 22.6 us of M = 1 */
  .source = "AIConfigurator nvfp4 tables: 24-42% of the FP4 peak at large M (B200, RTX PRO 6000); floor from M = 1 "
            "(quantization op + GEMM); weight streaming assumed 80% of HBM",
  .sibling_fixed_us = 8.0,          /* [A] no pair measured both: fp8-block's (native-fp8's) correction */
  .sibling_alpha = 0.25,
  .model = TPS_PATH_MODEL_XGEMM,
  .xgemm_form = 3,
  .aic_dtype = "nvfp4",
  .spec_note = "",
};
