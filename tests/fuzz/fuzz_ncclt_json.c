/* fuzz_ncclt_json.c: nccl-tests -J JSON files (src/io/ncclt.c tps_ncclt_read_json_mem, jansson
 * underneath).  Seeds: the JSON logs of tests/data/ncclt and tests/data/bad. */
#include "config.h"
#include <stdlib.h>
#include "tests/fuzz/fuzz.h"
#include "src/io/ncclt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_ncclt log;
  tps_err e;
  tps_err_clear(&e);
  if (tps_ncclt_read_json_mem("log.json", (const char *)data, size, &log, &e) == 0) {
    if (log.n == 0 || log.nranks < 1 || log.nranks > 65536) abort();
    tps_ncclt_free(&log);
  }
  return 0;
}
