/* tpsplit.h: the command table and the exit codes shared by every command.
 */
#ifndef TPS_TPSPLIT_H
#define TPS_TPSPLIT_H
#include "src/base/exit.h"

#ifdef __cplusplus
extern "C" {
#endif


/* One entry per subcommand; each lives in src/cli/cmd_<name>.c (bench in src/cli/cmd_bench.c).
 * A command parses its options with the one parser of src/cli/cmdopt.h (the bench targets and
 * the subcommands `fit --loo-gpu`, `fit --xgpu` too), prints --help to stdout, and returns an
 * exit code. */
typedef int (*tps_cmd_fn)(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_fit_loo_gpu(int argc, char **argv); /* `fit --loo-gpu` (src/cli/cmd_loo.c) */
int cmd_fit_xgpu(int argc, char **argv);    /* `fit --xgpu` (src/cli/cmd_xgpu.c) */
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
