/* cmd_default.c: `tpsplit` with no command, the main job.  First the answer to the question
 * tpsplit exists for (from how many tokens to split fused_wqa_wkv at TP8 on H100 and H200,
 * with its 90% interval and where each part of it comes from), then the break-even grid of
 * every bundled GPU x TP 2,4,8,16 x kernel path, the sources of every part, the seed pull
 * request's pessimistic rule next to it, and the figures (written into a folder of their
 * own, ./tpsplit-out by default: the main job rewrites no tracked file; `-o plots` refreshes
 * the README's figures).  Every number comes from the parts scaling (src/evidence/evidence.h): each
 * part measured where the project bundles a measurement, else a model, and says which. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/cli/tpsplit.h"
#include "src/cli/cmdopt.h"
#include "src/base/err.h"
#include "src/base/jsonout.h"
#include "src/plot/plot.h"
#include "src/cli/predict_common.h"
#include "src/base/util.h"
#include "src/io/modeldesc.h"
#include "model/predict/uncertainty.h"

#define DEFAULT_OUTDIR "tpsplit-out"

/* The GPUs of the question. */
static const char *const answer_gpus[] = {"H100", "H200"};
#define ANSWER_TP 8

/* The answer, as text, flushed: printed as soon as it is known (before the grid and the
 * figures are computed), so that a reader sees it within a fraction of a second. */
static void print_answer(const tps_grid *ga, const tps_grid *pg, const tps_unc_opts *uo) {
  printf("tpsplit: when to split fused_wqa_wkv (5120 -> 1792, bf16 out, 3584 bytes per token) by token\n"
         "(replicated = GEMM(T); split = GEMM(ceil(T/TP)) + all-gather)\n\n");
  printf("The answer at TP%d: break-even (the smallest T from which the split wins up to %d tokens), its %.0f%% interval,\n"
         "the threshold (least predicted excess), and where each part comes from ([n]: sources below; measured+model: the\n"
         "question leaves the measured range and the model answers there)\n", ANSWER_TP, TPS_PRED_DEFAULT_TMAX, 100 * uo->level);
  printf("# gather nccl: NCCL all-gather at every size (the backend the public measurements hold)\n");
  tps_grid_print(ga);
  printf("# gather auto: custom one-shot while the per-rank input <= 2 MiB, NCCL above (the seed pull request's rule)\n");
  tps_grid_print(pg);
  fflush(stdout);
}

/* The rest after the answer: the seed rule, the grid, the sources and the figures written, as
 * text.  The exit code. */
static int print_rest(const tps_grid *rule, const tps_grid *g, const tps_unc_opts *uo, const tps_predref *ref, int plots,
                      int plot_rc, const tps_err *e, const char *outdir, const tps_plot_files *w) {
  for (size_t i = 0; i < rule->n; i++) {
    const tps_gridcell *cc = &rule->cell[i];
    if (cc->status == TPS_OK && cc->cx.breakeven > 0)
      printf("# the seed vLLM pull request's pessimistic rule on the H20 table: %s TP8 marlin-w8a16 break-even %ld, threshold %ld\n",
             cc->gpu->name, cc->cx.breakeven, cc->threshold);
  }
  printf("\nEvery bundled GPU x TP x kernel path (gather auto; %.0f%% interval: one lognormal factor per part, the measured\n"
         "curves' 3%%, the models' held-out error; %d samples):\n", 100 * uo->level, g->nsamples);
  tps_grid_print(g);
  printf("\nsources:\n");
  tps_partset_print_sources(ref->parts, "  ");
  if (!plots) {
    printf("figures: not written (--no-plots)\n");
    return TPS_EXIT_OK;
  } else if (plot_rc != 0) {
    tps_err_print(e);
    printf("figures: failed, see above (folder %s)\n", outdir);
    return tps_err_exit_code(e); /* -o not a folder: 2, as in plot; a write error: 1 */
  } else {
    printf("figures: %zu files (%d images%s) in %s\n", w->n, w->images, w->gnuplot_missing ? ", gnuplot not found: .dat/.gp only" : "",
           outdir);
    return TPS_EXIT_OK;
  }
}

