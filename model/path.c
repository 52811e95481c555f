/* path.c: the three GEMM kernel paths and their priors.  See path.h.
 *
 * Sources of the priors (the brief's "rules of thumb", themselves from public
 * measurements; leads, not truths):
 *  - mma.sync kernels on Hopper reach at best ~75% of the bf16 peak;
 *  - large bf16 GEMMs through cuBLAS reach ~80% of peak on Hopper;
 *  - skinny GEMMs stream weights at 85-90% of HBM bandwidth;
 *  - a cuBLAS GEMM in a CUDA graph costs at least ~2.5 us on Hopper.
 *  - marlin-w8a16 on H20 measured: 83-84 TFLOPS at M >= 4096 = 57% of H20's 148 TFLOPS
 *    bf16 peak (data/h20_tp8_fused_wqa_wkv.tsv). */
#include "path.h"
#include <stddef.h>
#include <strings.h>

const tps_path tps_path_marlin_w8a16 = {
  .name = "marlin-w8a16",
  .desc = "FP8 E4M3 weights with one E8M0 scale per 1x32 block, dequantized in an mma.sync kernel, bf16 activations",
  .weight_bytes = 1.0 + 1.0 / 32.0,
  .act_bytes = 2.0,
  .fp8_peak = 0,
  .row_tile = 16,
  .col_tile = 256,
  .min_cc = 80,
  .compute_eff = 0.57,
  .compute_eff_rsd = 0.25,
  .stream_eff = 0.85,
  .stream_eff_rsd = 0.10,
  .floor_us = 6.0,
  .source = "H20 table (57% of bf16 peak at M>=4096); mma.sync ceiling ~75% of bf16 peak on Hopper (brief)",
  /* fit area: Marlin splits M into slices of <= 64 rows (thread_m_blocks <= 4), at most
   * max_par = 16 slices per launch (vLLM marlin host loop); reduce_us from the H20 fit. */
  .slice_rows = 64,
  .max_par = 16,
  .reduce_us = 0.2,
};

const tps_path tps_path_dense_bf16 = {
  .name = "dense-bf16",
  .desc = "vendor bf16 GEMM (cuBLASLt), bf16 weights and activations",
  .weight_bytes = 2.0,
  .act_bytes = 2.0,
  .fp8_peak = 0,
  .row_tile = 64,
  .col_tile = 128,
  .min_cc = 70,
  .compute_eff = 0.80,
  .compute_eff_rsd = 0.10,
  .stream_eff = 0.875,
  .stream_eff_rsd = 0.05,
  .floor_us = 2.5,
  .source = "large bf16 GEMMs ~80% of peak on Hopper; skinny GEMMs 85-90% of HBM; >=2.5 us per cuBLAS GEMM in a graph (brief)",
};

const tps_path tps_path_native_fp8 = {
  .name = "native-fp8",
  .desc = "FP8 tensor-core GEMM (SM100 MXFP8, SM90 cuBLASLt FP8), activations quantized to FP8",
  .weight_bytes = 1.0 + 1.0 / 32.0,
  .act_bytes = 1.0,
  .fp8_peak = 1,
  .row_tile = 64,
  .col_tile = 128,
  .min_cc = 89,
  .compute_eff = 0.70,
  .compute_eff_rsd = 0.20,
  .stream_eff = 0.85,
  .stream_eff_rsd = 0.10,
  .floor_us = 4.0,
  .source = "fp8 GEMMs reach less of their peak than bf16 (assumed 70%); weight streaming as dense (brief); floor includes the activation quantization kernel",
};

const tps_path *const tps_paths[] = {&tps_path_marlin_w8a16, &tps_path_dense_bf16, &tps_path_native_fp8, NULL};

const tps_path *tps_path_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; tps_paths[i]; i++)
    if (strcasecmp(tps_paths[i]->name, name) == 0) return tps_paths[i];
  if (strcasecmp(name, "w8a16") == 0 || strcasecmp(name, "marlin") == 0) return &tps_path_marlin_w8a16;
  return NULL;
}
