/* tpsplit.h: the command table and the exit codes shared by every command.
 *
 * Exit codes (documented in --help and the man page):
 *   0  ok (for `decide`: split)
 *   1  the task ran but failed or its verdict is negative (validation outside tolerance,
 *      `decide`: do not split, a bench whose correctness check failed, a fit that did not converge)
 *   2  usage or input error (bad option, missing/malformed file, unknown GPU, impossible TP)
 */
#ifndef TPS_TPSPLIT_H
#define TPS_TPSPLIT_H

#ifdef __cplusplus
extern "C" {
#endif

enum { TPS_EXIT_OK = 0, TPS_EXIT_FAIL = 1, TPS_EXIT_USAGE = 2 };

/* One entry per subcommand; each lives in src/cmd_<name>.c (bench in src/cli/cmd_bench.c).
 * A command parses its options with the one parser of src/cli/cmdopt.h (the bench targets with
 * getopt_long: the caller resets optind to 0), prints --help to stdout, and returns an
 * exit code. */
typedef int (*tps_cmd_fn)(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_crossover(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_decide(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
/* `tpsplit` with no command: fit the bundled data, print the crossover grid, write plots. */
int cmd_default(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
