/* native_fp8.c: the kernel path native-fp8, a named type (model/core/path.h); the sources [..] of its
 * values: model/core/paths/README. */
#include "model/core/path.h"

const tps_path tps_path_native_fp8 = {
  .id = TPS_PATH_NATIVE_FP8,
  .flags = TPS_PATH_F_MODEL | TPS_PATH_F_BENCH,
  .name = "native-fp8",
  .aliases = "fp8",
  .desc = "FP8 tensor-core GEMM (SM100 MXFP8, SM90 cuBLASLt FP8), activations quantized to FP8",
  .weight_bytes = 1.0,              /* [FMT] E4M3 with one scale per tensor, as every native-fp8 measurement
                                     * here (our cuBLASLt bench, AIConfigurator's fp8 rows); SM100 MXFP8
                                     * reads 1/32 more (E8M0 per 32), inside stream_eff_rsd */
  .act_bytes = 1.0,                 /* activations quantized to FP8 */
  .fp8_peak = 1,                    /* the fp8 tensor peak bounds it [K] */
  .row_tile = 64,                   /* [K] (assumed tile) */
  .col_tile = 128,                  /* [K] (assumed tile) */
  .min_cc = 89,                     /* [K] */
  .compute_eff = 0.70,              /* [A] fp8 GEMMs reach less of their (doubled) peak than bf16 [B2] */
  .compute_eff_rsd = 0.20,          /* [A] no measurement of this path anywhere: wide */
  .stream_eff = 0.85,               /* [B3] low end (scales read with the weights) */
  .stream_eff_rsd = 0.10,           /* [A] */
  .floor_us = 4.0,                  /* [B4] + [A] ~1.5 us for the activation quantization kernel */
  .source = "fp8 GEMMs reach less of their peak than bf16 (assumed 70%); weight streaming as dense (project brief); floor includes the activation quantization kernel",
  .sibling_fixed_us = 8.0,          /* [L] H100 <-> H200 bench tables: median 0.9% (copying: 4.1-4.2%) */
  .sibling_alpha = 0.25,            /* [L] a quarter of the HBM ratio: our fp8 path's time at small M is
                                     * its activation quantization and launch, not the weight stream */
  .model = TPS_PATH_MODEL_XGEMM,
  .xgemm_form = 1,
  .aic_dtype = "fp8",
  .spec_note = "",
};
