/* cmd_crossover.c: `tpsplit crossover`: the grid GPU x TP x kernel path with the
 * break-even, its 90% interval and the recommended threshold (see model/predict.h). */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpsplit.h"
#include "err.h"
#include "jsonout.h"
#include "predcli.h"
#include "util.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "Usage: tpsplit crossover [--gpus LIST] [--tp LIST] [--paths LIST] [options]\n"
          "Break-even tokens (smallest T from which the split always wins up to --max-tokens,\n"
          "on every integer T), its 90%% interval and the recommended threshold, for every\n"
          "GPU x TP x kernel path.  Cells where a path cannot run print n/a and why.\n\n"
          "Options:\n"
          "  --gpus LIST        GPUs (default: every GPU of the table)\n"
          "  --tp LIST          TP sizes (default 2,4,8,16; 16 spans two 8-GPU nodes)\n"
          "  --paths LIST       kernel paths (default marlin-w8a16,dense-bf16,native-fp8)\n"
          "  --fit FIT          reference fit (default: fit the bundled H20 table)\n"
          "  --scaling S        model (default), spec, pessimistic (see tpsplit predict --help)\n"
          "  --gather B         auto (default), nccl, custom\n"
          "  --cap-bytes B      per-rank cap of the custom gather (default 2097152)\n"
          "  --ib-gbps X        per-GPU inter-node bandwidth, Gb/s (default 400)\n"
          "  --max-tokens N     largest T (default 16384)\n"
          "  --round R          threshold = next multiple of R (default: next power of two)\n"
          "  --samples N        bootstrap samples per cell (default 200)\n"
          "  --seed S           random seed (default 1)\n"
          "  --gpus-file F      GPU table (default: the bundled data/gpus.tsv)\n"
          "  --json             JSON: {\"cells\": [{gpu, tp, path, breakeven_tokens (null: never),\n"
          "                     breakeven_lo, breakeven_hi, threshold_tokens}], \"not_applicable\": [...]}\n"
          "  --help, --version\n\n"
          "Exit status: 0 ok; 1 the reference fit failed; 2 usage or input error.\n");
}

enum { OPT_GPUS = 256, OPT_TP, OPT_PATHS, OPT_FIT, OPT_SCALING, OPT_GATHER, OPT_CAP, OPT_IB, OPT_MAX, OPT_ROUND,
       OPT_SAMPLES, OPT_SEED, OPT_GPUS_FILE, OPT_JSON, OPT_HELP, OPT_VERSION };

