/* cmd_default.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_default(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("default: not implemented yet");
  return TPS_EXIT_FAIL;
}
