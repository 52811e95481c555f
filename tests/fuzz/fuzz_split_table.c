/* fuzz_split_table.c: split-vs-replicated tables (src/io/table.c read_tsv), with the write/read
 * round trip.  Seeds: the fused_wqa_wkv tables of data/, the .tsv files of tests/data/bad. */
#include "config.h"
#include "tests/fuzz/table_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  table_roundtrip("split.tsv", data, size);
  return 0;
}
