/* table_common.h: the table harnesses (split and bench tables) read any bytes as
 * tps_table_read does, then write what they read (tps_table_write) and read that back: a
 * table tpsplit wrote must always read back with the same rows and values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/fuzz/fuzz.h"
#include "src/io/table.h"

static int same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static void table_roundtrip(const char *name, const uint8_t *data, size_t size) {
  tps_table t, u;
  tps_err e;
  tps_err_clear(&e);
  if (tps_table_read_mem(name, (const char *)data, size, &t, &e) != 0) return;
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  if (!fp) { tps_table_free(&t); return; }
  int wrc = tps_table_write(fp, &t);
  fclose(fp);
  if (wrc == 0) {
    tps_err_clear(&e);
    if (tps_table_read_mem("written", buf, len, &u, &e) != 0) {
      fprintf(stderr, "a table tpsplit wrote does not read back: %s\n", e.msg);
      abort();
    }
    if (u.kind != t.kind || u.nrows != t.nrows) abort();
    for (size_t i = 0; i < t.nrows; i++) {
      if (t.kind == TPS_TABLE_SPLIT && (u.tokens[i] != t.tokens[i] || !same(u.split_us[i], t.split_us[i]) ||
                                        !same(u.replicated_us[i], t.replicated_us[i])))
        abort();
      if (t.kind == TPS_TABLE_GEMM && (u.rows[i] != t.rows[i] || !same(u.time_us[i], t.time_us[i]))) abort();
      if (t.kind == TPS_TABLE_ALLGATHER && (!same(u.bytes[i], t.bytes[i]) || !same(u.time_us[i], t.time_us[i]))) abort();
    }
    tps_table_free(&u);
  }
  free(buf);
  tps_table_free(&t);
}
