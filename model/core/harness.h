/* harness.h: the measurement harnesses a GEMM time can represent (model/core: every layer,
 * kernels/ included, may name them).
 *
 * The same GEMM timed by two harnesses gives two numbers: tpsplit bench (and the H20 seed
 * table, timed the same way) flushes L2 before every replay of a CUDA graph and takes the
 * median of the CUPTI spans, and its native-fp8 path runs our activation quantization;
 * AIConfigurator's collector times TensorRT-LLM's Linear forward, a CUDA-graph replay mean
 * with no L2 flush, whose fp8 path has its own quantization ops.  On the H100 and H200 (both
 * measured by both) they differ by 0-6% for dense-bf16 and by up to 45% for native-fp8 at
 * small M (doc/predict.md, "Harness").  An answer names the harness it represents; the
 * cross-GPU GEMM model (model/latency/xgemm.h) carries both, and converts one to the other
 * (model/predict/resolve.h: tps_resolve_harness_ratio). */
#ifndef TPS_MODEL_HARNESS_H
#define TPS_MODEL_HARNESS_H
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TPS_HARNESS_AIC = 0,   /* AIConfigurator: TRT-LLM Linear forward, CUDA-graph replay mean, no flush */
  TPS_HARNESS_BENCH = 1, /* tpsplit bench: L2 flushed, median of CUPTI spans, our quantization */
  TPS_NHARNESS
} tps_harness_id;

typedef struct {
  tps_harness_id id;
  const char *name; /* as on the command line and in files: "aic", "bench" */
  const char *desc; /* one line */
} tps_harness;

extern const tps_harness tps_harnesses[TPS_NHARNESS];
/* Id of a name (case-insensitive), -1 when unknown. */
int tps_harness_parse(const char *name);
/* Name of an id; "as measured" for -1 (no conversion asked), "-" when out of range. */
const char *tps_harness_name(int id);

#ifdef __cplusplus
}
#endif
#endif
