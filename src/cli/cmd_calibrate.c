/* cmd_calibrate.c: `tpsplit calibrate`: a short sweep of the GEMM paths (and, with >= 2
 * GPUs, the all-gathers) of the machine it runs on, the calibrated models of model/calib/calib.h,
 * and the engine-facing thresholds file of src/thresholds.h.  Also `calibrate --check`
 * (a calibration against full bench gemm tables), `calibrate --simulate` (offline: the
 * sweep taken from full tables, the other rows scored) and `calibrate --replay` (offline:
 * the adaptive sweep on measured tables, model/calib/calib.c tps_cal_replay; this file reads the
 * tables and prints).
 *
 * Plan of a run, in order, each step checked against the budget before it starts (a step
 * is not interrupted: the budget is wall time from the start, and a step that would end
 * past it by the estimate of its kind is not started; the file is then marked partial):
 *   1. per (shape, path) a bench gemm run of the first-phase sweep rows (tps_cal_sweep_rows);
 *   2. per TP <= GPUs visible, a bench allgather run per concrete backend (nccl; custom for
 *      custom/auto), ~10 sizes from 1 to max-tokens tokens of the shapes' outputs;
 *   2b. per (shape, path) rounds of adaptive rows (tps_cal_adapt_rows), then the held-out
 *      check: those rows, predicted by the first-phase fit, choose shaped or Steffen
 *      (tps_cal_heldout_choose); the method chosen is kept by the refits after it;
 *   3. per (shape, path) a second bench gemm run of the rows the break-even needs
 *      (T* and ceil(T* / TP) of each TP: tps_cal_breakeven_rows), when not near a row had;
 *   4. the calibrated models, break-even, interval and threshold per (shape, path, TP,
 *      backend), written to a temporary file renamed into place (SIGINT/SIGTERM/a watchdog
 *      remove the temporary file: an interrupted run leaves no file that looks complete).
 * A TP above the GPUs visible (or every TP on one GPU) takes its gather from --gather FILE
 * (nccl-tests all_gather log, bench allgather log, AIConfigurator NCCL table), else from the
 * transferred model (model/latency/xgather.h fitted to the AIConfigurator all_gather tables of the
 * other GPUs of this GPU's fabric) and, for the custom backend, its spec-only priors; every
 * entry's provenance says which.
 * Units: us, bytes, rows, tokens. */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "src/cli/tpsplit.h"
#include "src/base/err.h"
#include "src/base/util.h"
#include "src/base/iocheck.h"
#include "src/base/jsonout.h"
#include "src/io/aic.h"
#include "src/io/gpus.h"
#include "src/io/table.h"
#include "src/io/ncclt.h"
#include "src/cli/cmd_bench.h"
#include "model/calib/calib.h"
#include "model/latency/xgather.h"
#include "src/cli/thr_excess.h"
#include "src/io/thresholds.h"

#define MAX_SHAPES 8
#define MAX_TPS 8
#define MAX_GFILES 16
#define MAX_PATHS 4
#define GATHER_POINTS 10
#define NEAR_FACTOR 1.15      /* a break-even row this close to a swept one is not added */
#define EST_GEMM_S 8.0        /* a bench gemm step's estimate before one ran */
#define EST_GATHER_S 12.0     /* a bench allgather step's estimate before one ran */
#define CUSTOM_W90 0.405      /* log(1.5): the custom backend's spec-only priors, assumed +-50% */

static void usage(FILE *fp) {
  char paths[128], gathers[64];
  tps_path_names(TPS_PATH_F_BENCH, paths, sizeof paths);
  tps_gather_names(gathers, sizeof gathers);
  fprintf(fp,
          "Usage: tpsplit calibrate [options] -o FILE\n"
          "       tpsplit calibrate --check FILE BENCH.tsv...\n"
          "       tpsplit calibrate --simulate TABLE...\n"
          "       tpsplit calibrate --replay [--budget-s S] [--row-s S] TABLE[+TABLE...]...\n"
          "Measure this machine briefly (GEMM paths at ~12 rows per shape; with >= 2 GPUs the\n"
          "all-gather per TP and backend at ~10 sizes), fit calibrated models and write the\n"
          "engine-facing thresholds file: per device (as engines key it, e.g. NVIDIA_H200),\n"
          "shape KxN, path, TP and gather backend, split_from_tokens (split when T >= it).\n\n"
          "  -o, --output FILE  the thresholds file (JSON; written only when complete: a temporary\n"
          "                     file renamed into place)\n"
          "  --shapes LIST      projection shapes KxN, K inner and N outputs, multiples of 64\n"
          "                     (default 5120x1792); the gathered output is 2 N bytes per token\n"
          "  --paths LIST       GEMM paths (default dense-bf16,native-fp8,w8a16; of %s);\n"
          "                     one this GPU cannot run is skipped and said\n"
          "  --tp LIST          TP sizes (default 2,4,8)\n"
          "  --backends LIST    gather backends of the thresholds (default nccl,auto; of %s)\n"
          "  --budget-s S       wall-time budget in seconds (default 60); reached: the run stops,\n"
          "                     writes what it measured and marks the file \"partial\": true\n"
          "  --gather FILE      all-gather measurements for TPs not measured here (repeatable):\n"
          "                     an nccl-tests all_gather_perf log, a bench allgather log, or an\n"
          "                     AIConfigurator NCCL table (its file is one GPU's: choose it)\n"
          "  --samples N        samples per sweep row and gather size (default 20; a full bench\n"
          "                     takes 50)\n"
          "  --points N         first-phase sweep rows per shape and path (default 12)\n"
          "  --max-tokens T     largest token count of a threshold (default %d)\n"
          "  --method M         auto (default), shaped or steffen (model/calib/calib.h)\n"
          "  --device D         CUDA device of the GEMM sweep (default 0)\n"
          "  --seed S           random seed of the bench data (default: from the clock)\n"
          "  --check FILE       check the calibration in FILE against full bench gemm tables\n"
          "                     (the arguments): per (shape, path) median and max |error| over\n"
          "                     their rows outside the sweep; exit 0 within tolerance, 1 outside\n"
          "  --tolerance M,X    --check tolerance in percent, median and max (default 4,10)\n"
          "  --rows             --check: then every bench row, calibrated vs measured\n"
          "  --simulate         offline: for each bench gemm table (or AIConfigurator GEMM table\n"
          "                     with dtype and n chosen: FILE:dtype=bfloat16,n=2048) take the\n"
          "                     sweep rows from its rows and score the others, per method\n"
          "  --adapt-rows N     rows the adaptive phase adds at most per shape and path (default\n"
          "                     16; 0: none): after the first-phase fits, midpoints where the model\n"
          "                     bends, the slope leaves [0, 1.2] or the time rises most, until 90%%\n"
          "                     of the budget (model/calib/calib.h)\n"
          "  --no-heldout       keep the first-phase method after the adaptive phase (default with\n"
          "                     --method auto: the adaptive rows, predicted by the first-phase fit\n"
          "                     before they join it, choose shaped or steffen: model/calib/calib.h)\n"
          "  --replay           offline: for each table (pieces of one shape and path joined by\n"
          "                     +: bench gemm tables, a calibrate result's sweep; or an AIConfigurator\n"
          "                     table FILE:dtype=D,n=N) a mock bench returns its times at its rows\n"
          "                     nearest to the rows asked; the fixed first-phase sweep and the\n"
          "                     adaptive one are scored on the rows in neither\n"
          "  --row-s S          --replay: simulated seconds per measured row (default 1)\n"
          "  --parts N          --replay: parts sharing the budget (default 3)\n"
          "  --json             --check, --simulate, --replay: JSON on stdout\n"
          "  -h, --help; --version\n\n"
          "Exit: 0 ok; 1 no GPU, a GPU failure, or --check outside tolerance; 2 usage or input error.\n",
          paths, gathers, TPS_CAL_T_MAX);
}

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
  char **args;               /* positional: --check benches or --simulate tables */
  int nargs;
} opts;

enum { OPT_SHAPES = 256, OPT_PATHS, OPT_TP, OPT_BACKENDS, OPT_BUDGET, OPT_GATHER, OPT_SAMPLES, OPT_POINTS,
       OPT_MAXTOK, OPT_METHOD, OPT_DEVICE, OPT_SEED, OPT_CHECK, OPT_TOL, OPT_SIMULATE, OPT_JSON, OPT_ROWS, OPT_VERSION,
       OPT_REPLAY, OPT_ROW_S, OPT_PARTS, OPT_ADAPT_ROWS, OPT_NO_HELDOUT };

static int list_each(const char *arg, const char *what, int (*fn)(opts *, const char *), opts *o) {
  char **items;
  size_t n;
  if (tps_parse_list(arg, &items, &n) != 0 || n == 0) {
    tps_die_msg("calibrate: --%s '%s': a comma list", what, arg);
    return TPS_EXIT_USAGE;
  }
  int rc = TPS_EXIT_OK;
  for (size_t i = 0; i < n && rc == TPS_EXIT_OK; i++) rc = fn(o, items[i]);
  tps_free_list(items, n);
  return rc;
}

static int add_shape(opts *o, const char *s) {
  long k, n;
  char *end;
  k = strtol(s, &end, 10);
  if (end == s || (*end != 'x' && *end != 'X') || tps_parse_long(end + 1, &n) != 0 || k < 64 || n < 64 || k % 64 ||
      n % 64 || k > (1L << 20) || n > (1L << 20)) {
    tps_die_msg("calibrate: --shapes: '%s' is not KxN with K and N multiples of 64 (e.g. 5120x1792)", s);
    return TPS_EXIT_USAGE;
  }
  if (o->nshapes == MAX_SHAPES) { tps_die_msg("calibrate: --shapes: at most %d", MAX_SHAPES); return TPS_EXIT_USAGE; }
  for (int i = 0; i < o->nshapes; i++) if (o->k[i] == k && o->n[i] == n) return TPS_EXIT_OK;
  o->k[o->nshapes] = k;
  o->n[o->nshapes++] = n;
  return TPS_EXIT_OK;
}

static int add_path(opts *o, const char *s) {
  const tps_path *p = tps_path_find_for(s, TPS_PATH_F_BENCH);
  char names[128];
  if (!p || p->id == TPS_PATH_W8A16_REF) {
    tps_die_msg("calibrate: --paths: unknown path '%s' (dense-bf16, native-fp8, w8a16; bench paths: %s)", s,
                tps_path_names(TPS_PATH_F_BENCH, names, sizeof names));
    return TPS_EXIT_USAGE;
  }
  for (int i = 0; i < o->npaths; i++) if (o->path[i] == (int)p->id) return TPS_EXIT_OK;
  if (o->npaths == MAX_PATHS) { tps_die_msg("calibrate: --paths: at most %d", MAX_PATHS); return TPS_EXIT_USAGE; }
  o->path[o->npaths++] = p->id;
  return TPS_EXIT_OK;
}

static int add_backend(opts *o, const char *s) {
  int b = tps_gather_parse(s);
  char names[64];
  if (b < 0) {
    tps_die_msg("calibrate: --backends: unknown gather backend '%s' (%s)", s, tps_gather_names(names, sizeof names));
    return TPS_EXIT_USAGE;
  }
  for (int i = 0; i < o->nbackends; i++) if (o->backend[i] == b) return TPS_EXIT_OK;
  o->backend[o->nbackends++] = b;
  return TPS_EXIT_OK;
}

/* --NAME ARG as a whole number in [lo, hi]: 0, else one line and TPS_EXIT_USAGE. */
static int int_opt(const char *name, const char *arg, long lo, long hi, long *v) {
  if (tps_parse_long(arg, v) == 0 && *v >= lo && *v <= hi) return TPS_EXIT_OK;
  tps_die_msg("calibrate: --%s '%s': a whole number from %ld to %ld", name, arg, lo, hi);
  return TPS_EXIT_USAGE;
}

