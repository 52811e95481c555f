/* table.c: measurement files -> tps_table (formats: see table.h and README "Measurement
 * files").
 *
 * Our TSV, strictly tab-separated:
 *   '#@ key: value'  metadata (known keys validated, unknown keys kept);
 *   '#...'           provenance, kept without the leading "# ";
 *   blank lines      skipped;
 *   first other line the header: column names with units (tokens, rows_per_rank,
 *                    replicated_us, split_us | rows, time_us | bytes, ranks, time_us);
 *                    the kind comes from the first of tokens, rows, bytes present;
 *                    other named columns are kept as extra numeric columns;
 *   other lines      one row each, as many cells as the header.
 * Checks: counts and sizes are positive integers, times are finite and > 0, rows are
 * sorted by strictly increasing key (tokens | rows | (ranks, bytes)), and for split
 * tables with a known tp, rows_per_rank == ceil(tokens / tp).
 * CRLF line ends are rejected (one message saying so), not silently accepted: a file
 * that went through a Windows editor should be converted once with dos2unix.
 * (The record tps_table, its helpers and the text lines every reader starts from are the
 * loader's, src/io/measure.c; the nccl-tests read options are src/io/ncclt_rows.c's.) */
#include "config.h"
#include "src/io/table.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "model/core/path.h"
#include "model/latency/allgather.h"
#include "src/io/measure.h"
#include "src/io/ncclt.h"
#include "src/base/util.h"

/* Apply one '#@ key: value' line. */
static int apply_meta(tps_table *t, long ln, const char *k, const char *v, tps_err *e) {
  const char *path = t->path;
  long l;
  double d;
  if (strcmp(k, "gpu") == 0) {
    if (strlen(v) >= sizeof t->gpu) return tps_err_set(e, path, ln, "gpu name '%s' too long", v);
    snprintf(t->gpu, sizeof t->gpu, "%s", v);
    t->gpu_line = ln;
  } else if (strcmp(k, "path") == 0) {
    if (strlen(v) >= sizeof t->kpath) return tps_err_set(e, path, ln, "path name '%s' too long", v);
    char why[320]; /* a path no command knows: refused here, where the line is known (inspect read it as given) */
    if (!tps_path_find(v)) return tps_err_set(e, path, ln, "%s", tps_path_unknown(v, 0, why, sizeof why));
    snprintf(t->kpath, sizeof t->kpath, "%s", v);
  } else if (strcmp(k, "gather") == 0) {
    if (strcmp(v, "nccl") && strcmp(v, "custom") && strcmp(v, "auto"))
      return tps_err_set(e, path, ln, "unknown gather '%s' (want nccl, custom or auto)", v);
    snprintf(t->gather, sizeof t->gather, "%s", v);
  } else if (strcmp(k, "tp") == 0) {
    if (tps_parse_long(v, &l) || l < 1 || l > 65536)
      return tps_err_set(e, path, ln, "impossible TP '%s' (want a whole number from 1 to 65536)", v);
    t->tp = (int)l;
  } else if (strcmp(k, "ranks") == 0) {
    if (tps_parse_long(v, &l) || l < 1 || l > 65536)
      return tps_err_set(e, path, ln, "impossible ranks '%s' (want a whole number from 1 to 65536)", v);
    t->ranks = (int)l;
  } else if (strcmp(k, "k") == 0 || strcmp(k, "n") == 0) {
    if (tps_parse_long(v, &l) || l < 1)
      return tps_err_set(e, path, ln, "GEMM dimension %s '%s' is not a positive whole number", k, v);
    if (l > TPS_DIM_MAX) return tps_err_set(e, path, ln, "GEMM dimension %s %s is above the limit of %ld", k, v, TPS_DIM_MAX);
    if (k[0] == 'k') t->k = l; else t->n = l;
  } else if (strcmp(k, "out_bytes_per_token") == 0 || strcmp(k, "gather_cap_bytes") == 0) {
    if (tps_parse_double(v, &d) || !(d > 0))
      return tps_err_set(e, path, ln, "%s '%s' is not a positive number of bytes", k, v);
    double lo = k[0] == 'o' ? 1e-3 : 1, hi = k[0] == 'o' ? 1073741824.0 : 1099511627776.0;
    if (d < lo || d > hi) return tps_err_set(e, path, ln, "%s %s is outside the range %g..%.0f bytes", k, v, lo, hi);
    if (k[0] == 'o') t->out_bytes_per_token = d; else t->gather_cap_bytes = d;
  }
  return 0;
}

