/* fuzz_fitfile.c: saved fits (src/io/fitfile_read.c tps_fitfile_read_prov), with the round
 * trip: a fit file the reader accepts is written back by the writer byte for byte, and what
 * was written parses to the same fit and provenance (parse -> write -> parse -> equal).
 * Seeds: tests/fuzz/seeds/fit (fits of the bundled tables), the .fit files of tests/data/bad. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/fitfile.h"
#include "tests/fuzz/fuzz.h"

static tps_fit a, b; /* large: not on the stack */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_err e;
  tps_fitfile_prov pa, pb;
  tps_err_clear(&e);
  if (tps_fitfile_read_prov("x.fit", (const char *)data, size, &a, &pa, &e) != 0) return 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  if (!fp) abort();
  int wrc = tps_fitfile_write_prov(fp, &a, &pa);
  fclose(fp);
  if (wrc != 0) abort();
  if (len != size || memcmp(buf, data, size) != 0) {
    fprintf(stderr, "an accepted fit file is not written back byte for byte\n");
    abort();
  }
  tps_err_clear(&e);
  if (tps_fitfile_read_prov("written.fit", buf, len, &b, &pb, &e) != 0) {
    fprintf(stderr, "a fit tpsplit wrote does not read back: %s\n", e.msg);
    abort();
  }
  if (memcmp(&a, &b, sizeof a) != 0 || strcmp(pa.written_by, pb.written_by) != 0 || pa.nsources != pb.nsources) abort();
  for (size_t i = 0; i < pa.nsources; i++)
    if (strcmp(pa.sources[i], pb.sources[i]) != 0) abort();
  tps_fitfile_prov_free(&pa);
  tps_fitfile_prov_free(&pb);
  free(buf);
  return 0;
}
