/* measure.c: the one measurement loader (see measure.h): the registry of formats, made by
 * the build from IO_FORMATS in Makefile.am (src/io/formats.def), and the sniffer; the text
 * lines every text format reads (text.h) and the normalized record a table format fills
 * (tps_table, table.h: made, added to, freed). */
#include "config.h"
#include "src/io/measure.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "model/core/backend.h"
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

int tps_meas_load_aic(const char *path, const tps_aic_filter *sel, tps_aic_file *out, tps_err *e) {
  tps_meas m;
  memset(out, 0, sizeof *out);
  if (tps_meas_load(path, sel, &m, e)) return -1;
  if (m.kind != TPS_MEAS_AIC) {
    tps_meas_free(&m);
    return tps_err_set(e, path, 0, "not an AIConfigurator table (no '# source: ai-dynamo/aiconfigurator' first line)");
  }
  *out = m.aic; /* moved: m is not freed */
  return 0;
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

/* ------------------------------------------------------------------ text files */

void tps_text_free(tps_text *tx) {
  free(tx->line);
  free(tx->block);
  free(tx->path);
  memset(tx, 0, sizeof *tx);
}

int tps_text_check_utf8(const char *path, long line, const char *s, tps_err *e) {
  size_t n = strlen(s), bad = tps_utf8_check(s, n);
  if (bad == n) return 0;
  return tps_err_set(e, path, line,
                     "invalid UTF-8 (byte 0x%02x in column %zu): tpsplit reads UTF-8 text (a Latin-1 file? "
                     "convert it with iconv -f latin1 -t utf-8)",
                     (unsigned char)s[bad], bad + 1);
}

int tps_text_check_end(const tps_text *tx, tps_err *e) {
  if (!tx->unterminated) return 0;
  return tps_err_set(e, tx->path, (long)tx->n,
                     "no newline at the end of the file: the last line may be cut short (a copy or a run that "
                     "stopped?); every line must end with a newline");
}

/* The lines of block (len bytes + 1, malloc'ed: tx owns it from here, also on error). */
static int text_take(const char *path, char *block, size_t len, int flags, tps_text *tx, tps_err *e) {
  memset(tx, 0, sizeof *tx);
  tx->block = block;
  if (!(tx->path = strdup(path))) { tps_text_free(tx); return tps_err_oom(e, "reading %s", path); }
  size_t nlines = 0;
  for (size_t k = 0; k < len; k++) nlines += block[k] == '\n';
  if (len > 0 && block[len - 1] != '\n') { nlines++; tx->unterminated = 1; }
  tx->line = malloc((nlines ? nlines : 1) * sizeof *tx->line);
  if (!tx->line) { tps_text_free(tx); return tps_err_oom(e, "reading %s", path); }
  tx->block[len] = '\0';
  int rc = 0;
  size_t pos = 0;
  long ln = 0;
  while (pos < len && !rc) {
    ln++;
    char *buf = tx->block + pos;
    char *nl = memchr(buf, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - buf) : len - pos;
    pos += n + (nl ? 1 : 0);
    if (nl) *nl = '\0';
    if (memchr(buf, '\0', n)) { rc = tps_err_set(e, path, ln, "binary file (NUL byte), not a measurement file"); break; }
    if (n > 0 && buf[n - 1] == '\r') {
      rc = tps_err_set(e, path, ln, "CRLF line ends (DOS/Windows text); convert with dos2unix");
      break;
    }
    if (n > TPS_TEXT_MAX_LINE) {
      rc = tps_err_set(e, path, ln, "line of %zu bytes, longer than the limit of %d", n, TPS_TEXT_MAX_LINE);
      break;
    }
    for (size_t k = 0; k < n; k++) {
      unsigned char c = (unsigned char)buf[k];
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        rc = tps_err_set(e, path, ln, "binary file (control character 0x%02x in column %zu), not a measurement file",
                         c, k + 1);
        break;
      }
    }
    if (rc) break;
    if (ln == 1 && n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) buf += 3; /* UTF-8 byte order mark */
    if (!(flags & TPS_TEXT_ANY_BYTES) && tps_text_check_utf8(path, ln, buf, e)) { rc = -1; break; }
    tx->line[tx->n++] = buf;
  }
  if (rc) tps_text_free(tx);
  return rc;
}

