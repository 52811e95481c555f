/* options.c: the options of `tpsplit calibrate` (parsed by src/cli/cmdopt.h, the parser of
 * every command) and the dispatch to a calibration of this machine (run.c) or an offline
 * mode: --check, --simulate (offline.c), --replay (replay.c).  The values of the options
 * are checked after the parse, each with its own message (exit 2, one line). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model/core/harness.h"
#include "src/cli/calibrate/cal.h"
#include "src/cli/cmdopt.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"
#include "src/base/iocheck.h"
#include "kernels/bench/bench.h"

/* The options as given (NULL: not given), checked by check_values(). */
typedef struct {
  const char *shapes, *paths, *tps, *backends;
  const char *budget, *samples, *points, *max_tokens, *method, *device, *seed, *tolerance;
  const char *row_s, *parts, *adapt_rows;
  tps_strlist gather;
} raw_opts;

static int list_each(const char *arg, const char *what, int (*fn)(opts *, const char *), opts *o) {
  char **items;
  size_t n;
  if (tps_parse_list(arg, &items, &n) != 0 || n == 0) {
    tps_usage_msg("--%s '%s': a comma list", what, arg);
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
    tps_usage_msg("--shapes: '%s' is not KxN with K and N multiples of 64 (e.g. 5120x1792)", s);
    return TPS_EXIT_USAGE;
  }
  if (o->nshapes == MAX_SHAPES) { tps_usage_msg("--shapes: at most %d", MAX_SHAPES); return TPS_EXIT_USAGE; }
  for (int i = 0; i < o->nshapes; i++) if (o->k[i] == k && o->n[i] == n) return TPS_EXIT_OK;
  o->k[o->nshapes] = k;
  o->n[o->nshapes++] = n;
  return TPS_EXIT_OK;
}

static int add_path(opts *o, const char *s) {
  const tps_path *p = tps_path_find_for(s, TPS_PATH_F_BENCH);
  char names[128];
  if (!p || (p->flags & TPS_PATH_F_REFKERNEL)) {
    tps_usage_msg("--paths: unknown path '%s' (dense-bf16, native-fp8, w8a16; bench paths: %s)", s,
                tps_path_names(TPS_PATH_F_BENCH, names, sizeof names));
    return TPS_EXIT_USAGE;
  }
  for (int i = 0; i < o->npaths; i++) if (o->path[i] == (int)p->id) return TPS_EXIT_OK;
  if (o->npaths == MAX_PATHS) { tps_usage_msg("--paths: at most %d", MAX_PATHS); return TPS_EXIT_USAGE; }
  o->path[o->npaths++] = p->id;
  return TPS_EXIT_OK;
}

static int add_backend(opts *o, const char *s) {
  int b = tps_gather_parse(s);
  char names[64];
  if (b < 0) {
    tps_usage_msg("--backends: unknown gather backend '%s' (%s)", s, tps_gather_names(names, sizeof names));
    return TPS_EXIT_USAGE;
  }
  for (int i = 0; i < o->nbackends; i++) if (o->backend[i] == b) return TPS_EXIT_OK;
  o->backend[o->nbackends++] = b;
  return TPS_EXIT_OK;
}

/* --NAME ARG as a whole number in [lo, hi]: 0, else one line and TPS_EXIT_USAGE. */
static int int_opt(const char *name, const char *arg, long lo, long hi, long *v) {
  if (tps_parse_long(arg, v) == 0 && *v >= lo && *v <= hi) return TPS_EXIT_OK;
  tps_usage_msg("--%s '%s': a whole number from %ld to %ld", name, arg, lo, hi);
  return TPS_EXIT_USAGE;
}

/* --tolerance M,X in percent. */
static int tolerance_opt(const char *arg, opts *o) {
  double a, b;
  const char *comma = strchr(arg, ',');
  char buf[64];
  snprintf(buf, sizeof buf, "%s", arg);
  if (comma && comma - arg < (long)sizeof buf) buf[comma - arg] = 0;
  if (!comma || tps_parse_double(buf, &a) || tps_parse_double(comma + 1, &b) || a <= 0 || b < a || b > 1000) {
    tps_usage_msg("--tolerance '%s': MEDIAN,MAX in percent (e.g. 4,10)", arg);
    return TPS_EXIT_USAGE;
  }
  o->tol_med = a / 100;
  o->tol_max = b / 100;
  return TPS_EXIT_OK;
}