/* The same as JSON on stdout.  The exit code. */
static int print_json(const tps_grid *ga, const tps_grid *pg, const tps_grid *rule, const tps_grid *g, int plots,
                      int plot_rc, const tps_err *e, const char *outdir, const tps_plot_files *w) {
  json_t *root = json_object(), *ans = json_object();
  json_object_set_new(ans, "gather_nccl", tps_grid_json(ga));
  json_object_set_new(ans, "gather_auto", tps_grid_json(pg));
  json_object_set_new(root, "answer", ans);
  json_object_set_new(root, "crossover", tps_grid_json(g));
  json_object_set_new(root, "pessimistic", tps_grid_json(rule));
  json_t *files = json_array();
  for (size_t i = 0; i < w->n; i++) json_array_append_new(files, json_string(w->path[i]));
  json_object_set_new(root, "files", files);
  json_object_set_new(root, "outdir", plots ? json_string(outdir) : json_null());
  if (plot_rc != 0) json_object_set_new(root, "plot_error", json_string(e->msg));
  if (tps_json_print(root) != 0) return TPS_EXIT_FAIL;
  return plot_rc == 0 ? TPS_EXIT_OK : tps_err_exit_code(e);
}

/* The values of default's own options. */
typedef struct {
  int no_plots;
} dflt_args;

/* Parse argv into a and v: -1 to run, else the exit code to return at once. */
static int dflt_parse(int argc, char **argv, dflt_args *a, tps_cmdopt_values *v) {
  memset(a, 0, sizeof *a);

  const tps_cmdopt own[] = {
    {.name = "no-plots", .kind = TPS_ARG_FLAG, .dst = &a->no_plots, .help = "print the answer and the grid only, write no figures"},
  };
  const tps_cmdspec spec = {
    .name = NULL,
    .synopsis = "[-o DIR] [--json] [--samples N] [--seed S] [--no-plots]",
    .about = "The main job: the answer first (the break-even of fused_wqa_wkv at TP8 on H100 and H200\n"
             "per kernel path, from the NCCL gather and from the seed pull request's rule, with 90%\n"
             "intervals and each part's source), then the grid of every bundled GPU x TP 2,4,8,16 x\n"
             "kernel path, the sources, and the figures in DIR.  The last line names DIR.",
    .common = TPS_OPT(TPS_OI_SAMPLES) | TPS_OPT(TPS_OI_SEED) | TPS_OPT(TPS_OI_JSON) | TPS_OPT(TPS_OI_OUTPUT),
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .output_metavar = "DIR",
    .dflt = {[TPS_OI_OUTPUT] = DEFAULT_OUTDIR " (not tracked; -o plots refreshes the README's figures)"},
    .exit_status = "0 ok; 1 a figure failed; 2 usage or input error.",
  };
  tps_cmdopt_init(v);
  return tps_cmdopt_parse(&spec, argc, argv, v);
}