static int parse_meta_line(tps_table *t, long ln, const char *s, tps_err *e) {
  const char *p = s + 2;
  while (*p == ' ' || *p == '\t') p++;
  const char *k0 = p;
  while (isalnum((unsigned char)*p) || *p == '_') p++;
  size_t kl = (size_t)(p - k0);
  while (*p == ' ' || *p == '\t') p++;
  if (kl == 0 || kl >= 64 || *p != ':')
    return tps_err_set(e, t->path, ln, "metadata line is not '#@ key: value'");
  char key[64];
  memcpy(key, k0, kl);
  key[kl] = '\0';
  p++;
  while (*p == ' ' || *p == '\t') p++;
  size_t vl = strlen(p);
  while (vl > 0 && (p[vl - 1] == ' ' || p[vl - 1] == '\t')) vl--;
  if (vl == 0) return tps_err_set(e, t->path, ln, "metadata '%s' has no value", key);
  char *val = strndup(p, vl);
  if (!val) return tps_err_oom(e, "reading %s", t->path);
  int rc = 0;
  if (tps_table_meta(t, key)) rc = tps_err_set(e, t->path, ln, "metadata '%s' given twice", key);
  else if (apply_meta(t, ln, key, val, e)) rc = -1;
  else if (tps_table_add_meta(t, key, val)) rc = tps_err_oom(e, "reading %s", t->path);
  free(val);
  return rc;
}

/* A cell parsed as a finite double, with a message naming the column when it is not. */
static int cell_double(const tps_table *t, long ln, const char *col, const char *s, double *v, tps_err *e) {
  if (tps_parse_double(s, v) == 0) return 0;
  if (!*s) return tps_err_set(e, t->path, ln, "empty cell in column '%s'", col);
  char *end;
  double x = strtod(s, &end);
  if (end != s && *end == '\0') {
    if (isnan(x)) return tps_err_set(e, t->path, ln, "NaN in column '%s'", col);
    if (isinf(x)) return tps_err_set(e, t->path, ln, "infinite value '%s' in column '%s'", s, col);
    if (!tps_decimal_form(s)) /* ' 19.2', '0x10' */
      return tps_err_set(e, t->path, ln, "'%s' in column '%s' is not a plain decimal number", s, col);
    return tps_err_set(e, t->path, ln, "value '%s' in column '%s' is out of range", s, col);
  }
  return tps_err_set(e, t->path, ln, "'%s' in column '%s' is not a number", s, col);
}

static int cell_time(const tps_table *t, long ln, const char *col, const char *s, double *v, tps_err *e) {
  if (cell_double(t, ln, col, s, v, e)) return -1;
  if (*v == 0) return tps_err_set(e, t->path, ln, "zero time in column '%s'", col);
  if (*v < 0) return tps_err_set(e, t->path, ln, "negative time %s in column '%s'", s, col);
  if (*v < TPS_TABLE_MIN_US || *v > TPS_TABLE_MAX_US)
    return tps_err_set(e, t->path, ln, "time %s in column '%s' is outside the range %g..%g us (1 ns to 1000 s)", s, col,
                       TPS_TABLE_MIN_US, TPS_TABLE_MAX_US);
  return 0;
}