/* --NAME ARG seconds in (lo, hi] (lo_incl: [lo, hi]): 0, else one line and TPS_EXIT_USAGE. */
static int seconds_opt(const char *name, const char *arg, double lo, int lo_incl, double hi, double *v) {
  double d;
  if (tps_parse_double(arg, &d) == 0 && (lo_incl ? d >= lo : d > lo) && d <= hi) { *v = d; return TPS_EXIT_OK; }
  tps_usage_msg("--%s '%s': seconds from %g to %g", name, arg, lo, hi);
  return TPS_EXIT_USAGE;
}

/* The numbers and words of the options given, into o. */
static int check_values(const raw_opts *w, opts *o) {
  long v;
  int rc = TPS_EXIT_OK;
  if (w->budget && (rc = seconds_opt("budget-s", w->budget, 1, 1, 86400, &o->budget_s))) return rc;
  if (w->samples && (rc = int_opt("samples", w->samples, 3, 200, &v))) return rc;
  if (w->samples) o->samples = (int)v;
  if (w->points && (rc = int_opt("points", w->points, 4, TPS_CAL_MAX_PTS / 2, &v))) return rc;
  if (w->points) o->points = (int)v;
  if (w->max_tokens && (rc = int_opt("max-tokens", w->max_tokens, 16, 65536, &o->t_max))) return rc;
  if (w->device && (rc = int_opt("device", w->device, 0, 1024, &v))) return rc;
  if (w->device) o->device = (int)v;
  if (w->seed && (rc = int_opt("seed", w->seed, 0, 1L << 40, &v))) return rc;
  if (w->seed) o->seed = (unsigned long)v;
  if (w->method && (o->method = tps_cal_method_parse(w->method)) < 0) {
    tps_usage_msg("--method '%s': auto, shaped or steffen", w->method);
    return TPS_EXIT_USAGE;
  }
  if (w->tolerance && (rc = tolerance_opt(w->tolerance, o))) return rc;
  if (w->parts && (rc = int_opt("parts", w->parts, 1, MAX_SHAPES * MAX_PATHS, &v))) return rc;
  if (w->parts) o->replay_parts = (int)v;
  if (w->adapt_rows && (rc = int_opt("adapt-rows", w->adapt_rows, 0, TPS_CAL_MAX_PTS / 2, &v))) return rc;
  if (w->adapt_rows) o->adapt.max_rows = (int)v;
  if (w->row_s && (rc = seconds_opt("row-s", w->row_s, 0, 0, 3600, &o->row_s))) return rc;
  for (size_t i = 0; i < w->gather.n; i++) o->gfile[o->ngfiles++] = w->gather.v[i];
  return TPS_EXIT_OK;
}

/* Each option belongs to the modes that read it; given to another, it is refused (a run must
 * not look as if it used what it ignored). */
