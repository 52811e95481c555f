/* cmd_plot.c: `tpsplit plot`: figures for fits, measurements and predictions (gnuplot).
 *
 * Inputs are measurement files (--measured, fitted here with leave-one-out errors through
 * tps_fit_file) and saved fits (--fit, tps_fitfile_read); the measured points drawn are the
 * fit's own points.  Targets GPU x TP x path are predicted from the split fits (or from the
 * datasheets alone when there is none).  With no input at all it draws the main job's figures for
 * the bundled data (tps_plot_default).  What each figure shows: src/plot.h. */
#include "config.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/cli/cmdopt.h"
#include "src/io/fitfile.h"
#include "src/evidence/fit_from_file.h"
#include "src/io/gpus.h"
#include "src/base/jsonout.h"
#include "src/plot/plot.h"
#include "src/cli/predict_common.h"
#include "model/predict/predict.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"

#define MAXIN (2 * TPS_STRLIST_MAX) /* --measured and --fit files */

static int print_result(const char *outdir, const tps_plot_files *w, int json) {
  if (json) {
    json_t *root = json_object(), *files = json_array();
    for (size_t i = 0; i < w->n; i++) json_array_append_new(files, json_string(w->path[i]));
    json_object_set_new(root, "files", files);
    json_object_set_new(root, "outdir", json_string(outdir));
    json_object_set_new(root, "images", json_integer(w->images));
    const char *gp = tps_plot_gnuplot();
    json_object_set_new(root, "gnuplot", gp ? json_string(gp) : json_null());
    return tps_json_print(root) ? TPS_EXIT_FAIL : TPS_EXIT_OK;
  }
  for (size_t i = 0; i < w->n; i++) printf("%s\n", w->path[i]);
  printf("%zu files (%d images) written to %s\n", w->n, w->images, outdir);
  return TPS_EXIT_OK;
}

/* --by gpu|tp|path */
static int parse_by(void *dst, const char *arg, char *why, size_t whysz) {
  static const char *const names[] = {[TPS_PLOT_BY_GPU] = "gpu", [TPS_PLOT_BY_TP] = "tp", [TPS_PLOT_BY_PATH] = "path"};
  for (int i = 0; i < 3; i++)
    if (strcmp(arg, names[i]) == 0) { *(int *)dst = i; return 0; }
  snprintf(why, whysz, "gpu, tp or path");
  return -1;
}
static int parse_figures(void *dst, const char *arg, char *why, size_t whysz) {
  if (tps_plot_parse_figures(arg, dst) == 0) return 0;
  snprintf(why, whysz, "latency,speedup,crossover,fitq,layers");
  return -1;
}
static int parse_format(void *dst, const char *arg, char *why, size_t whysz) {
  if (tps_plot_parse_format(arg, dst) == 0) return 0;
  snprintf(why, whysz, "png, svg or pdf");
  return -1;
}
static int parse_size(void *dst, const char *arg, char *why, size_t whysz) {
  tps_plot_opts *o = dst;
  if (tps_plot_parse_size(arg, &o->width_px, &o->height_px) == 0) return 0;
  snprintf(why, whysz, "WxH, each 100..10000");
  return -1;
}

/* The values of plot's own options. */
typedef struct {
  tps_strlist measured;
  int no_render;
  tps_plot_opts o;
  tps_plot_job j;
} plot_args;

