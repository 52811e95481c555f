/* path.c: the GEMM kernel paths and the priors of those the model takes.  See path.h.
 *
 * The priors are used where nothing of that path was measured on that GPU: spec-only
 * predictions take them as they are (tps_gemm_from_spec); transfers keep the fitted
 * efficiency within a path and scale it by the ratio of the priors across paths
 * (tps_gemm_transfer); their rsd set the spread of the bootstrap (model/predict/uncertainty.c).
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
 *  [A] our assumption, stated where used.
 *  [L] learned from bundled measurements by the test named beside it. */
#include "model/core/path.h"
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* Our W8A16 kernels (kernels/gemm_w8a16*.cu): same weight format as Marlin, different
 * dispatch (a split-K stream kernel up to 384 rows, wgmma tiles above on SM90).  Predicted on
 * SM90 by their own model (model/latency/xgemm.h, tps_xw8, fitted to data/h200_gemm_w8a16.tsv) or
 * the measured table itself (src/evidence/evidence.c); the priors below are [A] placeholders used only
 * off SM90 (the mma.sync form, never measured) and in the spec scaling.  They are NOT
 * Marlin's (nothing aliases one to the other). */
const tps_path tps_path_w8a16 = {
  .id = TPS_PATH_W8A16,
  .flags = TPS_PATH_F_MODEL | TPS_PATH_F_BENCH,
  .name = "w8a16",
  .aliases = "",
  .desc = "our W8A16 kernels: FP8 E4M3 weights with E8M0 1x32 scales, bf16 activations (stream-K up to 384 rows, wgmma above)",
  .weight_bytes = 1.0 + 1.0 / 32.0, /* [FMT] */
  .act_bytes = 2.0,
  .fp8_peak = 0,
  .row_tile = 64,                   /* [A] wgmma tile rows */
  .col_tile = 128,                  /* [A] */
  .min_cc = 80,                     /* mma.sync form runs on SM80+ (kernels/gemm/gemm_w8a16.cu) */
  .compute_eff = 0.60,              /* [A] 0.82-0.88x of dense-bf16 at M >= 4096 on H200 (data/h200_gemm_w8a16.tsv) */
  .compute_eff_rsd = 0.20,
  .stream_eff = 0.80,               /* [A] */
  .stream_eff_rsd = 0.15,
  .floor_us = 4.0,                  /* [A] */
  .source = "assumed priors (off SM90 and spec-only; on SM90 the tps_xw8 model fitted to data/h200_gemm_w8a16.tsv)",
  .model = TPS_PATH_MODEL_OWN,
  .own_cc = 90,
  .aic_dtype = "",
  .record_as = "marlin-w8a16", /* bench split measures the model's marlin-w8a16 with our kernels */
  .spec_note = "our W8A16 kernels run their mma.sync form off SM90, never measured",
};

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

const tps_path *const tps_paths[TPS_NPATHS + 1] = {
  [TPS_PATH_MARLIN_W8A16] = &tps_path_marlin_w8a16, [TPS_PATH_DENSE_BF16] = &tps_path_dense_bf16,
  [TPS_PATH_NATIVE_FP8] = &tps_path_native_fp8, [TPS_PATH_W8A16] = &tps_path_w8a16,
  [TPS_PATH_W8A16_REF] = &tps_path_w8a16_ref, [TPS_PATH_FP8_BLOCK] = &tps_path_fp8_block,
  [TPS_PATH_NVFP4] = &tps_path_nvfp4,
  [TPS_NPATHS] = NULL};

static int has_alias(const char *aliases, const char *name) {
  size_t n = strlen(name);
  for (const char *a = aliases; a && *a;) {
    while (*a == ' ') a++;
    size_t l = strcspn(a, " ");
    if (l && l == n && strncasecmp(a, name, n) == 0) return 1;
    a += l;
  }
  return 0;
}

const tps_path *tps_path_find(const char *name) { return tps_path_find_for(name, 0); }

const tps_path *tps_path_find_for(const char *name, unsigned flags) {
  if (!name) return NULL;
  for (size_t i = 0; tps_paths[i]; i++)
    if (strcasecmp(tps_paths[i]->name, name) == 0 || has_alias(tps_paths[i]->aliases, name))
      return (tps_paths[i]->flags & flags) == flags ? tps_paths[i] : NULL;
  return NULL;
}

const tps_path *tps_path_get(int id) { return id >= 0 && id < TPS_NPATHS ? tps_paths[id] : NULL; }

const tps_path *tps_path_by_aic_dtype(const char *dtype) {
  for (int i = 0; dtype && dtype[0] && i < TPS_NPATHS; i++)
    if ((tps_paths[i]->flags & TPS_PATH_F_MODEL) && !strcmp(tps_paths[i]->aic_dtype, dtype)) return tps_paths[i];
  return NULL;
}

const char *tps_path_record_name(const tps_path *p) { return p && p->record_as ? p->record_as : p ? p->name : "?"; }

double tps_path_peak_tflops(const tps_path *p, const tps_gpu *g) {
  if (!p || !g) return 0;
  return p->fp4_peak ? g->fp4_tflops : p->fp8_peak ? g->fp8_tflops : g->bf16_tflops;
}

const char *tps_path_peak_name(const tps_path *p) { return p && p->fp4_peak ? "fp4" : p && p->fp8_peak ? "fp8" : "bf16"; }

const char *tps_path_name(int id) { return id >= 0 && id < TPS_NPATHS ? tps_paths[id]->name : "?"; }

unsigned long tps_path_select(unsigned flags, const tps_path **out, unsigned long max) {
  unsigned long n = 0;
  for (size_t i = 0; tps_paths[i] && n < max; i++)
    if ((tps_paths[i]->flags & flags) == flags) out[n++] = tps_paths[i];
  return n;
}

const char *tps_path_names(unsigned flags, char *buf, unsigned long bufsz) {
  if (!buf || !bufsz) return buf;
  buf[0] = 0;
  size_t used = 0;
  for (size_t i = 0; tps_paths[i]; i++) {
    if ((tps_paths[i]->flags & flags) != flags) continue;
    int w = snprintf(buf + used, bufsz - used, "%s%s", used ? ", " : "", tps_paths[i]->name);
    if (w < 0 || (size_t)w >= bufsz - used) break;
    used += (size_t)w;
  }
  return buf;
}

const char *tps_path_unknown(const char *name, unsigned flags, char *buf, unsigned long bufsz) {
  if (!buf || !bufsz) return buf;
  char names[256];
  tps_path_names(flags, names, sizeof names);
  const tps_path *p = tps_path_find_for(name, 0);
  if (!p) {
    snprintf(buf, bufsz, "unknown kernel path '%s' (one of: %s)", name ? name : "", names);
  } else {
    unsigned lack = flags & ~p->flags;
    const char *what = lack & TPS_PATH_F_MODEL ? "has no model" : "cannot be benchmarked";
    const char *has = p->flags & TPS_PATH_F_MODEL ? "model only" : p->flags & TPS_PATH_F_BENCH ? "bench only" : "listed only";
    snprintf(buf, bufsz, "kernel path '%s' %s (%s; one of: %s)", p->name, what, has, names);
  }
  return buf;
}