enum { M_RUN = 1, M_CHECK = 2, M_SIM = 4, M_REPLAY = 8 };
static int check_mode_options(const raw_opts *w, const opts *o, int harness_given) {
  const unsigned mode = o->check ? M_CHECK : o->simulate ? M_SIM : o->replay ? M_REPLAY : M_RUN;
  const char *const mname = o->check ? "--check" : o->simulate ? "--simulate" : o->replay ? "--replay" : "a measuring run";
  const struct { const char *name; int given; unsigned modes; } use[] = {
    {"--shapes", w->shapes != NULL, M_RUN}, {"--paths", w->paths != NULL, M_RUN}, {"--tp", w->tps != NULL, M_RUN},
    {"--backends", w->backends != NULL, M_RUN}, {"--gather", w->gather.n > 0, M_RUN}, {"--samples", w->samples != NULL, M_RUN},
    {"--device", w->device != NULL, M_RUN}, {"--seed", w->seed != NULL, M_RUN}, {"--harness", harness_given, M_RUN},
    {"--budget-s", w->budget != NULL, M_RUN | M_REPLAY}, {"--adapt-rows", w->adapt_rows != NULL, M_RUN | M_REPLAY},
    {"--no-heldout", o->no_heldout, M_RUN | M_REPLAY}, {"--points", w->points != NULL, M_RUN | M_SIM | M_REPLAY},
    {"--max-tokens", w->max_tokens != NULL, M_RUN | M_SIM | M_REPLAY}, {"--method", w->method != NULL, M_RUN | M_SIM | M_REPLAY},
    {"-o", o->out != NULL, M_RUN | M_SIM}, {"--tolerance", w->tolerance != NULL, M_CHECK}, {"--rows", o->per_row, M_CHECK},
    {"--row-s", w->row_s != NULL, M_REPLAY}, {"--parts", w->parts != NULL, M_REPLAY},
  };
  for (size_t i = 0; i < sizeof use / sizeof use[0]; i++)
    if (use[i].given && !(use[i].modes & mode)) {
      tps_usage_msg("%s does nothing with %s: refused rather than ignored", use[i].name, mname);
      return TPS_EXIT_USAGE;
    }
  if (o->per_row && o->json) { tps_usage_msg("--rows is the text table's; --json has no per-row data: choose one"); return TPS_EXIT_USAGE; }
  return TPS_EXIT_OK;
}

