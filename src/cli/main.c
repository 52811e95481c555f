/* main.c: `tpsplit <command> [options]`, git-style dispatch.
 *
 * Each command lives in src/cmd_<name>.c and parses its own options.  `tpsplit` with no
 * command runs the main job (src/cli/cmd_default.c).  LC_NUMERIC stays "C" everywhere: the
 * program never calls setlocale, so printf and strtod use '.' as the decimal point. */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include "src/cli/cmdopt.h"
#include "src/cli/envvars.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"

/* The dispatch table.  A row with a `mode` is a subcommand: `tpsplit NAME MODE [options]`,
 * MODE the word right after NAME (never searched for further on); it gets argv from MODE on
 * and is listed in NAME's --help, not here. */
static const struct {
  const char *name;
  const char *mode;
  tps_cmd_fn fn;
  const char *help;
} commands[] = {
  {"inspect", NULL, cmd_inspect, "print measurement files normalized, with derived columns"},
  {"fit", "--loo-gpu", cmd_fit_loo_gpu, "leave one GPU out of the cross-GPU models (bundled data)"},
  {"fit", "--xgpu", cmd_fit_xgpu, "fit the cross-GPU models predictions use (data/xgpu.fit)"},
  {"fit", NULL, cmd_fit, "fit GEMM and all-gather latency models to measurements"},
  {"predict", NULL, cmd_predict, "predict replicated vs split latency for a GPU, TP and path"},
  {"crossover", NULL, cmd_crossover, "break-even tokens and thresholds over GPU x TP x path"},
  {"plot", NULL, cmd_plot, "write speedup, latency, crossover and fit-quality figures (gnuplot)"},
  {"simulate", NULL, cmd_simulate, "per-layer, per-chunk and time-to-first-token effect on a model"},
  {"decide", NULL, cmd_decide, "apply the split gate to one configuration (exit 0 split, 1 not)"},
  {"bench", NULL, cmd_bench, "measure GEMM paths, split vs replicated and all-gather on GPUs"},
  {"validate", NULL, cmd_validate, "compare predictions with measurements"},
  {"calibrate", NULL, cmd_calibrate, "measure this machine briefly and write the engine-facing thresholds file"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage_text(FILE *fp) {
  fprintf(fp,
          "Usage: tpsplit [--help] [--version] [<command> [options] [args]]\n"
          "Decide when to split a tensor-parallel projection by token (each rank multiplies\n"
          "1/TP of the tokens, then an all-gather rebuilds the output) instead of computing\n"
          "it redundantly on every rank.\n\n"
          "With no command, the main job: fit the bundled measurements, print the answer and\n"
          "the crossover grid for the bundled GPUs and write the plots:\n"
          "  tpsplit [-o DIR] [--json] [--samples N] [--seed S] [--no-plots]\n"
          "(its options: `tpsplit --no-plots --help`; a command's: `tpsplit COMMAND --help`).\n"
          "Long options are never abbreviated (--gpus is not --gpus-file).\n\n"
          "Commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (!commands[i].mode) fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].help);
  fprintf(fp,
          "\n`tpsplit help COMMAND` is `tpsplit COMMAND --help`.\n"
          "Every command that produces results takes --json.\n");
  tps_cmdopt_env_help(fp, NULL);
  fprintf(fp,
          "\nExit status (every command; src/base/exit.h):\n"
          "  0    ok (decide: split; validate: within tolerance)\n"
          "  1    the task failed or its verdict is negative (decide: no split; validate:\n"
          "       outside tolerance; a fit that did not converge; a failed GPU check; no\n"
          "       GPU for bench or calibrate), or the machine ran out of memory or disk\n"
          "  2    usage or input error: a bad option or value, a missing, unreadable or\n"
          "       malformed input, an output that cannot be created; nothing written\n"
          "  77   the tests only: skipped (no GPU)\n"
          "  130, 143  interrupted by SIGINT, SIGTERM (temporary files removed)\n\n"
          "Report bugs to: %s\n",
          PACKAGE_BUGREPORT);
}
/* --help within 80 columns */
static void usage(FILE *fp) { tps_cmdopt_fitted_from(fp, usage_text); }

static void version(void) {
  printf("tpsplit (%s) %s\n"
         "Copyright (C) 2026 the tpsplit authors.\n"
         "License: MIT.  This is free software: you are free to change and redistribute it.\n"
         "There is NO WARRANTY, to the extent permitted by law.\n",
         PACKAGE_NAME, PACKAGE_VERSION);
}

static int run(int argc, char **argv) {
  if (argc < 2) return tps_env_check("main") ? TPS_EXIT_USAGE : cmd_default(argc, argv);
  const char *cmd = argv[1];
  if (cmd[0] == '-') {
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) { usage(stdout); return TPS_EXIT_OK; }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) { version(); return TPS_EXIT_OK; }
    /* options of the main job, e.g. `tpsplit --json` or `tpsplit -o DIR` */
    if (tps_env_check("main")) return TPS_EXIT_USAGE;
    return cmd_default(argc, argv);
  }
  if (strcmp(cmd, "help") == 0) {
    if (argc < 3) { usage(stdout); return TPS_EXIT_OK; }
    for (size_t i = 0; i < NCOMMANDS; i++)
      if (strcmp(argv[2], commands[i].name) == 0 && (!commands[i].mode || (argc > 3 && !strcmp(argv[3], commands[i].mode)))) {
        char *av[] = {argv[2], (char *)"--help", NULL};
        optind = 0;
        tps_err_command(argv[2]);
        return commands[i].fn(2, av);
      }
    tps_usage_msg("unknown command '%s'", argv[2]);
    return TPS_EXIT_USAGE;
  }
  for (size_t i = 0; i < NCOMMANDS; i++) {
    if (strcmp(cmd, commands[i].name) != 0) continue;
    optind = 0;
    int mode = commands[i].mode && argc > 2 && !strcmp(argv[2], commands[i].mode);
    if (commands[i].mode && !mode) continue;
    char name[64];
    snprintf(name, sizeof name, "%s%s%s", cmd, mode ? " " : "", mode ? commands[i].mode : "");
    tps_err_command(name);
    if (tps_env_check(cmd)) return TPS_EXIT_USAGE;
    return mode ? commands[i].fn(argc - 2, argv + 2) : commands[i].fn(argc - 1, argv + 1);
  }
  tps_usage_msg("unknown command '%s'", cmd);
  return TPS_EXIT_USAGE;
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  tps_set_cmdline(argc, argv);
  int rc = run(argc, argv);
  if (tps_close_stdout() != 0 && rc == 0) rc = TPS_EXIT_FAIL;
  return rc;
}
