/* ncclt.c: nccl-tests all_gather_perf log reader (layouts and units: see ncclt.h).
 *
 * Each result row is split on whitespace and read by position:
 *   token 3 (0-based) not a number -> ">= 2.13" layout (size count type redop root ...),
 *   else the pre-2.13 layout (size count type ...);
 *   the last two tokens "YYYY-MM-DD HH:MM:SS" -> -S timestamp, removed;
 *   then 8 tokens (2 blocks of time algbw busbw #wrong) or 16 (-I: each block adds
 *   i_min i_max i_p99 i_cv%).  Every row must have the layout of the first one.
 * After the rows: size == count * sizeof(type) * nranks (when the type is known), and the
 * printed algbw/busbw agree with size/time (tolerance max(10%, 0.02 GB/s); the printed
 * values are rounded to 3 significant digits at worst, "%.1e"). */
#include "config.h"
#include "ncclt.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "util.h"

#define MAXTOK 64

/* Skip an MPI output prefix "[1,0]<stdout>:" (Open MPI --tag-output). */
static const char *strip_prefix(const char *s) {
  if (s[0] != '[') return s;
  const char *p = s + 1;
  if (!isdigit((unsigned char)*p)) return s;
  while (isdigit((unsigned char)*p)) p++;
  if (*p != ',') return s;
  p++;
  if (!isdigit((unsigned char)*p)) return s;
  while (isdigit((unsigned char)*p)) p++;
  if (*p != ']') return s;
  p++;
  if (strncmp(p, "<stdout>:", 9) == 0 || strncmp(p, "<stderr>:", 9) == 0) return p + 9;
  return s;
}

static int is_nccl_chatter(const char *s) {
  return strstr(s, "NCCL INFO") || strstr(s, "NCCL WARN") || strstr(s, "NCCL TRACE");
}

static const char *skip_ws(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* Split a copy of s on blanks; tokens point into buf. Returns count (MAXTOK+1 if more). */
static int tokenize(const char *s, char *buf, size_t bufsz, char **tok) {
  snprintf(buf, bufsz, "%s", s);
  int n = 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
    if (n == MAXTOK) return MAXTOK + 1;
    tok[n++] = t;
  }
  return n;
}

int tps_ncclt_type_size(const char *type) {
  static const struct { const char *name; int size; } types[] = {
      {"int8", 1},    {"uint8", 1},  {"char", 1},     {"f8e4m3", 1},   {"f8e5m2", 1},
      {"half", 2},    {"float16", 2}, {"bfloat16", 2}, {"int32", 4},   {"uint32", 4},
      {"int", 4},     {"float", 4},  {"float32", 4},  {"int64", 8},    {"uint64", 8},
      {"double", 8},  {"float64", 8}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(type, types[i].name) == 0) return types[i].size;
  return 0;
}

int tps_ncclt_detect(const tps_text *tx) {
  for (size_t i = 0; i < tx->n; i++) {
    const char *s = skip_ws(strip_prefix(tx->line[i]));
    if (s[0] != '#') continue;
    s = skip_ws(s + 1);
    if (strncmp(s, "nThread ", 8) == 0 || strncmp(s, "Collective test starting", 24) == 0 ||
        strncmp(s, "nccl-tests version", 18) == 0 || strncmp(s, "Using devices", 13) == 0)
      return 1;
    if (strncmp(s, "Rank ", 5) == 0 && isdigit((unsigned char)*skip_ws(s + 5))) return 1;
  }
  return 0;
}

static int is_number(const char *s) {
  double v;
  return tps_parse_double(s, &v) == 0;
}

static int is_date(const char *s) {
  /* YYYY-MM-DD */
  if (strlen(s) != 10) return 0;
  for (int i = 0; i < 10; i++) {
    if (i == 4 || i == 7) { if (s[i] != '-') return 0; }
    else if (!isdigit((unsigned char)s[i])) return 0;
  }
  return 1;
}

static int is_clock(const char *s) {
  /* HH:MM:SS */
  if (strlen(s) != 8) return 0;
  for (int i = 0; i < 8; i++) {
    if (i == 2 || i == 5) { if (s[i] != ':') return 0; }
    else if (!isdigit((unsigned char)s[i])) return 0;
  }
  return 1;
}

