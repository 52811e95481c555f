/* cmd_crossover.c: `tpsplit crossover`: the grid GPU x TP x kernel path with the
 * break-even, its 90% interval and the recommended threshold (see model/predict/predict.h). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/cli/tpsplit.h"
#include "src/cli/cmdopt.h"
#include "src/base/err.h"
#include "src/base/jsonout.h"
#include "src/cli/predict_common.h"
#include "src/base/util.h"
#include "src/cli/thresholds_pred.h"

static const char *interval_method(int scaling) {
  return scaling == TPS_SCALING_PESSIMISTIC ? "none (a rule)"
         : scaling == TPS_SCALING_MODEL     ? "parametric bootstrap of the fit (+ path priors when transferred)"
         : scaling == TPS_SCALING_PARTS     ? "lognormal spread of each part (measured 3%, models their held-out error)"
                                            : "priors' lognormal spread";
}

/* --thresholds-out FILE: every cell that runs, at TP >= 2, as an entry of the thresholds
 * file (src/cli/thresholds_pred.h); the cells left out are named in its notes. */
static int write_thresholds(const tps_grid *g, const tps_predref *ref, const tps_cmdopt_values *v, const char *path,
                            tps_err *e) {
  tps_thr_file f;
  tps_thrpred_init(&f, ref, g->scaling, interval_method(g->scaling));
  size_t nna = 0, nout = 0;
  int rc = 0;
  for (size_t i = 0; i < g->n && rc >= 0; i++) {
    const tps_gridcell *c = &g->cell[i];
    if (c->status != TPS_OK) { nna++; continue; }
    tps_pred p;
    tps_partuse use;
    int st = tps_predref_context_use(ref, g->scaling, c->gpu, c->tp, c->path, &v->po, &p, &use, e);
    if (st != TPS_OK) {
      if (st != TPS_EBADDATA) tps_err_set(e, NULL, 0, "%s TP%d %s: the context cannot be rebuilt", c->gpu->name, c->tp, c->path->name);
      tps_pred_free(&p);
      rc = -1;
      break;
    }
    /* the win bands: the dense scan of the rebuilt context (the grid kept the break-even only) */
    tps_crossover cx;
    int bst = tps_pred_crossover(&p, g->tmax, &cx);
    tps_thrpred_answer a = {c->cx.breakeven, c->iv.lo, c->iv.hi, c->threshold, g->tmax, bst == TPS_OK ? &cx.bands : NULL};
    rc = tps_thrpred_add(&f, ref, &p, g->scaling == TPS_SCALING_PARTS ? &c->use : NULL, &a, e);
    tps_pred_free(&p);
    if (rc == 0) nout++;
  }
  if (rc >= 0 && nna) tps_thr_add_note(&f, "%zu cell%s n/a (a path the GPU cannot run, or a TP it cannot have): not written", nna, nna == 1 ? "" : "s");
  if (rc >= 0 && !nout) rc = tps_err_set(e, path, 0, "not written: no cell of the grid fits the thresholds schema (TP from 2, a path that runs)");
  else if (rc >= 0) rc = tps_thr_write(&f, path, e);
  tps_thr_free(&f);
  return rc < 0 ? -1 : 0;
}

/* Append "GPU H100-SXM" / "TP 2,4,8" / "paths a,b" to the grid note at *len. */
static void note_add(char *buf, size_t sz, size_t *len, const char *what, const int *tps, size_t ntp, const tps_path *const *paths,
                     size_t npath, const tps_gpu *const *gpus, size_t ngpu) {
  size_t n = tps ? ntp : paths ? npath : ngpu;
  int w = snprintf(buf + *len, sz - *len, "%s%s%s ", *len ? ", " : "grid restricted to ", what, n > 1 ? "s" : "");
  if (w > 0 && (size_t)w < sz - *len) *len += (size_t)w;
  for (size_t i = 0; i < n && *len < sz; i++) {
    if (tps) w = snprintf(buf + *len, sz - *len, "%s%d", i ? "," : "", tps[i]);
    else w = snprintf(buf + *len, sz - *len, "%s%s", i ? "," : "", paths ? paths[i]->name : gpus[i]->name);
    if (w > 0 && (size_t)w < sz - *len) *len += (size_t)w;
  }
}