int tps_text_from_buf(const char *path, const char *data, size_t len, int flags, tps_text *tx, tps_err *e) {
  memset(tx, 0, sizeof *tx);
  char *block = malloc(len + 1);
  if (!block) return tps_err_oom(e, "reading %s", path);
  memcpy(block, data, len);
  return text_take(path, block, len, flags, tx, e);
}

int tps_text_read(const char *path, tps_text *tx, tps_err *e) {
  memset(tx, 0, sizeof *tx);
  tps_buf b;
  if (tps_buf_read(path, &b, e)) return -1;
  return text_take(path, b.data, b.len, 0, tx, e); /* the bytes read become the lines: no copy */
}

int tps_text_blank_cells(const char *path, long ln, char *const *f, size_t n, int allow_empty, tps_err *e) {
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(f[i]);
    if (!l && allow_empty) continue;
    if (!l || isspace((unsigned char)f[i][0]) || isspace((unsigned char)f[i][l - 1]))
      return tps_err_set(e, path, ln, "cell %zu '%s': %s", i + 1, f[i], allow_empty ? "blanks around it" : "empty or with blanks around it");
  }
  return 0;
}

int tps_split_tabs(char *line, char **f, int maxf) {
  int n = 0;
  char *p = line;
  for (;;) {
    char *tab = strchr(p, '\t');
    if (n == maxf) return maxf + 1;
    f[n++] = p;
    if (!tab) break;
    *tab = '\0';
    p = tab + 1;
  }
  return n;
}

/* ------------------------------------------------------------------ the record */

const char *const tps_table_kind_names[4] = {"", "split", "gemm", "allgather"};

void tps_table_init(tps_table *t) {
  memset(t, 0, sizeof *t);
  t->gather_cap_bytes = tps_gather_cap_default();
}


void tps_table_free(tps_table *t) {
  free(t->path);
  for (size_t i = 0; i < t->nprov; i++) free(t->prov[i]);
  free(t->prov);
  free(t->tokens); free(t->rows_per_rank); free(t->replicated_us); free(t->split_us);
  free(t->rows); free(t->time_us); free(t->time_inplace_us); free(t->bytes);
  free(t->line); free(t->count);
  for (size_t j = 0; j < t->nextra; j++) { free(t->extra_name[j]); free(t->extra[j]); }
  free(t->extra_name); free(t->extra);
  for (size_t j = 0; j < t->nmeta; j++) { free(t->meta_key[j]); free(t->meta_val[j]); }
  free(t->meta_key); free(t->meta_val);
  memset(t, 0, sizeof *t);
}

const double *tps_table_extra(const tps_table *t, const char *name) {
  for (size_t j = 0; j < t->nextra; j++)
    if (strcmp(t->extra_name[j], name) == 0) return t->extra[j];
  return NULL;
}

const char *tps_table_meta(const tps_table *t, const char *key) {
  for (size_t j = t->nmeta; j-- > 0;)
    if (strcmp(t->meta_key[j], key) == 0) return t->meta_val[j];
  return NULL;
}

int tps_strv_push(char ***v, size_t *n, const char *s) {
  char **nv = realloc(*v, (*n + 1) * sizeof *nv);
  if (!nv) return -1;
  *v = nv;
  if (!(nv[*n] = strdup(s))) return -1;
  (*n)++;
  return 0;
}

int tps_table_add_prov(tps_table *t, const char *line) { return tps_strv_push(&t->prov, &t->nprov, line); }

int tps_table_add_meta(tps_table *t, const char *k, const char *v) {
  if (tps_strv_push(&t->meta_key, &t->nmeta, k)) return -1;
  size_t n = t->nmeta - 1;
  if (tps_strv_push(&t->meta_val, &n, v)) return -1;
  return 0;
}
