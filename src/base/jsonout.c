/* jsonout.c: see jsonout.h. */
#include "src/base/jsonout.h"
#include <math.h>
#include <stdio.h>

json_t *tps_json_num(double x) {
  json_t *v = isfinite(x) ? json_real(x) : NULL;
  return v ? v : json_null();
}

int tps_json_set_num(json_t *obj, const char *key, double x) {
  return json_object_set_new(obj, key, tps_json_num(x));
}

int tps_json_print(json_t *root) {
  int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  json_decref(root);
  if (rc != 0) return -1;
  fputc('\n', stdout);
  return ferror(stdout) ? -1 : 0;
}
