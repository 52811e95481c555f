/* cmd_decide.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_decide(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("decide: not implemented yet");
  return TPS_EXIT_FAIL;
}
