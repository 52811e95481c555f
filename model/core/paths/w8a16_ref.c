/* w8a16_ref.c: the kernel path w8a16-ref, a named type (model/core/path.h); the sources [..] of its
 * values: model/core/paths/README. */
#include "model/core/path.h"

/* The reference W8A16 kernel: bench and tests only, no model. */
const tps_path tps_path_w8a16_ref = {
  .id = TPS_PATH_W8A16_REF,
  .flags = TPS_PATH_F_BENCH | TPS_PATH_F_REFKERNEL,
  .name = "w8a16-ref",
  .aliases = "",
  .desc = "reference W8A16 kernel (one thread per output, fp32): the check of the fast one",
  .weight_bytes = 1.0 + 1.0 / 32.0,
  .act_bytes = 2.0,
  .row_tile = 1,
  .col_tile = 1,
  .min_cc = 70,
  .source = "bench only",
  .model = TPS_PATH_MODEL_SPEC,
  .aic_dtype = "",
  .spec_note = "",
};
