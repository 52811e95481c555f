/* status.h: the one status vocabulary of tpsplit's functions (model/, kernels/, src/).
 *
 * Every function that can fail returns one of these (0 = TPS_OK).  Process exit codes are
 * a different thing (src/cli/tpsplit.h: TPS_EXIT_*); tps_status_exit() maps one to the other.
 * TPS_SKIP is 77 so that a test binary can return it as automake's "skipped". */
#ifndef TPS_MODEL_STATUS_H
#define TPS_MODEL_STATUS_H
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TPS_OK = 0,
  TPS_ERR = 1,       /* a failure already reported on stderr (a CUDA/NCCL call, a rank) */
  TPS_EINVAL = 2,    /* invalid argument or impossible configuration */
  TPS_EBADDATA = 3,  /* measurements that cannot be used (NaN, <= 0, unsorted) */
  TPS_ETOOFEW = 4,   /* fewer points than parameters */
  TPS_ENOCONV = 5,   /* the fit did not converge */
  TPS_ESINGULAR = 6, /* parameters not identifiable even after fixing priors */
  TPS_ENOMEM = 7,    /* out of memory */
  TPS_NA = 8,        /* not applicable: the model cannot evaluate this (e.g. never breaks even) */
  TPS_ECOST = 9,     /* a cost callback failed (simulation) */
  TPS_SKIP = 77      /* nothing to do here (no GPU, a path this GPU cannot run) */
} tps_status;

/* One line describing a status ("ok", "invalid argument", ...). */
const char *tps_strstatus(int status);
/* Exit code of a status: 0 ok, 2 for input errors (EINVAL, EBADDATA, ETOOFEW), 77 skip,
 * 1 otherwise. */
int tps_status_exit(int status);

#ifdef __cplusplus
}
#endif
#endif