static int cell_count(const tps_table *t, long ln, const char *col, const char *s, long *v, tps_err *e) {
  double d;
  if (cell_double(t, ln, col, s, &d, e)) return -1;
  if (tps_parse_long(s, v) != 0) return tps_err_set(e, t->path, ln, "'%s' in column '%s' is not a whole number", s, col);
  if (*v < 1) return tps_err_set(e, t->path, ln, "%s in column '%s' is not positive", s, col);
  long max = strcmp(col, "ranks") == 0 ? 65536 : TPS_TABLE_MAX_COUNT;
  if (*v > max) return tps_err_set(e, t->path, ln, "%s in column '%s' is above the limit of %ld", s, col, max);
  return 0;
}

static int cell_extra(const tps_table *t, long ln, const char *col, const char *s, double *v, tps_err *e) {
  if (strcmp(s, "nan") == 0 || strcmp(s, "NaN") == 0 || strcmp(s, "NA") == 0 || strcmp(s, "-") == 0) {
    *v = NAN;
    return 0;
  }
  return cell_double(t, ln, col, s, v, e);
}

enum { C_TOKENS, C_RPR, C_REPL, C_SPLIT, C_ROWS, C_TIME, C_BYTES, C_RANKS, C_TIME_IP, C_NKNOWN };
static const char *const known_cols[C_NKNOWN] = {"tokens", "rows_per_rank", "replicated_us", "split_us", "rows",
                                                 "time_us", "bytes", "ranks", "time_inplace_us"};

#define MAXCOLS 64

typedef struct {
  int ncols;
  int role[MAXCOLS];   /* C_* or -1 - extra index - 1 ... stored as extra index in xidx */
  int xidx[MAXCOLS];   /* extra column index, -1 for known columns */
  char name[MAXCOLS][64];
} header_t;

static int parse_header(tps_table *t, long ln, char *s, header_t *h, tps_err *e) {
  char *f[MAXCOLS];
  int n = tps_split_tabs(s, f, MAXCOLS);
  if (n > MAXCOLS) return tps_err_set(e, t->path, ln, "header has more than %d columns", MAXCOLS);
  int have[C_NKNOWN];
  for (int k = 0; k < C_NKNOWN; k++) have[k] = -1;
  h->ncols = n;
  for (int i = 0; i < n; i++) {
    const char *c = f[i];
    if (!*c) return tps_err_set(e, t->path, ln, "header column %d has no name", i + 1);
    if (strlen(c) >= sizeof h->name[i]) return tps_err_set(e, t->path, ln, "header column %d name too long", i + 1);
    for (const char *p = c; *p; p++)
      if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '%' || *p == '.' || *p == '-'))
        return tps_err_set(e, t->path, ln,
                           "header column '%s' is not a column name (letters, digits, _ %% . -; cells are tab-separated)",
                           c);
    for (int j = 0; j < i; j++)
      if (strcmp(h->name[j], c) == 0) return tps_err_set(e, t->path, ln, "column '%s' appears twice in the header", c);
    snprintf(h->name[i], sizeof h->name[i], "%s", c);
    h->role[i] = -1;
    h->xidx[i] = -1;
    for (int k = 0; k < C_NKNOWN; k++)
      if (strcmp(c, known_cols[k]) == 0) { h->role[i] = k; have[k] = i; }
  }
  static const int need_split[] = {C_TOKENS, C_RPR, C_REPL, C_SPLIT, -1};
  static const int need_gemm[] = {C_ROWS, C_TIME, -1};
  static const int need_ag[] = {C_BYTES, C_RANKS, C_TIME, -1};
  const int *need;
  if (have[C_TOKENS] >= 0) { t->kind = TPS_TABLE_SPLIT; need = need_split; }
  else if (have[C_ROWS] >= 0) { t->kind = TPS_TABLE_GEMM; need = need_gemm; }
  else if (have[C_BYTES] >= 0) { t->kind = TPS_TABLE_ALLGATHER; need = need_ag; }
  else
    return tps_err_set(e, t->path, ln,
                       "header names none of tokens, rows, bytes (want tokens rows_per_rank replicated_us split_us, "
                       "or rows time_us, or bytes ranks time_us; tab-separated)");
  for (const int *k = need; *k >= 0; k++)
    if (have[*k] < 0)
      return tps_err_set(e, t->path, ln, "missing column '%s' in the header of a %s table", known_cols[*k],
                         tps_table_kind_names[t->kind]);
  /* known columns that do not belong to this kind, and unknown ones, become extras */
  for (int i = 0; i < n; i++) {
    int r = h->role[i], used = 0;
    for (const int *k = need; *k >= 0; k++) if (*k == r) used = 1;
    if (r == C_TIME_IP && t->kind == TPS_TABLE_ALLGATHER) used = 1;
    if (used) continue;
    h->role[i] = -1;
    h->xidx[i] = (int)t->nextra;
    if (tps_strv_push(&t->extra_name, &t->nextra, h->name[i])) return tps_err_oom(e, "reading %s", t->path);
  }
  return 0;
}

