/* path.c: the three GEMM kernel paths and their priors.  See path.h.
 *
 * The priors are used where nothing of that path was measured on that GPU: spec-only
 * predictions take them as they are (tps_gemm_from_spec); transfers keep the fitted
 * efficiency within a path and scale it by the ratio of the priors across paths
 * (tps_gemm_transfer); their rsd set the spread of the bootstrap (model/predict.c).
 * Every value below names its source.  Sources:
 *  [B1] brief, rules of thumb: mma.sync kernels on Hopper reach at best ~75% of the bf16
 *       peak;                  [B2] large bf16 GEMMs reach ~80% of peak on Hopper;
 *  [B3] skinny GEMMs stream weights at 85-90% of HBM bandwidth;
 *  [B4] a cuBLAS GEMM in a CUDA graph costs at least ~2.5 us on Hopper;
 *  [H20] data/h20_tp8_fused_wqa_wkv.tsv: the replicated Marlin GEMM runs at 83-84 TFLOPS
 *       from 4096 tokens (brief) = 57% of H20's 148 TFLOPS bf16 peak; its 6-token time,
 *       14.1 us, bounds the floor (launch + one pass over 9.5 MB of weights at ~4 TB/s =
 *       2.4 us + pipeline fill);
 *  [FMT] the weight format of the brief: FP8 E4M3 with one E8M0 scale per 1x32 block
 *       along K = 1 + 1/32 bytes per weight; bf16 = 2 bytes;
 *  [K] kernel facts: Marlin tiles of 16 rows (m blocks) and 256 output columns at large
 *       batch (brief), runs on SM80+ (mma.sync); cuBLASLt bf16 on SM70+; FP8 tensor cores
 *       from SM89 (Ada, Hopper, Blackwell); 64 x 128 output tiles are cuBLASLt's common
 *       large-M choice (assumed);
 *  [A] our assumption, stated where used. */
#include "path.h"
#include <stddef.h>
#include <strings.h>

const tps_path tps_path_marlin_w8a16 = {
  .name = "marlin-w8a16",
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
  .source = "large bf16 GEMMs ~80% of peak on Hopper; skinny GEMMs 85-90% of HBM; >=2.5 us per cuBLAS GEMM in a graph (brief)",
};

const tps_path tps_path_native_fp8 = {
  .name = "native-fp8",
  .desc = "FP8 tensor-core GEMM (SM100 MXFP8, SM90 cuBLASLt FP8), activations quantized to FP8",
  .weight_bytes = 1.0 + 1.0 / 32.0, /* [FMT] */
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
