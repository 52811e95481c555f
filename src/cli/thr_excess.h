/* thr_excess.h: the decision quality of a calibration (issue 27 item 5): each threshold of a
 * thresholds file (split_from_tokens, and breakeven_tokens) scored against full bench gemm
 * tables by model/predict/excess.h, for `calibrate --check` and `validate --calibration`.
 *
 * The costs at T tokens of an entry (shape, path, TP, backend):
 *   replicated(T) = GEMM(T),  split(T) = GEMM(ceil(T/TP)) + gather(T x out_bytes_per_token)
 * as calibrate computes its break-even; GEMM: the bench table's rows (Steffen in log-log,
 * model/numeric/robust.h: flat below its first row, its last slope above its last); gather:
 * what calibrate used, rebuilt: the file's measured points of (TP, backend) when it has them,
 * else the transferred NCCL model (model/latency/xgather.h fitted to the AIConfigurator
 * all_gather tables of the other GPUs of the device's fabric, as calibrate fits it) and the
 * custom one-shot gather's priors; auto: custom while the per-rank part is <= its cap. */
#ifndef TPS_CLI_THR_EXCESS_H
#define TPS_CLI_THR_EXCESS_H
#include <stddef.h>
#include "src/base/err.h"
#include "src/io/gpus.h"
#include "src/io/thresholds.h"

/* Fill rows[i].ex of every check row from f's device (NULL: its only one).  An entry whose
 * gather cannot be rebuilt (no GPU spec, no AIConfigurator table) is not scored (npts 0: '-').
 * 0 (e is for errors to come; none now). */
int tps_thr_check_excess(const tps_thr_file *f, const char *device, tps_thr_check_row *rows, size_t n, const tps_gpu_table *gt,
                         tps_err *e);
/* tps_thr_check, then tps_thr_check_excess (rows freed on failure): what calibrate --check and
 * validate --calibration score. */
int tps_thr_check_scored(const tps_thr_file *f, const char *device, char *const *bench, size_t nbench, double tol_med,
                         double tol_max, const tps_gpu_table *gt, tps_thr_check_row **rows, size_t *nrows, tps_err *e);

#endif