int cmd_crossover(int argc, char **argv) {
  long tmax = TPS_PRED_DEFAULT_TMAX;
  const tps_cmdopt own[] = {
    {.name = "max-tokens", .kind = TPS_ARG_LONG, .metavar = "N", .dst = &tmax, .min = 1, .max = TPS_PRED_MAX_TMAX,
     .help = "largest T of the break-even search"},
  };
  const tps_cmdspec spec = {
    .name = "crossover",
    .synopsis = "[--gpus LIST] [--tp LIST] [--paths LIST] [options]",
    .about = "Break-even tokens (smallest T from which the split always wins up to --max-tokens,\n"
             "on every integer T), its bootstrap interval and the recommended threshold, for every\n"
             "GPU x TP x kernel path.  Cells where a path cannot run print n/a and why.",
    .common = TPS_OPT(TPS_OI_GPUS) | TPS_OPT(TPS_OI_TPS) | TPS_OPT(TPS_OI_PATHS) | TPS_OPTS_BREAKEVEN | TPS_OPTS_PARTS |
              TPS_OPTS_SHAPE | TPS_OPT(TPS_OI_THR_OUT),
    .fit_model_only = 1,
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .text = {[TPS_OI_JSON] = "JSON: {\"cells\": [{gpu, tp, path, breakeven_tokens (null: never), breakeven_lo, "
                             "breakeven_hi, threshold_tokens}], \"not_applicable\": [{gpu, tp, path, reason}]}"},
    .dflt = {[TPS_OI_THR_OUT] = "one entry per cell of TP >= 2 that runs, with its break-even, 90% interval, threshold "
                                "and each part's provenance, devices keyed as engines key them"},
    .exit_status = "0 ok; 1 the reference fit failed; 2 usage or input error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  memcpy(v.tps, tps_grid_tp, sizeof tps_grid_tp);
  v.ntps = TPS_GRID_NTP;
  v.npaths = tps_path_select(TPS_PATH_F_MODEL, v.paths, TPS_NPATHS);
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;
  const int scaling = v.scaling;
  size_t ngpu = 0;
  const tps_gpu **gpus = NULL;
  tps_predref ref = {0};
  tps_grid g = {0};
  int rc = TPS_EXIT_USAGE, fit_failed = 0;
  tps_err e;
  tps_err_clear(&e);
  tps_predref_opts ro = tps_predref_opts_of(&v, tmax, v.npaths == 1 ? v.paths[0] : NULL);
  if (tps_predref_open(&ref, &ro, &fit_failed, &e) != 0) {
    tps_err_print(&e);
    rc = fit_failed ? TPS_EXIT_FAIL : TPS_EXIT_USAGE;
    goto done;
  }
  char grid_note[1024] = ""; /* the grid the files chose, and why (issue 29: it shrank silently) */
  if (ref.parts && tps_partset_has_user(ref.parts)) {
    /* targets default to what the user's files measure */
    const tps_gpu *ug[TPS_STRLIST_MAX * 2];
    size_t nug = tps_partset_user_gpus(ref.parts, ug, TPS_STRLIST_MAX * 2);
    size_t len = 0;
    if (!((v.given >> TPS_OI_GPUS) & 1u) && nug) {
      gpus = calloc(nug, sizeof *gpus);
      if (!gpus) goto done;
      memcpy(gpus, ug, nug * sizeof *gpus);
      ngpu = nug;
      note_add(grid_note, sizeof grid_note, &len, "GPU", NULL, 0, NULL, 0, gpus, ngpu);
    }
    const tps_path *up[TPS_NPATHS];
    size_t nup = tps_partset_user_paths(ref.parts, up, TPS_NPATHS);
    if (!((v.given >> TPS_OI_PATHS) & 1u) && nup) {
      memcpy(v.paths, up, nup * sizeof *up);
      v.npaths = nup;
      note_add(grid_note, sizeof grid_note, &len, "path", NULL, 0, v.paths, v.npaths, NULL, 0);
    }
    int ut[TPS_CMDOPT_MAXTP];
    size_t nut = tps_partset_user_tps(ref.parts, ut, TPS_CMDOPT_MAXTP);
    if (!((v.given >> TPS_OI_TPS) & 1u) && nut) {
      memcpy(v.tps, ut, nut * sizeof *ut);
      v.ntps = nut;
      note_add(grid_note, sizeof grid_note, &len, "TP", v.tps, v.ntps, NULL, 0, NULL, 0);
    }
    if (len) snprintf(grid_note + len, sizeof grid_note - len, ": what the --gemm/--gather files measure (--gpus, --tp, --paths for another grid)");
  }
  if (!gpus && tps_cmdopt_gpus(&v, &ref.gpus, &gpus, &ngpu, &e) != 0) {
    tps_err_print(&e);
    goto done;
  }
  if (ref.parts && tps_partset_check_targets(ref.parts, gpus, ngpu, v.tps, v.ntps, v.paths, v.npaths, &e) != 0) {
    tps_err_print(&e);
    goto done;
  }
  tps_unc_opts uo = {(int)v.samples, (unsigned long)v.seed, TPS_INTERVAL_LEVEL};
  int grc = tps_grid_run(&ref, scaling, gpus, ngpu, v.tps, v.ntps, v.paths, v.npaths, &v.po, &uo, tmax, v.rounding, &g, &e);
  if (grc != 0) {
    tps_err_print(&e);
    rc = grc == -2 ? TPS_EXIT_USAGE : TPS_EXIT_FAIL;
    goto done;
  }
  if (v.thresholds_out && write_thresholds(&g, &ref, &v, v.thresholds_out, &e) != 0) {
    tps_err_print(&e);
    rc = tps_err_exit_code(&e); /* cannot create: 2; a write error: 1 */
    goto done;
  }
  if (v.json) {
    json_t *root = tps_grid_json(&g);
    if (root && grid_note[0]) json_object_set_new(root, "grid_note", json_string(grid_note));
    rc = tps_json_print(root) == 0 ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  } else {
    if (grid_note[0]) printf("# %s\n", grid_note);
    char desc[4400];
    tps_predref_describe(&ref, scaling, desc, sizeof desc);
    printf("# %s\n# break-even on T = 1..%ld; interval: %.0f%%, %s\n", desc, tmax, 100 * uo.level, interval_method(scaling));
    tps_grid_print(&g);
    if (scaling == TPS_SCALING_PARTS) {
      printf("# sources ([n] above; measured+model: the question leaves the measured range, the model answers there):\n");
      tps_partset_print_sources(ref.parts, "# ");
    }
    rc = TPS_EXIT_OK;
  }
done:
  free(gpus);
  tps_grid_free(&g);
  tps_cmdopt_free(&v);
  tps_predref_free(&ref);
  return rc;
}
