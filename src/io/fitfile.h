/* fitfile.h: the saved fit, a text file that `tpsplit fit -o FIT` writes and `predict`,
 * `plot` (and anyone with awk) read.
 *
 * Format, version 1.  Lines starting with '#' are comments (ignored on reading); blank
 * lines are ignored; every other line is TAB-separated, its first field the key.  Numbers
 * are written with %.17g (they read back exactly); "nan" marks a value that does not apply.
 * The first non-comment line must be the format line; the order of the others is free
 * except that cov rows follow the param lines.
 *
 *   format  tpsplit-fit  1
 *   kind    split | gemm | allgather
 *   gpu     NAME                    the measured GPU
 *   path    NAME | -                kernel path (tps_path_find); "-" for all-gather fits
 *   sms     N                       SMs of the measured GPU
 *   tp      N                       ranks of the gather (1 for GEMM fits)
 *   k  N   /   n  N                 GEMM shape (reduction, output width)
 *   out_bytes  B                    bytes per output element
 *   out_bytes_per_token  B          gathered bytes per token (split fits)
 *   gather_mode  auto|custom|nccl   split fits: backend rule (auto: custom while the
 *                                   per-rank input <= ag custom_cap_bytes, else NCCL)
 *   source  FILE                    a measurement file the fit used (one line each)
 *   gemm    NAME  VALUE             every tps_gemm_model parameter (tps_gemm_par_names),
 *                                   fitted or fixed: the complete GEMM model
 *   ag      NAME  VALUE             every all-gather model field: ranks, custom_floor_us,
 *                                   custom_gbps, custom_cap_bytes, ranks_per_node,
 *                                   internode_gbps, internode_lat_us, lat_<P>_us,
 *                                   busbw_<P>_gbps, ref_busbw_<P>_gbps (P = LL, LL128,
 *                                   Simple; ref_ = what ag_nccl_bw_scale multiplies)
 *   param   NAME  VALUE  SE  LO95  HI95    one per fitted parameter, in theta order
 *                                   (names: tps_fit_target_name; 95% = t quantile)
 *   cov     I  C_I0 ... C_I(p-1)    row I of the covariance of the fitted parameters
 *   point   SERIES  X  MEASURED_US  MODEL_US  REL_RESID  LOO_REL  GATHER_US  GATHER_SE_US  BACKEND
 *                                   SERIES: replicated | split | gemm | allgather; X: tokens,
 *                                   rows or bytes; BACKEND: custom | nccl | -
 *   stat    NAME  VALUE             dof, chi2, t975, median_abs_rel, max_abs_rel, rms_rel,
 *                                   loo_median_abs, loo_max_abs, loo_failed, iterations, rcond
 *   fixed   TEXT                    parameters fixed at priors, and why (free text)
 *
 * The gemm/ag lines already hold the fitted values; the param lines add the uncertainty. */
#ifndef TPS_FITFILE_H
#define TPS_FITFILE_H
#include <stddef.h>
#include <stdio.h>
#include "src/base/err.h"
#include "model/fit/fit.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_FITFILE_VERSION 1

/* Write atomically to path (temp file + rename; "-" = stdout). 0, or -1 with e. */
/* The fit file text of f on fp (the format tps_fitfile_read reads); 0, or -1 on a write error.
 * sources: the measurement files the fit came from, listed in its header. */
int tps_fitfile_write(FILE *fp, const tps_fit *f, const char *const *sources, size_t nsources);
int tps_fitfile_save(const char *path, const tps_fit *f, const char *const *sources, size_t nsources, tps_err *e);
/* Read a fit file into f (f->gemm.path points at the static path). 0, or -1 with
 * e = "FILE:LINE: message" (unknown key, bad number, unknown path or parameter, wrong
 * number of cov values, a model value outside its domain, missing format line, a value out of
 * its range, a line the writer always writes missing: see the ranges in src/io/fitfile.c). */
int tps_fitfile_read(const char *path, tps_fit *f, tps_err *e);
/* The same from bytes in memory (path names them in messages): the fuzzing entry point. */
int tps_fitfile_read_mem(const char *path, const char *data, size_t len, tps_fit *f, tps_err *e);
/* 1 when path holds a tpsplit fit file: its first line is the writer's "# tpsplit fit file"
 * line, or its first line that is not a comment is the format line (no line-length limit;
 * a pipe stays readable for the real read). */
int tps_fitfile_is_fit(const char *path);

/* Names used in the file. */
const char *tps_fit_kind_name(tps_fit_kind k);      /* "split", "gemm", "allgather" */
const char *tps_fit_series_name(const tps_fit *f, int series);

#ifdef __cplusplus
}
#endif
#endif
