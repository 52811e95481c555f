/* modeldesc.h: model descriptions (data/models/<name>.tsv) read into a tps_sim_model.
 *
 * Format (documented in data/models/deepseek-v4.1-flash.tsv):
 *   '#' comment lines; '#@ key: value' metadata: model, hidden, layers,
 *   side_stream_max_tokens (all required except model);
 *   a header row  name out_features path out_dtype layers split stream  (tab-separated);
 *   one row per projection.  layers: comma list of 0-based indices and A-B ranges;
 *   split: yes|no; stream: main|aux; out_dtype: bf16|fp16|fp32|fp8.
 * A name may repeat (different widths in different layers) but no layer may hold the same
 * name twice.  Errors name the file and line. */
#ifndef TPS_MODELDESC_H
#define TPS_MODELDESC_H
#include <stddef.h>
#include "src/base/err.h"
#include "model/sim/sim.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Read a model description file. 0, or -1 with e = "FILE:LINE: message". */
int tps_modeldesc_read(const char *path, tps_sim_model *m, tps_err *e);
/* The same from bytes in memory (path names them in messages): the fuzzing entry point.
 * Ranges: hidden and out_features 1..TPS_DIM_MAX (2^20), layers 1..TPS_SIM_MAXLAYERS,
 * side_stream_max_tokens 0..2^24. */
int tps_modeldesc_read_mem(const char *path, const char *data, size_t len, tps_sim_model *m, tps_err *e);

/* Resolve --model: an existing file path, else the bundled data/models/<name>.tsv (name
 * lowercased).  0 with path in buf, or -1 with e (listing the bundled models). */
int tps_modeldesc_find(const char *name, char *buf, size_t bufsz, tps_err *e);
/* Find and read --model NAME, keeping nothing: what a command checks before it writes
 * anything, when the model is read only after other outputs (plot's per-layer figure, the
 * main job's).  0, or -1 with e as tps_modeldesc_find or tps_modeldesc_read give it. */
int tps_modeldesc_check(const char *name, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
