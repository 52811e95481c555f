/* cmd_inspect.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_inspect(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("inspect: not implemented yet");
  return TPS_EXIT_FAIL;
}
