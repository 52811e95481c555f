/* cmd_simulate.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_simulate(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("simulate: not implemented yet");
  return TPS_EXIT_FAIL;
}
