/* status.c: names and exit codes of tps_status (status.h). */
#include "model/core/status.h"

const char *tps_strstatus(int status) {
  switch (status) {
  case TPS_OK: return "ok";
  case TPS_ERR: return "failed";
  case TPS_EINVAL: return "invalid argument or impossible configuration";
  case TPS_EBADDATA: return "bad data";
  case TPS_ETOOFEW: return "too few points for the parameters";
  case TPS_ENOCONV: return "the fit did not converge";
  case TPS_ESINGULAR: return "parameters not identifiable by the data";
  case TPS_ENOMEM: return "out of memory";
  case TPS_NA: return "not applicable";
  case TPS_ECOST: return "a cost evaluation failed";
  case TPS_SKIP: return "skipped";
  default: return "unknown status";
  }
}

int tps_status_exit(int status) {
  switch (status) {
  case TPS_OK: return 0;
  case TPS_EINVAL: case TPS_EBADDATA: case TPS_ETOOFEW: return 2;
  case TPS_SKIP: return 77;
  default: return 1;
  }
}
