/* fuzz_bench_table.c: GEMM and all-gather tables as `tpsplit bench` writes them (src/io/table.c,
 * extra columns, '#@' metadata), with the write/read round trip.  Seeds: the h200_gemm tables of data/,
 * the tables of tests/data. */
#include "config.h"
#include "tests/fuzz/table_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  table_roundtrip("bench.tsv", data, size);
  return 0;
}