int cmd_crossover(int argc, char **argv) {
  static const struct option opts[] = {
    {"gpus", required_argument, 0, OPT_GPUS}, {"tp", required_argument, 0, OPT_TP},
    {"paths", required_argument, 0, OPT_PATHS}, {"fit", required_argument, 0, OPT_FIT},
    {"scaling", required_argument, 0, TPS_PCO_SCALING}, {"gather", required_argument, 0, TPS_PCO_GATHER},
    {"cap-bytes", required_argument, 0, TPS_PCO_CAP}, {"ib-gbps", required_argument, 0, TPS_PCO_IB},
    {"max-tokens", required_argument, 0, OPT_MAX}, {"round", required_argument, 0, TPS_PCO_ROUND},
    {"samples", required_argument, 0, TPS_PCO_SAMPLES}, {"seed", required_argument, 0, TPS_PCO_SEED},
    {"gpus-file", required_argument, 0, OPT_GPUS_FILE}, {"json", no_argument, 0, OPT_JSON},
    {"help", no_argument, 0, OPT_HELP}, {"version", no_argument, 0, OPT_VERSION}, {0, 0, 0, 0}};
  const char *gpus_arg = NULL, *tp_arg = "2,4,8,16", *paths_arg = NULL, *fit_file = NULL, *gpus_file = NULL;
  long tmax = TPS_PRED_DEFAULT_TMAX, rounding = 0, samples = 0, seed = 1;
  int scaling = TPS_SCALING_MODEL, json = 0;
  tps_pred_opts po;
  tps_pred_opts_default(&po);
  tps_pco pco = {scaling, &po, rounding, samples, seed};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case OPT_GPUS: gpus_arg = optarg; break;
    case OPT_TP: tp_arg = optarg; break;
    case OPT_PATHS: paths_arg = optarg; break;
    case OPT_FIT: fit_file = optarg; break;
    case OPT_MAX:
      if (tps_parse_long(optarg, &tmax) || tmax < 1 || tmax > TPS_PRED_MAX_TMAX) { tps_die_msg("crossover: bad --max-tokens '%s' (1..%ld)", optarg, TPS_PRED_MAX_TMAX); return TPS_EXIT_USAGE; }
      break;
    case OPT_GPUS_FILE: gpus_file = optarg; break;
    case OPT_JSON: json = 1; break;
    case OPT_HELP: usage(stdout); return TPS_EXIT_OK;
    case OPT_VERSION: return tps_print_version("crossover");
    default:
      if (c >= TPS_PCO_SCALING && c < TPS_PCO_END) {
        if (tps_pco_parse(&pco, "crossover", c, optarg)) return TPS_EXIT_USAGE;
        break;
      }
      usage(stderr);
      return TPS_EXIT_USAGE;
    }
  }
  scaling = pco.scaling; rounding = pco.rounding; samples = pco.samples; seed = pco.seed;
  if (optind < argc) { tps_die_msg("crossover: unexpected argument '%s'", argv[optind]); return TPS_EXIT_USAGE; }
  if (fit_file && scaling != TPS_SCALING_MODEL) { tps_die_msg("crossover: --fit goes with --scaling model"); return TPS_EXIT_USAGE; }

  int *tps = NULL;
  size_t ntp = 0, ngpu = 0, npath = 0, nnames = 0;
  char **names = NULL;
  const tps_gpu **gpus = NULL;
  const tps_path **paths = NULL;
  tps_predref ref;
  tps_grid g;
  memset(&ref, 0, sizeof ref);
  memset(&g, 0, sizeof g);
  int rc = TPS_EXIT_USAGE, fit_failed = 0;
  tps_err e;
  tps_err_clear(&e);
  if (tps_parse_tp_list(tp_arg, &tps, &ntp) != 0) { tps_die_msg("crossover: bad --tp '%s' (e.g. 2,4,8,16)", tp_arg); goto done; }
  if (paths_arg) {
    if (tps_parse_list(paths_arg, &names, &nnames) != 0 || !nnames) { tps_die_msg("crossover: bad --paths '%s'", paths_arg); goto done; }
    paths = calloc(nnames, sizeof *paths);
    for (size_t i = 0; paths && i < nnames; i++)
      if (!(paths[npath++] = tps_path_find_for(names[i], TPS_PATH_F_MODEL))) {
        char why[320];
        tps_die_msg("crossover: --paths: %s", tps_path_unknown(names[i], TPS_PATH_F_MODEL, why, sizeof why));
        goto done;
      }
    tps_free_list(names, nnames);
    names = NULL;
  } else {
    paths = calloc(TPS_NPATHS, sizeof *paths);
    if (paths) npath = tps_path_select(TPS_PATH_F_MODEL, paths, TPS_NPATHS);
  }
  if (!paths) goto done;
  if (tps_predref_load(&ref, scaling, fit_file, gpus_file, &fit_failed, &e) != 0) {
    tps_err_print(&e);
    rc = fit_failed ? TPS_EXIT_FAIL : TPS_EXIT_USAGE;
    goto done;
  }
  if (gpus_arg) {
    if (tps_parse_list(gpus_arg, &names, &nnames) != 0 || !nnames) { tps_die_msg("crossover: bad --gpus '%s'", gpus_arg); goto done; }
    gpus = calloc(nnames, sizeof *gpus);
    for (size_t i = 0; gpus && i < nnames; i++)
      if (!(gpus[ngpu++] = tps_gpus_find(&ref.gpus, names[i], &e))) { tps_err_print(&e); goto done; }
  } else {
    gpus = calloc(ref.gpus.n, sizeof *gpus);
    for (size_t i = 0; gpus && i < ref.gpus.n; i++) gpus[ngpu++] = &ref.gpus.gpu[i];
  }
  if (!gpus) goto done;
  tps_unc_opts uo = {(int)samples, (unsigned long)seed, TPS_INTERVAL_LEVEL};
  if (tps_grid_run(&ref, scaling, gpus, ngpu, tps, ntp, paths, npath, &po, &uo, tmax, rounding, &g, &e) != 0) {
    tps_err_print(&e);
    rc = TPS_EXIT_FAIL;
    goto done;
  }
  if (json) {
    rc = tps_json_print(tps_grid_json(&g)) == 0 ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  } else {
    char desc[4400];
    tps_predref_describe(&ref, scaling, desc, sizeof desc);
    printf("# %s\n# break-even on T = 1..%ld; interval: %.0f%%, %s\n", desc, tmax, 100 * uo.level,
           scaling == TPS_SCALING_PESSIMISTIC ? "none (a rule)" : scaling == TPS_SCALING_MODEL
               ? "parametric bootstrap of the fit (+ path priors when transferred)" : "priors' lognormal spread");
    tps_grid_print(&g);
    rc = TPS_EXIT_OK;
  }
done:
  if (names) tps_free_list(names, nnames);
  free(tps);
  free(gpus);
  free(paths);
  tps_grid_free(&g);
  tps_predref_free(&ref);
  return rc;
}
