/* cmd_crossover.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_crossover(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("crossover: not implemented yet");
  return TPS_EXIT_FAIL;
}
