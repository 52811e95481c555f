/* cal.h: what the files of `tpsplit calibrate` share (src/cli/calibrate/): the options, the
 * console (messages, the progress line, the interruption guard), the gathers and GEMM parts
 * of a run, and the steps that the planner (run.c) calls.
 *   options.c  the options (src/cli/cmdopt.h) and the dispatch to a run or an offline mode
 *   console.c  messages, progress line, signal and watchdog guard of the temporary output
 *   gather.c   the all-gathers: measured here, from --gather files, or transferred models
 *   sweep.c    the GEMM steps: first-phase sweep, adaptive rows, held-out check, break-even rows
 *   run.c      the plan of a run within its budget, the thresholds file it writes
 *   offline.c  --check and --simulate;  replay.c  --replay
 * Units: us, bytes, rows, tokens. */
#ifndef TPS_CLI_CAL_H
#define TPS_CLI_CAL_H
#include <stddef.h>
#include "src/base/err.h"
#include "src/io/gpus.h"
#include "src/io/thresholds.h"
#include "src/cli/cmd_bench.h"
#include "model/calib/calib.h"
#include "model/latency/xgather.h"
#include "model/numeric/robust.h"
#include "model/predict/parts.h"

#define MAX_SHAPES 8
#define MAX_TPS 8
#define MAX_GFILES 16
#define MAX_PATHS 4
#define GATHER_POINTS 10
#define NEAR_FACTOR 1.15      /* a break-even row this close to a swept one is not added */
#define EST_GEMM_S 8.0        /* a bench gemm step's estimate before one ran */
#define EST_GATHER_S 12.0     /* a bench allgather step's estimate before one ran */
#define CUSTOM_W90 0.405      /* log(1.5): the custom backend's spec-only priors, assumed +-50% */

/* ------------------------------------------------------------------ options */

typedef struct {
  long k[MAX_SHAPES], n[MAX_SHAPES];
  int nshapes;
  int path[MAX_PATHS];
  int npaths;
  int tp[MAX_TPS];
  int ntps;
  int backend[TPS_NGATHERS];
  int nbackends;
  double budget_s;
  const char *gfile[MAX_GFILES];
  int ngfiles;
  int samples, points, method, device, json;
  long t_max;
  unsigned long seed;
  const char *out, *check;
  double tol_med, tol_max;
  int simulate;
  int replay;                /* --replay: offline, the adaptive sweep against a fixed one */
  double row_s;              /* --replay: simulated seconds per measured row */
  int replay_parts;          /* --replay: parts sharing the budget */
  tps_cal_adapt_opts adapt;  /* the adaptive phase (--adapt-rows 0: none) */
  int no_heldout;            /* --no-heldout: the first-phase method kept after the adaptive phase */
  int per_row;               /* --check --rows */
  int harness;               /* --harness: TPS_HARNESS_BENCH (what calibrate times) or _AIC (converted, harness.c) */
  char **args;               /* positional: --check benches or --simulate tables */
  int nargs;
} opts;

/* ------------------------------------------------------------------ console (console.c) */

/* Start the clock and the progress line (on a terminal) of a run of o. */
void cal_console_start(const opts *o);
double cal_elapsed_s(void);
void cal_set_clock(double (*now_s)(void)); /* NULL: the wall clock (console.c) */
/* A message line "calibrate: ..." on stderr (the progress line is drawn again after it). */
void cal_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The progress line: on a terminal only, rewritten in place. */
void cal_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A step is over: its progress line is not drawn again. */
void cal_progress_forget(void);
void cal_progress_end(void);
/* Signals and a watchdog remove the temporary output of of (when it has one) and end the
 * process; cal_unguard() turns both off. */
void cal_guard(const tps_outfile *of, double budget_s);
void cal_unguard(void);

/* ------------------------------------------------------------------ gathers (gather.c) */

/* One (TP, concrete backend) gather curve: measured here, from a file, or a model. */
typedef struct {
  int tp, backend;           /* a concrete backend: the fallback (nccl) or the capped one (custom) */
  int have;                  /* 1: points; 2: model */
  size_t n;
  double bytes[TPS_CAL_MAX_PTS], t[TPS_CAL_MAX_PTS];
  tps_loo_curve *curve;
  tps_xga_model xga;         /* have == 2 */
  const tps_gpu *gpu;
  int xga_backend;           /* TPS_XGA_NCCL or TPS_XGA_CUSTOM */
  double w90;
  tps_thr_prov prov;
  char status[16], reason[256];
  int samples;
  int measured_here;
} gcurve;

/* The gather of a backend the thresholds name: nccl, or custom while the per-rank part is
 * <= the cap and nccl above (custom and auto alike: the custom backend hands what is over
 * its cap to NCCL). */
typedef struct {
  const gcurve *nccl, *custom;
  int tp;
} gsel;

