/* fuzz_modeldesc.c: model descriptions (src/io/modeldesc.c tps_modeldesc_read_mem).
 * Seeds: data/models, the model_ files of tests/data/bad. */
#include "config.h"
#include <stdlib.h>
#include "tests/fuzz/fuzz.h"
#include "src/io/modeldesc.h"

static tps_sim_model m;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_err e;
  tps_err_clear(&e);
  if (tps_modeldesc_read_mem("model.tsv", (const char *)data, size, &m, &e) == 0) {
    if (m.nproj == 0 || m.layers < 1 || m.hidden < 1) abort();
  }
  return 0;
}