/* Parse argv into a and v: -1 to run, else the exit code to return at once. */
static int plot_parse(int argc, char **argv, plot_args *a, tps_cmdopt_values *v) {
  memset(a, 0, sizeof *a);
  tps_plot_opts_init(&a->o);
  a->j.tmax = TPS_PRED_DEFAULT_TMAX;
  a->j.sim_tokens = 8192;
  const tps_cmdopt own[] = {
    {.name = "measured", .kind = TPS_ARG_LIST, .io = TPS_IO_IN, .metavar = "FILE", .dst = &a->measured,
     .help = "a measurement file (split-vs-replicated, GEMM or all-gather table, nccl-tests log), fitted here as "
             "`tpsplit fit --loo` would; repeatable"},
    {.name = "tmax", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &a->j.tmax, .min = 2, .max = TPS_PRED_MAX_TMAX,
     .help = "curves and break-even on T = 1..T tokens"},
    {.name = "by", .kind = TPS_ARG_FN, .metavar = "WHAT", .dst = &a->j.by, .parse = parse_by,
     .help = "what varies between the curves of a speedup figure: gpu (default), tp or path"},
    {.name = "figures", .kind = TPS_ARG_FN, .metavar = "LIST", .dst = &a->j.figures, .parse = parse_figures,
     .help = "latency,speedup,crossover,fitq,layers (default: all that apply)"},
    {.name = "model", .kind = TPS_ARG_STR, .metavar = "NAME", .dst = &a->j.model_name,
     .help = "per-layer figure for this model (data/models/NAME.tsv or a file)"},
    {.name = "sim-tokens", .kind = TPS_ARG_LONG, .metavar = "T", .dst = &a->j.sim_tokens, .min = 1, .max = TPS_PRED_MAX_TMAX,
     .help = "tokens per step of the per-layer figure"},
    {.name = "format", .kind = TPS_ARG_FN, .metavar = "F", .dst = &a->o.format, .parse = parse_format,
     .help = "png (pngcairo, default), svg, pdf (pdfcairo)"},
    {.name = "size", .kind = TPS_ARG_FN, .metavar = "WxH", .dst = &a->o, .parse = parse_size,
     .help = "image size in pixels (default 1200x800; PDF: 150 px per inch)"},
    {.name = "no-render", .kind = TPS_ARG_FLAG, .dst = &a->no_render, .help = "write the .dat and .gp files only"},
  };
  const tps_cmdspec spec = {
    .name = "plot",
    .synopsis = "[--measured FILE]... [--fit FIT]... [--gpus LIST] [--tp LIST] [--paths LIST]\n"
                "                    [--scaling S] [--by gpu|tp|path] [--figures LIST]\n"
                "                    [--format png|svg|pdf] [--size WxH] [-o DIR] [--no-render] [--json]",
    .about = "Write figures as NAME.dat (data) + NAME.gp (gnuplot script) + NAME.png, and run gnuplot.\n"
             "With no --measured, --fit, --gpus, --tp, --paths or --model: the figures of the main job\n"
             "for the bundled data.\n\n"
             "Figures: latency (vs tokens, replicated and split, the bootstrap band, measured medians\n"
             "with min..max bars when the table has them, gather backend switch), speedup (one curve\n"
             "per GPU, TP or path; under it a panel with each break-even and its interval; thresholds),\n"
             "crossover (break-even map GPU x TP per path), fitq (residuals and leave-one-out errors of\n"
             "each fit), layers (a model's stage over all layers, replicated vs split, by layer kind).",
    .common = TPS_OPT(TPS_OI_GPUS) | TPS_OPT(TPS_OI_TPS) | TPS_OPT(TPS_OI_PATHS) | TPS_OPTS_REF |
              TPS_OPT(TPS_OI_SAMPLES) | TPS_OPT(TPS_OI_SEED) | TPS_OPT(TPS_OI_OUTPUT) | TPS_OPTS_PARTS | TPS_OPTS_SHAPE,
    .samples_min = 10,
    .fits = 1,
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .output_metavar = "DIR",
    .dflt = {[TPS_OI_GPUS] = "the measured one", [TPS_OI_TPS] = "the measured TP", [TPS_OI_PATHS] = "the measured one",
             [TPS_OI_OUTPUT] = "tpsplit-out, created when missing (-o plots refreshes the README's figures)"},
    .text = {[TPS_OI_JSON] = "list the files written as JSON",
             [TPS_OI_FIT] = "a fit saved by `tpsplit fit -o FIT`; repeatable.  Split fits (and their measured points) "
                            "feed the predicted curves; every fit gets a fit-quality figure"},
    .notes = "gnuplot: $TPSPLIT_GNUPLOT (a path or name; empty or missing = none), else the one found\n"
             "by configure, else `gnuplot` on PATH.  Without it the .dat/.gp files are still written\n"
             "and one line on stderr says so; `gnuplot -d NAME.gp` in the folder draws them later.",
    .exit_status = "0 ok, 1 gnuplot failed on a script, 2 usage or input error.",
  };
  tps_cmdopt_init(v);
  return tps_cmdopt_parse(&spec, argc, argv, v);
}

/* With the user's --gemm/--gather files (the parts scaling), the targets not given default to
 * what the files measure (TP 8 and marlin-w8a16 when they say none).  0, or -1 (out of memory). */
static int user_targets(const tps_predref *pref, tps_cmdopt_values *v, const tps_gpu_table *gt, const tps_gpu ***tgpu,
                        size_t *ngl, tps_err *e) {
  const tps_gpu *ug[2 * TPS_STRLIST_MAX];
  size_t nug = tps_partset_user_gpus(pref->parts, ug, 2 * TPS_STRLIST_MAX);
  if (!(v->given & TPS_OPT(TPS_OI_GPUS)) && nug) {
    free(*tgpu);
    *tgpu = calloc(nug, sizeof **tgpu);
    if (!*tgpu) return -1;
    for (size_t i = 0; i < nug; i++) (*tgpu)[i] = tps_gpus_find(gt, ug[i]->name,  e);
    *ngl = nug;
  }
  const tps_path *up[TPS_NPATHS];
  size_t nup = tps_partset_user_paths(pref->parts, up, TPS_NPATHS);
  if (!(v->given & TPS_OPT(TPS_OI_PATHS)) && nup) { memcpy(v->paths, up, nup * sizeof *up); v->npaths = nup; }
  int ut[TPS_CMDOPT_MAXTP];
  size_t nut = tps_partset_user_tps(pref->parts, ut, TPS_CMDOPT_MAXTP);
  if (!(v->given & TPS_OPT(TPS_OI_TPS)) && nut) { memcpy(v->tps, ut, nut * sizeof *ut); v->ntps = nut; }
  if (!(v->given & TPS_OPT(TPS_OI_TPS)) && !nut) { v->tps[0] = 8; v->ntps = 1; }
  if (!v->npaths) { v->paths[0] = &tps_path_marlin_w8a16; v->npaths = 1; }
  return 0;
}