/* The modes exclude each other; the lists of shapes, paths, backends and TPs. */
static int check_modes_lists(const raw_opts *w, opts *o, int harness_given) {
  int rc = TPS_EXIT_OK;
  if (!!o->check + o->simulate + o->replay > 1) { tps_usage_msg("--check, --simulate and --replay exclude each other"); return TPS_EXIT_USAGE; }
  if ((rc = check_mode_options(w, o, harness_given))) return rc;
  if ((o->check || o->simulate || o->replay) && o->nargs < 1) {
    tps_usage_msg("--%s needs at least one table argument", o->check ? "check" : o->simulate ? "simulate" : "replay");
    return TPS_EXIT_USAGE;
  }
  if (!o->check && !o->simulate && !o->replay) {
    if (o->nargs) { tps_usage_msg("unexpected argument '%s'", o->args[0]); return TPS_EXIT_USAGE; }
    if (!o->out) { tps_usage_msg("-o FILE is required (the thresholds file)"); return TPS_EXIT_USAGE; }
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
  /* the defaults of the lists (NULL: not given) */
  const char *shapes = w->shapes ? w->shapes : "5120x1792", *paths = w->paths ? w->paths : "dense-bf16,native-fp8,w8a16";
  const char *backends = w->backends ? w->backends : "nccl,auto", *tps = w->tps ? w->tps : "2,4,8";
  if ((rc = list_each(shapes, "shapes", add_shape, o)) || (rc = list_each(paths, "paths", add_path, o)) ||
      (rc = list_each(backends, "backends", add_backend, o)))
    return rc;
  if (tps_parse_tokens(tps, &tv, &nt, &e)) { tps_usage_msg("--tp '%s': %s", tps, e.msg); return TPS_EXIT_USAGE; }
  for (size_t i = 0; i < nt && rc == TPS_EXIT_OK; i++) {
    if (tv[i] < 2 || tv[i] > TPS_BENCH_MAX_RANKS) { tps_usage_msg("--tp %ld: from 2 to %d", tv[i], TPS_BENCH_MAX_RANKS); rc = TPS_EXIT_USAGE; }
    else if (o->ntps == MAX_TPS) { tps_usage_msg("--tp: at most %d sizes", MAX_TPS); rc = TPS_EXIT_USAGE; }
    else o->tp[o->ntps++] = (int)tv[i];
  }
  free(tv);
  return rc;
}

static void defaults(opts *o, raw_opts *w) {
  memset(o, 0, sizeof *o);
  memset(w, 0, sizeof *w);
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
}

/* Parse argv into o: -1 to run, else the exit code to return at once. */
static int parse(int argc, char **argv, opts *o) {
  raw_opts w;
  defaults(o, &w);
  char paths[128], gathers[64], paths_help[320], backends_help[160], tmax_help[96];
  tps_path_names(TPS_PATH_F_BENCH, paths, sizeof paths);
  tps_gather_names(gathers, sizeof gathers);
  snprintf(paths_help, sizeof paths_help,
           "GEMM paths (default dense-bf16,native-fp8,w8a16; of %s); one this GPU cannot run is skipped and said", paths);
  snprintf(backends_help, sizeof backends_help, "gather backends of the thresholds (default nccl,auto; of %s)", gathers);
  snprintf(tmax_help, sizeof tmax_help, "largest token count of a threshold (default %d)", TPS_CAL_T_MAX);
  const tps_cmdopt own[] = {
    {.name = "shapes", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &w.shapes,
     .help = "projection shapes KxN, K inner and N outputs, multiples of 64 (default 5120x1792); the gathered output "
             "is 2 N bytes per token"},
    {.name = "paths", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &w.paths, .help = paths_help},
    {.name = "tp", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &w.tps, .help = "TP sizes (default 2,4,8)"},
    {.name = "backends", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &w.backends, .help = backends_help},
    {.name = "budget-s", .kind = TPS_ARG_STR, .metavar = "S", .dst = &w.budget,
     .help = "wall-time budget in seconds (default 60); reached: the run stops, writes what it measured and marks the "
             "file \"partial\": true"},
    {.name = "gather", .kind = TPS_ARG_LIST, .metavar = "FILE", .dst = &w.gather,
     .help = "all-gather measurements for TPs not measured here (repeatable): an nccl-tests all_gather_perf log, a "
             "bench allgather log, or an AIConfigurator NCCL table (its file is one GPU's: choose it)"},
    {.name = "samples", .kind = TPS_ARG_STR, .metavar = "N", .dst = &w.samples,
     .help = "samples per sweep row and gather size (default 20; a full bench takes 50)"},
    {.name = "points", .kind = TPS_ARG_STR, .metavar = "N", .dst = &w.points,
     .help = "first-phase sweep rows per shape and path (default 12)"},
    {.name = "max-tokens", .kind = TPS_ARG_STR, .metavar = "T", .dst = &w.max_tokens, .help = tmax_help},
    {.name = "method", .kind = TPS_ARG_STR, .metavar = "M", .dst = &w.method,
     .help = "auto (default), shaped or steffen (model/calib/calib.h)"},
    {.name = "device", .kind = TPS_ARG_STR, .metavar = "D", .dst = &w.device,
     .help = "CUDA device of the GEMM sweep (default 0)"},
    {.name = "seed", .kind = TPS_ARG_STR, .metavar = "S", .dst = &w.seed,
     .help = "random seed of the bench data (default: from the clock)"},
    {.name = "check", .kind = TPS_ARG_STR, .metavar = "FILE", .dst = &o->check,
     .help = "check the calibration in FILE against full bench gemm tables (the arguments): per (shape, path) median "
             "and max |error| over their rows outside the sweep; exit 0 within tolerance, 1 outside"},
    {.name = "tolerance", .kind = TPS_ARG_STR, .metavar = "M,X", .dst = &w.tolerance,
     .help = "--check tolerance in percent, median and max (default 4,10)"},
    {.name = "rows", .kind = TPS_ARG_FLAG, .dst = &o->per_row, .help = "--check: then every bench row, calibrated vs measured"},
    {.name = "simulate", .kind = TPS_ARG_FLAG, .dst = &o->simulate,
     .help = "offline: for each bench gemm table (or AIConfigurator GEMM table with dtype and n chosen: "
             "FILE:dtype=bfloat16,n=2048) take the sweep rows from its rows and score the others, per method"},
    {.name = "adapt-rows", .kind = TPS_ARG_STR, .metavar = "N", .dst = &w.adapt_rows,
     .help = "rows the adaptive phase adds at most per shape and path (default 16; 0: none): after the first-phase "
             "fits, midpoints where the model bends, the slope leaves [0, 1.2] or the time rises most, until 90% of "
             "the budget (model/calib/calib.h)"},
    {.name = "no-heldout", .kind = TPS_ARG_FLAG, .dst = &o->no_heldout,
     .help = "keep the first-phase method after the adaptive phase (default with --method auto: the adaptive rows, "
             "predicted by the first-phase fit before they join it, choose shaped or steffen: model/calib/calib.h)"},
    {.name = "replay", .kind = TPS_ARG_FLAG, .dst = &o->replay,
     .help = "offline: for each table (pieces of one shape and path joined by +: bench gemm tables, a calibrate "
             "result's sweep; or an AIConfigurator table FILE:dtype=D,n=N) a mock bench returns its times at its rows "
             "nearest to the rows asked; the fixed first-phase sweep and the adaptive one are scored on the rows in "
             "neither"},
    {.name = "row-s", .kind = TPS_ARG_STR, .metavar = "S", .dst = &w.row_s,
     .help = "--replay: simulated seconds per measured row (default 1)"},
    {.name = "parts", .kind = TPS_ARG_STR, .metavar = "N", .dst = &w.parts,
     .help = "--replay: parts sharing the budget (default 3)"},
  };
  const tps_cmdspec spec = {
    .name = "calibrate",
    .synopsis = "[options] -o FILE\n"
                "       tpsplit calibrate --check FILE BENCH.tsv...\n"
                "       tpsplit calibrate --simulate TABLE...\n"
                "       tpsplit calibrate --replay [--budget-s S] [--row-s S] TABLE[+TABLE...]...",
    .about = "Measure this machine briefly (GEMM paths at ~12 rows per shape; with >= 2 GPUs\n"
             "the all-gather per TP and backend at ~10 sizes), fit calibrated models and write\n"
             "the engine-facing thresholds file: per device (as engines key it, e.g.\n"
             "NVIDIA_H200), shape KxN, path, TP and gather backend, split_from_tokens (split\n"
             "when T >= it).  The variables below that the benches read apply to its runs.",
    .common = TPS_OPT(TPS_OI_JSON) | TPS_OPT(TPS_OI_OUTPUT) | TPS_OPT(TPS_OI_HARNESS),
    .args = "TABLE...",
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .text = {[TPS_OI_JSON] = "--check, --simulate, --replay: JSON on stdout",
             [TPS_OI_OUTPUT] = "the thresholds file (JSON; written only when complete: a temporary file renamed into "
                               "place)",
             [TPS_OI_HARNESS] = "the harness of the thresholds: bench (default: what calibrate times, L2 flushed, "
                                "median of CUPTI spans) or aic (AIConfigurator's: the sweep converted by this GPU's or "
                                "a sibling's tables in both harnesses, else the cross-GPU model; dense-bf16 and "
                                "native-fp8 only)"},
    .output_metavar = "FILE",
    .exit_status = "0 ok; 1 no GPU, a GPU failure, or --check outside tolerance; 2 usage or input error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int rc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (rc >= 0) return rc;
  o->json = v.json;
  o->out = v.output;
  o->harness = v.harness < 0 ? TPS_HARNESS_BENCH : v.harness;
  const int harness_given = v.harness >= 0;
  o->args = v.args;
  o->nargs = v.nargs;
  tps_cmdopt_free(&v);
  if ((rc = check_values(&w, o)) || (rc = check_modes_lists(&w, o, harness_given))) return rc;
  for (int i = 0; i < o->npaths && o->harness == TPS_HARNESS_AIC; i++) {
    const tps_path *p = tps_path_get(o->path[i]);
    if (p->model != TPS_PATH_MODEL_XGEMM) {
      tps_usage_msg("--harness aic: %s has no aic form to convert to (dense-bf16 and native-fp8 have); "
                  "choose those with --paths", p->name);
      return TPS_EXIT_USAGE;
    }
  }
  return -1;
}

int cmd_calibrate(int argc, char **argv) {
  opts o;
  int rc = parse(argc, argv, &o);
  if (rc >= 0) return rc;
  if (o.check) return cal_check(&o);
  if (o.simulate) return cal_simulate(&o);
  if (o.replay) return cal_replay(&o);
  return cal_run(&o);
}