static int grow(tps_table *t, size_t cap) {
#define G(p) do { if (t->p) { void *q = realloc(t->p, cap * sizeof *t->p); if (!q) return -1; t->p = q; } } while (0)
  G(tokens); G(rows_per_rank); G(replicated_us); G(split_us); G(rows); G(time_us); G(time_inplace_us);
  G(bytes); G(line); G(count);
#undef G
  for (size_t j = 0; j < t->nextra; j++) {
    double *q = realloc(t->extra[j], cap * sizeof *q);
    if (!q) return -1;
    t->extra[j] = q;
  }
  return 0;
}

static int alloc_columns(tps_table *t) {
  size_t c = 16;
  t->line = malloc(c * sizeof *t->line);
  if (t->kind == TPS_TABLE_SPLIT) {
    t->tokens = malloc(c * sizeof *t->tokens);
    t->rows_per_rank = malloc(c * sizeof *t->rows_per_rank);
    t->replicated_us = malloc(c * sizeof *t->replicated_us);
    t->split_us = malloc(c * sizeof *t->split_us);
  } else if (t->kind == TPS_TABLE_GEMM) {
    t->rows = malloc(c * sizeof *t->rows);
    t->time_us = malloc(c * sizeof *t->time_us);
  } else {
    t->bytes = malloc(c * sizeof *t->bytes);
    t->time_us = malloc(c * sizeof *t->time_us);
    t->time_inplace_us = malloc(c * sizeof *t->time_inplace_us);
  }
  t->extra = calloc(t->nextra ? t->nextra : 1, sizeof *t->extra);
  if (!t->line || !t->extra) return -1;
  for (size_t j = 0; j < t->nextra; j++)
    if (!(t->extra[j] = malloc(c * sizeof **t->extra))) return -1;
  return 0;
}

static int parse_row(tps_table *t, long ln, char *s, const header_t *h, long *ranks_col, tps_err *e) {
  char *f[MAXCOLS];
  int n = tps_split_tabs(s, f, MAXCOLS);
  if (n != h->ncols)
    return tps_err_set(e, t->path, ln, "row has %s%d cells, the header has %d (%s column?)", n > MAXCOLS ? "over " : "",
                       n > MAXCOLS ? MAXCOLS : n, h->ncols, n < h->ncols ? "missing" : "extra");
  size_t i = t->nrows;
  if (t->time_inplace_us) t->time_inplace_us[i] = NAN;
  for (int c = 0; c < n; c++) {
    const char *col = h->name[c];
    int rc = 0;
    long l;
    switch (h->role[c]) {
      case C_TOKENS: rc = cell_count(t, ln, col, f[c], &t->tokens[i], e); break;
      case C_RPR: rc = cell_count(t, ln, col, f[c], &t->rows_per_rank[i], e); break;
      case C_ROWS: rc = cell_count(t, ln, col, f[c], &t->rows[i], e); break;
      case C_RANKS: rc = cell_count(t, ln, col, f[c], &l, e); if (!rc) ranks_col[i] = l; break;
      case C_REPL: rc = cell_time(t, ln, col, f[c], &t->replicated_us[i], e); break;
      case C_SPLIT: rc = cell_time(t, ln, col, f[c], &t->split_us[i], e); break;
      case C_TIME: rc = cell_time(t, ln, col, f[c], &t->time_us[i], e); break;
      case C_TIME_IP: rc = cell_time(t, ln, col, f[c], &t->time_inplace_us[i], e); break;
      case C_BYTES:
        rc = cell_double(t, ln, col, f[c], &t->bytes[i], e);
        if (!rc && !(t->bytes[i] > 0 && t->bytes[i] == floor(t->bytes[i])))
          rc = tps_err_set(e, t->path, ln, "bytes %s is not a positive whole number", f[c]);
        else if (!rc && t->bytes[i] > TPS_TABLE_MAX_BYTES)
          rc = tps_err_set(e, t->path, ln, "bytes %s is above the limit of %.0f (1 PiB)", f[c], TPS_TABLE_MAX_BYTES);
        break;
      default: rc = cell_extra(t, ln, col, f[c], &t->extra[h->xidx[c]][i], e); break;
    }
    if (rc) return -1;
  }
  t->line[i] = ln;
  t->nrows++;
  return 0;
}