static int parse(int argc, char **argv, opts *o) {
  static const struct option lo[] = {
      {"shapes", required_argument, 0, OPT_SHAPES},   {"paths", required_argument, 0, OPT_PATHS},
      {"tp", required_argument, 0, OPT_TP},           {"backends", required_argument, 0, OPT_BACKENDS},
      {"budget-s", required_argument, 0, OPT_BUDGET}, {"gather", required_argument, 0, OPT_GATHER},
      {"samples", required_argument, 0, OPT_SAMPLES}, {"points", required_argument, 0, OPT_POINTS},
      {"max-tokens", required_argument, 0, OPT_MAXTOK}, {"method", required_argument, 0, OPT_METHOD},
      {"device", required_argument, 0, OPT_DEVICE},   {"seed", required_argument, 0, OPT_SEED},
      {"check", required_argument, 0, OPT_CHECK},     {"tolerance", required_argument, 0, OPT_TOL},
      {"simulate", no_argument, 0, OPT_SIMULATE},     {"json", no_argument, 0, OPT_JSON},
      {"rows", no_argument, 0, OPT_ROWS},             {"replay", no_argument, 0, OPT_REPLAY},
      {"row-s", required_argument, 0, OPT_ROW_S},     {"parts", required_argument, 0, OPT_PARTS},
      {"adapt-rows", required_argument, 0, OPT_ADAPT_ROWS}, {"no-heldout", no_argument, 0, OPT_NO_HELDOUT},
      {"output", required_argument, 0, 'o'},          {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, OPT_VERSION},       {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->budget_s = 60;
  o->samples = 20;
  o->points = 12;
  o->t_max = TPS_CAL_T_MAX;
  o->method = TPS_CAL_AUTO;
  o->tol_med = 0.04;
  o->tol_max = 0.10;
  o->row_s = 1.0;
  o->replay_parts = 3;
  tps_cal_adapt_defaults(&o->adapt);
  o->seed = (unsigned long)time(NULL);
  const char *shapes = "5120x1792", *paths = "dense-bf16,native-fp8,w8a16", *tps = "2,4,8", *backends = "nccl,auto";
  int c, rc = TPS_EXIT_OK;
  long v;
  double d;
  optind = 0;
  opterr = 0;
  while (rc == TPS_EXIT_OK && (c = getopt_long(argc, argv, ":o:hV", lo, NULL)) != -1) {
    switch (c) {
    case OPT_SHAPES: shapes = optarg; break;
    case OPT_PATHS: paths = optarg; break;
    case OPT_TP: tps = optarg; break;
    case OPT_BACKENDS: backends = optarg; break;
    case OPT_BUDGET:
      if (tps_parse_double(optarg, &d) || d < 1 || d > 86400) { tps_die_msg("calibrate: --budget-s '%s': seconds from 1 to 86400", optarg); rc = TPS_EXIT_USAGE; }
      o->budget_s = d;
      break;
    case OPT_GATHER:
      if (o->ngfiles == MAX_GFILES) { tps_die_msg("calibrate: --gather: at most %d files", MAX_GFILES); rc = TPS_EXIT_USAGE; }
      else o->gfile[o->ngfiles++] = optarg;
      break;
    case OPT_SAMPLES: rc = int_opt("samples", optarg, 3, 200, &v); o->samples = (int)v; break;
    case OPT_POINTS: rc = int_opt("points", optarg, 4, TPS_CAL_MAX_PTS / 2, &v); o->points = (int)v; break;
    case OPT_MAXTOK: rc = int_opt("max-tokens", optarg, 16, 65536, &v); o->t_max = v; break;
    case OPT_DEVICE: rc = int_opt("device", optarg, 0, 1024, &v); o->device = (int)v; break;
    case OPT_SEED: rc = int_opt("seed", optarg, 0, 1L << 40, &v); o->seed = (unsigned long)v; break;
    case OPT_METHOD:
      if ((o->method = tps_cal_method_parse(optarg)) < 0) { tps_die_msg("calibrate: --method '%s': auto, shaped or steffen", optarg); rc = TPS_EXIT_USAGE; }
      break;
    case OPT_CHECK: o->check = optarg; break;
    case OPT_TOL: {
      double a, b;
      char *comma = strchr(optarg, ',');
      char buf[64];
      snprintf(buf, sizeof buf, "%s", optarg);
      if (comma) buf[comma - optarg] = 0;
      if (!comma || tps_parse_double(buf, &a) || tps_parse_double(comma + 1, &b) || a <= 0 || b < a || b > 1000) {
        tps_die_msg("calibrate: --tolerance '%s': MEDIAN,MAX in percent (e.g. 4,10)", optarg);
        rc = TPS_EXIT_USAGE;
      }
      o->tol_med = a / 100;
      o->tol_max = b / 100;
      break;
    }
    case OPT_SIMULATE: o->simulate = 1; break;
    case OPT_REPLAY: o->replay = 1; break;
    case OPT_NO_HELDOUT: o->no_heldout = 1; break;
    case OPT_PARTS: rc = int_opt("parts", optarg, 1, MAX_SHAPES * MAX_PATHS, &v); o->replay_parts = (int)v; break;
    case OPT_ADAPT_ROWS: rc = int_opt("adapt-rows", optarg, 0, TPS_CAL_MAX_PTS / 2, &v); o->adapt.max_rows = (int)v; break;
    case OPT_ROW_S:
      if (tps_parse_double(optarg, &d) || !(d > 0) || d > 3600) { tps_die_msg("calibrate: --row-s '%s': seconds from 0 to 3600", optarg); rc = TPS_EXIT_USAGE; }
      o->row_s = d;
      break;
    case OPT_ROWS: o->per_row = 1; break;
    case OPT_JSON: o->json = 1; break;
    case 'o': o->out = optarg; break;
    case 'h': usage(stdout); return -1;
    case 'V':
    case OPT_VERSION: tps_print_version("calibrate"); return -1;
    case ':': tps_die_msg("calibrate: option '%s' needs a value", argv[optind - 1]); rc = TPS_EXIT_USAGE; break;
    default: tps_die_msg("calibrate: bad option '%s' (try 'tpsplit calibrate --help')", argv[optind - 1]); rc = TPS_EXIT_USAGE; break;
    }
  }
  if (rc != TPS_EXIT_OK) return rc;
  o->args = argv + optind;
  o->nargs = argc - optind;
  if (!!o->check + o->simulate + o->replay > 1) { tps_die_msg("calibrate: --check, --simulate and --replay exclude each other"); return TPS_EXIT_USAGE; }
  if ((o->check || o->simulate || o->replay) && o->nargs < 1) {
    tps_die_msg("calibrate: --%s needs at least one table argument", o->check ? "check" : o->simulate ? "simulate" : "replay");
    return TPS_EXIT_USAGE;
  }
  if (!o->check && !o->simulate && !o->replay) {
    if (o->nargs) { tps_die_msg("calibrate: unexpected argument '%s'", o->args[0]); return TPS_EXIT_USAGE; }
    if (!o->out) { tps_die_msg("calibrate: -o FILE is required (the thresholds file)"); return TPS_EXIT_USAGE; }
  }
  long *tv;
  size_t nt;
  tps_err e;
  tps_err_clear(&e);
  /* no output replaces an input (src/base/iocheck.h), before anything is read */
  tps_io_reset();
  for (int i = 0; i < o->ngfiles; i++) tps_io_input_spec(o->gfile[i], "--gather");
  for (int i = 0; i < o->nargs; i++) tps_io_input_spec(o->args[i], "argument");
  tps_io_input(o->check, "--check");
  tps_io_output(o->out, "-o");
  if (tps_io_check(&e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  if ((rc = list_each(shapes, "shapes", add_shape, o)) || (rc = list_each(paths, "paths", add_path, o)) ||
      (rc = list_each(backends, "backends", add_backend, o)))
    return rc;
  if (tps_parse_tokens(tps, &tv, &nt, &e)) { tps_die_msg("calibrate: --tp '%s': %s", tps, e.msg); return TPS_EXIT_USAGE; }
  for (size_t i = 0; i < nt && rc == TPS_EXIT_OK; i++) {
    if (tv[i] < 2 || tv[i] > TPS_BENCH_MAX_RANKS) { tps_die_msg("calibrate: --tp %ld: from 2 to %d", tv[i], TPS_BENCH_MAX_RANKS); rc = TPS_EXIT_USAGE; }
    else if (o->ntps == MAX_TPS) { tps_die_msg("calibrate: --tp: at most %d sizes", MAX_TPS); rc = TPS_EXIT_USAGE; }
    else o->tp[o->ntps++] = (int)tv[i];
  }
  free(tv);
  return rc;
}

/* ------------------------------------------------------------------ messages */

static int tty;            /* stderr is a terminal: one progress line, rewritten */
static double t0_s;
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double elapsed_s(void) { return now_s() - t0_s; }

static const opts *cur_opts;
static char prog_line[256];

/* A message line (the progress line, on a terminal, is cleared first and drawn again). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  if (tty) fputs("\r\033[K", stderr);
  fputs("calibrate: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (tty && prog_line[0]) fprintf(stderr, "%s", prog_line);
}

/* The progress line: on a terminal only, rewritten in place. */
static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...) {
  if (!tty) return;
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(prog_line, sizeof prog_line, "calibrate: [%5.1f / %.0f s] %s", elapsed_s(), cur_opts ? cur_opts->budget_s : 0.0, msg);
  fprintf(stderr, "\r\033[K%s", prog_line);
}
static void progress_end(void) {
  if (tty && prog_line[0]) fputs("\r\033[K", stderr);
  prog_line[0] = 0;
}

/* ------------------------------------------------------------------ interruption */

/* The temporary output, removed by a signal or the watchdog before the process ends. */
static char tmp_path_sig[4096];
static volatile sig_atomic_t tmp_live;

static void on_signal(int sig) {
  if (tmp_live) unlink(tmp_path_sig);
  static const char m1[] = "\ntpsplit: calibrate: interrupted: no thresholds file written\n";
  static const char m2[] = "\ntpsplit: calibrate: watchdog: no progress long past the budget (a hung GPU?): aborted, no thresholds file written\n";
  if (sig == SIGALRM) { ssize_t w = write(2, m2, sizeof m2 - 1); (void)w; _exit(TPS_EXIT_FAIL); }
  ssize_t w = write(2, m1, sizeof m1 - 1);
  (void)w;
  _exit(128 + sig);
}

static void guard(const tps_outfile *of, double budget_s) {
  if (of->tmp_path) {
    snprintf(tmp_path_sig, sizeof tmp_path_sig, "%s", of->tmp_path);
    tmp_live = 1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);
  /* the bench harness times out a hung gather (10 s, NCCL init 60 s) but not a hung GEMM:
   * past three budgets and two minutes nothing legitimate is still running */
  alarm((unsigned)(3 * budget_s + 120));
}

static void unguard(void) {
  alarm(0);
  tmp_live = 0;
}

/* ------------------------------------------------------------------ gathers */

/* One (TP, concrete backend) gather curve: measured here, from a file, or a model. */
typedef struct {
  int tp, backend;           /* TPS_GATHER_NCCL or TPS_GATHER_CUSTOM */
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

static double gcurve_eval(const gcurve *g, double bytes) {
  if (g->have == 1) return tps_loo_curve_eval(g->curve, bytes);
  if (g->have == 2) return tps_xga_time_us(&g->xga, g->gpu, bytes, g->tp, g->xga_backend, NULL);
  return NAN;
}

/* The gather of a backend the thresholds name: nccl, or custom while the per-rank part is
 * <= the cap and nccl above (custom and auto alike: the custom backend hands what is over
 * its cap to NCCL). */
typedef struct {
  const gcurve *nccl, *custom;
  int tp;
} gsel;

static double gsel_eval(double bytes, void *vc) {
  const gsel *s = vc;
  if (s->custom && s->custom->have && bytes / s->tp <= TPS_GATHER_CUSTOM_CAP_BYTES) return gcurve_eval(s->custom, bytes);
  return s->nccl && s->nccl->have ? gcurve_eval(s->nccl, bytes) : NAN;
}

static void gcurve_set_points(gcurve *g, const double *b, const double *t, size_t n) {
  g->n = n < TPS_CAL_MAX_PTS ? n : TPS_CAL_MAX_PTS;
  memcpy(g->bytes, b, g->n * sizeof *b);
  memcpy(g->t, t, g->n * sizeof *t);
  tps_loo_curve_free(g->curve);
  g->curve = tps_loo_curve_measured(g->bytes, g->t, g->n);
  g->have = g->curve ? 1 : 0;
  g->w90 = tps_cal_curve_w90(g->bytes, g->t, g->n);
  g->prov.points = (int)g->n;
  g->prov.w90_log = g->w90;
}

/* A --gather file's curves: for each TP asked, the rows of that many ranks. */
typedef struct {
  const char *file;
  int backend;               /* TPS_GATHER_NCCL / _CUSTOM */
  int ranks[MAX_TPS];        /* per curve */
  size_t n[MAX_TPS];
  double *bytes[MAX_TPS], *t[MAX_TPS];
  long line0[MAX_TPS], line1[MAX_TPS];
  int ncurves;
  char what[160];            /* "nccl-tests all_gather_perf log, 8 ranks, NVIDIA H200" */
} gfile;

static void gfile_free(gfile *g) {
  for (int i = 0; i < g->ncurves; i++) { free(g->bytes[i]); free(g->t[i]); }
  memset(g, 0, sizeof *g);
}

/* Read one --gather file (before any GPU work: bad input is exit 2). */
static int gfile_read(const char *spec, const opts *o, gfile *g, tps_err *e) {
  memset(g, 0, sizeof *g);
  g->file = spec;
  g->backend = TPS_GATHER_NCCL;
  if (tps_aic_is(spec)) {
    tps_aic_file a;
    if (tps_aic_read_spec(spec, &a, e)) return -1;
    if (a.kind != TPS_AIC_NCCL) { tps_aic_free(&a); return tps_err_set(e, spec, 0, "an AIConfigurator GEMM table, not an NCCL one"); }
    const char *dtype = NULL;
    for (size_t i = 0; i < a.nrows && !dtype; i++) if (!strcmp(a.c[i].op, "all_gather") && !strcmp(a.c[i].dtype, "half")) dtype = "half";
    for (size_t i = 0; i < a.nrows && !dtype; i++) if (!strcmp(a.c[i].op, "all_gather")) dtype = a.c[i].dtype;
    if (!dtype) { tps_aic_free(&a); return tps_err_set(e, spec, 0, "no all_gather rows (a table of another collective)"); }
    for (int i = 0; i < o->ntps; i++) {
      double *b, *t;
      size_t n;
      tps_err e2;
      tps_err_clear(&e2);
      if (tps_aic_nccl_curve(&a, "all_gather", o->tp[i], dtype, &b, &t, &n, &e2)) continue;
      g->ranks[g->ncurves] = o->tp[i];
      g->bytes[g->ncurves] = b;
      g->t[g->ncurves] = t;
      g->n[g->ncurves] = n;
      g->ncurves++;
    }
    snprintf(g->what, sizeof g->what, "AIConfigurator NCCL table of %s (all_gather, %s, NCCL %s)", a.gpu, dtype,
             a.nrows ? a.c[0].nccl_version : "?");
    tps_aic_free(&a);
    if (!g->ncurves) return tps_err_set(e, spec, 0, "no all_gather rows at any TP asked (--tp)");
    return 0;
  }
  tps_table t;
  if (tps_table_read(spec, &t, e)) return -1;
  if (t.kind != TPS_TABLE_ALLGATHER) {
    int k = t.kind;
    tps_table_free(&t);
    return tps_err_set(e, spec, 0, "not an all-gather log or table (a %s table)", tps_table_kind_names[k]);
  }
  if (t.ranks < 2) {
    int nr = t.ranks;
    tps_table_free(&t);
    return tps_err_set(e, spec, 0, "%d rank(s): an all-gather of >= 2 ranks is needed", nr);
  }
  /* our bench allgather logs name their backend in a "# Gather: X" line (nccl-tests' do not:
   * NCCL) */
  tps_text tx;
  if (!tps_ncclt_is_json(spec) && tps_text_read(spec, &tx, e) == 0) {
    for (size_t i = 0; i < tx.n; i++) {
      char b[16] = "";
      if (sscanf(tx.line[i], "# Gather: %15[a-z]", b) != 1) continue;
      if (tps_gather_parse(b) == TPS_GATHER_CUSTOM) g->backend = TPS_GATHER_CUSTOM;
      if (tps_gather_parse(b) == TPS_GATHER_AUTO) {
        long ln = (long)i + 1;
        tps_text_free(&tx);
        tps_table_free(&t);
        return tps_err_set(e, spec, ln, "a log of the auto rule (custom and nccl mixed): give one log per backend");
      }
    }
    tps_text_free(&tx);
  }
  g->ranks[0] = t.ranks;
  g->n[0] = t.nrows;
  g->bytes[0] = malloc(t.nrows * sizeof(double));
  g->t[0] = malloc(t.nrows * sizeof(double));
  if (!g->bytes[0] || !g->t[0]) { tps_table_free(&t); gfile_free(g); return tps_err_set(e, spec, 0, "out of memory"); }
  memcpy(g->bytes[0], t.bytes, t.nrows * sizeof(double));
  memcpy(g->t[0], t.time_us, t.nrows * sizeof(double));
  g->line0[0] = t.line[0];
  g->line1[0] = t.line[t.nrows - 1];
  g->ncurves = 1;
  snprintf(g->what, sizeof g->what, "%s log, %d ranks, %s", !strcmp(t.source, "nccl-tests") ? "all-gather" : "all-gather table",
           t.ranks, t.gpu[0] ? t.gpu : "GPU not named");
  tps_table_free(&t);
  if (g->n[0] < 2) { gfile_free(g); return tps_err_set(e, spec, 0, "fewer than 2 sizes"); }
  return 0;
}

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

static const char *const aic_nccl_stems[] = {"a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "l40s", "rtx_pro_6000_server"};
#define NSTEMS (sizeof aic_nccl_stems / sizeof aic_nccl_stems[0])

typedef struct {
  const tps_gpu *gpu;
  size_t n;
  tps_xga_point *p;
} xset;

static int xfit(const xset *s, int ns, int skip, int pcie, tps_xga_model *m) {
  size_t n = 0;
  for (int i = 0; i < ns; i++) if (i != skip) n += s[i].n;
  tps_xga_prior(m, pcie);
  if (!n) return TPS_ETOOFEW;
  tps_xga_point *p = calloc(n, sizeof *p);
  if (!p) return TPS_ENOMEM;
  size_t k = 0;
  for (int i = 0; i < ns; i++)
    if (i != skip) for (size_t j = 0; j < s[i].n; j++) p[k++] = s[i].p[j];
  int st = tps_xga_fit(m, p, k);
  free(p);
  return st;
}

static void xfer_build(const tps_gpu *gpu, const tps_gpu_table *gt, const opts *o, xfer *x) {
  memset(x, 0, sizeof *x);
  x->built = 1;
  if (!gpu) { snprintf(x->why, sizeof x->why, "this GPU is not in data/gpus.tsv"); return; }
  if (!(tps_xga_bus_gbps(gpu) > 0)) { snprintf(x->why, sizeof x->why, "%s has no scale-up bandwidth in data/gpus.tsv", gpu->name); return; }
  const int pcie = !gpu->nvlink;
  xset s[NSTEMS];
  int ns = 0;
  for (size_t i = 0; i < NSTEMS; i++) {
    char rel[128], file[512], gname[64];
    tps_err e;
    tps_err_clear(&e);
    snprintf(rel, sizeof rel, "aic/nccl_%s.tsv.gz", aic_nccl_stems[i]);
    if (tps_data_path(rel, file, sizeof file, &e)) continue;
    tps_aic_filter f;
    memset(&f, 0, sizeof f);
    snprintf(f.op, sizeof f.op, "all_gather");
    tps_aic_file a;
    if (tps_aic_read(file, &f, &a, &e)) continue;
    const tps_gpu *g = tps_gpus_find(gt, tps_aic_gpu_name(a.gpu, gname, sizeof gname), &e);
    if (g && g != gpu && strcmp(g->name, gpu->name) && (!g->nvlink) == pcie) {
      s[ns].gpu = g;
      s[ns].p = calloc(a.nrows, sizeof *s[ns].p);
      s[ns].n = 0;
      for (size_t j = 0; s[ns].p && j < a.nrows; j++)
        s[ns].p[s[ns].n++] = (tps_xga_point){g, a.c[j].num_gpus, a.c[j].bytes, a.c[j].latency_us, 1.0};
      for (size_t j = 0; j < s[ns].n; j++) s[ns].p[j].weight = 1.0 / (double)s[ns].n;
      size_t u = strlen(x->from);
      snprintf(x->from + u, sizeof x->from - u, "%s%s", u ? "," : "", g->name);
      ns++;
    }
    tps_aic_free(&a);
  }
  if (!ns) { snprintf(x->why, sizeof x->why, "no AIConfigurator all_gather table of another %s GPU", pcie ? "PCIe" : "NVLink"); return; }
  if (xfit(s, ns, -1, pcie, &x->m) != TPS_OK) { snprintf(x->why, sizeof x->why, "the fit of the transferred gather model failed"); goto done; }
  x->ok = 1;
  /* the 90% half-width at each TP: each training GPU predicted by a fit on the others, at
   * its sizes a split of 1..max-tokens tokens gathers (4 KiB .. 64 MiB) */
  for (int t = 0; t < o->ntps; t++) x->w90[t] = NAN;
  if (ns >= 2) {
    tps_xga_model fm[NSTEMS];
    int fok[NSTEMS];
    for (int h = 0; h < ns; h++) fok[h] = xfit(s, ns, h, pcie, &fm[h]) == TPS_OK;
    for (int t = 0; t < o->ntps; t++) {
      double lr[4096];
      size_t k = 0;
      for (int h = 0; h < ns; h++)
        for (size_t j = 0; fok[h] && j < s[h].n && k < 4096; j++) {
          const tps_xga_point *p = &s[h].p[j];
          if (p->n != o->tp[t] || p->bytes < 4096 || p->bytes > 64.0 * 1024 * 1024) continue;
          lr[k++] = log(tps_xga_time_us(&fm[h], s[h].gpu, p->bytes, p->n, TPS_XGA_NCCL, NULL) / p->t_us);
        }
      /* a TP no training GPU has (e.g. 16): the widest of the others */
      x->w90[t] = k ? tps_loo_quantile_abs(lr, k, 0.9, TPS_CAL_MIN_W) : NAN;
    }
    double wmax = NAN;
    for (int t = 0; t < o->ntps; t++) if (isfinite(x->w90[t]) && !(x->w90[t] <= wmax)) wmax = x->w90[t];
    for (int t = 0; t < o->ntps; t++) if (!isfinite(x->w90[t])) x->w90[t] = isfinite(wmax) ? wmax : log(2.0);
  } else {
    for (int t = 0; t < o->ntps; t++) x->w90[t] = log(2.0); /* one training GPU: no held-out error to go by */
  }
done:
  for (int i = 0; i < ns; i++) free(s[i].p);
}

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

static int budget_allows(run_t *r, double est_s, const char *step) {
  if (elapsed_s() + est_s <= r->o->budget_s) return 1;
  if (!r->partial)
    say("budget: %.1f s of %.0f s used, the next step (%s) takes ~%.0f s: stopping here; the file will say \"partial\": true",
        elapsed_s(), r->o->budget_s, step, est_s);
  r->partial = 1;
  return 0;
}

static void on_check(void *arg, const tps_bench_gemm_check *c) {
  run_t *r = arg;
  if (!c->ok) {
    r->checks_failed++;
    say("check FAILED: %s M=%d: rel %.3g, max|diff| %.4g", r->what, c->m, c->rel, c->max_abs_diff);
  } else {
    progress("%s: checked M=%d", r->what, c->m);
  }
}

static int cmp_long_r(const void *a, const void *b) {
  const long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* The estimate of a step of n rows of part p: its latest step's time scaled by (n + 1) /
 * (rows + 1) (a step costs about one row more than its rows: the plan, the weights); before
 * any step, the longest step so far.  The first step holds the all-row checks, so the first
 * estimate after it errs long; every later one follows the part's own recent cost (run 3 on
 * the H200: a 12-row first step 13.0 s, the 4-row steps after it 1.3-6.3 s, where the longest
 * step had made the break-even rows (one row) wait for 13 s and the run stop at 48 of 60 s). */
static double step_est_s(const run_t *r, const gpart *p, size_t n) {
  if (!p->last_rows) return r->est_gemm_s;
  return p->last_s * (double)(n + 1) / (double)(p->last_rows + 1);
}

/* One bench gemm run of rows[] for a part; the measured rows are merged into its record. */
/* est_s < 0: the estimate of a GEMM step (the longest so far) */
static int gemm_step(run_t *r, gpart *p, const long *rows, size_t nrows, const char *phase, double est_s) {
  char what[320];
  snprintf(what, sizeof what, "gemm %ldx%ld %s (%s, %zu rows)", p->k, p->n, tps_path_name(p->path), phase, nrows);
  if (!budget_allows(r, est_s < 0 ? r->est_gemm_s : est_s, what)) {
    if (!p->rec.npts) {
      snprintf(p->rec.status, sizeof p->rec.status, "not-run");
      snprintf(p->rec.reason, sizeof p->rec.reason, "the budget of %.0f s was reached before it", r->o->budget_s);
    }
    return TPS_SKIP;
  }
  r->what = what;
  progress("%s", what);
  int irows[TPS_CAL_MAX_PTS];
  for (size_t i = 0; i < nrows; i++) irows[i] = (int)rows[i];
  qsort(irows, nrows, sizeof *irows, cmp_int);
  tps_bench_gemm_opts o;
  memset(&o, 0, sizeof o);
  o.path = (tps_path_id)p->path;
  o.k = (int)p->k;
  o.n = (int)p->n;
  o.rows = irows;
  o.nrows = (int)nrows;
  o.samples = r->o->samples;
  o.warmup = 2;
  o.device = r->o->device;
  o.seed = r->o->seed;
  /* rows are recorded only after a step whose checks all passed: the all-row checks (1, 7, 64,
   * 129 rows) ran then, once per part; each new M keeps its own check */
  o.full_checks_done = p->rec.npts > 0;
  o.arg = r;
  o.on_check = on_check;
  tps_bench_gemm_result res;
  memset(&res, 0, sizeof res);
  res.rows = calloc(nrows, sizeof *res.rows);
  if (!res.rows) return TPS_ENOMEM;
  const double t1 = elapsed_s();
  r->checks_failed = 0;
  int st = tps_bench_gemm_run(&o, &res);
  const double dt = elapsed_s() - t1;
  if (dt > r->est_gemm_s || r->est_gemm_s == EST_GEMM_S) r->est_gemm_s = dt;
  if (nrows) { p->last_s = dt; p->last_rows = nrows; }
  prog_line[0] = 0; /* the step is over: its progress line is not drawn again */
  if (st == TPS_OK && (res.failed || r->checks_failed)) {
    snprintf(p->rec.status, sizeof p->rec.status, "failed");
    snprintf(p->rec.reason, sizeof p->rec.reason, "a correctness check failed: nothing timed");
    say("%s: a correctness check failed: no thresholds for it", what);
    st = TPS_ERR;
  } else if (st != TPS_OK) {
    snprintf(p->rec.status, sizeof p->rec.status, "failed");
    snprintf(p->rec.reason, sizeof p->rec.reason, "%s", res.why[0] ? res.why : "the GEMM bench failed (see above)");
    say("%s: failed: %s", what, p->rec.reason);
  } else {
    /* merge, ascending; a row measured before keeps its first time and configuration */
    char mc[TPS_CAL_MAX_PTS][TPS_THR_CONFIG];
    long mr[TPS_CAL_MAX_PTS];
    double mt[TPS_CAL_MAX_PTS];
    size_t m = 0, a = 0, b = 0;
    while ((a < p->rec.npts || b < nrows) && m < TPS_CAL_MAX_PTS) {
      const int old = b >= nrows || (a < p->rec.npts && p->rec.rows[a] <= res.rows[b].m);
      if (old && b < nrows && p->rec.rows[a] == res.rows[b].m) b++;
      if (old) {
        mr[m] = p->rec.rows[a];
        mt[m] = p->rec.t_us[a];
        memcpy(mc[m], p->rec.config[a], TPS_THR_CONFIG);
        a++;
      } else {
        mr[m] = res.rows[b].m;
        mt[m] = res.rows[b].t[0].median_us;
        snprintf(mc[m], TPS_THR_CONFIG, "%s", res.rows[b].config);
        b++;
      }
      m++;
    }
    memcpy(p->rec.rows, mr, m * sizeof *mr);
    memcpy(p->rec.t_us, mt, m * sizeof *mt);
    memcpy(p->rec.config, mc, m * sizeof *mc);
    p->rec.npts = m;
    p->rec.samples = r->o->samples;
    snprintf(p->rec.status, sizeof p->rec.status, "measured");
    p->rec.reason[0] = 0;
    say("%s: %.1f s; %zu rows measured so far (M %ld..%ld)", what, dt, m, mr[0], mr[m - 1]);
  }
  free(res.rows);
  return st;
}

static void on_ag_row(void *arg, size_t i, int phase, const void *row) {
  run_t *r = arg;
  const tps_bench_ag_row *a = row;
  if (phase == TPS_BENCH_ROW_TIMED) progress("%s: %zu bytes: %.2f us", r->what, a->size, a->oop.median_us);
  (void)i;
}

/* The gather sizes: log-spaced over what a split of 1..max-tokens tokens of every shape
 * gathers (custom: the per-rank part within its cap). */
static size_t gather_sizes(const run_t *r, int tp, int custom, long *sizes) {
  double lo = INFINITY, hi = 0;
  for (int s = 0; s < r->o->nshapes; s++) {
    double ob = 2.0 * (double)r->o->n[s];
    if (ob < lo) lo = ob;
    if (ob > hi) hi = ob;
  }
  /* tokens t_max * hi / lo at the smallest output covers every shape's range */
  long tmax = (long)ceil((double)r->o->t_max * hi / lo);
  return tps_cal_gather_sizes(lo, tp, tmax, GATHER_POINTS, custom ? TPS_GATHER_CUSTOM_CAP_BYTES : 0, sizes,
                              TPS_CAL_MAX_PTS);
}

static int gather_step(run_t *r, gcurve *g) {
  char what[96];
  snprintf(what, sizeof what, "allgather TP%d %s", g->tp, tps_gather_name(g->backend));
  if (!budget_allows(r, r->est_gather_s, what)) {
    snprintf(g->status, sizeof g->status, "not-run");
    snprintf(g->reason, sizeof g->reason, "the budget of %.0f s was reached before it", r->o->budget_s);
    return TPS_SKIP;
  }
  r->what = what;
  progress("%s", what);
  long sizes[TPS_CAL_MAX_PTS];
  size_t ns = gather_sizes(r, g->tp, g->backend == TPS_GATHER_CUSTOM, sizes);
  tps_bench_ag_opts o;
  memset(&o, 0, sizeof o);
  o.w.tp = g->tp;
  o.w.gather = g->backend;
  o.w.samples = r->o->samples;
  o.w.warmup = 3;
  o.w.cap_bytes = TPS_GATHER_CUSTOM_CAP_BYTES;
  o.w.arg = r;
  o.w.on_row = on_ag_row;
  o.sizes = sizes;
  o.nsizes = ns;
  tps_bench_ag_result res;
  memset(&res, 0, sizeof res);
  res.rows = calloc(ns, sizeof *res.rows);
  if (!res.rows) return TPS_ENOMEM;
  const double t1 = elapsed_s();
  int st = tps_bench_allgather_run(&o, &res);
  const double dt = elapsed_s() - t1;
  if (dt > r->est_gather_s || r->est_gather_s == EST_GATHER_S) r->est_gather_s = dt;
  prog_line[0] = 0;
  if (st != TPS_OK) {
    snprintf(g->status, sizeof g->status, "failed");
    snprintf(g->reason, sizeof g->reason, "%s", res.w.why[0] ? res.w.why : "the all-gather bench failed (see above: NCCL, a timeout or a rank)");
    say("%s: failed: %s; its thresholds take the gather from a --gather file or a model", what, g->reason);
  } else {
    double b[TPS_CAL_MAX_PTS], t[TPS_CAL_MAX_PTS];
    size_t n = 0;
    for (size_t i = 0; i < ns; i++)
      if (res.rows[i].size) { b[n] = (double)res.rows[i].size; t[n] = res.rows[i].oop.median_us; n++; }
    char src[512];
    snprintf(src, sizeof src, "tpsplit calibrate on this machine: bench allgather, %d GPUs, %s, NCCL %s, %d samples (median, max over ranks)",
             g->tp, tps_gather_name(g->backend), res.w.prov.nccl, r->o->samples);
    g->prov = tps_thr_prov_make(TPS_PROV_MEASURED, src, "Steffen interpolation in log-log of the measured sizes (model/numeric/robust.h)");
    gcurve_set_points(g, b, t, n);
    g->samples = r->o->samples;
    g->measured_here = 1;
    snprintf(g->status, sizeof g->status, "measured");
    if (!r->out.dev[0].nccl[0]) snprintf(r->out.dev[0].nccl, sizeof r->out.dev[0].nccl, "%s", res.w.prov.nccl);
    say("%s: %.1f s; %zu sizes, %.0f..%.0f bytes", what, dt, n, b[0], b[n - 1]);
  }
  free(res.rows);
  return st;
}

/* The record of a gather not measured here: its status (not-run, or failed / not-run by the
 * budget as the attempt left it) and where the curve comes from instead. */
static void fallback_said(gcurve *g, const char *from) {
  char was[256];
  snprintf(was, sizeof was, "%s", g->reason);
  if (!g->status[0]) snprintf(g->status, sizeof g->status, "not-run");
  if (was[0]) snprintf(g->reason, sizeof g->reason, "%.200s; the curve: %s", was, from);
  else snprintf(g->reason, sizeof g->reason, "not measured here (%s); the curve: %s",
                g->tp > 1 ? "fewer GPUs than the TP" : "one rank", from);
}

/* A (TP, backend) not measured here: a --gather file, else the models. */
static void gather_fallback(run_t *r, gcurve *g, int ti) {
  for (int f = 0; f < r->o->ngfiles; f++) {
    const gfile *gf = &r->gf[f];
    if (gf->backend != g->backend) continue;
    for (int c = 0; c < gf->ncurves; c++) {
      if (gf->ranks[c] != g->tp) continue;
      char src[512];
      if (gf->line0[c] > 0) snprintf(src, sizeof src, "%s:%ld-%ld (%s)", gf->file, gf->line0[c], gf->line1[c], gf->what);
      else snprintf(src, sizeof src, "%s (%s, %d GPUs)", gf->file, gf->what, g->tp);
      g->prov = tps_thr_prov_make(TPS_PROV_MEASURED, src, "Steffen interpolation in log-log of the file's sizes (model/numeric/robust.h)");
      gcurve_set_points(g, gf->bytes[c], gf->t[c], gf->n[c]);
      g->samples = 0;
      fallback_said(g, "from the --gather file");
      return;
    }
  }
  if (g->backend == TPS_GATHER_NCCL && !r->xf.built) {
    xfer_build(r->gpu, &r->gt, r->o, &r->xf);
    if (!r->xf.ok) say("no transferred gather model: %s", r->xf.why);
  }
  if (g->backend == TPS_GATHER_NCCL && r->xf.ok) {
    g->have = 2;
    g->xga = r->xf.m;
    g->gpu = r->gpu;
    g->xga_backend = TPS_XGA_NCCL;
    g->w90 = r->xf.w90[ti];
    g->prov = tps_thr_prov_make(TPS_PROV_TRANSFERRED, tps_xga_backend_source[TPS_XGA_NCCL],
                                "model/latency/xgather.h: NCCL LL/LL128/Simple, the fastest, per-peer latency, bus bandwidth = NCCL's "
                                "per-link bandwidth x links of this GPU (data/gpus.tsv); w90 from leaving each training GPU out");
    snprintf(g->prov.from_gpus, sizeof g->prov.from_gpus, "%s", r->xf.from);
    g->prov.w90_log = g->w90;
    fallback_said(g, "transferred model");
    return;
  }
  if (g->backend == TPS_GATHER_CUSTOM && r->gpu && r->gpu->nvlink) {
    g->have = 2;
    tps_xga_prior(&g->xga, 0);
    g->gpu = r->gpu;
    g->xga_backend = TPS_XGA_CUSTOM;
    g->w90 = CUSTOM_W90;
    g->prov = tps_thr_prov_make(TPS_PROV_SPEC, tps_xga_backend_source[TPS_XGA_CUSTOM],
                                "model/latency/xgather.h custom one-shot: floor + bytes / (efficiency x NVLink line rate of data/gpus.tsv); "
                                "w90 assumed log(1.5): measured on no GPU but the H20");
    g->prov.w90_log = g->w90;
    fallback_said(g, "spec-only model");
    return;
  }
  g->have = 0;
}

/* Provenance of a backend's gather: nccl's, or custom's below the cap and nccl's above. */
static tps_thr_prov gsel_prov(const gsel *s, int backend) {
  if (backend == TPS_GATHER_NCCL || !s->custom || !s->custom->have) {
    tps_thr_prov p = s->nccl->prov;
    if (backend != TPS_GATHER_NCCL) {
      size_t u = strlen(p.method);
      snprintf(p.method + u, sizeof p.method - u, "; no custom one-shot gather on these GPUs: NCCL throughout");
    }
    return p;
  }
  const tps_thr_prov *c = &s->custom->prov, *n = &s->nccl->prov;
  tps_thr_prov p = tps_thr_prov_make(c->kind > n->kind ? c->kind : n->kind, "", "");
  snprintf(p.source, sizeof p.source, "custom: %.240s | nccl: %.240s", c->source, n->source);
  snprintf(p.method, sizeof p.method, "custom one-shot while the per-rank part <= %u bytes (%s), NCCL above (%s)",
           TPS_GATHER_CUSTOM_CAP_BYTES, tps_prov_kind_names[c->kind], tps_prov_kind_names[n->kind]);
  p.points = c->kind == TPS_PROV_MEASURED && n->kind == TPS_PROV_MEASURED ? c->points + n->points : -1;
  snprintf(p.from_gpus, sizeof p.from_gpus, "%s", n->from_gpus[0] ? n->from_gpus : c->from_gpus);
  p.w90_log = fmax(s->custom->w90, s->nccl->w90);
  return p;
}

/* The calibrated model of a part: the first time fitted whole (and kept as its first-phase
 * fit), later with the first-phase base kept and the rows added taken by the residuals
 * (tps_cal_gemm_fit_frozen: an added row changes the curve only between its neighbours);
 * lopo 0 (adaptive rounds): no leave-one-point-out.  w90: the wider of the first-phase one
 * (the base refitted without each point) and the current one. */
static void fit_part(run_t *r, gpart *p, int lopo) {
  if (p->fitted) tps_cal_gemm_free(&p->fit);
  p->fitted = 0;
  if (strcmp(p->rec.status, "measured") || p->rec.npts < 2) return;
  int st;
  if (p->have_first) {
    st = tps_cal_gemm_fit_frozen(&p->fit, &p->first, p->rec.rows, p->rec.t_us, p->rec.npts, lopo);
    if (st == TPS_OK && !(p->fit.w90 >= p->first.w90)) p->fit.w90 = p->first.w90;
  } else {
    st = tps_cal_gemm_fit(&p->fit, p->path, p->k, p->n, r->gpu, NULL, TPS_XG_FLUSHED, p->rec.rows, p->rec.t_us, p->rec.npts,
                          r->o->method);
    if (st == TPS_OK) {
      p->rec.first_method = p->fit.method;
      p->have_first = tps_cal_gemm_fit_quick(&p->first, p->path, p->k, p->n, r->gpu, NULL, TPS_XG_FLUSHED, p->rec.rows,
                                             p->rec.t_us, p->rec.npts, r->o->method) == TPS_OK;
      if (p->have_first) {
        p->first.w90 = p->fit.w90;
        memcpy(p->first.w90_by, p->fit.w90_by, sizeof p->first.w90_by);
      } else {
        tps_cal_gemm_free(&p->first);
      }
    }
  }
  if (st != TPS_OK) {
    say("gemm %ldx%ld %s: the calibrated model cannot be fitted (%s)", p->k, p->n, tps_path_name(p->path), tps_strstatus(st));
    tps_cal_gemm_free(&p->fit);
    return;
  }
  p->fitted = 1;
  p->rec.method = p->fit.method;
  p->rec.base = p->fit.base;
  p->rec.w90_log = p->fit.w90;
  memcpy(p->rec.lopo_med, p->fit.lopo_med, sizeof p->rec.lopo_med);
  memcpy(p->rec.lopo_max, p->fit.lopo_max, sizeof p->rec.lopo_max);
}

/* A fraction as a percentage with one decimal into buf[16], "n/a" for NaN; returns buf. */
static const char *pct_text(double v, char *buf) {
  if (isfinite(v)) snprintf(buf, 16, "%.1f%%", 100 * v);
  else snprintf(buf, 16, "n/a");
  return buf;
}

/* The held-out check of a part's adaptive rows (model/calib/calib.h): each predicted by the
 * first-phase fit by both methods; the method chosen becomes the first-phase fit's, which
 * the refits after it keep (tps_cal_gemm_fit_frozen), unless --no-heldout or a --method
 * forced.  Said and recorded in the part's calibration record.  TPS_OK, TPS_NA (no adaptive
 * row), or the check's status (said). */
static int heldout_part(run_t *r, gpart *p) {
  if (!p->have_first || !p->nadapt) return TPS_NA;
  double t[TPS_CAL_MAX_PTS];
  size_t n = 0;
  for (int j = 0; j < p->nadapt; j++)
    for (size_t i = 0; i < p->rec.npts; i++)
      if (p->rec.rows[i] == p->adapt_rows[j]) { t[n++] = p->rec.t_us[i]; break; }
  if (n != (size_t)p->nadapt) return TPS_NA; /* a row not measured: no check */
  int st = tps_cal_heldout_choose(&p->first, p->adapt_rows, t, n, &p->ho);
  if (st != TPS_OK) {
    say("gemm %ldx%ld %s: no held-out check (%s)", p->k, p->n, tps_path_name(p->path), tps_strstatus(st));
    return st;
  }
  p->have_ho = 1;
  const int prior = p->first.method;
  const int keep = r->o->no_heldout || r->o->method != TPS_CAL_AUTO; /* a method forced is kept */
  int chosen = keep ? prior : p->ho.method;
  if (chosen != prior && tps_cal_gemm_use_method(&p->first, chosen) != TPS_OK) chosen = prior;
  char a[4][16];
  say("gemm %ldx%ld %s: held-out check of %zu adaptive rows by the first-phase fit: max |error| steffen %s, shaped %s "
      "(median %s, %s): %s %s",
      p->k, p->n, tps_path_name(p->path), p->ho.n, pct_text(p->ho.max_abs_rel[TPS_CAL_STEFFEN], a[0]),
      pct_text(p->ho.max_abs_rel[TPS_CAL_SHAPED], a[1]), pct_text(p->ho.med_abs_rel[TPS_CAL_STEFFEN], a[2]),
      pct_text(p->ho.med_abs_rel[TPS_CAL_SHAPED], a[3]), tps_cal_method_names[chosen],
      chosen != prior ? "chosen instead of the first phase's" : r->o->no_heldout ? "kept (--no-heldout)"
                                                              : keep ? "kept (--method)" : "kept");
  tps_thr_gemm *g = &p->rec;
  g->first_method = prior;
  g->heldout_n = p->ho.n;
  memcpy(g->heldout_rows, p->ho.rows, p->ho.n * sizeof *p->ho.rows);
  qsort(g->heldout_rows, g->heldout_n, sizeof *g->heldout_rows, cmp_long_r);
  memcpy(g->heldout_max, p->ho.max_abs_rel, sizeof g->heldout_max);
  memcpy(g->heldout_med, p->ho.med_abs_rel, sizeof g->heldout_med);
  return TPS_OK;
}

/* The break-even of a part at a TP and backend (0: never); bands (may be NULL): its win
 * bands on the same parts.  0, -1: no gather, 1: the break-even but no bands. */
static int part_be(run_t *r, gpart *p, int ti, int backend, tps_cal_be *be, tps_bands *bands) {
  gsel s = {&r->gc[ti][0], backend == TPS_GATHER_NCCL ? NULL : &r->gc[ti][1], r->o->tp[ti]};
  if (!s.nccl->have) return -1;
  tps_cal_parts parts = {tps_cal_gemm_fn, &p->fit, gsel_eval, &s, p->fit.w90,
                         s.custom && s.custom->have ? fmax(s.custom->w90, s.nccl->w90) : s.nccl->w90};
  if (tps_cal_breakeven(&parts, r->o->tp[ti], 2.0 * (double)p->n, r->o->t_max, be) != TPS_OK) return -1;
  return bands && tps_cal_bands(&parts, r->o->tp[ti], 2.0 * (double)p->n, r->o->t_max, bands) != TPS_OK ? 1 : 0;
}

/* The GEMM provenance's method: the calibrated model, and how the held-out check chose it. */
static void gemm_method_text(const run_t *r, const gpart *p, char *buf, size_t sz) {
  const char *m;
  if (p->fit.method == TPS_CAL_SHAPED && p->fit.base == TPS_CAL_BASE_XW8)
    m = "shaped: model/latency/xgemm.h tps_xw8 (our w8a16 dispatch) fitted to the sweep x its measured residuals, per dispatch regime (model/calib/calib.h)";
  else if (p->fit.method == TPS_CAL_SHAPED)
    m = "shaped: model/latency/xgemm.h best-of-tilings fitted to the sweep (this GPU's datasheet as input) x its measured residuals interpolated in log M (model/calib/calib.h)";
  else
    m = "Steffen interpolation in log-log of the sweep (model/calib/calib.h)";
  if (!p->have_ho || !p->ho.n) {
    snprintf(buf, sz, "%s", m);
    return;
  }
  char a[2][16];
  const char *how = p->fit.method != p->rec.first_method ? "chosen by the held-out check"
                    : r->o->no_heldout                    ? "the first phase's (--no-heldout); the held-out check"
                    : r->o->method != TPS_CAL_AUTO        ? "as --method forces; the held-out check"
                                                          : "kept by the held-out check";
  snprintf(buf, sz, "%s; %s of %zu adaptive rows (first-phase fit's max |error| steffen %s, shaped %s)", m, how, p->ho.n,
           pct_text(p->ho.max_abs_rel[TPS_CAL_STEFFEN], a[0]), pct_text(p->ho.max_abs_rel[TPS_CAL_SHAPED], a[1]));
}

static void build_entries(run_t *r, const char *date) {
  tps_thr_device *d = &r->out.dev[0];
  for (int i = 0; i < r->nparts; i++) {
    gpart *p = &r->part[i];
    *tps_thr_add_gemm(d) = p->rec;
    if (!p->fitted) continue;
    for (int ti = 0; ti < r->o->ntps; ti++)
      for (int b = 0; b < r->o->nbackends; b++) {
        const int backend = r->o->backend[b];
        tps_cal_be be;
        tps_bands bands;
        const int bst = part_be(r, p, ti, backend, &be, &bands);
        if (bst < 0) continue;
        tps_thr_entry *e = tps_thr_add_entry(d);
        if (!e) continue;
        e->k = p->k;
        e->n = p->n;
        e->path = p->path;
        e->tp = r->o->tp[ti];
        e->backend = backend;
        e->out_bytes_per_token = 2.0 * (double)p->n;
        tps_thr_entry_answer(e, be.breakeven, be.lo, be.hi, r->o->t_max);
        char why[256] = "a part cannot be evaluated on the grid";
        if (bst || tps_thr_entry_bands(e, &bands, why, sizeof why))
          tps_thr_add_note(&r->out, "%ldx%ld %s TP%d %s: no win_bands_tokens: %s", p->k, p->n, tps_path_name(p->path), e->tp,
                           tps_gather_name(backend), why);
        char src[512];
        snprintf(src, sizeof src, "tpsplit calibrate on this GPU (%s), %s: bench gemm sweep, %d samples per row", d->name, date,
                 p->rec.samples);
        char mtext[512];
        gemm_method_text(r, p, mtext, sizeof mtext);
        e->gemm = tps_thr_prov_make(TPS_PROV_MEASURED, src, mtext);
        e->gemm.points = (int)p->rec.npts;
        e->gemm.w90_log = p->fit.w90;
        gsel s = {&r->gc[ti][0], backend == TPS_GATHER_NCCL ? NULL : &r->gc[ti][1], e->tp};
        e->gather = gsel_prov(&s, backend);
      }
  }
  for (int ti = 0; ti < r->o->ntps; ti++)
    for (int c = 0; c < 2; c++) {
      const gcurve *g = &r->gc[ti][c];
      if (!g->have && !g->status[0]) continue;
      tps_thr_gather *x = tps_thr_add_gather(d);
      if (!x) continue;
      x->tp = g->tp;
      x->backend = g->backend;
      snprintf(x->status, sizeof x->status, "%s", g->status[0] ? g->status : "not-run");
      snprintf(x->reason, sizeof x->reason, "%s", g->reason);
      x->samples = g->samples;
      if (g->have == 1) {
        x->npts = g->n;
        memcpy(x->bytes, g->bytes, g->n * sizeof *g->bytes);
        memcpy(x->t_us, g->t, g->n * sizeof *g->t);
      }
      x->prov = g->prov.source[0] ? g->prov : tps_thr_prov_make(TPS_PROV_SPEC, "none", "no gather: no thresholds at this TP");
    }
}

static int calibrate(const opts *o) {
  run_t *r = calloc(1, sizeof *r);
  if (!r) { tps_die_msg("calibrate: out of memory"); return TPS_EXIT_FAIL; }
  r->o = o;
  r->est_gemm_s = EST_GEMM_S;
  r->est_gather_s = EST_GATHER_S;
  tps_err e;
  tps_err_clear(&e);
  int rc = TPS_EXIT_OK;
  tps_outfile of;
  memset(&of, 0, sizeof of);
  /* bad input first, before any GPU work: the --gather files, the GPU table, the output */
  for (int f = 0; f < o->ngfiles && rc == TPS_EXIT_OK; f++)
    if (gfile_read(o->gfile[f], o, &r->gf[f], &e)) { tps_err_print(&e); rc = tps_err_exit_code(&e); }
  if (rc == TPS_EXIT_OK && tps_gpus_load(NULL, &r->gt, &e)) { tps_err_print(&e); rc = TPS_EXIT_USAGE; }
  if (rc == TPS_EXIT_OK && tps_out_open(&of, o->out, &e)) { tps_err_print(&e); rc = TPS_EXIT_USAGE; }
  char why[TPS_BENCH_WHY];
  if (rc == TPS_EXIT_OK && tps_bench_gpus(&r->ngpus, why, sizeof why) != TPS_OK) {
    tps_die_msg("calibrate: no GPU can be opened: %s. It measures the GPUs of the machine it runs on; "
                "for a GPU not at hand use tpsplit predict or crossover. Nothing written.",
                why);
    rc = TPS_EXIT_FAIL;
  }
  if (rc == TPS_EXIT_OK) {
    int st = tps_bench_device_info(o->device, &r->dev, why, sizeof why);
    if (st != TPS_OK) {
      tps_die_msg("calibrate: device %d: %s; nothing written", o->device, why);
      rc = st == TPS_EINVAL ? TPS_EXIT_USAGE : TPS_EXIT_FAIL;
    }
  }
  if (rc == TPS_EXIT_OK && tps_bench_mpi()) {
    tps_die_msg("calibrate: runs as one process (its ranks are threads): not under mpirun; nothing written");
    rc = TPS_EXIT_USAGE;
  }
  if (rc != TPS_EXIT_OK) goto out;
  guard(&of, o->budget_s);
  tps_thr_init(&r->out);
  r->out.budget_s = o->budget_s;
  tps_thr_device *d = tps_thr_add_device(&r->out, r->dev.gpu_name);
  d->sms = r->dev.sms;
  d->cc_major = r->dev.cc_major;
  d->cc_minor = r->dev.cc_minor;
  d->sm_clock_mhz = r->dev.sm_clock_mhz;
  d->mem_clock_mhz = r->dev.mem_clock_mhz;
  d->l2_bytes = r->dev.l2_bytes;
  d->gpus_visible = r->ngpus;
  d->cublaslt = (long)r->dev.cublaslt;
  tps_bench_driver(&r->dev, d->driver, sizeof d->driver);
  tps_bench_cuda_version(r->dev.runtime, d->cuda_runtime, sizeof d->cuda_runtime);
  {
    char shortname[128];
    tps_bench_gpu_short(r->dev.gpu_name, shortname, sizeof shortname);
    tps_err ge;
    tps_err_clear(&ge);
    r->gpu = tps_gpus_find(&r->gt, shortname, &ge);
    if (r->gpu) snprintf(d->gpu_spec, sizeof d->gpu_spec, "%s", r->gpu->name);
    else {
      say("%s is not in data/gpus.tsv: the GEMM is interpolated (Steffen) with no structural model, and the gather "
          "of a TP not measured here needs --gather FILE", r->dev.gpu_name);
      tps_thr_add_note(&r->out, "%s is not in data/gpus.tsv: Steffen interpolation only, no transferred gather model", r->dev.gpu_name);
    }
  }
  say("%s (%d SMs, cc %d.%d), %d GPU(s) visible; budget %.0f s", r->dev.gpu_name, r->dev.sms, r->dev.cc_major,
      r->dev.cc_minor, r->ngpus, o->budget_s);

  /* the parts: a path this GPU cannot run is skipped and said */
  const int cc = r->dev.cc_major * 10 + r->dev.cc_minor;
  for (int s = 0; s < o->nshapes; s++)
    for (int pi = 0; pi < o->npaths; pi++) {
      gpart *p = &r->part[r->nparts++];
      p->k = o->k[s];
      p->n = o->n[s];
      p->path = o->path[pi];
      p->rec.k = p->k;
      p->rec.n = p->n;
      p->rec.path = p->path;
      p->rec.w90_log = NAN;
      p->rec.lopo_med[0] = p->rec.lopo_med[1] = p->rec.lopo_max[0] = p->rec.lopo_max[1] = NAN;
      p->rec.heldout_max[0] = p->rec.heldout_max[1] = p->rec.heldout_med[0] = p->rec.heldout_med[1] = NAN;
      p->rec.first_method = -1;
      const tps_path *tp = tps_path_get(p->path);
      if (cc < tp->min_cc) {
        snprintf(p->rec.status, sizeof p->rec.status, "skipped");
        snprintf(p->rec.reason, sizeof p->rec.reason, "%s needs compute capability %d.%d; this GPU has %d.%d", tp->name,
                 tp->min_cc / 10, tp->min_cc % 10, r->dev.cc_major, r->dev.cc_minor);
        say("skipping %s: %s", tp->name, p->rec.reason);
        tps_thr_add_note(&r->out, "%ldx%ld %s skipped: %s", p->k, p->n, tp->name, p->rec.reason);
      }
    }

  /* 1. first-phase GEMM sweeps */
  for (int i = 0; i < r->nparts; i++) {
    gpart *p = &r->part[i];
    if (p->rec.status[0]) continue;
    tps_cal_sweep_req q = {p->path, p->k, p->n, r->gpu, o->t_max, o->points};
    long rows[TPS_CAL_MAX_PTS];
    size_t n = tps_cal_sweep_rows(&q, rows, TPS_CAL_MAX_PTS);
    gemm_step(r, p, rows, n, "sweep", -1);
    fit_part(r, p, 1);
  }

  /* 2. gathers: measured where the GPUs are there, else a file or a model */
  int need_custom = 0;
  for (int b = 0; b < o->nbackends; b++) if (o->backend[b] != TPS_GATHER_NCCL) need_custom = 1;
  for (int ti = 0; ti < o->ntps; ti++)
    for (int c = 0; c < 2; c++) {
      gcurve *g = &r->gc[ti][c];
      g->tp = o->tp[ti];
      g->backend = c ? TPS_GATHER_CUSTOM : TPS_GATHER_NCCL;
      g->w90 = NAN;
      if (c && !need_custom) continue;
      if (g->tp <= r->ngpus) gather_step(r, g);
      if (!g->have) gather_fallback(r, g, ti);
      if (!g->have && c == 0) {
        say("TP%d: no all-gather (not measured here, no --gather file of %d ranks, no model): no thresholds at TP%d", g->tp, g->tp, g->tp);
        tps_thr_add_note(&r->out, "TP%d: no all-gather measured, given or modelled: no thresholds", g->tp);
      } else if (!g->measured_here && g->have) {
        say("TP%d %s gather: %s (%s)", g->tp, tps_gather_name(g->backend), tps_prov_kind_names[g->prov.kind],
            g->prov.kind == TPS_PROV_TRANSFERRED ? g->prov.from_gpus : g->prov.source);
      }
    }
  if (r->ngpus < 2) tps_thr_add_note(&r->out, "one GPU visible: every all-gather comes from --gather files or models (see each entry's gather provenance)");

  /* 2b. the adaptive phase: rounds over the parts, each measuring the midpoints of the
   * intervals tps_cal_adapt_rows proposes (per_round at most), until none is proposed,
   * max_rows are added or a step would end past budget_frac of the budget less the time
   * kept for the break-even rows (two rows per part) */
  {
    double reserve_s = 0;
    for (int i = 0; i < r->nparts; i++) if (r->part[i].fitted) reserve_s += step_est_s(r, &r->part[i], 2);
    int more = o->adapt.max_rows > 0, stop = 0;
    while (more && !stop) {
      more = 0;
      for (int i = 0; i < r->nparts && !stop; i++) {
        gpart *p = &r->part[i];
        if (!p->fitted || !p->have_first || p->nadapt >= o->adapt.max_rows) continue;
        tps_cal_adapt_pick pk[TPS_CAL_MAX_PTS];
        size_t cap = (size_t)(o->adapt.max_rows - p->nadapt);
        if (cap > (size_t)o->adapt.per_round) cap = (size_t)o->adapt.per_round;
        if (cap > TPS_CAL_MAX_PTS - p->rec.npts) cap = TPS_CAL_MAX_PTS - p->rec.npts;
        size_t np = cap ? tps_cal_adapt_rows(&p->fit, &o->adapt, p->skip_lo, p->nskip, pk, cap) : 0;
        while (np && !tps_cal_adapt_fits(elapsed_s(), step_est_s(r, p, np), reserve_s, o->budget_s,
                                         o->adapt.budget_frac))
          np--;
        if (!np) continue;
        long rows[TPS_CAL_MAX_PTS];
        char why[200] = "";
        for (size_t j = 0; j < np; j++) {
          rows[j] = pk[j].row;
          size_t u = strlen(why);
          snprintf(why + u, sizeof why - u, "%s%ld %s", j ? ", " : "", pk[j].row, tps_cal_why_names[pk[j].why]);
        }
        char phase[240];
        snprintf(phase, sizeof phase, "adaptive: %s", why);
        int st = gemm_step(r, p, rows, np, phase, step_est_s(r, p, np));
        if (st == TPS_SKIP) { stop = 1; break; }
        if (st != TPS_OK) continue; /* said; the part keeps what it had */
        for (size_t j = 0; j < np; j++) p->adapt_rows[p->nadapt++] = rows[j];
        fit_part(r, p, 0);
        more = 1;
      }
    }
    for (int i = 0; i < r->nparts; i++)
      if (r->part[i].nadapt) {
        heldout_part(r, &r->part[i]);
        fit_part(r, &r->part[i], 1);
      }
  }

  /* 3. the rows the break-even needs */
  for (int i = 0; i < r->nparts; i++) {
    gpart *p = &r->part[i];
    if (!p->fitted) continue;
    int tps[MAX_TPS];
    double be[MAX_TPS];
    for (int ti = 0; ti < o->ntps; ti++) {
      tps_cal_be x;
      tps[ti] = o->tp[ti];
      be[ti] = part_be(r, p, ti, o->backend[0], &x, NULL) ? 0 : x.breakeven;
    }
    long rows[2 * MAX_TPS];
    size_t n = tps_cal_breakeven_rows(p->rec.rows, p->rec.npts, tps, be, (size_t)o->ntps, o->t_max, NEAR_FACTOR, rows,
                                      TPS_CAL_MAX_PTS - p->rec.npts < 2 * MAX_TPS ? TPS_CAL_MAX_PTS - p->rec.npts : 2 * MAX_TPS);
    if (!n) continue;
    if (gemm_step(r, p, rows, n, "break-even rows", step_est_s(r, p, n)) == TPS_OK) fit_part(r, p, 1);
  }
  progress_end();

  /* 4. thresholds, written through the temporary file */
  r->out.partial = r->partial;
  build_entries(r, r->out.date);
  r->out.wall_s = elapsed_s();
  for (size_t i = 0; i < d->nentries; i++) {
    char line[1024];
    tps_thr_entry_line(&d->e[i], line, sizeof line);
    say("%s", line);
    if (tps_thr_entry_bands_line(&d->e[i], line, sizeof line)) say("  %s", line);
  }
  if (!d->nentries) say("no thresholds: nothing measured and modelled enough (see above)");
  {
    json_t *j = tps_thr_to_json(&r->out);
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
    json_decref(j);
    if (!s) rc = TPS_EXIT_FAIL;
    else {
      fputs(s, of.fp);
      fputc('\n', of.fp);
      free(s);
      unguard();
      if (tps_out_commit(&of, &e)) { tps_err_print(&e); rc = TPS_EXIT_FAIL; }
      else say("wrote %s: %zu thresholds in %.1f s%s", o->out, d->nentries, r->out.wall_s, r->partial ? " (partial: the budget was reached)" : "");
    }
  }
  if (rc == TPS_EXIT_OK && !d->nentries) rc = TPS_EXIT_FAIL;
out:
  unguard();
  tps_out_abort(&of);
  for (int i = 0; i < r->nparts; i++) {
    if (r->part[i].fitted) tps_cal_gemm_free(&r->part[i].fit);
    if (r->part[i].have_first) tps_cal_gemm_free(&r->part[i].first);
  }
  for (int ti = 0; ti < MAX_TPS; ti++) for (int c = 0; c < 2; c++) tps_loo_curve_free(r->gc[ti][c].curve);
  for (int f = 0; f < o->ngfiles; f++) gfile_free(&r->gf[f]);
  tps_gpus_free(&r->gt);
  tps_thr_free(&r->out);
  free(r);
  return rc;
}

/* ------------------------------------------------------------------ --check */

static int check(const opts *o) {
  tps_err e;
  tps_err_clear(&e);
  tps_thr_file f;
  if (tps_thr_read(o->check, &f, &e)) { tps_err_print(&e); return tps_err_exit_code(&e); }
  tps_gpu_table gt;
  if (tps_gpus_load(NULL, &gt, &e)) { tps_err_print(&e); tps_thr_free(&f); return TPS_EXIT_USAGE; }
  tps_thr_check_row *rows;
  size_t n;
  int rc;
  if (tps_thr_check_scored(&f, NULL, o->args, (size_t)o->nargs, o->tol_med, o->tol_max, &gt, &rows, &n, &e)) {
    tps_err_print(&e);
    rc = TPS_EXIT_USAGE;
  } else {
    int all;
    if (o->json) {
      all = tps_thr_check_within(rows, n);
      if (tps_json_print(tps_thr_check_json(rows, n, o->tol_med, o->tol_max))) all = -1;
    } else {
      all = tps_thr_check_print(stdout, rows, n, o->tol_med, o->tol_max, o->per_row);
    }
    rc = all > 0 ? TPS_EXIT_OK : TPS_EXIT_FAIL;
    tps_thr_check_free(rows, n);
  }
  tps_gpus_free(&gt);
  tps_thr_free(&f);
  return rc;
}

/* ------------------------------------------------------------------ --simulate */

typedef struct {
  char label[160];
  char what[64];
  size_t swept, scored;
  double med[2], max[2];
  long rows[TPS_CAL_MAX_PTS];
  double t_us[TPS_CAL_MAX_PTS];
  size_t nrows;
  /* -o: the calibration record of a bench table */
  int bench;                 /* 1: a tpsplit bench table (not AIConfigurator's) */
  char gpu_name[64];
  const tps_gpu *gpu;
  long k, n;
  int path;
  tps_cal_gemm fit;          /* the auto method's fit */
  int fitted;
} simrow;

/* The sweep rows of a table: calibrate's rows, each taken to the nearest (in log rows)
 * row of the table not taken yet; then both methods fitted and scored on the others. */
static int simulate_one(const char *label, const char *what, int path, long k, long n, const tps_gpu *gpu, int harness,
                        const long *M, const double *T, size_t nm, const opts *o, simrow *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->label, sizeof out->label, "%s", label);
  snprintf(out->what, sizeof out->what, "%s", what);
  long tmax = M[nm - 1] < o->t_max ? M[nm - 1] : o->t_max;
  tps_cal_sweep_req q = {path, k, n, gpu, tmax, o->points};
  long rows[TPS_CAL_MAX_PTS];
  size_t nr = tps_cal_sweep_rows(&q, rows, TPS_CAL_MAX_PTS);
  char *used = calloc(nm, 1);
  double *rel = calloc(nm, sizeof *rel);
  if (!used || !rel) { free(used); free(rel); return -1; }
  for (size_t i = 0; i < nr; i++) {
    size_t best = nm;
    double bd = INFINITY;
    for (size_t j = 0; j < nm; j++) {
      if (used[j] || M[j] > tmax) continue;
      double dd = fabs(log((double)M[j] / (double)rows[i]));
      if (dd < bd) { bd = dd; best = j; }
    }
    if (best < nm) used[best] = 1;
  }
  long sr[TPS_CAL_MAX_PTS];
  double st[TPS_CAL_MAX_PTS];
  for (size_t j = 0; j < nm; j++)
    if (used[j] && out->nrows < TPS_CAL_MAX_PTS) { sr[out->nrows] = M[j]; st[out->nrows] = T[j]; out->nrows++; }
  memcpy(out->rows, sr, out->nrows * sizeof *sr);
  memcpy(out->t_us, st, out->nrows * sizeof *st);
  out->swept = out->nrows;
  out->gpu = gpu;
  out->k = k;
  out->n = n;
  out->path = path;
  out->fitted = tps_cal_gemm_fit(&out->fit, path, k, n, gpu, NULL, harness, sr, st, out->nrows, o->method) == TPS_OK;
  for (int m = 0; m < 2; m++) {
    tps_cal_gemm g;
    out->med[m] = out->max[m] = NAN;
    if (tps_cal_gemm_fit(&g, path, k, n, gpu, NULL, harness, sr, st, out->nrows, m) == TPS_OK && g.method == m) {
      size_t s = tps_cal_gemm_score(&g, M, T, nm, rel);
      for (size_t j = 0; j < nm; j++) if (M[j] > tmax && isfinite(rel[j])) { rel[j] = NAN; s--; }
      tps_loo_err se = tps_loo_summary(rel, nm);
      out->scored = s;
      out->med[m] = se.med_abs;
      out->max[m] = se.max_abs;
    }
    tps_cal_gemm_free(&g);
  }
  free(used);
  free(rel);
  return 0;
}

/* -o with --simulate: a thresholds file whose calibration section holds the simulated
 * sweeps of the bench tables (one GPU), so that --check can score it against the tables. */
static int simulate_write(const opts *o, const simrow *rows) {
  tps_thr_file f;
  tps_thr_init(&f);
  tps_thr_device *d = NULL;
  int rc = TPS_EXIT_OK;
  for (int i = 0; i < o->nargs && rc == TPS_EXIT_OK; i++) {
    const simrow *s = &rows[i];
    if (!s->bench) { tps_die_msg("calibrate: --simulate -o: %s is not a tpsplit bench table", s->label); rc = TPS_EXIT_USAGE; break; }
    if (!d) {
      d = tps_thr_add_device(&f, s->gpu_name);
      snprintf(d->gpu_spec, sizeof d->gpu_spec, "%s", s->gpu->name);
      d->sms = s->gpu->sms;
      d->cc_major = s->gpu->cc_major;
      d->cc_minor = s->gpu->cc_minor;
      d->gpus_visible = 1;
      snprintf(d->driver, sizeof d->driver, "unknown (simulated from tables)");
      snprintf(d->cuda_runtime, sizeof d->cuda_runtime, "unknown");
      tps_thr_add_note(&f, "simulated: the sweep rows taken from full bench tables (calibrate --simulate), no GPU used; no gather, so no thresholds");
    } else if (strcmp(d->name, s->gpu_name)) {
      tps_die_msg("calibrate: --simulate -o: %s is of %s, the others of %s: one GPU per file", s->label, s->gpu_name, d->name);
      rc = TPS_EXIT_USAGE;
      break;
    }
    tps_thr_gemm *g = tps_thr_add_gemm(d);
    g->k = s->k;
    g->n = s->n;
    g->path = s->path;
    snprintf(g->status, sizeof g->status, "measured");
    snprintf(g->reason, sizeof g->reason, "simulated from %s", s->label);
    g->npts = s->nrows;
    memcpy(g->rows, s->rows, s->nrows * sizeof *s->rows);
    memcpy(g->t_us, s->t_us, s->nrows * sizeof *s->t_us);
    if (s->fitted) {
      g->method = s->fit.method;
      g->base = s->fit.base;
      g->w90_log = s->fit.w90;
      memcpy(g->lopo_med, s->fit.lopo_med, sizeof g->lopo_med);
      memcpy(g->lopo_max, s->fit.lopo_max, sizeof g->lopo_max);
    }
  }
  tps_err e;
  tps_err_clear(&e);
  if (rc == TPS_EXIT_OK && tps_thr_write(&f, o->out, &e)) { tps_err_print(&e); rc = TPS_EXIT_USAGE; }
  tps_thr_free(&f);
  return rc;
}

static int simulate(const opts *o) {
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  if (tps_gpus_load(NULL, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  simrow *rows = calloc((size_t)o->nargs, sizeof *rows);
  int rc = rows ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  for (int i = 0; i < o->nargs && rc == TPS_EXIT_OK; i++) {
    const char *spec = o->args[i];
    if (tps_aic_is(spec)) {
      char *file = NULL;
      tps_aic_filter f;
      tps_aic_file a;
      long *M = NULL;
      double *T = NULL;
      size_t nm = 0;
      char gname[64], what[64];
      if (tps_aic_parse_spec(spec, &file, &f, &e) || tps_aic_read(file, &f, &a, &e)) { tps_err_print(&e); free(file); rc = tps_err_exit_code(&e); break; }
      int path = !strcmp(f.dtype, "bfloat16") ? TPS_PATH_DENSE_BF16 : !strcmp(f.dtype, "fp8") ? TPS_PATH_NATIVE_FP8 : -1;
      const tps_gpu *gpu = tps_gpus_find(&gt, tps_aic_gpu_name(a.gpu, gname, sizeof gname), &e);
      if (path < 0 || f.n < 1 || a.kind != TPS_AIC_GEMM) {
        tps_die_msg("calibrate: --simulate %s: choose a GEMM table's dtype (bfloat16 or fp8) and n, e.g. FILE:dtype=bfloat16,n=2048", spec);
        rc = TPS_EXIT_USAGE;
      } else if (!gpu) {
        tps_err_print(&e);
        rc = TPS_EXIT_USAGE;
      } else if (tps_aic_gemm_curve(&a, f.dtype, f.n, f.k ? f.k : a.g[0].k, &M, &T, &nm, &e)) {
        tps_err_print(&e);
        rc = TPS_EXIT_USAGE;
      } else {
        snprintf(what, sizeof what, "AIC %s %s", a.g[0].backend, a.g[0].version);
        simulate_one(spec, what, path, f.k ? f.k : a.g[0].k, f.n, gpu, TPS_XG_AIC, M, T, nm, o, &rows[i]);
      }
      free(M); free(T); free(file);
      tps_aic_free(&a);
      continue;
    }
    tps_table t;
    if (tps_table_read(spec, &t, &e)) { tps_err_print(&e); rc = tps_err_exit_code(&e); break; }
    const tps_path *p = tps_path_find(t.kpath);
    char shortname[128];
    tps_bench_gpu_short(t.gpu, shortname, sizeof shortname);
    const tps_gpu *gpu = tps_gpus_find(&gt, shortname, &e);
    if (t.kind != TPS_TABLE_GEMM || !p || t.k < 1 || t.n < 1) {
      tps_die_msg("calibrate: --simulate %s: not a bench gemm table with '#@ path', '#@ k' and '#@ n'", spec);
      rc = TPS_EXIT_USAGE;
    } else if (!gpu) {
      tps_err_print(&e);
      rc = TPS_EXIT_USAGE;
    } else if (t.nrows < 4) {
      tps_die_msg("calibrate: --simulate %s: %zu rows: too few to hold any out", spec, t.nrows);
      rc = TPS_EXIT_USAGE;
    } else {
      simulate_one(spec, "tpsplit bench", p->id, t.k, t.n, gpu, TPS_XG_FLUSHED, t.rows, t.time_us, t.nrows, o, &rows[i]);
      rows[i].bench = 1;
      snprintf(rows[i].gpu_name, sizeof rows[i].gpu_name, "%s", t.gpu);
    }
    tps_table_free(&t);
  }
  if (rc == TPS_EXIT_OK && o->json) {
    json_t *root = json_object(), *a = json_array();
    for (int i = 0; i < o->nargs; i++) {
      json_t *x = json_object(), *sw = json_array();
      json_object_set_new(x, "table", json_string(rows[i].label));
      json_object_set_new(x, "data", json_string(rows[i].what));
      for (size_t j = 0; j < rows[i].nrows; j++) json_array_append_new(sw, json_integer(rows[i].rows[j]));
      json_object_set_new(x, "sweep_rows", sw);
      json_object_set_new(x, "scored", json_integer((json_int_t)rows[i].scored));
      for (int m = 0; m < 2; m++) {
        json_t *y = json_object();
        tps_json_set_num(y, "median_abs_rel", rows[i].med[m]);
        tps_json_set_num(y, "max_abs_rel", rows[i].max[m]);
        json_object_set_new(x, tps_cal_method_names[m], y);
      }
      json_array_append_new(a, x);
    }
    json_object_set_new(root, "points", json_integer(o->points));
    json_object_set_new(root, "tables", a);
    if (tps_json_print(root)) rc = TPS_EXIT_FAIL;
  } else if (rc == TPS_EXIT_OK) {
    printf("# calibrate --simulate: the sweep (%d first-phase rows, each taken to the nearest row of the table) fitted,\n"
           "# every other row of the table (up to %ld) scored: |calibrated - measured| / measured, median and max\n",
           o->points, o->t_max);
    printf("table\tdata\tswept\tscored\tsteffen_med\tsteffen_max\tshaped_med\tshaped_max\n");
    int better = 0, both = 0;
    for (int i = 0; i < o->nargs; i++) {
      const simrow *s = &rows[i];
      printf("%s\t%s\t%zu\t%zu\t%.1f%%\t%.1f%%\t", s->label, s->what, s->swept, s->scored, 100 * s->med[0], 100 * s->max[0]);
      if (isfinite(s->med[1])) printf("%.1f%%\t%.1f%%\n", 100 * s->med[1], 100 * s->max[1]);
      else printf("-\t-\n");
      if (isfinite(s->med[0]) && isfinite(s->med[1])) { both++; better += s->med[1] < s->med[0]; }
    }
    printf("# shaped has the lower median on %d of %d tables\n", better, both);
  }
  if (rc == TPS_EXIT_OK && o->out) rc = simulate_write(o, rows);
  for (int i = 0; rows && i < o->nargs; i++) if (rows[i].fitted) tps_cal_gemm_free(&rows[i].fit);
  free(rows);
  tps_gpus_free(&gt);
  return rc;
}

/* ------------------------------------------------------------------ --replay */

/* One replayed table: its label and what tps_cal_replay (model/calib/calib.h) made of it. */
typedef struct {
  char label[512];
  tps_cal_replay_res r;
} reprow;

typedef struct {
  long *m;
  double *t;
  size_t n, cap;
} mtab;

/* Add rows (ascending in, any order kept out) not yet in the table: the first piece wins. */
static int mtab_add(mtab *x, const long *m, const double *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int dup = 0;
    for (size_t j = 0; j < x->n && !dup; j++) dup = x->m[j] == m[i];
    if (dup || !(t[i] > 0)) continue;
    if (x->n == x->cap) {
      size_t c = x->cap ? 2 * x->cap : 256;
      long *a = realloc(x->m, c * sizeof *a);
      if (!a) return -1;
      x->m = a;
      double *b = realloc(x->t, c * sizeof *b);
      if (!b) return -1;
      x->t = b;
      x->cap = c;
    }
    x->m[x->n] = m[i];
    x->t[x->n++] = t[i];
  }
  return 0;
}

static void mtab_sort(mtab *x) {
  for (size_t i = 1; i < x->n; i++)
    for (size_t j = i; j > 0 && x->m[j - 1] > x->m[j]; j--) {
      long a = x->m[j]; x->m[j] = x->m[j - 1]; x->m[j - 1] = a;
      double b = x->t[j]; x->t[j] = x->t[j - 1]; x->t[j - 1] = b;
    }
}

/* Read one replay spec (pieces joined by '+'): the merged table, its shape, path, GPU and
 * harness.  A thresholds JSON piece gives its calibration's (K, N, path) sweep of the shape
 * and path the table pieces name. */
static int replay_read(const char *spec, const tps_gpu_table *gt, mtab *x, long *k, long *n, int *path,
                       const tps_gpu **gpu, int *harness, tps_err *e) {
  char buf[2048];
  snprintf(buf, sizeof buf, "%s", spec);
  char *piece[16];
  int np = 0;
  for (char *s = buf, *p; np < 16 && s; s = p) {
    p = strchr(s, '+');
    if (p) *p++ = 0;
    piece[np++] = s;
  }
  *k = *n = 0;
  *path = -1;
  *gpu = NULL;
  *harness = TPS_XG_FLUSHED;
  const char *json[16];
  int nj = 0;
  for (int i = 0; i < np; i++) {
    const char *s = piece[i];
    size_t L = strlen(s);
    if (L > 5 && !strcmp(s + L - 5, ".json")) { json[nj++] = s; continue; }
    if (tps_aic_is(s)) {
      char *file = NULL, gname[64];
      tps_aic_filter f;
      tps_aic_file a;
      if (np > 1) return tps_err_set(e, s, 0, "an AIConfigurator table is replayed alone (no '+')");
      if (tps_aic_parse_spec(s, &file, &f, e) || tps_aic_read(file, &f, &a, e)) { free(file); return -1; }
      free(file);
      long *M = NULL;
      double *T = NULL;
      size_t nm = 0;
      int p = !strcmp(f.dtype, "bfloat16") ? TPS_PATH_DENSE_BF16 : !strcmp(f.dtype, "fp8") ? TPS_PATH_NATIVE_FP8 : -1;
      int rc = 0;
      if (p < 0 || f.n < 1 || a.kind != TPS_AIC_GEMM)
        rc = tps_err_set(e, s, 0, "choose a GEMM table's dtype (bfloat16 or fp8) and n, e.g. FILE:dtype=bfloat16,n=2048");
      else if (!(*gpu = tps_gpus_find(gt, tps_aic_gpu_name(a.gpu, gname, sizeof gname), e))) rc = -1;
      else if (tps_aic_gemm_curve(&a, f.dtype, f.n, f.k ? f.k : a.g[0].k, &M, &T, &nm, e)) rc = -1;
      else {
        *k = f.k ? f.k : a.g[0].k;
        *n = f.n;
        *path = p;
        *harness = TPS_XG_AIC;
        if (mtab_add(x, M, T, nm)) rc = tps_err_set(e, s, 0, "out of memory");
      }
      free(M);
      free(T);
      tps_aic_free(&a);
      if (rc) return -1;
      continue;
    }
    tps_table t;
    if (tps_table_read(s, &t, e)) return -1;
    const tps_path *p = tps_path_find(t.kpath);
    char shortname[128];
    tps_bench_gpu_short(t.gpu, shortname, sizeof shortname);
    int rc = 0;
    if (t.kind != TPS_TABLE_GEMM || !p || t.k < 1 || t.n < 1)
      rc = tps_err_set(e, s, 0, "not a bench gemm table with '#@ path', '#@ k' and '#@ n'");
    else if (*path >= 0 && (t.k != *k || t.n != *n || (int)p->id != *path))
      rc = tps_err_set(e, s, 0, "%ldx%ld %s: the other pieces are %ldx%ld %s", t.k, t.n, p->name, *k, *n, tps_path_name(*path));
    else if (!*gpu && !(*gpu = tps_gpus_find(gt, shortname, e))) rc = -1;
    else {
      *k = t.k;
      *n = t.n;
      *path = p->id;
      if (mtab_add(x, t.rows, t.time_us, t.nrows)) rc = tps_err_set(e, s, 0, "out of memory");
    }
    tps_table_free(&t);
    if (rc) return -1;
  }
  if (*path < 0) return tps_err_set(e, spec, 0, "no bench gemm or AIConfigurator table among its pieces");
  for (int i = 0; i < nj; i++) {
    tps_thr_file f;
    if (tps_thr_read(json[i], &f, e)) return -1;
    int found = 0;
    for (size_t d = 0; d < f.ndev && !found; d++)
      for (size_t j = 0; j < f.dev[d].ngemm && !found; j++) {
        const tps_thr_gemm *g = &f.dev[d].gemm[j];
        if (g->k != *k || g->n != *n || g->path != *path || !g->npts) continue;
        found = 1;
        if (mtab_add(x, g->rows, g->t_us, g->npts)) found = -1;
      }
    tps_thr_free(&f);
    if (found <= 0)
      return tps_err_set(e, json[i], 0, found < 0 ? "out of memory" : "no measured calibration of %ldx%ld %s", *k, *n,
                         tps_path_name(*path));
  }
  mtab_sort(x);
  return 0;
}

/* The replay options of the command line. */
static tps_cal_replay_opts replay_opts(const opts *o) {
  tps_cal_replay_opts r;
  memset(&r, 0, sizeof r);
  r.points = o->points;
  r.method = o->method;
  r.t_max = o->t_max;
  r.row_s = o->row_s;
  r.share_s = o->budget_s / o->replay_parts;
  r.adapt = o->adapt;
  r.heldout = !o->no_heldout && o->method == TPS_CAL_AUTO; /* a method forced is kept */
  return r;
}

/* Replay one table spec: read its pieces, replay (model/calib/calib.c tps_cal_replay). */
static int replay_one(const char *spec, const tps_gpu_table *gt, const tps_cal_replay_opts *ro, reprow *out, tps_err *e) {
  memset(out, 0, sizeof *out);
  snprintf(out->label, sizeof out->label, "%s", spec);
  mtab x = {0};
  long k, n;
  int path, harness;
  const tps_gpu *gpu;
  int rc = replay_read(spec, gt, &x, &k, &n, &path, &gpu, &harness, e);
  if (!rc) {
    int st = tps_cal_replay(x.m, x.t, x.n, path, k, n, gpu, harness, ro, &out->r);
    if (st == TPS_ETOOFEW) rc = tps_err_set(e, spec, 0, "%zu rows up to %ld: too few to replay", out->r.nm, ro->t_max);
    else if (st == TPS_ENOMEM) rc = tps_err_set(e, spec, 0, "out of memory");
    else if (st != TPS_OK) rc = tps_err_set(e, spec, 0, "the first-phase fit failed: %s", tps_strstatus(st));
  }
  free(x.m);
  free(x.t);
  return rc;
}

/* A per-method object {"steffen": v[0], "shaped": v[1]}. */
static json_t *by_method_json(const double *v) {
  json_t *o = json_object();
  tps_json_set_num(o, "steffen", v[TPS_CAL_STEFFEN]);
  tps_json_set_num(o, "shaped", v[TPS_CAL_SHAPED]);
  return o;
}

static int replay(const opts *o) {
  tps_err e;
  tps_err_clear(&e);
  tps_gpu_table gt;
  if (tps_gpus_load(NULL, &gt, &e)) { tps_err_print(&e); return TPS_EXIT_USAGE; }
  const tps_cal_replay_opts ro = replay_opts(o);
  reprow *rows = calloc((size_t)o->nargs, sizeof *rows);
  tps_cal_replay_res *res = calloc((size_t)o->nargs + 1, sizeof *res);
  int rc = rows && res ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  if (rc != TPS_EXIT_OK) tps_die_msg("calibrate: out of memory");
  for (int i = 0; i < o->nargs && rc == TPS_EXIT_OK; i++)
    if (replay_one(o->args[i], &gt, &ro, &rows[i], &e)) { tps_err_print(&e); rc = tps_err_exit_code(&e); }
  if (rc != TPS_EXIT_OK) goto out;
  for (int i = 0; i < o->nargs; i++) res[i] = rows[i].r;
  tps_cal_replay_sum sum;
  if (tps_cal_replay_summary(res, (size_t)o->nargs, &ro, &sum) != TPS_OK) {
    tps_die_msg("calibrate: out of memory");
    rc = TPS_EXIT_FAIL;
    goto out;
  }
  if (o->json) {
    json_t *root = json_object(), *a = json_array();
    for (int i = 0; i < o->nargs; i++) {
      const tps_cal_replay_res *s = &rows[i].r;
      json_t *x = json_object(), *ad = json_array(), *ho = json_object(), *hr = json_array();
      json_object_set_new(x, "table", json_string(rows[i].label));
      json_object_set_new(x, "rows", json_integer((json_int_t)s->nm));
      json_object_set_new(x, "first_phase_rows", json_integer((json_int_t)s->n0));
      for (size_t j = 0; j < s->nadd; j++) {
        json_t *y = json_object();
        json_object_set_new(y, "m", json_integer(s->add[j]));
        json_object_set_new(y, "why", json_string(tps_cal_why_names[s->why[j]]));
        json_array_append_new(ad, y);
      }
      json_object_set_new(x, "adaptive_rows", ad);
      json_object_set_new(x, "snapped", json_integer((json_int_t)s->snapped));
      tps_json_set_num(x, "clock_s", s->clock_s);
      tps_json_set_num(x, "budget_share_s", ro.share_s);
      json_object_set_new(x, "scored", json_integer((json_int_t)s->scored));
      for (int m = 0; m < 2; m++) {
        json_t *y = json_object();
        tps_json_set_num(y, "median_abs_rel", s->med[m]);
        tps_json_set_num(y, "max_abs_rel", s->max[m]);
        json_object_set_new(y, "max_at_m", json_integer(s->worst_m[m]));
        json_object_set_new(x, m ? "adaptive" : "fixed", y);
      }
      /* the held-out check: the adaptive rows predicted by the first-phase fit */
      for (size_t j = 0; j < s->ho.n; j++) json_array_append_new(hr, json_integer(s->ho.rows[j]));
      json_object_set_new(ho, "rows", hr);
      json_object_set_new(ho, "max_abs_rel", by_method_json(s->ho.max_abs_rel));
      json_object_set_new(ho, "median_abs_rel", by_method_json(s->ho.med_abs_rel));
      json_object_set_new(ho, "first_phase_method", json_string(tps_cal_method_names[s->ho.prior]));
      json_object_set_new(ho, "method", json_string(tps_cal_method_names[s->ho.method]));
      json_object_set_new(x, "heldout", ho);
      json_array_append_new(a, x);
    }
    json_object_set_new(root, "tables", a);
    tps_json_set_num(root, "median_of_max_fixed", sum.med_max[0]);
    tps_json_set_num(root, "median_of_max_adaptive", sum.med_max[1]);
    json_object_set_new(root, "adaptive_worse", json_integer(sum.worse));
    tps_json_set_num(root, "adaptive_worst_rise", sum.worst_rise);
    json_object_set_new(root, "method_switched", json_integer(sum.switched));
    json_object_set_new(root, "over_cap", json_integer(sum.over_cap));
    json_object_set_new(root, "over_budget", json_integer(sum.over_budget));
    if (tps_json_print(root)) rc = TPS_EXIT_FAIL;
  } else {
    printf("# calibrate --replay: the mock bench returns the table's measured time at the table's row nearest (log M)\n"
           "# to each row asked (first phase: %d rows; adaptive: strictly inside the interval split, no interpolation);\n"
           "# clock %.2f s per row, budget %.0f s shared by %d parts, stop at %.0f%%, at most %d adaptive rows;\n"
           "# the adaptive fit's method chosen by the held-out check (the adaptive rows predicted by the first-phase fit);\n"
           "# fixed (first phase only) and adaptive fits scored on the same rows: the table's rows up to %ld in neither sweep\n",
           o->points, o->row_s, o->budget_s, o->replay_parts, 100 * o->adapt.budget_frac, o->adapt.max_rows, o->t_max);
    printf("table\trows\tfirst\tadded\tsnapped\tclock_s\tscored\tfixed_med\tfixed_max\tadapt_med\tadapt_max\t"
           "heldout_max_steffen\theldout_max_shaped\tmethod\tadded_rows\n");
    for (int i = 0; i < o->nargs; i++) {
      const tps_cal_replay_res *s = &rows[i].r;
      printf("%s\t%zu\t%zu\t%zu\t%zu\t%.1f/%.1f\t%zu\t%.2f%%\t%.2f%% (M %ld)\t%.2f%%\t%.2f%% (M %ld)\t%.2f%%\t%.2f%%\t%s%s\t",
             rows[i].label, s->nm, s->n0, s->nadd, s->snapped, s->clock_s, ro.share_s, s->scored, 100 * s->med[0],
             100 * s->max[0], s->worst_m[0], 100 * s->med[1], 100 * s->max[1], s->worst_m[1],
             100 * s->ho.max_abs_rel[TPS_CAL_STEFFEN], 100 * s->ho.max_abs_rel[TPS_CAL_SHAPED],
             tps_cal_method_names[s->ho.method], s->ho.method != s->ho.prior ? " (switched)" : "");
      for (size_t j = 0; j < s->nadd; j++) printf("%s%ld:%s", j ? "," : "", s->add[j], tps_cal_why_names[s->why[j]]);
      printf("%s\n", s->nadd ? "" : "-");
    }
    printf("# median over %zu tables of the max error: fixed %.2f%%, adaptive %.2f%%\n", sum.n, 100 * sum.med_max[0],
           100 * sum.med_max[1]);
    printf("# adaptive max worse than fixed on %d tables (by %.2f points at most); method switched by the held-out check on "
           "%d; over the row cap on %d; past %.0f%% of the budget share on %d\n",
           sum.worse, 100 * sum.worst_rise, sum.switched, sum.over_cap, 100 * o->adapt.budget_frac, sum.over_budget);
  }
out:
  free(rows);
  free(res);
  tps_gpus_free(&gt);
  return rc;
}

int cmd_calibrate(int argc, char **argv) {
  opts o;
  int rc = parse(argc, argv, &o);
  if (rc < 0) return TPS_EXIT_OK;
  if (rc != TPS_EXIT_OK) return rc;
  if (o.check) return check(&o);
  if (o.simulate) return simulate(&o);
  if (o.replay) return replay(&o);
  tty = isatty(2);
  t0_s = now_s();
  cur_opts = &o;
  return calibrate(&o);
}