/* The numeric cell tok named what: finite, and > 0 when positive is set. */
static int num(const tps_text *tx, long ln, const char *tok, const char *what, int positive,
               double *out, tps_err *e) {
  if (tps_parse_double(tok, out) != 0)
    return tps_err_set(e, tx->path, ln, "%s '%s' is not a finite number", what, tok);
  if (positive && !(*out > 0))
    return tps_err_set(e, tx->path, ln, "%s %s is not positive", what, tok);
  return 0;
}

static int wrong_cell(const tps_text *tx, long ln, const char *tok, const char *which,
                      double *out, tps_err *e) {
  if (strcmp(tok, "N/A") == 0) { *out = NAN; return 0; }
  if (tps_parse_double(tok, out) != 0 || *out < 0)
    return tps_err_set(e, tx->path, ln, "#wrong (%s) '%s' is neither a count nor N/A", which, tok);
  if (*out > 0)
    return tps_err_set(e, tx->path, ln,
                       "%s elements wrong (%s): the run failed its data check, its times are not usable",
                       tok, which);
  return 0;
}

/* Read one block (time algbw busbw #wrong [i_min i_max i_p99 i_cv%]) starting at tok. */
static int block(const tps_text *tx, long ln, char **tok, int stats, const char *which,
                 double *time, double *alg, double *bus, double *wrong, double st[4], tps_err *e) {
  char what[48];
  snprintf(what, sizeof what, "time (%s)", which);
  if (num(tx, ln, tok[0], what, 1, time, e)) return -1;
  snprintf(what, sizeof what, "algbw (%s)", which);
  if (num(tx, ln, tok[1], what, 0, alg, e)) return -1;
  snprintf(what, sizeof what, "busbw (%s)", which);
  if (num(tx, ln, tok[2], what, 0, bus, e)) return -1;
  if (wrong_cell(tx, ln, tok[3], which, wrong, e)) return -1;
  static const char *const names[4] = {"i_min", "i_max", "i_p99", "i_cv%"};
  for (int k = 0; k < 4; k++) {
    st[k] = NAN;
    if (!stats) continue;
    snprintf(what, sizeof what, "%s (%s)", names[k], which);
    if (num(tx, ln, tok[4 + k], what, 0, &st[k], e)) return -1;
  }
  return 0;
}