/* Sorted, duplicate-free keys; rows_per_rank consistent with tp; one rank count. */
static int check_rows(tps_table *t, const long *ranks_col, tps_err *e) {
  const char *kname = t->kind == TPS_TABLE_SPLIT ? "tokens" : t->kind == TPS_TABLE_GEMM ? "rows" : "bytes";
  for (size_t i = 0; i < t->nrows; i++) {
    long ln = t->line[i];
    if (t->kind == TPS_TABLE_SPLIT) {
      long tok = t->tokens[i], rpr = t->rows_per_rank[i];
      if (t->tp > 0) {
        long want = (tok + t->tp - 1) / t->tp;
        if (rpr != want)
          return tps_err_set(e, t->path, ln, "rows_per_rank %ld != ceil(tokens %ld / tp %d) = %ld", rpr, tok, t->tp, want);
      } else if (rpr > tok) {
        return tps_err_set(e, t->path, ln, "rows_per_rank %ld > tokens %ld", rpr, tok);
      }
    }
    if (t->kind == TPS_TABLE_ALLGATHER && t->ranks > 0 && ranks_col[i] != t->ranks)
      return tps_err_set(e, t->path, ln, "ranks %ld differs from '#@ ranks: %d'", ranks_col[i], t->ranks);
    if (t->kind == TPS_TABLE_ALLGATHER && ranks_col[i] != ranks_col[0])
      return tps_err_set(e, t->path, ln, "ranks %ld differs from ranks %ld on line %ld: one rank count per table",
                         ranks_col[i], ranks_col[0], t->line[0]);
    if (i == 0) continue;
    double a, b;
    if (t->kind == TPS_TABLE_SPLIT) { a = (double)t->tokens[i - 1]; b = (double)t->tokens[i]; }
    else if (t->kind == TPS_TABLE_GEMM) { a = (double)t->rows[i - 1]; b = (double)t->rows[i]; }
    else { a = t->bytes[i - 1]; b = t->bytes[i]; }
    if (b == a)
      return tps_err_set(e, t->path, ln, "duplicate %s %.17g (also on line %ld)", kname, b, t->line[i - 1]);
    if (b < a)
      return tps_err_set(e, t->path, ln, "%s %.17g after %.17g (line %ld): rows must be sorted by increasing %s", kname,
                         b, a, t->line[i - 1], kname);
  }
  return 0;
}

