/* cmd_predict.c: placeholder until the command is written. */
#include "tpsplit.h"
#include "err.h"
int cmd_predict(int argc, char **argv) {
  (void)argc; (void)argv;
  tps_die_msg("predict: not implemented yet");
  return TPS_EXIT_FAIL;
}
