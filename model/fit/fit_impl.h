/* fit_impl.h: what the fit modules (fit_core.c, fit_engine.c, fit_gemm.c, fit_split.c,
 * fit_gather.c) share among themselves; not part of the API (that is fit.h). */
#ifndef TPS_FIT_IMPL_H
#define TPS_FIT_IMPL_H
#include <stddef.h>
#include "model/fit/fit.h"

#define TPS_FIT_GENERIC_LINK_GBPS 450.0  /* NVLink4, when no GPU is given */
#define TPS_FIT_GENERIC_HBM_GBPS 3350.0

/* Prior value of each target (what it is fixed at when the data cannot identify it). */
typedef struct {
  double v[TPS_FT_END];
} tps_fit_priors;

/* What a fit starts from: starting values of theta, the priors, the pruning order
 * (prunable[target] = 1 + rank, 0: never fixed). */
typedef struct {
  double x0[TPS_FIT_MAXPAR];
  tps_fit_priors pri;
  int prunable[TPS_FT_END];
} tps_fit_start;

/* fit_core.c */
/* One line into msg (may be NULL); returns status. */
int tps_fit_fail(char *msg, size_t msgsz, int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Copy f's models into g, a and write theta into them; -1 when a value is outside its domain. */
int tps_fit_apply_theta(const tps_fit *f, const double *th, tps_gemm_model *g, tps_ag_model *a);
/* Write one value into f's models (fixing a parameter at its prior). */
void tps_fit_set_target(tps_fit *f, int t, double v);
/* The gather of a split of tokens with a's parameters; *backend (may be NULL) the one used. */
double tps_fit_gather_of(const tps_fit *f, const tps_ag_model *a, long tokens, int *backend);
/* The model value of a point with the models g, a. */
double tps_fit_point_model(const tps_fit *f, const tps_gemm_model *g, const tps_ag_model *a, const tps_fit_point *pt);
/* Append target to theta with starting value x0 (x0v[npar]); remove theta entry j. */
void tps_fit_add_par(tps_fit *f, int target, double x0, double *x0v);
void tps_fit_remove_par(tps_fit *f, int j, double *x0v);
/* Append "name=v (why)" to f->fixed_note. */
void tps_fit_note_fixed(tps_fit *f, const char *name, double v, const char *why);
/* Input checks: TPS_OK, or TPS_EBADDATA with msg. */
int tps_fit_check_times(const double *t, size_t n, const char *what, char *msg, size_t msgsz);
int tps_fit_check_shape(const tps_gemm_shape *s, const tps_path *path, int sms, char *msg, size_t msgsz);
/* f zeroed, of kind, with no leave-one-out statistics. */
void tps_fit_init(tps_fit *f, tps_fit_kind kind);
/* An NVLink4 GPU for the priors when none is given. */
tps_gpu tps_fit_generic_gpu(void);

/* fit_gemm.c: the GEMM parameters of f and their starting values, priors and pruning order
 * (in start) from the GEMM points (rows m[], times t[]). */
void tps_fit_gemm_setup(tps_fit *f, const long *m, const double *t, size_t n, const tps_gpu *gpu, tps_fit_start *start);

/* fit_engine.c: the fit of f's parameters from start (several starting points; then
 * unidentified parameters fixed at their priors in prunable order and the fit repeated;
 * then leave-one-out when o asks).  A tps_status, msg on failure. */
int tps_fit_engine(tps_fit *f, tps_fit_start *start, const tps_fit_opts *o, char *msg, size_t msgsz);

#endif
