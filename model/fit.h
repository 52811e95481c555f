/* fit.h: fitting the GEMM and all-gather models to measurements (gsl_multifit_nlinear on
 * relative residuals), with covariance, 95% intervals and leave-one-out errors.
 *
 * CONTRACT used by predict/plot/simulate/validate (keep stable):
 *   - tps_fit holds the fitted gemm and all-gather models, ready for tps_gemm_time_us /
 *     tps_ag_time_us, plus the fitted parameter vector theta with its covariance;
 *   - tps_fit_set_theta(f, theta) writes a parameter vector back into f->gemm / f->ag
 *     (used to propagate uncertainty by sampling theta ~ N(theta, cov));
 *   - f->gpu, f->tp, f->shape, f->out_bytes_per_token describe what was measured. */
#ifndef TPS_FIT_H
#define TPS_FIT_H
#include <stddef.h>
#include "gemm.h"
#include "allgather.h"
#ifdef __cplusplus
extern "C" {
#endif

#define TPS_FIT_MAXPAR 16
#define TPS_FIT_MAXPTS 512

typedef enum { TPS_FIT_SPLIT = 1, TPS_FIT_GEMM, TPS_FIT_ALLGATHER } tps_fit_kind;

/* One measured point of a fit, with the model's value. */
typedef struct {
  int series;        /* 0 = replicated/GEMM/all-gather, 1 = split */
  double x;          /* tokens (split), rows (gemm) or bytes (all-gather) */
  double measured_us;
  double model_us;
  double rel_resid;  /* (model - measured) / measured */
  double loo_rel;    /* leave-one-out relative error, NaN when not computed */
  double gather_us;  /* split series: derived gather time (model), NaN otherwise */
  double gather_se_us; /* its standard error (delta method), NaN otherwise */
  int backend;       /* split series: gather backend used (TPS_AG_*), -1 otherwise */
} tps_fit_point;

typedef struct {
  tps_fit_kind kind;
  char gpu[64];
  int tp;                    /* ranks of the gather (split/all-gather fits) */
  tps_gemm_shape shape;
  double out_bytes_per_token;
  tps_gemm_model gemm;
  tps_ag_model ag;
  /* fitted parameters */
  int npar;
  char par_name[TPS_FIT_MAXPAR][32];
  double theta[TPS_FIT_MAXPAR];
  double se[TPS_FIT_MAXPAR];
  double lo95[TPS_FIT_MAXPAR], hi95[TPS_FIT_MAXPAR];
  double cov[TPS_FIT_MAXPAR * TPS_FIT_MAXPAR];
  /* data and summary */
  size_t npts;
  tps_fit_point pt[TPS_FIT_MAXPTS];
  int dof;
  double med_abs_rel, max_abs_rel, rms_rel;  /* over all points */
  double loo_med_abs, loo_max_abs;           /* NaN when --loo not asked */
  int iterations;
  double rcond;
} tps_fit;

/* Inputs.  Arrays are borrowed. */
typedef struct {
  size_t n;
  const long *tokens;
  const double *replicated_us, *split_us;
  int tp;
  tps_gemm_shape shape;
  double out_bytes_per_token;
  double gather_cap_bytes;   /* custom backend cap per rank (0 = default 2 MiB) */
  const tps_path *path;
  int sms;                   /* SMs of the measured GPU */
} tps_split_data;

typedef struct {
  size_t n;
  const long *rows;
  const double *time_us;
  tps_gemm_shape shape;
  const tps_path *path;
  int sms;
} tps_gemm_data;

typedef struct {
  size_t n;
  const double *bytes;       /* whole gathered buffer */
  const double *time_us;
  int ranks;
  int backend;               /* TPS_AG_NCCL or TPS_AG_CUSTOM */
} tps_ag_data;

typedef struct {
  int loo;                   /* compute leave-one-out errors */
  int max_iter;              /* 0 = default */
} tps_fit_opts;

/* Status codes (0 = ok). */
enum { TPS_FIT_OK = 0, TPS_FIT_EBADDATA = 1, TPS_FIT_ETOOFEW = 2, TPS_FIT_ENOCONV = 3 };

/* Each returns a status; on failure msg (may be NULL) gets one line saying why. */
int tps_fit_split(const tps_split_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz);
int tps_fit_gemm(const tps_gemm_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz);
int tps_fit_allgather(const tps_ag_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz);

/* Write theta (f->npar values) into f->gemm and f->ag. */
int tps_fit_set_theta(tps_fit *f, const double *theta);

#ifdef __cplusplus
}
#endif
#endif
