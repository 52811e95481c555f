/* fit_from_file.h: from a measurement file to a fit: the table read (src/io/table.h), its GPU
 * looked up (src/io/gpus.h) and the model/fit/fit.h fit of its kind.  The fit file format itself
 * is src/fitfile.h. */
#ifndef TPS_FITLOAD_H
#define TPS_FITLOAD_H
#include "src/base/err.h"
#include "model/fit/fit.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The bundled measurement that predictions are made from by default (in the data
 * directory): H20, TP8, fused_wqa_wkv on the Marlin W8A16 path. */
#define TPS_BUNDLED_TABLE "h20_tp8_fused_wqa_wkv.tsv"

/* Read a measurement file (tps_table_read) and fit it by its kind: split tables with
 * tps_fit_split, GEMM tables with tps_fit_gemm, all-gather tables and nccl-tests logs with
 * tps_fit_allgather; a TP 1 split table (no gather) fits its replicated column as a GEMM
 * table (said in f->fixed_note).  The measured GPU is the table's '#@ gpu' (or gpu_name when not NULL),
 * looked up in gpus (NULL: the bundled data/gpus.tsv); split and GEMM fits need it (SMs),
 * all-gather fits use generic NVLink priors when it is unknown.  Returns 0, or -1 with e
 * ("FILE: message" / "FILE:LINE: message") and *status (a tps_status; read errors give
 * TPS_EBADDATA): exit with tps_status_exit(*status). */
int tps_fit_file(const char *path, const char *gpu_name, const char *gpus_file, const tps_fit_opts *o,
                 tps_fit *f, int *status, tps_err *e);

/* The fit of the bundled measurement (TPS_BUNDLED_TABLE: H20, TP8, fused_wqa_wkv), made on
 * the spot: the one loader of it (predictions by default, simulate and decide, the main job's
 * figures, the evidence's custom-gather model).  gpus_file: the GPU table (NULL: bundled);
 * loo: with leave-one-out errors; path (may be NULL): gets the table's path in the data
 * directory.  0, or -1 with e and *status (tps_status_exit). */
int tps_bundled_fit(const char *gpus_file, int loo, tps_fit *f, char *path, size_t pathsz, int *status, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
