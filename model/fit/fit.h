/* fit.h: fitting the GEMM and all-gather models to measurements (gsl_multifit_nlinear on
 * relative residuals), with covariance, 95% intervals and leave-one-out errors.
 *
 * CONTRACT used by predict/plot/simulate/validate (keep stable):
 *   - tps_fit holds the fitted gemm and all-gather models, ready for tps_gemm_time_us /
 *     tps_ag_time_us, plus the fitted parameter vector theta with its covariance;
 *   - tps_fit_set_theta(f, theta) writes a parameter vector back into f->gemm / f->ag
 *     (used to propagate uncertainty by sampling theta ~ N(theta, cov));
 *   - f->gpu, f->tp, f->shape, f->out_bytes_per_token describe what was measured.
 *
 * Method.  Residuals are relative, r_i = (model_i - measured_i) / measured_i (latencies span
 * three decades), minimized with gsl_multifit_nlinear (trust region, Levenberg-Marquardt,
 * finite-difference Jacobian) from data-driven starting values.  Unweighted: the covariance
 * is C = s^2 (J^T J)^-1 with s^2 = sum r_i^2 / dof, dof = n - p; standard errors
 * se_j = sqrt(C_jj); 95% intervals theta_j +- t_{0.975,dof} se_j (gsl_cdf_tdist_Pinv).
 * Derived quantities g(theta) (e.g. the gather time inside a split point) get
 * se = sqrt(grad^T C grad) (delta method, central differences).
 *
 * What is fitted (theta) and what is fixed (kept in f->gemm / f->ag, written to fit files):
 *  - GEMM: floor_us, tflops, launch_us and reduce_us (sliced paths), bw_gbps; sharp (q) is
 *    fixed at TPS_GEMM_DEFAULT_SHARP.  A parameter whose 95% interval includes 0 (or whose
 *    column of J is rank deficient) is not identified by the data: it is fixed at its prior
 *    (bw_gbps: HBM x the path's stream_eff; launch_us: 0; reduce_us: the path's prior;
 *    custom gather floor/bandwidth: tps_ag_from_spec) and the fit is repeated.
 *  - Split fits: the custom gather's floor and bandwidth (when custom points exist) and one
 *    overall NCCL bandwidth scale, ag_nccl_bw_scale (when NCCL points exist), multiplying
 *    the per-protocol bus bandwidths of tps_ag_from_spec; the NCCL protocol latencies stay
 *    at their priors (two NCCL points cannot identify them).
 *  - All-gather fits: per-protocol latency and bus bandwidth of each protocol that wins at
 *    two or more points (others fixed at their priors), or the custom floor and bandwidth. */
#ifndef TPS_FIT_H
#define TPS_FIT_H
#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "model/latency/gemm.h"
#include "model/latency/allgather.h"
#include "model/core/status.h"
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
  int backend;       /* split series: gather backend used (tps_gather_id), -1 otherwise */
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
  double cov[TPS_FIT_MAXPAR * TPS_FIT_MAXPAR]; /* packed row-major, stride npar: cov[a*npar + b] */
  /* data and summary */
  size_t npts;
  tps_fit_point pt[TPS_FIT_MAXPTS];
  int dof;
  double med_abs_rel, max_abs_rel, rms_rel;  /* over all points */
  double loo_med_abs, loo_max_abs;           /* NaN when --loo not asked */
  int iterations;
  double rcond;
  /* parameter bookkeeping and fit statistics */
  int par_target[TPS_FIT_MAXPAR];    /* what each theta_j sets (TPS_FT_*) */
  double nccl_busbw_ref[TPS_NPROTO]; /* bus bandwidths that ag_nccl_bw_scale multiplies */
  int gather;                        /* tps_gather_id of the measured gather: split fits any,
                                      * all-gather fits its concrete backend (nccl or custom) */
  double chi2;                       /* sum of squared relative residuals */
  double tq;                         /* t_{0.975,dof} used for the intervals */
  int loo_failed;                    /* leave-one-out refits that did not converge */
  char fixed_note[256];              /* which parameters were fixed at priors, and why */
} tps_fit;

