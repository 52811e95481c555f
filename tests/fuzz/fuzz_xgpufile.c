/* fuzz_xgpufile.c: the cross-GPU fits file (src/io/xgpufile.c tps_xgpu_read_mem), with the
 * round trip: a file the reader accepts is written back byte for byte, and what was written
 * parses to the same fits (parse -> write -> parse -> equal).  Seed: data/xgpu.fit. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/xgpufile.h"
#include "tests/fuzz/fuzz.h"

static tps_xgpu_file a, b; /* large: not on the stack */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_err e;
  tps_err_clear(&e);
  if (tps_xgpu_read_mem("x.fit", (const char *)data, size, &a, &e) != 0) return 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  if (!fp) abort();
  int wrc = tps_xgpu_write(fp, &a);
  fclose(fp);
  if (wrc != 0 || len != size || memcmp(buf, data, size) != 0) {
    fprintf(stderr, "an accepted cross-GPU fits file is not written back byte for byte\n");
    abort();
  }
  if (tps_xgpu_read_mem("written.fit", buf, len, &b, &e) != 0 || memcmp(&a, &b, sizeof a) != 0) {
    fprintf(stderr, "a cross-GPU fits file tpsplit wrote does not read back the same: %s\n", e.msg);
    abort();
  }
  free(buf);
  return 0;
}