static int parse_row(const tps_text *tx, long ln, const char *s, tps_ncclt *log, tps_ncclt_row *r,
                     tps_err *e) {
  char buf[TPS_TEXT_MAX_LINE + 1];
  char *tok[MAXTOK];
  int nt = tokenize(s, buf, sizeof buf, tok);
  memset(r, 0, sizeof *r);
  r->line = ln;
  if (nt > MAXTOK) return tps_err_set(e, tx->path, ln, "too many fields for an nccl-tests result row");
  if (nt < 3) return tps_err_set(e, tx->path, ln, "result row cut short (%d fields; truncated log?)", nt);
  double v;
  if (num(tx, ln, tok[0], "size", 0, &v, e)) return -1;
  if (v < 0 || v != floor(v)) return tps_err_set(e, tx->path, ln, "size '%s' is not a byte count", tok[0]);
  r->size_bytes = v;
  if (tps_parse_long(tok[1], &r->count) != 0 || r->count < 0)
    return tps_err_set(e, tx->path, ln, "count '%s' is not an element count", tok[1]);
  if (is_number(tok[2]) || strlen(tok[2]) >= sizeof r->type)
    return tps_err_set(e, tx->path, ln, "type '%s' is not an nccl-tests type name", tok[2]);
  snprintf(r->type, sizeof r->type, "%s", tok[2]);
  int layout = TPS_NCCLT_PRE213, lead = 3;
  if (nt >= 5 && !is_number(tok[3])) {
    layout = TPS_NCCLT_CURRENT;
    lead = 5;
    if (strlen(tok[3]) >= sizeof r->redop) return tps_err_set(e, tx->path, ln, "bad redop '%s'", tok[3]);
    snprintf(r->redop, sizeof r->redop, "%s", tok[3]);
    long root;
    if (tps_parse_long(tok[4], &root) != 0) return tps_err_set(e, tx->path, ln, "root '%s' is not an integer", tok[4]);
    r->root = (int)root;
    if (strcmp(r->redop, "none") != 0)
      return tps_err_set(e, tx->path, ln, "redop '%s': not an all_gather_perf log (all-gather has redop none)", r->redop);
  }
  int rest = nt - lead, ts = 0;
  if (rest >= 2 && is_date(tok[nt - 2]) && is_clock(tok[nt - 1])) {
    ts = 1;
    rest -= 2;
    snprintf(r->timestamp, sizeof r->timestamp, "%s %s", tok[nt - 2], tok[nt - 1]);
  }
  int stats;
  if (rest == 8) stats = 0;
  else if (rest == 16) stats = 1;
  else
    return tps_err_set(e, tx->path, ln,
                       "result row has %d fields after '%s', want 8 (time algbw busbw #wrong, out-of-place "
                       "and in-place) or 16 (with -I); truncated log?",
                       rest, tok[lead - 1]);
  if (log->n == 0) {
    log->layout = layout;
    log->has_timestamp = ts;
    log->has_iter_stats = stats;
  } else if (log->layout != layout || log->has_timestamp != ts || log->has_iter_stats != stats) {
    return tps_err_set(e, tx->path, ln, "result row layout differs from the row on line %ld (truncated or mixed log?)",
                       log->row[0].line);
  }
  int bl = stats ? 8 : 4;
  double st[4];
  if (block(tx, ln, tok + lead, stats, "out-of-place", &r->oop_time_us, &r->oop_algbw_gbps,
            &r->oop_busbw_gbps, &r->oop_wrong, st, e))
    return -1;
  r->oop_min_us = st[0]; r->oop_max_us = st[1]; r->oop_p99_us = st[2]; r->oop_cv_pct = st[3];
  if (block(tx, ln, tok + lead + bl, stats, "in-place", &r->ip_time_us, &r->ip_algbw_gbps,
            &r->ip_busbw_gbps, &r->ip_wrong, st, e))
    return -1;
  r->ip_min_us = st[0]; r->ip_max_us = st[1]; r->ip_p99_us = st[2]; r->ip_cv_pct = st[3];
  return 0;
}

/* "# nThread 1 nGpus 8 minBytes ... warmup iters: 5 iters: 20 agg iters: 1 ..." */
static void parse_nthread(const char *s, tps_ncclt *log) {
  char buf[4096];
  char *tok[MAXTOK];
  int nt = tokenize(s, buf, sizeof buf, tok);
  if (nt > MAXTOK) nt = MAXTOK;
  for (int i = 0; i + 1 < nt; i++) {
    long v;
    if (tps_parse_long(tok[i + 1], &v) != 0) continue;
    if (strcmp(tok[i], "nThread") == 0) log->nthread = (int)v;
    else if (strcmp(tok[i], "nGpus") == 0) log->ngpus = (int)v;
    else if (strcmp(tok[i], "iters:") == 0 && i > 0 && strcmp(tok[i - 1], "warmup") == 0) log->warmup_iters = (int)v;
    else if (strcmp(tok[i], "iters:") == 0 && (i == 0 || strcmp(tok[i - 1], "agg") != 0)) log->iters = (int)v;
  }
}

