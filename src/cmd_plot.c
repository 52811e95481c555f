/* cmd_plot.c: `tpsplit plot`: figures for fits, measurements and predictions (gnuplot).
 *
 * Inputs are measurement files (--measured, fitted here with leave-one-out errors through
 * tps_fit_file) and saved fits (--fit, tps_fitfile_read); the measured points drawn are the
 * fit's own points.  Targets GPU x TP x path are predicted from the split fits (or from the
 * datasheets alone when there is none).  With no input at all it draws the main job's figures for
 * the bundled data (tps_plot_default).  What each figure shows: src/plot.h. */
#include "config.h"
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fitfile.h"
#include "gpus.h"
#include "jsonout.h"
#include "plot.h"
#include "predcli.h"
#include "predict.h"
#include "tpsplit.h"
#include "util.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "Usage: tpsplit plot [--measured FILE]... [--fit FIT]... [--gpus LIST] [--tp LIST] [--paths LIST]\n"
          "                    [--scaling model|spec|pessimistic] [--by gpu|tp|path] [--figures LIST]\n"
          "                    [--format png|svg|pdf] [--size WxH] [-o DIR] [--no-render] [--json]\n"
          "Write figures as NAME.dat (data) + NAME.gp (gnuplot script) + NAME.png, and run gnuplot.\n"
          "With no --measured, --fit or --gpus: the figures of the main job for the bundled data.\n\n"
          "Figures: latency (vs tokens, replicated and split, 90%% band, measured points,\n"
          "gather backend switch), speedup (one curve per GPU, TP or path; break-even with its\n"
          "interval; threshold), crossover (break-even map GPU x TP per path), fitq (residuals and\n"
          "leave-one-out errors of each fit), layers (per-layer stage of a model, main vs split).\n\n"
          "Options:\n"
          "  --measured FILE   a measurement file (split-vs-replicated, GEMM or all-gather table,\n"
          "                    nccl-tests log), fitted here as `tpsplit fit --loo` would; repeatable\n"
          "  --fit FIT         a fit saved by `tpsplit fit -o FIT`; repeatable.  Split fits (and\n"
          "                    their measured points) feed the predicted curves; every fit gets\n"
          "                    a fit-quality figure\n"
          "  --gpus LIST       target GPUs (names or aliases from gpus.tsv; default: the measured one)\n"
          "  --gpus-file FILE  GPU table instead of the bundled data/gpus.tsv\n"
          "  --tp LIST         TP sizes (default: the measured TP)\n"
          "  --paths LIST      kernel paths: marlin-w8a16, dense-bf16, native-fp8 (default: measured)\n"
          "  --scaling S       model (transfer the fit, default), spec (datasheets only),\n"
          "                    pessimistic (the brief's rule on the measured table)\n"
          "  --tmax T          curves and break-even on T = 1..T tokens (default 16384)\n"
          "  --by WHAT         what varies between the curves of a speedup figure: gpu (default),\n"
          "                    tp or path\n"
          "  --figures LIST    latency,speedup,crossover,fitq,layers (default: all that apply)\n"
          "  --model NAME      per-layer figure for this model (data/models/NAME.tsv or a file)\n"
          "  --sim-tokens T    tokens per step of the per-layer figure (default 8192)\n"
          "  --samples N       bootstrap samples for bands and intervals (default 200)\n"
          "  --seed S          their random seed (default 1, as `tpsplit crossover`)\n"
          "  --format F        png (pngcairo, default), svg, pdf (pdfcairo)\n"
          "  --size WxH        image size in pixels (default 1200x800; PDF: 150 px per inch)\n"
          "  -o, --output DIR  output folder (default: plots), created when missing\n"
          "  --no-render       write the .dat and .gp files only\n"
          "  --json            list the files written as JSON\n"
          "  -h, --help        this help\n\n"
          "gnuplot: $TPSPLIT_GNUPLOT (a path or name; empty or missing = none), else the one found\n"
          "by configure, else `gnuplot` on PATH.  Without it the .dat/.gp files are still written\n"
          "and one line on stderr says so; `gnuplot -d NAME.gp` in the folder draws them later.\n\n"
          "Exit status: 0 ok, 1 gnuplot failed on a script, 2 usage or input error.\n");
}

