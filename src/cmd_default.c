/* cmd_default.c: `tpsplit` with no command, the main job: fit the bundled H20 table,
 * print the crossover grid of the bundled GPUs x TP 2,4,8,16 x kernel paths with 90%
 * intervals (and the seed pull request's pessimistic rule next to it for H100/H200 TP8), then write
 * the figures (src/plot.h, tps_plot_default).  The last line names the output folder. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpsplit.h"
#include "cmdopt.h"
#include "err.h"
#include "jsonout.h"
#include "plot.h"
#include "predcli.h"
#include "util.h"
#include "uncertainty.h"

int cmd_default(int argc, char **argv) {
  int no_plots = 0;
  const tps_cmdopt own[] = {
    {.name = "no-plots", .kind = TPS_ARG_FLAG, .dst = &no_plots, .help = "print the grid only, write no figures"},
  };
  const tps_cmdspec spec = {
    .name = NULL,
    .synopsis = "[-o DIR] [--json] [--samples N] [--seed S] [--no-plots]",
    .about = "The main job: fit the bundled H20 measurement, print the break-even grid (all bundled\n"
             "GPUs x TP 2,4,8,16 x kernel paths, with intervals and thresholds), then write the\n"
             "figures into DIR.  The last line names DIR.",
    .common = TPS_OPT(TPS_OI_SAMPLES) | TPS_OPT(TPS_OI_SEED) | TPS_OPT(TPS_OI_JSON) | TPS_OPT(TPS_OI_OUTPUT),
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .output_metavar = "DIR",
    .dflt = {[TPS_OI_OUTPUT] = "plots"},
    .exit_status = "0 ok; 1 the fit or a figure failed; 2 usage or input error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;
  const char *outdir = v.output ? v.output : "plots";
  const int json = v.json, plots = !no_plots;

  tps_predref ref, pref;
  tps_grid g, pg;
  memset(&ref, 0, sizeof ref);
  memset(&pref, 0, sizeof pref);
  memset(&g, 0, sizeof g);
  memset(&pg, 0, sizeof pg);
  tps_plot_files w;
  tps_plot_files_init(&w);
  const tps_gpu **gpus = NULL;
  int rc = TPS_EXIT_USAGE, fit_failed = 0;
  tps_err e;
  tps_err_clear(&e);
  /* 1. fit the bundled table */
  if (tps_predref_load(&ref, TPS_SCALING_MODEL, NULL, NULL, &fit_failed, &e) != 0) {
    tps_err_print(&e);
    rc = fit_failed ? TPS_EXIT_FAIL : TPS_EXIT_USAGE;
    goto done;
  }
  /* 2. the grid */
  const tps_path *paths[TPS_NPATHS];
  size_t npath = tps_path_select(TPS_PATH_F_MODEL, paths, TPS_NPATHS);
  gpus = calloc(ref.gpus.n, sizeof *gpus);
  if (!gpus) goto done;
  for (size_t i = 0; i < ref.gpus.n; i++) gpus[i] = &ref.gpus.gpu[i];
  tps_pred_opts po;
  tps_pred_opts_default(&po);
  tps_unc_opts uo = {(int)v.samples, (unsigned long)v.seed, TPS_INTERVAL_LEVEL};
  if (tps_grid_run(&ref, TPS_SCALING_MODEL, gpus, ref.gpus.n, tps_grid_tp, TPS_GRID_NTP, paths, npath, &po, &uo,
                   TPS_PRED_DEFAULT_TMAX, 0, &g, &e) != 0) {
    tps_err_print(&e);
    rc = TPS_EXIT_FAIL;
    goto done;
  }
  /* the seed pull request's pessimistic rule, for comparison: H100/H200 at TP8 */
  const tps_gpu *pgpus[2];
  size_t npg = 0;
  const char *pnames[2] = {"H100", "H200"};
  if (tps_predref_load(&pref, TPS_SCALING_PESSIMISTIC, NULL, NULL, &fit_failed, &e) != 0) { tps_err_print(&e); goto done; }
  for (int i = 0; i < 2; i++) {
    tps_err e2;
    tps_err_clear(&e2);
    const tps_gpu *gg = tps_gpus_find(&pref.gpus, pnames[i], &e2);
    if (gg) pgpus[npg++] = gg;
  }
  static const int tp8[] = {8};
  const tps_path *marlin[] = {&tps_path_marlin_w8a16};
  if (npg && tps_grid_run(&pref, TPS_SCALING_PESSIMISTIC, pgpus, npg, tp8, 1, marlin, 1, &po, &uo, TPS_PRED_DEFAULT_TMAX, 0,
                          &pg, &e) != 0) {
    tps_err_print(&e);
    rc = TPS_EXIT_FAIL;
    goto done;
  }
  /* 3. the figures */
  int plot_rc = 0;
  if (plots) {
    tps_plot_opts o;
    tps_plot_opts_init(&o);
    o.quiet = json;
    plot_rc = tps_plot_default(outdir, &o, &w, &e);
  }

  if (json) {
    json_t *root = json_object(), *fit = json_object();
    json_object_set_new(fit, "source", json_string(ref.fit_source));
    json_object_set_new(fit, "gpu", json_string(ref.fit.gpu));
    json_object_set_new(fit, "points", json_integer((json_int_t)ref.fit.npts));
    tps_json_set_num(fit, "median_abs_rel", ref.fit.med_abs_rel);
    tps_json_set_num(fit, "max_abs_rel", ref.fit.max_abs_rel);
    json_object_set_new(root, "fit", fit);
    json_object_set_new(root, "crossover", tps_grid_json(&g));
    json_object_set_new(root, "pessimistic", tps_grid_json(&pg));
    json_t *files = json_array();
    for (size_t i = 0; i < w.n; i++) json_array_append_new(files, json_string(w.path[i]));
    json_object_set_new(root, "files", files);
    json_object_set_new(root, "outdir", plots ? json_string(outdir) : json_null());
    if (plot_rc != 0) json_object_set_new(root, "plot_error", json_string(e.msg));
    rc = tps_json_print(root) == 0 && plot_rc == 0 ? TPS_EXIT_OK : TPS_EXIT_FAIL;
    goto done;
  }
  printf("tpsplit: when to split fused_wqa_wkv by token (replicated = GEMM(T); split = GEMM(ceil(T/TP)) + all-gather)\n");
  printf("# reference: %s: %zu points, median |relative residual| %.1f%%, max %.1f%%\n", ref.fit_source, ref.fit.npts,
         100 * ref.fit.med_abs_rel, 100 * ref.fit.max_abs_rel);
  printf("# break-even on T = 1..%d; %.0f%% interval: parametric bootstrap of the fit (+ path priors when transferred), %d samples\n",
         TPS_PRED_DEFAULT_TMAX, 100 * uo.level, g.nsamples);
  tps_grid_print(&g);
  for (size_t i = 0; i < pg.n; i++) {
    const tps_gridcell *cc = &pg.cell[i];
    if (cc->status == TPS_OK && cc->cx.breakeven > 0)
      printf("# the seed vLLM pull request's pessimistic rule on the H20 table: %s TP8 marlin-w8a16 break-even %ld, threshold %ld\n", cc->gpu->name,
             cc->cx.breakeven, cc->threshold);
  }
  if (!plots) {
    printf("figures: not written (--no-plots)\n");
    rc = TPS_EXIT_OK;
  } else if (plot_rc != 0) {
    tps_err_print(&e);
    printf("figures: failed, see above (folder %s)\n", outdir);
    rc = TPS_EXIT_FAIL;
  } else {
    printf("figures: %zu files (%d images%s) in %s\n", w.n, w.images, w.gnuplot_missing ? ", gnuplot not found: .dat/.gp only" : "",
           outdir);
    rc = TPS_EXIT_OK;
  }
done:
  free(gpus);
  tps_plot_files_free(&w);
  tps_grid_free(&g);
  tps_grid_free(&pg);
  tps_predref_free(&ref);
  tps_predref_free(&pref);
  return rc;
}