/* The inputs: the --measured files fitted here (with leave-one-out errors), then the --fit
 * files; each one's GPU, path and measured points, and their names in inputs.
 * TPS_EXIT_OK, or the exit code (said). */
static int read_inputs(const char *const *meas_files, size_t nmeas, const char *const *fitfiles, size_t nfitf,
                       const char *gpus_file, const tps_gpu_table *gt, tps_fit *fits, tps_plot_meas *meas,
                       const tps_fit **fitp, const tps_gpu **fgpu, const char **fpath, const tps_plot_meas **measp,
                       char *inputs, size_t insz, tps_err *e) {
  const size_t nin = nmeas + nfitf;
  tps_fit_opts fo = {1, 0}; /* fits made here include leave-one-out errors */
  for (size_t i = 0; i < nin; i++) {
    const char *file = i < nmeas ? meas_files[i] : fitfiles[i - nmeas];
    int status = TPS_OK;
    if (i < nmeas ? tps_fit_file(file, NULL, gpus_file, &fo, &fits[i], &status,  e)
                  : tps_fitfile_read(file, &fits[i],  e)) {
      tps_err_print( e);
      return i < nmeas ? tps_status_exit(status) : TPS_EXIT_USAGE;
    }
    const tps_gpu *g = tps_gpus_find(gt, fits[i].gpu,  e);
    if (!g) { tps_die_msg("%s: %s", file, e->msg); return TPS_EXIT_USAGE; }
    fitp[i] = &fits[i];
    fgpu[i] = g;
    fpath[i] = fits[i].gemm.path ? fits[i].gemm.path->name : NULL;
    measp[i] = tps_plot_meas_from_fit(&fits[i], g->name, fpath[i], file, &meas[i]) == 0 ? &meas[i] : NULL;
    size_t l = strlen(inputs);
    snprintf(inputs + l, insz - l, "%s%s", i ? ", " : "", file);
  }
  return TPS_EXIT_OK;
}

