/* fuzz_measure.c: the one measurement loader (src/io/measure.c tps_meas_load_mem): any bytes
 * are sniffed and read by one registered format or refused.  Properties: what is read has the
 * member its kind names; a table read by any format, written as our TSV, is read back by the
 * loader as a table of the same kind and row count.  Seeds: every format's seeds. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/measure.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_err e;
  tps_meas m, r;
  tps_err_clear(&e);
  if (tps_meas_load_mem("x", (const char *)data, size, NULL, &m, &e) != 0) return 0;
  if (!m.format || (m.kind == TPS_MEAS_FIT && !m.fit) || (m.kind == TPS_MEAS_AIC && !m.aic.nrows) ||
      (m.kind == TPS_MEAS_TABLE && !m.tab.nrows))
    abort();
  if (m.kind == TPS_MEAS_TABLE) {
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) abort();
    int wrc = tps_table_write(fp, &m.tab);
    fclose(fp);
    if (wrc) abort();
    if (tps_meas_load_mem("written.tsv", buf, len, NULL, &r, &e) != 0) {
      fprintf(stderr, "a table tpsplit wrote does not read back: %s\n", e.msg);
      abort();
    }
    if (r.kind != TPS_MEAS_TABLE || r.tab.kind != m.tab.kind || r.tab.nrows != m.tab.nrows) abort();
    tps_meas_free(&r);
    free(buf);
  }
  tps_meas_free(&m);
  return 0;
}