static void copy_trim(char *dst, size_t dstsz, const char *src) {
  src = skip_ws(src);
  size_t n = strlen(src);
  while (n > 0 && (src[n - 1] == ' ' || src[n - 1] == '\t')) n--;
  if (n >= dstsz) n = dstsz - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static int parse_comment(const tps_text *tx, long ln, const char *s, tps_ncclt *log, tps_err *e) {
  s = skip_ws(s + 1); /* after '#' */
  if (strncmp(s, "Rank ", 5) == 0 && isdigit((unsigned char)*skip_ws(s + 5))) {
    if (log->nranks == 0) {
      const char *b = strchr(s, ']');
      if (b) copy_trim(log->gpu, sizeof log->gpu, b + 1);
    }
    log->nranks++;
  } else if (strncmp(s, "nThread ", 8) == 0) {
    if (log->nthread >= 0 || log->n > 0)
      return tps_err_set(e, tx->path, ln, "a second nccl-tests run starts here: one run per file, please");
    parse_nthread(s, log);
  } else if (strncmp(s, "nccl-tests version ", 19) == 0) {
    char buf[sizeof log->version];
    copy_trim(buf, sizeof buf, s + 19);
    buf[strcspn(buf, " \t")] = '\0';
    snprintf(log->version, sizeof log->version, "%s", buf);
  } else if (strncmp(s, "Collective test starting:", 25) == 0) {
    copy_trim(log->collective, sizeof log->collective, s + 25);
    if (!strstr(log->collective, "all_gather"))
      return tps_err_set(e, tx->path, ln, "not an all_gather_perf log (%s)", log->collective);
  }
  return 0;
}

void tps_ncclt_free(tps_ncclt *log) {
  free(log->row);
  memset(log, 0, sizeof *log);
}

int tps_ncclt_parse(const tps_text *tx, tps_ncclt *log, tps_err *e) {
  memset(log, 0, sizeof *log);
  log->nthread = log->ngpus = log->warmup_iters = log->iters = -1;
  size_t cap = 0;
  for (size_t i = 0; i < tx->n; i++) {
    long ln = (long)i + 1;
    const char *s = tx->line[i];
    if (is_nccl_chatter(s)) continue;
    s = skip_ws(strip_prefix(s));
    if (*s == '#') {
      if (parse_comment(tx, ln, s, log, e)) goto fail;
      continue;
    }
    if (!isdigit((unsigned char)*s)) continue; /* blank line or launcher chatter */
    if (log->n == cap) {
      cap = cap ? 2 * cap : 32;
      tps_ncclt_row *nr = realloc(log->row, cap * sizeof *nr);
      if (!nr) { tps_err_set(e, tx->path, 0, "out of memory"); goto fail; }
      log->row = nr;
    }
    tps_ncclt_row *r = &log->row[log->n];
    if (parse_row(tx, ln, s, log, r, e)) goto fail;
    if (r->size_bytes == 0) continue; /* -b 0: an empty gather carries no timing information */
    log->n++;
  }
  if (log->nranks == 0) {
    tps_err_set(e, tx->path, 0, "no '#  Rank' lines: cannot tell the number of ranks");
    goto fail;
  }
  if (log->nthread > 0 && log->ngpus > 0 && log->nranks % (log->nthread * log->ngpus) != 0) {
    tps_err_set(e, tx->path, 0, "%d '#  Rank' lines, not a multiple of nThread %d x nGpus %d (lines lost?)", log->nranks,
                log->nthread, log->ngpus);
    goto fail;
  }
  if (log->n == 0) {
    tps_err_set(e, tx->path, 0, "no result rows in the nccl-tests log (truncated log?)");
    goto fail;
  }
  double n = log->nranks;
  for (size_t i = 0; i < log->n; i++) {
    const tps_ncclt_row *r = &log->row[i];
    int ts = tps_ncclt_type_size(r->type);
    if (ts && r->size_bytes != (double)r->count * ts * n) {
      tps_err_set(e, tx->path, r->line,
                  "size %.0f != count %ld * %d bytes (%s) * %d ranks: not an all-gather of these ranks",
                  r->size_bytes, r->count, ts, r->type, log->nranks);
      goto fail;
    }
    const double t[2] = {r->oop_time_us, r->ip_time_us};
    const double a[2] = {r->oop_algbw_gbps, r->ip_algbw_gbps};
    const double b[2] = {r->oop_busbw_gbps, r->ip_busbw_gbps};
    for (int k = 0; k < 2; k++) {
      double alg = r->size_bytes / t[k] / 1e3, bus = alg * (n - 1) / n;
      double tol_a = fmax(0.1 * alg, 0.02), tol_b = fmax(0.1 * bus, 0.02);
      if (fabs(a[k] - alg) > tol_a || fabs(b[k] - bus) > tol_b) {
        tps_err_set(e, tx->path, r->line,
                    "printed bandwidth (%s algbw %g, busbw %g GB/s) disagrees with size/time for %d ranks "
                    "(%.3g, %.3g GB/s): columns misread or not an all-gather",
                    k ? "in-place" : "out-of-place", a[k], b[k], log->nranks, alg, bus);
        goto fail;
      }
    }
  }
  return 0;
fail:
  tps_ncclt_free(log);
  return -1;
}

/* ------------------------------------------------------------------ -J JSON files
 * nccl-tests >= 2.17.3 writes `-J FILE` (src/util.cu, jsonOutputInit ... writeResultFooter):
 * {"version", "config": {"nthreads", "ngpus", "warmup_iters", "iterations", ...,
 *  "devices": [{"rank", "device_info", ...}]}, "results": [{"size", "count", "type",
 *  "redop", "root" (a string, "    -1"), "out_of_place": {"time"|"cpu_time", "alg_bw",
 *  "bus_bw", "nwrong" (null for -c 0)}, "in_place": {...}, "out_of_place_per_iter":
 *  {"min_us", "max_us", "p99_us", "cv_pct", ...}}], ...}.  NaN is written as "nan".
 * "devices" holds one entry per process (the first GPU line of each), so
 * nranks = len(devices) * nthreads * ngpus.  Some builds put "devices" at the top level;
 * both are read.  JSON has no line numbers: errors name the result index. */

static int jnum(json_t *o, const char *key, double *out) {
  json_t *v = json_object_get(o, key);
  if (json_is_number(v)) { *out = json_number_value(v); return isfinite(*out) ? 0 : -1; }
  return -1;
}

static int jblock(const char *path, size_t i, json_t *r, const char *key, double *time, double *alg, double *bus,
                  double *wrong, tps_err *e) {
  json_t *b = json_object_get(r, key);
  if (!json_is_object(b)) return tps_err_set(e, path, 0, "results[%zu]: no \"%s\" object", i, key);
  if (jnum(b, "time", time) && jnum(b, "cpu_time", time))
    return tps_err_set(e, path, 0, "results[%zu].%s: no finite time", i, key);
  if (!(*time > 0)) return tps_err_set(e, path, 0, "results[%zu].%s: time %g is not positive", i, key, *time);
  if (jnum(b, "alg_bw", alg) || jnum(b, "bus_bw", bus))
    return tps_err_set(e, path, 0, "results[%zu].%s: alg_bw or bus_bw missing or not finite", i, key);
  json_t *w = json_object_get(b, "nwrong");
  *wrong = NAN;
  if (json_is_number(w)) *wrong = json_number_value(w);
  if (*wrong > 0)
    return tps_err_set(e, path, 0, "results[%zu]: %g elements wrong (%s): the run failed its data check", i, *wrong, key);
  return 0;
}

int tps_ncclt_is_json(const char *path) {
  FILE *fp = fopen(path, "r");
  if (!fp) return 0;
  int c;
  while ((c = fgetc(fp)) == ' ' || c == '\t' || c == '\n' || c == '\r') {}
  fclose(fp);
  return c == '{';
}

int tps_ncclt_read_json(const char *path, tps_ncclt *log, tps_err *e) {
  memset(log, 0, sizeof *log);
  log->nthread = log->ngpus = log->warmup_iters = log->iters = -1;
  json_error_t je;
  json_t *root = json_load_file(path, JSON_DECODE_ANY, &je);
  if (!root) return tps_err_set(e, path, je.line, "not valid JSON: %s", je.text);
  int rc = 0;
  json_t *cfg = json_object_get(root, "config"), *res = json_object_get(root, "results");
  json_t *dev = json_object_get(cfg, "devices");
  if (!dev) dev = json_object_get(root, "devices");
  double v;
  if (!json_is_object(root) || !json_is_array(res) || !json_is_object(cfg)) {
    rc = tps_err_set(e, path, 0, "JSON without \"config\" and \"results\": not an nccl-tests -J file");
    goto done;
  }
  if (!jnum(cfg, "nthreads", &v)) log->nthread = (int)v;
  if (!jnum(cfg, "ngpus", &v)) log->ngpus = (int)v;
  if (!jnum(cfg, "warmup_iters", &v)) log->warmup_iters = (int)v;
  if (!jnum(cfg, "iterations", &v)) log->iters = (int)v;
  if (!json_is_array(dev) || json_array_size(dev) == 0 || log->nthread < 1 || log->ngpus < 1) {
    rc = tps_err_set(e, path, 0, "no \"devices\", \"nthreads\" or \"ngpus\": cannot tell the number of ranks");
    goto done;
  }
  log->nranks = (int)json_array_size(dev) * log->nthread * log->ngpus;
  const char *gname = json_string_value(json_object_get(json_array_get(dev, 0), "device_info"));
  if (gname) copy_trim(log->gpu, sizeof log->gpu, gname);
  if (!jnum(root, "version", &v)) snprintf(log->version, sizeof log->version, "json %d", (int)v);
  snprintf(log->collective, sizeof log->collective, "all_gather_perf");
  log->layout = TPS_NCCLT_CURRENT;
  size_t n = json_array_size(res);
  log->row = calloc(n ? n : 1, sizeof *log->row);
  if (!log->row) { rc = tps_err_set(e, path, 0, "out of memory"); goto done; }
  for (size_t i = 0; i < n && !rc; i++) {
    json_t *r = json_array_get(res, i);
    tps_ncclt_row *w = &log->row[log->n];
    memset(w, 0, sizeof *w);
    const char *type = json_string_value(json_object_get(r, "type"));
    const char *redop = json_string_value(json_object_get(r, "redop"));
    double cnt;
    if (jnum(r, "size", &w->size_bytes) || jnum(r, "count", &cnt) || !type || w->size_bytes < 0 ||
        w->size_bytes != floor(w->size_bytes) || cnt < 0 || cnt != floor(cnt) || strlen(type) >= sizeof w->type) {
      rc = tps_err_set(e, path, 0, "results[%zu]: size, count or type missing or malformed", i);
      break;
    }
    w->count = (long)cnt;
    snprintf(w->type, sizeof w->type, "%s", type);
    if (redop) {
      snprintf(w->redop, sizeof w->redop, "%s", redop);
      if (strcmp(redop, "none") != 0) { rc = tps_err_set(e, path, 0, "results[%zu]: redop '%s': not an all-gather", i, redop); break; }
    }
    const char *root_s = json_string_value(json_object_get(r, "root"));
    w->root = root_s ? atoi(root_s) : -1;
    if (jblock(path, i, r, "out_of_place", &w->oop_time_us, &w->oop_algbw_gbps, &w->oop_busbw_gbps, &w->oop_wrong, e) ||
        jblock(path, i, r, "in_place", &w->ip_time_us, &w->ip_algbw_gbps, &w->ip_busbw_gbps, &w->ip_wrong, e)) {
      rc = -1;
      break;
    }
    double *st[2][4] = {{&w->oop_min_us, &w->oop_max_us, &w->oop_p99_us, &w->oop_cv_pct},
                        {&w->ip_min_us, &w->ip_max_us, &w->ip_p99_us, &w->ip_cv_pct}};
    static const char *const pk[2] = {"out_of_place_per_iter", "in_place_per_iter"};
    static const char *const sk[4] = {"min_us", "max_us", "p99_us", "cv_pct"};
    for (int b = 0; b < 2; b++) {
      json_t *pi = json_object_get(r, pk[b]);
      for (int k = 0; k < 4; k++)
        if (!pi || jnum(pi, sk[k], st[b][k])) *st[b][k] = NAN;
      if (pi && b == 0) log->has_iter_stats = 1;
    }
    w->line = 0;
    if (w->size_bytes == 0) continue; /* -b 0, as in text logs */
    log->n++;
  }
  if (!rc && log->n == 0) rc = tps_err_set(e, path, 0, "no results in the nccl-tests JSON file");
  for (size_t i = 0; i < log->n && !rc; i++) {
    const tps_ncclt_row *r = &log->row[i];
    int ts = tps_ncclt_type_size(r->type);
    if (ts && r->size_bytes != (double)r->count * ts * log->nranks)
      rc = tps_err_set(e, path, 0, "results[%zu]: size %.0f != count %ld * %d bytes (%s) * %d ranks", i, r->size_bytes,
                       r->count, ts, r->type, log->nranks);
  }
done:
  json_decref(root);
  if (rc) tps_ncclt_free(log);
  return rc;
}
