/* gpus.h: the GPU specification table (data/gpus.tsv, or a user file).
 * Columns: name, aliases (comma list), sms, cc, bf16_tflops, fp8_tflops, hbm_gbps, l2_mb,
 * link, links, link_gbps, nccl_link_gbps, source; optional base_mhz, boost_mhz, cuda_names,
 * engine_key, plot_colour, arch, fp4_tflops (doc/formats.md).  A value followed by '?' is uncertain
 * (kept, and flagged in tps_gpu.uncertain).  Names match case-insensitively, with aliases
 * (H200 = H200-SXM) and the CUDA device names of cuda_names. */
#ifndef TPS_GPUS_H
#define TPS_GPUS_H
#include <stddef.h>
#include "src/base/err.h"
#include "model/core/gpu.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  size_t n;
  tps_gpu *gpu;
  char **aliases;  /* per GPU, comma list as in the file */
  char **source;   /* per GPU */
  char **cuda_names; /* per GPU, comma list as in the file ("" when the file has no cuda_names) */
  char file[1024];   /* the file it was read from, for messages ("" when unknown) */
} tps_gpu_table;

/* Load path, or the bundled data/gpus.tsv when path is NULL. 0 or -1 with e. */
int tps_gpus_load(const char *path, tps_gpu_table *t, tps_err *e);
/* The same from bytes in memory (path names them in messages): the fuzzing entry point. */
int tps_gpus_load_mem(const char *path, const char *data, size_t len, tps_gpu_table *t, tps_err *e);
void tps_gpus_free(tps_gpu_table *t);
/* Find by name or alias. NULL with e = "unknown GPU 'X' (known: H20, H100-SXM, ...)". */
const tps_gpu *tps_gpus_find(const tps_gpu_table *t, const char *name, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