static int read_tsv(const tps_text *tx, tps_table *t, tps_err *e) {
  header_t h;
  int have_header = 0;
  long header_line = 0;
  size_t cap = 0;
  long *ranks_col = NULL;
  int rc = 0;
  for (size_t i = 0; i < tx->n && !rc; i++) {
    long ln = (long)i + 1;
    char *s = tx->line[i];
    if (strncmp(s, "#@", 2) == 0) { rc = parse_meta_line(t, ln, s, e); continue; }
    if (s[0] == '#') {
      const char *p = s + 1;
      if (*p == ' ') p++;
      if (tps_strv_push(&t->prov, &t->nprov, p)) rc = tps_err_oom(e, "reading %s", t->path);
      continue;
    }
    if (s[strspn(s, " \t")] == '\0') continue;
    char *dup = strdup(s);
    if (!dup) { rc = tps_err_oom(e, "reading %s", t->path); break; }
    if (!have_header) {
      rc = parse_header(t, ln, dup, &h, e);
      if (!rc && alloc_columns(t)) rc = tps_err_oom(e, "reading %s", t->path);
      cap = 16;
      if (!rc && t->kind == TPS_TABLE_ALLGATHER && !(ranks_col = malloc(cap * sizeof *ranks_col)))
        rc = tps_err_oom(e, "reading %s", t->path);
      have_header = 1;
      header_line = ln;
    } else {
      if (t->nrows == cap) {
        cap *= 2;
        if (grow(t, cap)) rc = tps_err_oom(e, "reading %s", t->path);
        if (!rc && ranks_col) {
          long *q = realloc(ranks_col, cap * sizeof *q);
          if (!q) rc = tps_err_oom(e, "reading %s", t->path); else ranks_col = q;
        }
      }
      if (!rc) rc = parse_row(t, ln, dup, &h, ranks_col, e);
    }
    free(dup);
  }
  if (!rc && !have_header) rc = tps_err_set(e, t->path, 0, "no header row (only comments)");
  if (!rc && t->nrows == 0) rc = tps_err_set(e, t->path, header_line, "header but no data rows");
  if (!rc) rc = check_rows(t, ranks_col, e);
  if (!rc && t->kind == TPS_TABLE_ALLGATHER) t->ranks = (int)ranks_col[0];
  free(ranks_col);
  return rc;
}

/* ------------------------------------------------------------------ the loader's last format
 * Our TSV takes whatever no other format claims (src/io/measure.h). */
static int tsv_sniff(const char *data, size_t len) { (void)data; (void)len; return 1; }

static int tsv_read(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m, tps_err *e) {
  (void)sel;
  tps_table *t = tps_meas_table(m, path, e);
  if (!t) return -1;
  tps_text tx;
  if (tps_text_from_buf(path, data, len, 0, &tx, e) != 0) return -1;
  int rc;
  if (tx.n == 0) rc = tps_err_set(e, path, 0, "empty file");
  else {
    snprintf(t->source, sizeof t->source, "tsv");
    rc = read_tsv(&tx, t, e);
  }
  if (!rc) rc = tps_text_check_end(&tx, e);
  tps_text_free(&tx);
  return rc;
}

const tps_format tps_format_table = {"table", TPS_MEAS_TABLE, tsv_sniff, tsv_read};

/* What a table reader says of a file that holds no table. */
static int table_from_meas(tps_meas *m, tps_table *t, tps_err *e, const char *path) {
  if (m->kind == TPS_MEAS_TABLE) {
    *t = m->tab;
    memset(&m->tab, 0, sizeof m->tab);
    tps_meas_free(m);
    return 0;
  }
  int fit = m->kind == TPS_MEAS_FIT;
  tps_meas_free(m);
  if (fit) return tps_err_set(e, path, 0, "a tpsplit fit file, not a measurement table (fit files go to --fit or --predicted)");
  return tps_err_set(e, path, 0, "an AIConfigurator table, not a tpsplit measurement table (give it as FILE:dtype=... to --gemm, "
                                 "or to --gather)");
}

int tps_table_read_mem(const char *path, const char *data, size_t len, tps_table *t, tps_err *e) {
  tps_meas m;
  memset(t, 0, sizeof *t);
  if (tps_meas_load_mem(path, data, len, NULL, &m, e)) return -1;
  return table_from_meas(&m, t, e, path);
}

int tps_table_read(const char *path, tps_table *t, tps_err *e) {
  tps_meas m;
  memset(t, 0, sizeof *t);
  if (tps_meas_load(path, NULL, &m, e)) return -1;
  return table_from_meas(&m, t, e, path);
}