/* Targets of theta entries: 0..TPS_GEMM_NPAR-1 are tps_gemm_model.p indices; then: */
enum {
  TPS_FT_AG_CUSTOM_FLOOR = 32, /* ag.custom_floor_us */
  TPS_FT_AG_CUSTOM_GBPS,       /* ag.custom_gbps */
  TPS_FT_AG_NCCL_SCALE,        /* ag.busbw_gbps[p] = scale * nccl_busbw_ref[p] for all p */
  TPS_FT_AG_LAT0,              /* ag.lat_us[p], p = target - TPS_FT_AG_LAT0 */
  TPS_FT_AG_BW0 = TPS_FT_AG_LAT0 + TPS_NPROTO, /* ag.busbw_gbps[p] */
  TPS_FT_END = TPS_FT_AG_BW0 + TPS_NPROTO
};
/* Name of a target ("floor_us", ..., "ag_custom_floor_us", "ag_custom_gbps",
 * "ag_nccl_bw_scale", "ag_lat_LL_us", ..., "ag_busbw_Simple_gbps"); NULL if unknown. */
const char *tps_fit_target_name(int target);
/* Target of a name, -1 if unknown. */
int tps_fit_target_from_name(const char *name);

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
  const tps_gpu *gpu;        /* measured GPU (priors: HBM, links); NULL = generic NVLink4 */
  int gather;                /* tps_gather_id of the measurement: auto (custom while
                              * the per-rank input <= cap, else NCCL), _CUSTOM or _NCCL */
} tps_split_data;

typedef struct {
  size_t n;
  const long *rows;
  const double *time_us;
  tps_gemm_shape shape;
  const tps_path *path;
  int sms;
  const tps_gpu *gpu;        /* measured GPU for the bandwidth prior; NULL = none */
} tps_gemm_data;

typedef struct {
  size_t n;
  const double *bytes;       /* whole gathered buffer */
  const double *time_us;
  int ranks;
  int backend;               /* a concrete tps_gather_id: nccl or custom */
  const tps_gpu *gpu;        /* measured GPU for the priors; NULL = generic NVLink4 */
} tps_ag_data;

typedef struct {
  int loo;                   /* compute leave-one-out errors */
  int max_iter;              /* 0 = default */
} tps_fit_opts;

/* Each returns a tps_status: TPS_OK, TPS_EBADDATA (unusable points), TPS_ETOOFEW (fewer
 * points than parameters), TPS_ENOCONV (no start converged), TPS_ESINGULAR (parameters not
 * identifiable even after fixing priors), TPS_ENOMEM; on failure msg (may be NULL) gets one
 * line saying why. */
int tps_fit_split(const tps_split_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz);
int tps_fit_gemm(const tps_gemm_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz);
int tps_fit_allgather(const tps_ag_data *d, const tps_fit_opts *o, tps_fit *f, char *msg, size_t msgsz);

/* Write theta (f->npar values) into f->gemm and f->ag.  Returns 0, or -1 (f unchanged)
 * when a value is outside its domain (a bandwidth or throughput <= 0, a time < 0): callers
 * sampling theta ~ N(theta, cov) should draw again. */
int tps_fit_set_theta(tps_fit *f, const double *theta);

/* Draw theta ~ N(f->theta, f->cov) (Cholesky of cov; rank-deficient directions get no
 * spread) into theta[f->npar].  Returns 0, -1 if cov is not positive semi-definite.
 * The draw may be outside the domain: check tps_fit_set_theta's return. */
int tps_fit_sample_theta(const tps_fit *f, const gsl_rng *r, double *theta);

/* Model values of a split fit at tokens T (any fit kind with a gemm/ag model works):
 * replicated = GEMM(T), split = GEMM(ceil(T/tp)) + gather(tp*ceil(T/tp)*out_bytes_per_token)
 * (each rank contributes ceil(T/tp) rows; = T*out_bytes_per_token when tp divides T), the
 * gather with f's backend rule (auto: custom while ceil(T/tp)*out_bytes_per_token <= cap); *backend (may be NULL) gets the concrete backend (custom or nccl).
 * Each returns the value in us and, when se_us is not NULL, its standard error from the
 * fit's covariance (delta method).  NaN when f cannot evaluate it. */
double tps_fit_replicated_us(const tps_fit *f, long tokens, double *se_us);
double tps_fit_split_us(const tps_fit *f, long tokens, double *se_us, int *backend);
double tps_fit_gather_us(const tps_fit *f, long tokens, double *se_us, int *backend);

/* Index of a fitted parameter by name, -1 when it is not fitted. */
int tps_fit_par_index(const tps_fit *f, const char *name);

#ifdef __cplusplus
}
#endif
#endif