enum {
  OPT_MEASURED = CHAR_MAX + 1, OPT_FIT, OPT_GPUS, OPT_GPUS_FILE, OPT_TP, OPT_PATHS, OPT_SCALING, OPT_TMAX, OPT_BY,
  OPT_FIGURES, OPT_MODEL, OPT_SIMTOK, OPT_SAMPLES, OPT_SEED, OPT_FORMAT, OPT_SIZE, OPT_NORENDER, OPT_JSON
};

#define MAXIN 16

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

int cmd_plot(int argc, char **argv) {
  static const struct option longopts[] = {
    {"measured", required_argument, 0, OPT_MEASURED}, {"fit", required_argument, 0, OPT_FIT}, {"gpus", required_argument, 0, OPT_GPUS},
    {"gpus-file", required_argument, 0, OPT_GPUS_FILE}, {"tp", required_argument, 0, OPT_TP},
    {"paths", required_argument, 0, OPT_PATHS}, {"scaling", required_argument, 0, OPT_SCALING},
    {"tmax", required_argument, 0, OPT_TMAX}, {"by", required_argument, 0, OPT_BY},
    {"figures", required_argument, 0, OPT_FIGURES}, {"model", required_argument, 0, OPT_MODEL},
    {"sim-tokens", required_argument, 0, OPT_SIMTOK}, {"samples", required_argument, 0, OPT_SAMPLES},
    {"seed", required_argument, 0, OPT_SEED}, {"format", required_argument, 0, OPT_FORMAT},
    {"size", required_argument, 0, OPT_SIZE}, {"output", required_argument, 0, 'o'},
    {"no-render", no_argument, 0, OPT_NORENDER}, {"json", no_argument, 0, OPT_JSON},
    {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
  const char *measured[MAXIN], *fitfiles[MAXIN];
  size_t nmeas = 0, nfitf = 0;
  const char *gpus_arg = NULL, *gpus_file = NULL, *tp_arg = NULL, *paths_arg = NULL, *outdir = "plots";
  int json = 0, c;
  long v;
  tps_plot_opts o;
  tps_plot_opts_init(&o);
  tps_plot_job j;
  memset(&j, 0, sizeof j);
  j.scaling = TPS_SCALING_MODEL;
  while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
    switch (c) {
    case 'h': usage(stdout); return TPS_EXIT_OK;
    case 'V': return tps_print_version("plot");
    case 'o': outdir = optarg; break;
    case OPT_MEASURED:
      if (nmeas == MAXIN) { tps_die_msg("plot: at most %d --measured files", MAXIN); return TPS_EXIT_USAGE; }
      measured[nmeas++] = optarg;
      break;
    case OPT_FIT:
      if (nfitf == MAXIN) { tps_die_msg("plot: at most %d --fit files", MAXIN); return TPS_EXIT_USAGE; }
      fitfiles[nfitf++] = optarg;
      break;
    case OPT_GPUS: gpus_arg = optarg; break;
    case OPT_GPUS_FILE: gpus_file = optarg; break;
    case OPT_TP: tp_arg = optarg; break;
    case OPT_PATHS: paths_arg = optarg; break;
    case OPT_SCALING:
      if ((j.scaling = tps_scaling_find(optarg)) < 0) { tps_die_msg("plot: unknown --scaling '%s' (model, spec, pessimistic)", optarg); return TPS_EXIT_USAGE; }
      break;
    case OPT_TMAX:
      if (tps_parse_long(optarg, &v) || v < 2 || v > TPS_PRED_MAX_TMAX) { tps_die_msg("plot: bad --tmax '%s' (2..%ld)", optarg, TPS_PRED_MAX_TMAX); return TPS_EXIT_USAGE; }
      j.tmax = v;
      break;
    case OPT_BY:
      if (strcmp(optarg, "gpu") == 0) j.by = TPS_PLOT_BY_GPU;
      else if (strcmp(optarg, "tp") == 0) j.by = TPS_PLOT_BY_TP;
      else if (strcmp(optarg, "path") == 0) j.by = TPS_PLOT_BY_PATH;
      else { tps_die_msg("plot: bad --by '%s' (gpu, tp or path)", optarg); return TPS_EXIT_USAGE; }
      break;
    case OPT_FIGURES:
      if (tps_plot_parse_figures(optarg, &j.figures)) { tps_die_msg("plot: bad --figures '%s' (latency,speedup,crossover,fitq,layers)", optarg); return TPS_EXIT_USAGE; }
      break;
    case OPT_MODEL: j.model_name = optarg; break;
    case OPT_SIMTOK:
      if (tps_parse_long(optarg, &v) || v < 1 || v > TPS_PRED_MAX_TMAX) { tps_die_msg("plot: bad --sim-tokens '%s'", optarg); return TPS_EXIT_USAGE; }
      j.sim_tokens = v;
      break;
    case OPT_SAMPLES:
      if (tps_parse_long(optarg, &v) || v < 10 || v > 100000) { tps_die_msg("plot: bad --samples '%s' (10..100000)", optarg); return TPS_EXIT_USAGE; }
      o.nsamples = (int)v;
      break;
    case OPT_SEED:
      if (tps_parse_long(optarg, &v) || v < 0) { tps_die_msg("plot: bad --seed '%s'", optarg); return TPS_EXIT_USAGE; }
      o.seed = (unsigned long)v;
      break;
    case OPT_FORMAT:
      if (tps_plot_parse_format(optarg, &o.format)) { tps_die_msg("plot: bad --format '%s' (png, svg or pdf)", optarg); return TPS_EXIT_USAGE; }
      break;
    case OPT_SIZE:
      if (tps_plot_parse_size(optarg, &o.width_px, &o.height_px)) { tps_die_msg("plot: bad --size '%s' (WxH, each 100..10000)", optarg); return TPS_EXIT_USAGE; }
      break;
    case OPT_NORENDER: o.render = 0; break;
    case OPT_JSON: json = 1; break;
    default: tps_die_msg("plot: try 'tpsplit plot --help'"); return TPS_EXIT_USAGE;
    }
  }
  if (optind < argc) { tps_die_msg("plot: unexpected argument '%s' (inputs go behind --measured)", argv[optind]); return TPS_EXIT_USAGE; }

  tps_plot_files w;
  tps_plot_files_init(&w);
  tps_err e;
  tps_err_clear(&e);
  int rc = TPS_EXIT_USAGE;
  if (nmeas == 0 && nfitf == 0 && !gpus_arg && !tp_arg && !paths_arg && !j.model_name) {
    /* the main job's figures */
    if (tps_plot_default(outdir, &o, &w, &e)) { tps_err_print(&e); rc = e.msg[0] && (e.kind == TPS_ERR_RESOURCE || strstr(e.msg, "gnuplot")) ? TPS_EXIT_FAIL : TPS_EXIT_USAGE; goto done; }
    rc = print_result(outdir, &w, json);
    goto done;
  }

  tps_gpu_table gt;
  memset(&gt, 0, sizeof gt);
  tps_fit *fits = calloc(MAXIN, sizeof *fits);
  tps_plot_meas meas[MAXIN];
  const tps_fit *fitp[MAXIN];
  const tps_gpu *fgpu[MAXIN];
  const char *fpath[MAXIN];
  const tps_plot_meas *measp[MAXIN];
  const tps_gpu *tgpu[64];
  int *tps = NULL;
  char **gl = NULL, **pl = NULL;
  size_t ngl = 0, npl = 0, ntl = 0, nin = nmeas + nfitf;
  char inputs[2048] = "";
  memset(meas, 0, sizeof meas);
  if (!fits) { tps_die_msg("out of memory"); return TPS_EXIT_FAIL; }
  if (tps_gpus_load(gpus_file, &gt, &e)) { tps_err_print(&e); goto cleanup; }
  tps_fit_opts fo = {1, 0}; /* fits made here include leave-one-out errors */
  for (size_t i = 0; i < nin; i++) {
    const char *file = i < nmeas ? measured[i] : fitfiles[i - nmeas];
    int status = TPS_FIT_OK;
    if (i < nmeas ? tps_fit_file(file, NULL, gpus_file, &fo, &fits[i], &status, &e)
                  : tps_fitfile_read(file, &fits[i], &e)) {
      tps_err_print(&e);
      rc = i < nmeas ? tps_fit_exit_code(status) : TPS_EXIT_USAGE;
      goto cleanup;
    }
    const tps_gpu *g = tps_gpus_find(&gt, fits[i].gpu, &e);
    if (!g) { fprintf(stderr, "tpsplit: %s: %s\n", file, e.msg); goto cleanup; }
    fitp[i] = &fits[i];
    fgpu[i] = g;
    fpath[i] = fits[i].gemm.path ? fits[i].gemm.path->name : NULL;
    measp[i] = tps_plot_meas_from_fit(&fits[i], g->name, fpath[i], file, &meas[i]) == 0 ? &meas[i] : NULL;
    size_t l = strlen(inputs);
    snprintf(inputs + l, sizeof inputs - l, "%s%s", i ? ", " : "", file);
  }
  if (gpus_arg) {
    if (tps_parse_list(gpus_arg, &gl, &ngl) || ngl > 64) { tps_die_msg("plot: bad --gpus '%s'", gpus_arg); goto cleanup; }
    for (size_t i = 0; i < ngl; i++)
      if (!(tgpu[i] = tps_gpus_find(&gt, gl[i], &e))) { tps_err_print(&e); goto cleanup; }
  }
  if (tp_arg && tps_parse_tp_list(tp_arg, &tps, &ntl)) { tps_die_msg("plot: bad --tp '%s' (each 1..64)", tp_arg); goto cleanup; }
  if (paths_arg) {
    if (tps_parse_list(paths_arg, &pl, &npl)) { tps_die_msg("plot: bad --paths '%s'", paths_arg); goto cleanup; }
    for (size_t i = 0; i < npl; i++)
      if (!tps_path_find(pl[i])) { tps_die_msg("plot: unknown kernel path '%s' (marlin-w8a16, dense-bf16, native-fp8)", pl[i]); goto cleanup; }
  }
  if (nin == 0 && (!gpus_arg || !tp_arg || !paths_arg)) {
    tps_die_msg("plot: without --measured or --fit, give --gpus, --tp and --paths (spec-only predictions)");
    goto cleanup;
  }
  if (j.scaling == TPS_SCALING_PESSIMISTIC && nin == 0) {
    tps_die_msg("plot: --scaling pessimistic needs the measured table (--measured or --fit)");
    goto cleanup;
  }
  if (!inputs[0]) snprintf(inputs, sizeof inputs, "%s", gpus_file ? gpus_file : "gpus.tsv of the bundled data");
  o.inputs = inputs;
  j.outdir = outdir; j.o = &o;
  j.nfit = nin; j.fit = fitp; j.fit_gpu = fgpu; j.fit_path = fpath; j.meas = measp;
  j.ngpu = ngl; j.gpu = tgpu; j.ntp = ntl; j.tp = tps; j.npath = npl; j.path = (const char *const *)pl;
  if (tps_plot_run(&j, &w, &e)) {
    tps_err_print(&e);
    rc = (e.kind == TPS_ERR_RESOURCE || strstr(e.msg, "gnuplot")) ? TPS_EXIT_FAIL : TPS_EXIT_USAGE;
    goto cleanup;
  }
  rc = print_result(outdir, &w, json);
cleanup:
  for (size_t i = 0; i < nin; i++) tps_plot_meas_free(&meas[i]);
  tps_gpus_free(&gt);
  free(fits);
  if (gl) tps_free_list(gl, ngl);
  free(tps);
  if (pl) tps_free_list(pl, npl);
done:
  tps_plot_files_free(&w);
  return rc;
}