/* ------------------------------------------------------------------ writing */

void tps_fmt_num(char *buf, size_t sz, double x) {
  if (isnan(x)) { snprintf(buf, sz, "nan"); return; }
  for (int p = 15; p <= 17; p++) {
    snprintf(buf, sz, "%.*g", p, x);
    if (strtod(buf, NULL) == x) return;
  }
}

/* Would a file whose first line is "# LINE" read back as this format?  The one sniffer
 * (src/io/measure.c) takes a first line "# source: ai-dynamo/aiconfigurator ..." as
 * AIConfigurator's mark (tests/fuzz/crashes/split_table: a table whose first line was
 * "#@ tp: 8" and its second that provenance line, written back provenance first). */
static int first_line_reads_as_table(const char *line) {
  char head[512];
  const int n = snprintf(head, sizeof head, "# %s\n", line);
  return tps_meas_sniff(head, n > 0 && (size_t)n < sizeof head ? (size_t)n : sizeof head - 1) == &tps_format_table;
}

int tps_table_write(FILE *fp, const tps_table *t) {
  char b[64];
  /* provenance first, unless its first line would make the file another format's: then the
   * metadata lines first, or a line of our own where there are none */
  const int meta_first = t->nprov > 0 && !first_line_reads_as_table(t->prov[0]);
  if (meta_first && t->nmeta == 0) fputs("# a table tpsplit wrote\n", fp);
  if (meta_first)
    for (size_t j = 0; j < t->nmeta; j++) fprintf(fp, "#@ %s: %s\n", t->meta_key[j], t->meta_val[j]);
  for (size_t i = 0; i < t->nprov; i++) fprintf(fp, "# %s\n", t->prov[i]);
  if (!meta_first)
    for (size_t j = 0; j < t->nmeta; j++) fprintf(fp, "#@ %s: %s\n", t->meta_key[j], t->meta_val[j]);
  int ip = 0;
  if (t->kind == TPS_TABLE_ALLGATHER && t->time_inplace_us) {
    ip = 1;
    for (size_t i = 0; i < t->nrows; i++) if (!(t->time_inplace_us[i] > 0)) ip = 0;
  }
  if (t->kind == TPS_TABLE_SPLIT) fputs("tokens\trows_per_rank\treplicated_us\tsplit_us", fp);
  else if (t->kind == TPS_TABLE_GEMM) fputs("rows\ttime_us", fp);
  else fprintf(fp, "bytes\tranks\ttime_us%s", ip ? "\ttime_inplace_us" : "");
  for (size_t j = 0; j < t->nextra; j++) fprintf(fp, "\t%s", t->extra_name[j]);
  fputc('\n', fp);
  for (size_t i = 0; i < t->nrows; i++) {
    if (t->kind == TPS_TABLE_SPLIT) {
      fprintf(fp, "%ld\t%ld", t->tokens[i], t->rows_per_rank[i]);
      tps_fmt_num(b, sizeof b, t->replicated_us[i]); fprintf(fp, "\t%s", b);
      tps_fmt_num(b, sizeof b, t->split_us[i]); fprintf(fp, "\t%s", b);
    } else if (t->kind == TPS_TABLE_GEMM) {
      fprintf(fp, "%ld", t->rows[i]);
      tps_fmt_num(b, sizeof b, t->time_us[i]); fprintf(fp, "\t%s", b);
    } else {
      fprintf(fp, "%.0f\t%d", t->bytes[i], t->ranks);
      tps_fmt_num(b, sizeof b, t->time_us[i]); fprintf(fp, "\t%s", b);
      if (ip) { tps_fmt_num(b, sizeof b, t->time_inplace_us[i]); fprintf(fp, "\t%s", b); }
    }
    for (size_t j = 0; j < t->nextra; j++) { tps_fmt_num(b, sizeof b, t->extra[j][i]); fprintf(fp, "\t%s", b); }
    fputc('\n', fp);
  }
  return ferror(fp) ? -1 : 0;
}
