/* w8a16.c: the kernel path w8a16, a named type (model/core/path.h); the sources [..] of its
 * values: model/core/paths/README. */
#include "model/core/path.h"

/* Our W8A16 kernels (kernels/gemm_w8a16*.cu): same weight format as Marlin, different
 * dispatch (model/core/w8plan.h: a split-K stream kernel up to 64 rows, then split, stream-K or
 * wgmma launches on SM90).  Predicted on
 * SM90 by their own model (model/latency/xgemm.h, tps_xw8: the kernels' rule, model/core/w8plan.h, fitted to
 * data/h100_w8a16_grid_5120x1792_w8a16.tsv) or
 * the measured table itself (src/evidence/evidence.c); the priors below are [A] placeholders used only
 * off SM90 (the mma.sync form, never measured) and in the spec scaling.  They are NOT
 * Marlin's (nothing aliases one to the other). */
const tps_path tps_path_w8a16 = {
  .id = TPS_PATH_W8A16,
  .flags = TPS_PATH_F_MODEL | TPS_PATH_F_BENCH,
  .name = "w8a16",
  .aliases = "",
  .desc = "our W8A16 kernels: FP8 E4M3 weights with E8M0 1x32 scales, bf16 activations (stream kernel up to 64 rows, then split, stream-K or wgmma by the dispatch rule)",
  .weight_bytes = 1.0 + 1.0 / 32.0, /* [FMT] */
  .act_bytes = 2.0,
  .fp8_peak = 0,
  .row_tile = 64,                   /* [A] wgmma tile rows */
  .col_tile = 128,                  /* [A] */
  .min_cc = 80,                     /* mma.sync form runs on SM80+ (kernels/gemm/gemm_w8a16.cu) */
  .compute_eff = 0.60,              /* [A] 0.75-0.88x of dense-bf16 at M >= 4096 on H100 (data/h100_w8a16_grid.txt) */
  .compute_eff_rsd = 0.20,
  .stream_eff = 0.80,               /* [A] */
  .stream_eff_rsd = 0.15,
  .floor_us = 4.0,                  /* [A] */
  .source = "assumed priors (off SM90 and spec-only; on SM90 the tps_xw8 model fitted to data/h100_w8a16_grid_5120x1792_w8a16.tsv)",
  .model = TPS_PATH_MODEL_OWN,
  .own_cc = 90,
  .aic_dtype = "",
  .record_as = "marlin-w8a16", /* bench split measures the model's marlin-w8a16 with our kernels */
  .spec_note = "our W8A16 kernels run their mma.sync form off SM90, never measured",
};
