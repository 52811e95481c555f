/* validate.h: a prediction compared with a measured split-vs-replicated table.
 *
 * Per measured token count T:  err = predicted / measured - 1, for replicated and split.
 * Summary per series and over both: median, maximum and RMS of |err|; the comparison
 * passes when the median |err| over both series is <= the tolerance.
 *
 * Break-even (one rule for both sides, so they compare): on the measured range
 * [Tmin, Tmax], d(T) = split(T) - replicated(T) and tps_crossover_find gives the smallest
 * T0 with d < 0 on all of [T0, Tmax] (-1: the split does not win at Tmax).  A table's d
 * (the measurement, or a table of predicted times) is interpolated linearly in log T
 * between its rows (gsl_interp_linear on log T; constant beyond its ends); a fit or a
 * prediction context is evaluated at every integer T.  Also: the first measured row from
 * which the split keeps winning, and the threshold each side would write: the least excess on
 * its own times over the measured range (tps_threshold_choose, model/predict/excess.h; a
 * table's times linear in log T between its rows).
 * Units: us; errors are fractions.  Pure C, no I/O. */
#ifndef TPS_VALIDATE_H
#define TPS_VALIDATE_H
#include <stddef.h>
#include "model/fit/fit.h"
#include "model/predict/predict.h"
#include "model/predict/crossover.h"
#include "model/core/status.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Replicated and split times at token counts (strictly increasing); arrays borrowed. */
typedef struct {
  size_t n;
  const long *tokens;
  const double *replicated_us, *split_us;
} tps_split_series;

/* What is validated: exactly one of the three. */
typedef struct {
  const tps_fit *fit;       /* a fit on the measured GPU, TP and path (values with standard errors) */
  const tps_pred *pred;     /* a prediction context (a fit transferred, spec, ...) */
  tps_split_series table;   /* a table of predicted times (table.n > 0), holding every measured T */
} tps_val_prediction;

typedef struct {
  double median, max, rms; /* of |err| */
} tps_errsum;

typedef struct {
  size_t n;                          /* measured rows */
  double *pred_rep_us, *pred_split_us;
  double *se_rep_us, *se_split_us;   /* standard errors (fits evaluated directly), else NaN */
  int *backend;                      /* gather backend of the predicted split (tps_gather_id), -1 unknown */
  double *err_rep, *err_split;       /* predicted / measured - 1 */
  tps_errsum rep, split, all;
  long tmin, tmax;                   /* the measured range */
  long breakeven_meas, breakeven_pred; /* -1: never */
  double breakeven_err;              /* pred / meas - 1; NaN when either is never */
  long first_winning_row;            /* first measured row from which the split keeps winning; -1 none */
  long threshold_meas, threshold_pred; /* the thresholds each side writes; -1: never */
  int pass;                          /* all.median <= tolerance */
  long bad_tokens;                   /* on TPS_EBADDATA: the measured T the prediction lacks or cannot give */
} tps_validation;

/* Compare p with the measurement m (n >= 2).  rounding: of the thresholds (0: next power of
 * two).  Returns TPS_OK; TPS_EBADDATA with v->bad_tokens when the table has no row at a
 * measured T or the model no finite value there; TPS_EINVAL for fewer than 2 rows, or a
 * break-even that is not a number somewhere in the range; TPS_ENOMEM.  Free v with
 * tps_validation_free (also after a failure). */
int tps_validate(const tps_split_series *m, const tps_val_prediction *p, long rounding, double tolerance,
                 tps_validation *v);
void tps_validation_free(tps_validation *v);


#ifdef __cplusplus
}
#endif
#endif