/* A --gather file's curves: for each TP asked, the rows of that many ranks. */
typedef struct {
  const char *file;
  int backend;               /* a concrete backend: nccl or custom */
  int ranks[MAX_TPS];        /* per curve */
  size_t n[MAX_TPS];
  double *bytes[MAX_TPS], *t[MAX_TPS];
  long line0[MAX_TPS], line1[MAX_TPS];
  int ncurves;
  char what[160];            /* "nccl-tests all_gather_perf log, 8 ranks, NVIDIA H200" */
} gfile;

/* The transferred NCCL model of this GPU: model/latency/xgather.h fitted to the AIConfigurator
 * all_gather tables of the other GPUs of its fabric; w90 from leaving each of them out. */
typedef struct {
  int built;                 /* xfer_build ran (it runs when a gather first needs it) */
  int ok;
  tps_xga_model m;
  char from[256];
  char why[256];
  double w90[MAX_TPS];
} xfer;

/* ------------------------------------------------------------------ the run */

typedef struct {
  long k, n;
  int path;
  tps_thr_gemm rec;          /* status, rows, times */
  tps_cal_gemm fit;
  int fitted;
  tps_cal_gemm first;        /* the first-phase fit: its base is kept for the rows added later */
  int have_first;
  double last_s;             /* seconds of its latest step (0: none ran) */
  size_t last_rows;          /* rows of that step */
  int nadapt;                /* rows the adaptive phase added */
  long adapt_rows[TPS_CAL_MAX_PTS]; /* those rows, in the order measured */
  tps_cal_heldout ho;        /* the held-out check of them against the first-phase fit */
  int have_ho;
  long skip_lo[TPS_CAL_MAX_PTS]; /* intervals the adaptive phase cannot split (lower rows) */
  size_t nskip;
  /* --harness aic: the ratio aic / bench over the sweep's rows (harness.c), NULL: none */
  tps_mcurve *h_ratio;
  double h_rsd;              /* the spread the conversion adds (lognormal sd) */
  char h_how[600];
} gpart;

typedef struct {
  const opts *o;
  tps_bench_prov dev;
  int ngpus;
  const tps_gpu *gpu;        /* datasheet, NULL when not in data/gpus.tsv */
  tps_gpu_table gt;
  gpart part[MAX_SHAPES * MAX_PATHS];
  int nparts;
  gcurve gc[MAX_TPS][2];     /* [tp][0 nccl, 1 custom] */
  gfile gf[MAX_GFILES];
  xfer xf;
  tps_thr_file out;
  int partial;
  double est_gemm_s, est_gather_s;
  const char *what;          /* the step running (progress) */
  int checks_failed;
} run_t;

/* gather.c */
double gsel_eval(double bytes, void *vc);
tps_thr_prov gsel_prov(const gsel *s, int backend);
/* Read one --gather file (before any GPU work: bad input is exit 2). */
int gfile_read(const char *spec, const opts *o, gfile *g, tps_err *e);
void gfile_free(gfile *g);
/* Step 2: per TP and backend the gather, measured where the GPUs are there, else a file or
 * a model. */
void cal_gathers(run_t *r);

/* sweep.c */
/* The budget allows a step of est_s seconds (else the run is marked partial, said once). */
int cal_budget_allows(run_t *r, double est_s, const char *step);
/* The break-even of a part at a TP and backend (0: never); bands (may be NULL): its win
 * bands on the same parts.  0, -1: no gather, 1: the break-even but no bands. */
int cal_part_be(run_t *r, gpart *p, int ti, int backend, tps_cal_be *be, tps_bands *bands);
/* A fraction as a percentage with one decimal into buf[16], "n/a" for NaN; returns buf. */
const char *cal_pct_text(double v, char *buf);
/* Steps 1, 2b and 3 of the plan (run.c says them). */
void cal_first_sweeps(run_t *r);
void cal_adaptive(run_t *r);
void cal_breakeven_rows(run_t *r);

/* The modes of the command. */
int cal_run(const opts *o);        /* run.c: a calibration of this machine */
int cal_check(const opts *o);      /* offline.c: --check */
int cal_simulate(const opts *o);   /* offline.c: --simulate */
int cal_replay(const opts *o);     /* replay.c: --replay */

/* harness.c: --harness aic: every fitted part's ratio aic / bench at its rows, by the
 * evidence order of the parts (src/evidence: this GPU's or a sibling's tables in both
 * harnesses, else the cross-GPU model's two forms).  TPS_EXIT_OK, or an exit code after one
 * line (the GPU is not in the table, or a path has no aic form). */
int cal_harness(run_t *r);
/* The GEMM of a part at m rows in the harness asked: the fit, times the ratio when converted. */
double cal_gemm_eval(double m, void *part);
/* Its 90% log half-width: the fit's, widened by the conversion's spread when converted. */
double cal_gemm_w90(const gpart *p);

#endif
