/* fuzz_lists.c: command-line lists (src/base/util.c): a token list (--tokens) before the first
 * newline, a comma list of names (--gpus, --paths, --tp) after it.  Token lists must come out
 * sorted, duplicate-free, within 1..TPS_TOKENS_MAX.  Seeds: tests/fuzz/seeds/lists. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "tests/fuzz/fuzz.h"
#include "src/base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char buf[4097];
  memcpy(buf, data, size);
  buf[size] = '\0';
  char *nl = strchr(buf, '\n'), *second = nl ? nl + 1 : buf + size;
  if (nl) *nl = '\0';
  long *v;
  size_t n;
  tps_err e;
  tps_err_clear(&e);
  if (tps_parse_tokens(buf, &v, &n, &e) == 0) {
    for (size_t i = 0; i < n; i++)
      if (v[i] < 1 || v[i] > TPS_TOKENS_MAX || (i && v[i] <= v[i - 1])) abort();
    free(v);
  }
  char **l;
  if (tps_parse_list(second, &l, &n) == 0) {
    for (size_t i = 0; i < n; i++)
      if (!l[i][0] || strchr(l[i], ',')) abort();
    tps_free_list(l, n);
  }
  return 0;
}
