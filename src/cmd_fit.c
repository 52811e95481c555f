/* cmd_fit.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_fit(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("fit: not implemented yet");
  return TPS_EXIT_FAIL;
}
