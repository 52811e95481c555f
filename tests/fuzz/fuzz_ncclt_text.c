/* fuzz_ncclt_text.c: nccl-tests / rccl-tests text logs (src/io/ncclt.c).  The first byte picks the
 * options a user could give (--run 0..3, --ranks 0/1/8/16); the rest is the log.  What a log
 * that parses must hold: rows, a rank count in range, sizes and times in range.
 * Seeds: the logs of tests/data/ncclt, data/ and tests/data/bad. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "tests/fuzz/fuzz.h"
#include "src/io/ncclt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const int ranks[4] = {0, 1, 8, 16};
  tps_ncclt_read_opts o = {data[0] & 3, ranks[(data[0] >> 2) & 3]};
  tps_text tx;
  tps_err e;
  tps_err_clear(&e);
  if (tps_text_from_buf("log.txt", (const char *)data + 1, size - 1, 0, &tx, &e) != 0) return 0;
  tps_ncclt log;
  if (tps_ncclt_detect(&tx) >= 0 && tps_ncclt_parse_opts(&tx, &o, &log, &e) == 0) {
    if (log.n == 0 || log.nranks < 1 || log.nranks > 65536) abort();
    for (size_t i = 0; i < log.n; i++) {
      const tps_ncclt_row *r = &log.row[i];
      if (!(r->size_bytes > 0 && r->size_bytes <= 1125899906842624.0) || !(r->oop_time_us > 0) || !(r->ip_time_us > 0))
        abort();
    }
    tps_ncclt_free(&log);
  }
  tps_text_free(&tx);
  return 0;
}
