/* cmd_validate.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_validate(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("validate: not implemented yet");
  return TPS_EXIT_FAIL;
}
