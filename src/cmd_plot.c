/* cmd_plot.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_plot(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("plot: not implemented yet");
  return TPS_EXIT_FAIL;
}