int cmd_default(int argc, char **argv) {
  dflt_args a;
  tps_cmdopt_values v;
  int prc = dflt_parse(argc, argv, &a, &v);
  const int no_plots = a.no_plots;
  if (prc >= 0) return prc;
  const char *outdir = v.output ? v.output : DEFAULT_OUTDIR;
  const int json = v.json, plots = !no_plots;

  tps_predref ref, pref;
  tps_grid g, ga, pg;
  memset(&ref, 0, sizeof ref);
  memset(&pref, 0, sizeof pref);
  memset(&g, 0, sizeof g);
  memset(&ga, 0, sizeof ga);
  memset(&pg, 0, sizeof pg);
  tps_plot_files w;
  tps_plot_files_init(&w);
  const tps_gpu **gpus = NULL;
  int rc = TPS_EXIT_USAGE, fit_failed = 0;
  tps_err e;
  tps_err_clear(&e);
  /* 1. the parts: bundled measurements (data/parts.tsv), cross-GPU fits (data/xgpu.fit) */
  tps_cmdopt_values pv;
  tps_cmdopt_init(&pv);
  tps_predref_opts ro = tps_predref_opts_of(&pv, TPS_PRED_DEFAULT_TMAX, NULL);
  if (tps_predref_open(&ref, &ro, &fit_failed, &e) != 0) {
    tps_err_print(&e);
    rc = fit_failed ? TPS_EXIT_FAIL : TPS_EXIT_USAGE;
    goto done;
  }
  tps_plot_use_gpus(&ref.gpus);
  if (plots && tps_modeldesc_check(TPS_PLOT_DEFAULT_MODEL, &e)) { /* the figures' model: refused before the answer prints */
    tps_err_print(&e);
    goto done;
  }
  const tps_path *paths[TPS_NPATHS];
  size_t npath = tps_path_select(TPS_PATH_F_MODEL, paths, TPS_NPATHS);
  tps_pred_opts po, pn;
  tps_pred_opts_default(&po);
  pn = po;
  pn.backend = tps_gather_fallback();
  tps_unc_opts uo = {(int)v.samples, (unsigned long)v.seed, TPS_INTERVAL_LEVEL};
  const tps_gpu *agpus[2];
  size_t nag = 0;
  for (int i = 0; i < 2; i++) {
    tps_err e2;
    const tps_gpu *gg = tps_gpus_find(&ref.gpus, answer_gpus[i], &e2);
    if (gg) agpus[nag++] = gg;
  }
  static const int tp8[] = {ANSWER_TP};
  /* 2. the answer: H100/H200 TP8, every path, NCCL gather (what the public tables measure)
   * and the auto rule (custom one-shot under 2 MiB per rank: the seed pull request's) */
  if (tps_grid_run(&ref, TPS_SCALING_PARTS, agpus, nag, tp8, 1, paths, npath, &pn, &uo, TPS_PRED_DEFAULT_TMAX, 0, &ga, &e) != 0 ||
      tps_grid_run(&ref, TPS_SCALING_PARTS, agpus, nag, tp8, 1, paths, npath, &po, &uo, TPS_PRED_DEFAULT_TMAX, 0, &pg, &e) != 0) {
    tps_err_print(&e);
    rc = TPS_EXIT_FAIL;
    goto done;
  }
  if (!json) print_answer(&ga, &pg, &uo);
  /* 3. the grid */
  gpus = calloc(ref.gpus.n, sizeof *gpus);
  if (!gpus) goto done;
  for (size_t i = 0; i < ref.gpus.n; i++) gpus[i] = &ref.gpus.gpu[i];
  if (tps_grid_run(&ref, TPS_SCALING_PARTS, gpus, ref.gpus.n, tps_grid_tp, TPS_GRID_NTP, paths, npath, &po, &uo,
                   TPS_PRED_DEFAULT_TMAX, 0, &g, &e) != 0) {
    tps_err_print(&e);
    rc = TPS_EXIT_FAIL;
    goto done;
  }
  /* the seed pull request's pessimistic rule, for comparison: H100/H200 at TP8 */
  tps_grid rule;
  memset(&rule, 0, sizeof rule);
  if (tps_predref_load(&pref, TPS_SCALING_PESSIMISTIC, NULL, NULL, &fit_failed, &e) != 0) { tps_err_print(&e); goto done; }
  tps_plot_use_gpus(&pref.gpus);
  const tps_path *marlin[] = {&tps_path_marlin_w8a16};
  const tps_gpu *rg[2];
  for (size_t i = 0; i < nag; i++) {
    tps_err e2;
    rg[i] = tps_gpus_find(&pref.gpus, agpus[i]->name, &e2);
  }
  if (nag && tps_grid_run(&pref, TPS_SCALING_PESSIMISTIC, rg, nag, tp8, 1, marlin, 1, &po, &uo, TPS_PRED_DEFAULT_TMAX, 0,
                          &rule, &e) != 0) {
    tps_err_print(&e);
    rc = TPS_EXIT_FAIL;
    goto done;
  }
  /* 4. the figures */
  int plot_rc = 0;
  if (plots) {
    tps_plot_opts o;
    tps_plot_opts_init(&o);
    o.quiet = json;
    o.nsamples = (int)v.samples;
    o.seed = (unsigned long)v.seed;
    o.render = 0; /* the scripts first, then all of them in two gnuplot processes at once, each
                   * image renamed into place only when complete (tps_plot_render_batch) */
    plot_rc = tps_plot_default_from(outdir, &o, &ref, &g, &w, &e);
    if (!plot_rc) plot_rc = tps_plot_render_batch(outdir, &o, 2, &w, &e);
  }

  if (json) {
    rc = print_json(&ga, &pg, &rule, &g, plots, plot_rc, &e, outdir, &w);
    tps_grid_free(&rule);
    goto done;
  }
  rc = print_rest(&rule, &g, &uo, &ref, plots, plot_rc, &e, outdir, &w);
  tps_grid_free(&rule);
done:
  free(gpus);
  tps_plot_files_free(&w);
  tps_grid_free(&g);
  tps_grid_free(&ga);
  tps_grid_free(&pg);
  tps_predref_free(&ref);
  tps_predref_free(&pref);
  return rc;
}
