/* fitfile.h: the saved fit, a JSON file that `tpsplit fit -o FIT` writes and `predict`,
 * `plot`, `validate` (and anyone with jq) read.  Schema version 2 (doc/formats.md); version 1,
 * the old positional text form, is refused with the command that regenerates it.
 *
 * One object, its keys in this order, each once (a repeated key is refused, JSON_REJECT_DUPLICATES):
 *   "format": "tpsplit-fit", "schema_version": 2,
 *   "written_by": the command line that wrote it,  "sources": [the measurement files fitted],
 *   "kind": "split" | "gemm" | "allgather",  "gpu": the measured GPU,
 *   "path": kernel path (tps_path_find) or null (all-gather fits),  "sms", "tp", "k", "n",
 *   "out_bytes" (per output element), "out_bytes_per_token" (gathered per token, split fits),
 *   "gather_mode": "auto" | "custom" | "nccl",
 *   "gemm": {every tps_gemm_model parameter by tps_gemm_par_names: the complete GEMM model},
 *   "ag": {"ranks", "ranks_per_node", "custom_floor_us", "custom_gbps", "custom_cap_bytes",
 *          "internode_gbps", "internode_lat_us", then per protocol P (LL, LL128, Simple)
 *          "lat_P_us", "busbw_P_gbps", "ref_busbw_P_gbps" (what ag_nccl_bw_scale multiplies)},
 *   "fixed": which parameters were fixed at priors, and why ("" when none; <= 255 bytes),
 *   "params": [{"name", "value", "se", "lo95", "hi95"}, ...] one per fitted parameter in theta
 *             order (names: tps_fit_target_name; 95% = t quantile),
 *   "cov": [[...], ...] the covariance of the fitted parameters, row by row,
 *   "points": [{"series": replicated|split|gemm|allgather, "x": tokens|rows|bytes,
 *               "measured_us", "model_us", "rel_resid", "loo_rel", "gather_us",
 *               "gather_se_us", "backend": custom|nccl|null}, ...],
 *   "stats": {"dof", "chi2", "t975", "median_abs_rel", "max_abs_rel", "rms_rel",
 *             "loo_median_abs", "loo_max_abs", "loo_failed", "iterations", "rcond"}.
 * NaN is null.  The gemm/ag values already hold the fitted values; a fitted parameter's
 * value in "gemm"/"ag" must equal its "params" value.
 *
 * Canonical form: the writer's layout (the key order above, two-space indent, one array
 * element a line, numbers in the shortest form that reads back to the same double).  The
 * reader accepts only that form, so every fit file it accepts is written back byte for byte
 * by the writer; a file edited by hand reads when its edit keeps the form (the error names
 * the first line that differs and what the writer puts there). */
#ifndef TPS_FITFILE_H
#define TPS_FITFILE_H
#include <stddef.h>
#include <stdio.h>
#include "src/base/err.h"
#include "model/fit/fit.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_FITFILE_VERSION 2

/* Where a fit came from: the command line that wrote it and the measurement files it fitted. */
typedef struct {
  char *written_by;
  char **sources;
  size_t nsources;
} tps_fitfile_prov;

/* Write atomically to path (temp file + rename; "-" = stdout). 0, or -1 with e. */
/* The fit file text of f on fp (the format tps_fitfile_read reads); 0, or -1 on a write error.
 * sources: the measurement files the fit came from, listed in its header. */
int tps_fitfile_write(FILE *fp, const tps_fit *f, const char *const *sources, size_t nsources);
/* The same with the provenance given (written_by NULL: "tpsplit"). */
int tps_fitfile_write_prov(FILE *fp, const tps_fit *f, const tps_fitfile_prov *pv);
int tps_fitfile_save(const char *path, const tps_fit *f, const char *const *sources, size_t nsources, tps_err *e);
/* Read a fit file into f (f->gemm.path points at the static path). 0, or -1 with
 * e = "FILE:LINE: message" (unknown key, bad number, unknown path or parameter, wrong
 * number of cov values, a model value outside its domain, missing format line, a value out of
 * its range, a line the writer always writes missing: see the ranges in src/io/fitfile.c). */
int tps_fitfile_read(const char *path, tps_fit *f, tps_err *e);
/* The same from bytes in memory (path names them in messages): the fuzzing entry point. */
int tps_fitfile_read_mem(const char *path, const char *data, size_t len, tps_fit *f, tps_err *e);
/* The same keeping the provenance (pv may be NULL; free it with tps_fitfile_prov_free). */
int tps_fitfile_read_prov(const char *path, const char *data, size_t len, tps_fit *f, tps_fitfile_prov *pv, tps_err *e);
void tps_fitfile_prov_free(tps_fitfile_prov *pv);
/* 1 when path holds a tpsplit fit file (the loader's sniff: a JSON object naming
 * "tpsplit-fit" in its first 4 KiB, or the old text form, refused when read). */
int tps_fitfile_is_fit(const char *path);

/* Names used in the file. */
const char *tps_fit_kind_name(tps_fit_kind k);      /* "split", "gemm", "allgather" */
const char *tps_fit_series_name(const tps_fit *f, int series);

#ifdef __cplusplus
}
#endif
#endif
