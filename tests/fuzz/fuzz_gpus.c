/* fuzz_gpus.c: GPU tables (src/io/gpus.c tps_gpus_load_mem); every GPU read must be found again
 * by its name.  Seeds: data/gpus.tsv, the gpus_ tables of tests/data/bad. */
#include "config.h"
#include <stdlib.h>
#include "tests/fuzz/fuzz.h"
#include "src/io/gpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_gpu_table t;
  tps_err e;
  tps_err_clear(&e);
  if (tps_gpus_load_mem("gpus.tsv", (const char *)data, size, &t, &e) != 0) return 0;
  for (size_t i = 0; i < t.n; i++) {
    tps_err_clear(&e);
    if (tps_gpus_find(&t, t.gpu[i].name, &e) != &t.gpu[i]) abort();
    if (t.gpu[i].sms < 1 || !(t.gpu[i].hbm_gbps >= 1) || !(t.gpu[i].link_gbps > 0)) abort();
  }
  tps_gpus_free(&t);
  return 0;
}
