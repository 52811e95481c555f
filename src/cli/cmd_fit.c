/* cmd_fit.c: `tpsplit fit FILE... [-o FIT] [--json] [--loo]`
 *
 * Fits each FILE by its kind (model/fit/fit.h): a split-vs-replicated table jointly (GEMM and
 * gather parameters against both columns), a GEMM table, an all-gather table or an
 * nccl-tests log.  Prints each fitted parameter with its 95% interval, each point's measured
 * value, model value and relative residual (and, for split tables, the derived gather time
 * with its standard error and backend), and summary statistics; --loo adds the
 * leave-one-out error of every point (the point predicted by a fit without it).
 * -o FIT saves the fit (src/io/fitfile.h; one FILE only) through a temporary file renamed into
 * place.  All files are fitted before anything is printed or written.
 * `fit --loo-gpu` and `fit --xgpu` (src/cli/cmd_loo.c, cmd_xgpu.c) are subcommands of their own
 * in main.c's dispatch table: the word right after `fit` selects them.
 * Exit: 0 ok; 1 a fit did not converge or its parameters are not identifiable; 2 usage or
 * input error (bad file, too few points for the parameters). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "src/cli/cmdopt.h"
#include "src/io/fitfile.h"
#include "src/evidence/fit_from_file.h"
#include "src/base/jsonout.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"

static void print_text(const char *file, const tps_fit *f, int loo) {
  printf("# fit of %s: %s", file, tps_fit_kind_name(f->kind));
  if (f->kind != TPS_FIT_ALLGATHER)
    printf(", %s, %s, K=%ld N=%ld", f->gpu, f->gemm.path ? f->gemm.path->name : "-", f->shape.k, f->shape.n);
  else
    printf(", %s", f->gpu);
  if (f->kind != TPS_FIT_GEMM) printf(", %d ranks", f->tp);
  printf("\n# %zu points, %d parameters, dof %d, %d iterations, rcond %.3g\n", f->npts, f->npar, f->dof,
         f->iterations, f->rcond);
  printf("%-22s %12s %12s %12s %12s\n", "parameter", "value", "se", "lo95", "hi95");
  for (int j = 0; j < f->npar; j++)
    printf("%-22s %12.6g %12.4g %12.6g %12.6g\n", f->par_name[j], f->theta[j], f->se[j], f->lo95[j], f->hi95[j]);
  if (f->fixed_note[0]) printf("# fixed: %s\n", f->fixed_note);
  int split = f->kind == TPS_FIT_SPLIT;
  printf("%-10s %12s %12s %12s %10s", "series", f->kind == TPS_FIT_ALLGATHER ? "bytes" : split ? "tokens" : "rows",
         "measured_us", "model_us", "rel_resid");
  if (loo) printf(" %10s", "loo_rel");
  if (split) printf(" %10s %12s %8s", "gather_us", "gather_se_us", "backend");
  printf("\n");
  for (size_t i = 0; i < f->npts; i++) {
    const tps_fit_point *p = &f->pt[i];
    printf("%-10s %12.0f %12.4g %12.4g %+10.4f", tps_fit_series_name(f, p->series), p->x, p->measured_us,
           p->model_us, p->rel_resid);
    if (loo) printf(" %+10.4f", p->loo_rel);
    if (split) {
      if (p->series == 1) printf(" %10.4g %12.3g %8s", p->gather_us, p->gather_se_us, tps_gather_name(p->backend));
      else printf(" %10s %12s %8s", "-", "-", "-");
    }
    printf("\n");
  }
  printf("# summary: median |rel resid| %.2f%%, max %.2f%%, rms %.2f%%\n", 100 * f->med_abs_rel,
         100 * f->max_abs_rel, 100 * f->rms_rel);
  if (loo)
    printf("# leave-one-out: median |rel error| %.2f%%, max %.2f%% (%d refits failed)\n", 100 * f->loo_med_abs,
           100 * f->loo_max_abs, f->loo_failed);
}

static json_t *to_json(const char *file, const tps_fit *f, int loo) {
  json_t *o = json_object(), *pars = json_array(), *pts = json_array(), *sum = json_object();
  json_object_set_new(o, "file", json_string(file));
  json_object_set_new(o, "kind", json_string(tps_fit_kind_name(f->kind)));
  json_object_set_new(o, "gpu", json_string(f->gpu));
  json_object_set_new(o, "path", f->gemm.path ? json_string(f->gemm.path->name) : json_null());
  json_object_set_new(o, "tp", json_integer(f->tp));
  json_object_set_new(o, "fixed", json_string(f->fixed_note));
  for (int j = 0; j < f->npar; j++) {
    json_t *p = json_object();
    json_object_set_new(p, "name", json_string(f->par_name[j]));
    tps_json_set_num(p, "value", f->theta[j]);
    tps_json_set_num(p, "se", f->se[j]);
    tps_json_set_num(p, "lo95", f->lo95[j]);
    tps_json_set_num(p, "hi95", f->hi95[j]);
    json_array_append_new(pars, p);
  }
  for (size_t i = 0; i < f->npts; i++) {
    const tps_fit_point *p = &f->pt[i];
    json_t *q = json_object();
    json_object_set_new(q, "series", json_string(tps_fit_series_name(f, p->series)));
    tps_json_set_num(q, "x", p->x);
    tps_json_set_num(q, "measured_us", p->measured_us);
    tps_json_set_num(q, "model_us", p->model_us);
    tps_json_set_num(q, "rel_resid", p->rel_resid);
    tps_json_set_num(q, "loo_rel", p->loo_rel);
    tps_json_set_num(q, "gather_us", p->gather_us);
    tps_json_set_num(q, "gather_se_us", p->gather_se_us);
    json_object_set_new(q, "backend", p->backend >= 0 ? json_string(tps_gather_name(p->backend)) : json_null());
    json_array_append_new(pts, q);
  }
  json_object_set_new(sum, "n_points", json_integer((json_int_t)f->npts));
  json_object_set_new(sum, "n_parameters", json_integer(f->npar));
  json_object_set_new(sum, "dof", json_integer(f->dof));
  json_object_set_new(sum, "iterations", json_integer(f->iterations));
  tps_json_set_num(sum, "median_abs_rel", f->med_abs_rel);
  tps_json_set_num(sum, "max_abs_rel", f->max_abs_rel);
  tps_json_set_num(sum, "rms_rel", f->rms_rel);
  tps_json_set_num(sum, "chi2", f->chi2);
  tps_json_set_num(sum, "t975", f->tq);
  tps_json_set_num(sum, "rcond", f->rcond);
  tps_json_set_num(sum, "loo_median_abs", loo ? f->loo_med_abs : NAN);
  tps_json_set_num(sum, "loo_max_abs", loo ? f->loo_max_abs : NAN);
  json_object_set_new(sum, "loo_failed", json_integer(f->loo_failed));
  json_object_set_new(o, "parameters", pars);
  json_object_set_new(o, "points", pts);
  json_object_set_new(o, "summary", sum);
  return o;
}

int cmd_fit(int argc, char **argv) {
  const char *gpus = NULL;
  int loo = 0, timing = 0;
  long max_iter = 400;
  const tps_cmdopt own[] = {
    {.name = "loo", .kind = TPS_ARG_FLAG, .dst = &loo,
     .help = "also refit without each point and report its prediction error"},
    {.name = "gpus-file", .kind = TPS_ARG_STR, .io = TPS_IO_IN, .metavar = "FILE", .dst = &gpus,
     .help = "GPU table (default: the bundled gpus.tsv)"},
    {.name = "max-iter", .kind = TPS_ARG_LONG, .metavar = "N", .dst = &max_iter, .min = 1, .max = 100000,
     .help = "iterations of the solver per start"},
    {.name = "time", .kind = TPS_ARG_FLAG, .dst = &timing,
     .help = "print the wall time of reading and fitting all FILEs to stderr"},
  };
  const tps_cmdspec spec = {
    .name = "fit",
    .synopsis = "FILE... [-o FIT] [--json] [--loo] [--gpu NAME] [--gpus-file FILE]",
    .about = "Fit GEMM and all-gather latency models to measurements, with 95% intervals.\n\n"
             "FILE is a split-vs-replicated table (GEMM and gather parameters fitted jointly to\n"
             "both columns), a GEMM table, an all-gather table, or an nccl-tests all_gather_perf\n"
             "log.  Each FILE is fitted on its own, minimizing relative residuals\n"
             "(model - measured) / measured; intervals are value +- t(0.975, dof) * se.",
    .common = TPS_OPT(TPS_OI_GPU) | TPS_OPT(TPS_OI_JSON) | TPS_OPT(TPS_OI_OUTPUT),
    .args = "FILE...",
    .args_min = 1,
    .output_single = 1,
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .output_metavar = "FIT",
    .text = {[TPS_OI_GPU] = "the measured GPU (default: the file's '#@ gpu')",
             [TPS_OI_JSON] = "print JSON: parameters, points, summary (NaN as null)",
             [TPS_OI_OUTPUT] = "save the fit (JSON, schema in doc/formats.md; read back by predict --fit, validate); one FILE only"},
    .notes = "On the bundled data instead of FILEs, two subcommands of their own:\n"
             "  tpsplit fit --loo-gpu [--json] [--only PART] [--hold-out GPU]   leave each GPU out of the\n"
             "      cross-GPU models and predict it from the others (`tpsplit fit --loo-gpu --help`)\n"
             "  tpsplit fit --xgpu -o FIT   fit the cross-GPU models predictions use (data/xgpu.fit;\n"
             "      `tpsplit fit --xgpu --help`)",
    .exit_status = "0 ok, 1 a fit did not converge (or its parameters are not identifiable), 2 usage or input "
                   "error (bad file, too few points).",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  v.tp = 0;
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;
  const int json = v.json;
  const char *out = v.output, *gpu = v.gpu;
  tps_fit_opts fo = {loo, (int)max_iter};
  int nfiles = v.nargs;
  char **files = v.args;
  tps_fit *f = calloc((size_t)nfiles, sizeof *f);
  if (!f) { tps_die_msg("out of memory"); return TPS_EXIT_FAIL; }
  int rc = TPS_EXIT_OK;
  tps_err e;
  tps_err_clear(&e);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < nfiles && rc == TPS_EXIT_OK; i++) {
    int status;
    if (tps_fit_file(files[i], gpu, gpus, &fo, &f[i], &status, &e) != 0) {
      tps_err_print(&e);
      rc = tps_status_exit(status);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (timing && rc == TPS_EXIT_OK)
    tps_die_msg("%d file(s) read and fitted in %.4f s", nfiles,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  if (rc == TPS_EXIT_OK && out) {
    const char *src[1] = {files[0]};
    if (tps_fitfile_save(out, &f[0], src, 1, &e) != 0) { tps_err_print(&e); rc = tps_err_exit_code(&e); }
  }
  if (rc == TPS_EXIT_OK) {
    if (json) {
      json_t *root;
      if (nfiles == 1) root = to_json(files[0], &f[0], fo.loo);
      else {
        json_t *arr = json_array();
        for (int i = 0; i < nfiles; i++) json_array_append_new(arr, to_json(files[i], &f[i], fo.loo));
        root = json_object();
        json_object_set_new(root, "fits", arr);
      }
      if (tps_json_print(root)) rc = TPS_EXIT_FAIL;
    } else {
      for (int i = 0; i < nfiles; i++) {
        if (i) printf("\n");
        print_text(files[i], &f[i], fo.loo);
      }
    }
  }
  free(f);
  return rc;
}
