/* measure.c: the one measurement loader (see measure.h): the registry of formats, made by
 * the build from IO_FORMATS in Makefile.am (src/io/formats.def), and the sniffer. */
#include "config.h"
#include "src/io/measure.h"
#include <stdlib.h>
#include <string.h>
#include "src/base/util.h"

#define TPS_FORMAT(name) extern const tps_format tps_format_##name;
#include "src/io/formats.def"
#undef TPS_FORMAT

static const tps_format *const formats[] = {
#define TPS_FORMAT(name) &tps_format_##name,
#include "src/io/formats.def"
#undef TPS_FORMAT
    NULL};

const tps_format *tps_meas_format(size_t i) {
  return i < sizeof formats / sizeof formats[0] ? formats[i] : NULL;
}

const tps_format *tps_meas_sniff(const char *data, size_t len) {
  size_t n = sizeof formats / sizeof formats[0] - 1;
  for (size_t i = 0; i + 1 < n; i++)
    if (formats[i]->sniff(data, len)) return formats[i];
  return formats[n - 1];
}

int tps_meas_load_mem(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m,
                      tps_err *e) {
  memset(m, 0, sizeof *m);
  const tps_format *f = tps_meas_sniff(data, len);
  m->format = f->name;
  if (f->read(path, data, len, sel, m, e) == 0) return 0;
  tps_meas_free(m);
  return -1;
}

int tps_meas_load(const char *path, const tps_aic_filter *sel, tps_meas *m, tps_err *e) {
  memset(m, 0, sizeof *m);
  tps_buf b;
  if (tps_buf_read(path, &b, e)) return -1;
  int rc = tps_meas_load_mem(path, b.data, b.len, sel, m, e);
  tps_buf_free(&b);
  return rc;
}

int tps_meas_load_spec(const char *spec, tps_meas *m, tps_err *e) {
  char *path;
  tps_aic_filter f;
  memset(m, 0, sizeof *m);
  if (tps_aic_parse_spec(spec, &path, &f, e)) return -1;
  int rc = tps_meas_load(path, strcmp(path, spec) ? &f : NULL, m, e);
  free(path);
  return rc;
}

tps_meas_kind tps_meas_sniff_spec(const char *spec) {
  char *path;
  tps_aic_filter f;
  tps_err e;
  tps_err_clear(&e);
  if (tps_aic_parse_spec(spec, &path, &f, &e)) return strchr(spec, ':') && strchr(spec, '=') ? TPS_MEAS_AIC : 0;
  tps_buf b;
  tps_meas_kind k = 0;
  if (tps_buf_read(path, &b, &e) == 0) {
    k = tps_meas_sniff(b.data, b.len)->kind;
    tps_buf_free(&b);
  }
  free(path);
  return k;
}

void tps_meas_free(tps_meas *m) {
  if (m->kind == TPS_MEAS_TABLE) tps_table_free(&m->tab);
  if (m->kind == TPS_MEAS_AIC) tps_aic_free(&m->aic);
  free(m->fit);
  memset(m, 0, sizeof *m);
}

tps_table *tps_meas_table(tps_meas *m, const char *path, tps_err *e) {
  tps_table *t = &m->tab;
  tps_table_init(t);
  m->kind = TPS_MEAS_TABLE;
  if (!(t->path = strdup(path))) { tps_err_oom(e, "reading %s", path); return NULL; }
  return t;
}
