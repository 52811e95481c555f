/* fuzz_fitfile.c: saved fits (src/io/fitfile.c tps_fitfile_read_mem), with the write/read round
 * trip: a fit tpsplit wrote must read back with the same model.  Seeds: tests/fuzz/seeds/fit
 * (fits of the bundled tables), the .fit files of tests/data/bad. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/fitfile.h"
#include "tests/fuzz/fuzz.h"

static tps_fit a, b; /* large: not on the stack */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_err e;
  tps_err_clear(&e);
  if (tps_fitfile_read_mem("x.fit", (const char *)data, size, &a, &e) != 0) return 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  if (!fp) return 0;
  int wrc = tps_fitfile_write(fp, &a, NULL, 0);
  fclose(fp);
  if (wrc == 0) {
    tps_err_clear(&e);
    if (tps_fitfile_read_mem("written.fit", buf, len, &b, &e) != 0) {
      fprintf(stderr, "a fit tpsplit wrote does not read back: %s\n", e.msg);
      abort();
    }
    if (a.kind != b.kind || a.npar != b.npar || a.npts != b.npts || memcmp(a.gemm.p, b.gemm.p, sizeof a.gemm.p) != 0 ||
        memcmp(a.theta, b.theta, sizeof a.theta) != 0)
      abort();
  }
  free(buf);
  return 0;
}