int cmd_plot(int argc, char **argv) {
  plot_args a;
  tps_cmdopt_values v;
  int prc = plot_parse(argc, argv, &a, &v);
  tps_plot_opts o = a.o;
  tps_plot_job j = a.j;
  const tps_strlist measured = a.measured;
  const int no_render = a.no_render;
  if (prc >= 0) return prc;
  const char *outdir = v.output ? v.output : "tpsplit-out", *gpus_file = v.gpus_file;
  const char *const *fitfiles = v.fits.v, *const *meas_files = measured.v;
  const size_t nmeas = measured.n, nfitf = v.fits.n;
  const int json = v.json;
  /* a measurement to fit here means the model scaling (its fit), as --fit does */
  if (nmeas && !((v.given >> TPS_OI_SCALING) & 1u)) v.scaling = TPS_SCALING_MODEL;
  if (nmeas && (v.gemms.n || v.gathers.n)) {
    tps_usage_msg("--measured (fitted here) and --gemm/--gather files (parts) do not mix");
    return TPS_EXIT_USAGE;
  }
  j.scaling = v.scaling, j.po = &v.po; /* --gather and its options, as predict takes them */
  o.render = !no_render;
  o.nsamples = (int)v.samples;
  o.seed = (unsigned long)v.seed;

  tps_plot_files w;
  tps_plot_files_init(&w);
  tps_err e;
  tps_err_clear(&e);
  int rc = TPS_EXIT_USAGE;
  const unsigned targets = TPS_OPT(TPS_OI_GPUS) | TPS_OPT(TPS_OI_TPS) | TPS_OPT(TPS_OI_PATHS);
  const int user_parts = v.gemms.n || v.gathers.n;
  if (nmeas == 0 && nfitf == 0 && !(v.given & targets) && !j.model_name && !user_parts) {
    /* the main job's figures */
    if (tps_plot_default(outdir, &o, &w, &e)) { tps_err_print(&e); rc = e.msg[0] && (e.kind == TPS_ERR_RESOURCE || strstr(e.msg, "gnuplot")) ? TPS_EXIT_FAIL : TPS_EXIT_USAGE; goto done; }
    rc = print_result(outdir, &w, json);
    goto done;
  }

  tps_gpu_table gt;
  memset(&gt, 0, sizeof gt);
  tps_predref pref;
  memset(&pref, 0, sizeof pref);
  int fit_failed = 0;
  tps_fit *fits = calloc(MAXIN, sizeof *fits);
  tps_plot_meas meas[MAXIN];
  const tps_fit *fitp[MAXIN];
  const tps_gpu *fgpu[MAXIN];
  const char *fpath[MAXIN];
  const tps_plot_meas *measp[MAXIN];
  const tps_gpu **tgpu = NULL;
  const char *pnames[TPS_NPATHS];
  size_t ngl = 0, nin = nmeas + nfitf;
  char inputs[2048] = "";
  memset(meas, 0, sizeof meas);
  if (!fits) { tps_die_msg("out of memory"); return TPS_EXIT_FAIL; }
  if (tps_gpus_load(gpus_file, &gt, &e)) { tps_err_print(&e); goto cleanup; }
  tps_plot_use_gpus(&gt);
  if ((rc = read_inputs(meas_files, nmeas, fitfiles, nfitf, gpus_file, &gt, fits, meas, fitp, fgpu, fpath, measp, inputs,
                        sizeof inputs, &e)) != TPS_EXIT_OK)
    goto cleanup;
  rc = TPS_EXIT_USAGE;
  if ((v.given & TPS_OPT(TPS_OI_GPUS)) && tps_cmdopt_gpus(&v, &gt, &tgpu, &ngl, &e)) {
    tps_err_print(&e);
    goto cleanup;
  }
  if (v.scaling == TPS_SCALING_PARTS) {
    /* the parts: bundled measurements, models, the user's --gemm/--gather files; targets
     * default to what the files measure */
    tps_predref_opts ro = tps_predref_opts_of(&v, j.tmax, v.npaths == 1 ? v.paths[0] : NULL);
    if (tps_predref_open(&pref, &ro, &fit_failed, &e)) {
      tps_err_print(&e);
      goto cleanup;
    }
    j.ref = &pref;
    if (user_parts && user_targets(&pref, &v, &gt, &tgpu, &ngl, &e)) goto cleanup;
  }
  for (size_t i = 0; i < v.npaths; i++) pnames[i] = v.paths[i]->name;
  if (nin == 0 && !user_parts && (v.given & targets) != targets) {
    tps_die_msg("without --measured or --fit, give --gpus, --tp and --paths (spec-only predictions)");
    goto cleanup;
  }
  if (j.scaling == TPS_SCALING_PESSIMISTIC && nin == 0) {
    tps_die_msg("--scaling pessimistic needs the measured table (--measured or --fit)");
    goto cleanup;
  }
  if (!inputs[0]) snprintf(inputs, sizeof inputs, "%s", gpus_file ? gpus_file : "gpus.tsv of the bundled data");
  o.inputs = inputs;
  j.outdir = outdir; j.o = &o;
  j.nfit = nin; j.fit = fitp; j.fit_gpu = fgpu; j.fit_path = fpath; j.meas = measp;
  j.ngpu = ngl; j.gpu = tgpu; j.ntp = v.ntps; j.tp = v.tps; j.npath = v.npaths; j.path = pnames;
  if (pref.parts) {
    /* the user's files must fit the targets (the same errors as predict and crossover) */
    const tps_path *tpa[TPS_NPATHS];
    for (size_t i = 0; i < v.npaths; i++) tpa[i] = v.paths[i];
    if (tps_partset_check_targets(pref.parts, tgpu, ngl, v.tps, v.ntps, tpa, v.npaths, &e)) {
      tps_err_print(&e);
      goto cleanup;
    }
  }
  if (tps_plot_run(&j, &w, &e)) {
    tps_err_print(&e);
    rc = (e.kind == TPS_ERR_RESOURCE || strstr(e.msg, "gnuplot")) ? TPS_EXIT_FAIL : TPS_EXIT_USAGE;
    goto cleanup;
  }
  if (w.n == 0) { /* e.g. --figures crossover for one measured GPU and TP: no figure applies */
    tps_usage_msg("none of the figures asked for applies to these inputs: nothing written");
    goto cleanup;
  }
  rc = print_result(outdir, &w, json);
cleanup:
  tps_predref_free(&pref);
  for (size_t i = 0; i < nin; i++) tps_plot_meas_free(&meas[i]);
  tps_gpus_free(&gt);
  free(fits);
  free(tgpu);
done:
  tps_plot_files_free(&w);
  tps_cmdopt_free(&v);
  return rc;
}
