/* marlin_w8a16.c: the kernel path marlin-w8a16, a named type (model/core/path.h); the sources [..] of its
 * values: model/core/paths/README. */
#include "model/core/path.h"

const tps_path tps_path_marlin_w8a16 = {
  .id = TPS_PATH_MARLIN_W8A16,
  .flags = TPS_PATH_F_MODEL,
  .name = "marlin-w8a16",
  .aliases = "marlin",
  .desc = "FP8 E4M3 weights with one E8M0 scale per 1x32 block, dequantized in an mma.sync kernel, bf16 activations",
  .weight_bytes = 1.0 + 1.0 / 32.0, /* [FMT] */
  .act_bytes = 2.0,                 /* bf16 activations (brief) */
  .fp8_peak = 0,                    /* dequantized to bf16: the bf16 tensor peak bounds it [K] */
  .row_tile = 16,                   /* [K] */
  .col_tile = 256,                  /* [K] */
  .min_cc = 80,                     /* [K] */
  .compute_eff = 0.57,              /* [H20] measured; below the 75% ceiling [B1] */
  .compute_eff_rsd = 0.25,          /* [A] from 57% (H20) up to the 75% ceiling [B1] on other GPUs: +-25% */
  .stream_eff = 0.85,               /* [B3], low end */
  .stream_eff_rsd = 0.10,           /* [A] 85-90% [B3] plus dequantization overhead */
  .floor_us = 6.0,                  /* [A] below the 14.1 us of 6 tokens on H20 [H20], above [B4] */
  .source = "H20 table (57% of bf16 peak at M>=4096); mma.sync ceiling ~75% of bf16 peak on Hopper (project brief)",
  /* Marlin splits M into slices of <= 64 rows (thread_m_blocks <= 4), at most
   * max_par = 16 slices per launch (vLLM marlin host loop); reduce_us from the H20 fit. */
  .slice_rows = 64,
  .max_par = 16,
  .reduce_us = 0.2,
  .model = TPS_PATH_MODEL_TABLE_FIT,
  .aic_dtype = "",
  .spec_note = "",
};
