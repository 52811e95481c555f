/* ncclt_json.c: nccl-tests -J JSON files (see ncclt.h), read into the same tps_ncclt as a
 * text log. */
#include "config.h"
#include "src/io/ncclt.h"
#include "src/io/ncclt_int.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/io/measure.h"
#include "src/io/table.h"
#include "src/base/util.h"

/* ------------------------------------------------------------------ -J JSON files
 * nccl-tests >= 2.17.3 writes `-J FILE` (src/util.cu, jsonOutputInit ... writeResultFooter):
 * {"version", "config": {"nthreads", "ngpus", "warmup_iters", "iterations", ...,
 *  "devices": [{"rank", "device_info", ...}]}, "results": [{"size", "count", "type",
 *  "redop", "root" (a string, "    -1"), "out_of_place": {"time"|"cpu_time", "alg_bw",
 *  "bus_bw", "nwrong" (null for -c 0)}, "in_place": {...}, "out_of_place_per_iter":
 *  {"min_us", "max_us", "p99_us", "cv_pct", ...}, "experiment_name"}], ...}.  NaN is written
 * as "nan".  "devices" holds one entry per process (the first GPU line of each), so
 * nranks = len(devices) * nthreads * ngpus.  Some builds put "devices" at the top level;
 * both are read.  Errors name the result index and its line (result_lines). */

static int jnum(json_t *o, const char *key, double *out) {
  json_t *v = json_object_get(o, key);
  if (json_is_number(v)) { *out = json_number_value(v); return isfinite(*out) ? 0 : -1; }
  return -1;
}

/* A whole number in [lo, hi] (cast only after the check). */
static int jint(json_t *o, const char *key, double lo, double hi, long *out) {
  double v;
  if (jnum(o, key, &v) || v != floor(v) || v < lo || v > hi) return -1;
  *out = (long)v;
  return 0;
}

/* The line of each element of the root object's "results" array (JSON values have no line
 * in jansson): a scan of the text for the array and its objects' opening braces.  line[i] = 0
 * for an element not found. */
static void result_lines(const char *d, size_t len, long *line, size_t n) {
  memset(line, 0, n * sizeof *line);
  long ln = 1;
  int depth = 0, in_str = 0, state = 0, arr = 0; /* state 1: "results" key seen, 2: in its array */
  size_t k = 0, str0 = 0;
  for (size_t i = 0; i < len && k < n; i++) {
    char c = d[i];
    if (c == '\n') ln++;
    if (in_str) {
      if (c == '\\') i++;
      else if (c == '"') {
        in_str = 0;
        if (depth == 1 && state == 0 && i - str0 == 8 && memcmp(d + str0 + 1, "results", 7) == 0) {
          size_t q = i + 1;
          while (q < len && strchr(" \t\r\n", d[q]) && d[q]) q++;
          if (q < len && d[q] == ':') state = 1;
        }
      }
      continue;
    }
    if (c == '"') { in_str = 1; str0 = i; continue; }
    if (c == '{' || c == '[') {
      if (state == 1 && c == '[' && depth == 1) { state = 2; arr = depth + 1; }
      else if (state == 2 && c == '{' && depth == arr) line[k++] = ln;
      depth++;
    } else if (c == '}' || c == ']') {
      depth--;
      if (state == 2 && depth < arr) break;
    } else if (state == 1 && depth == 1 && !strchr(" \t\r\n:", c)) {
      state = 0; /* "results" is not an array */
    }
  }
}

/* Every row's size is count x type size x ranks.  0, or -1 with e at the row's line. */
static int sizes_agree(const char *path, const tps_ncclt *log, tps_err *e) {
  for (size_t i = 0; i < log->n; i++) {
    const tps_ncclt_row *r = &log->row[i];
    int ts = tps_ncclt_type_size(r->type);
    if (ts && r->size_bytes != (double)r->count * ts * log->nranks)
      return tps_err_set(e, path, r->line, "results[%zu]: size %.0f != count %ld * %d bytes (%s) * %d ranks", i, r->size_bytes,
                         r->count, ts, r->type, log->nranks);
  }
  return 0;
}

static int jblock(const char *path, size_t i, long ln, json_t *r, const char *key, double *time, double *alg, double *bus,
                  double *wrong, tps_err *e) {
  json_t *b = json_object_get(r, key);
  if (!json_is_object(b)) return tps_err_set(e, path, ln, "results[%zu]: no \"%s\" object", i, key);
  if (jnum(b, "time", time) && jnum(b, "cpu_time", time))
    return tps_err_set(e, path, ln, "results[%zu].%s: no finite time", i, key);
  if (!(*time > 0)) return tps_err_set(e, path, ln, "results[%zu].%s: time %g is not positive", i, key, *time);
  if (*time < TPS_TABLE_MIN_US || *time > TPS_TABLE_MAX_US)
    return tps_err_set(e, path, ln, "results[%zu].%s: time %g us is outside %g..%g us", i, key, *time, TPS_TABLE_MIN_US,
                       TPS_TABLE_MAX_US);
  if (jnum(b, "alg_bw", alg) || jnum(b, "bus_bw", bus))
    return tps_err_set(e, path, ln, "results[%zu].%s: alg_bw or bus_bw missing or not finite", i, key);
  if (*alg < 0 || *alg > MAX_BW_GBPS || *bus < 0 || *bus > MAX_BW_GBPS)
    return tps_err_set(e, path, ln, "results[%zu].%s: bandwidth outside 0..%g GB/s", i, key, MAX_BW_GBPS);
  json_t *w = json_object_get(b, "nwrong");
  *wrong = NAN;
  if (json_is_number(w)) *wrong = json_number_value(w);
  if (*wrong > 0)
    return tps_err_set(e, path, ln, "results[%zu]: %g elements wrong (%s): the run failed its data check", i, *wrong, key);
  return 0;
}

int tps_ncclt_is_json_mem(const char *data, size_t len) {
  size_t k = 0;
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) k = 3;
  while (k < len && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r')) k++;
  return k < len && data[k] == '{';
}

int tps_ncclt_is_json(const char *path) {
  tps_buf b;
  tps_err e;
  tps_err_clear(&e);
  if (tps_buf_read(path, &b, &e)) return 0;
  int r = tps_ncclt_is_json_mem(b.data, b.len);
  tps_buf_free(&b);
  return r;
}

int tps_ncclt_read_json(const char *path, tps_ncclt *log, tps_err *e) {
  tps_buf b;
  memset(log, 0, sizeof *log);
  if (tps_buf_read(path, &b, e)) return -1;
  int rc = tps_ncclt_read_json_mem(path, b.data, b.len, log, e);
  tps_buf_free(&b);
  return rc;
}

int tps_ncclt_read_json_mem(const char *path, const char *data, size_t len, tps_ncclt *log, tps_err *e) {
  memset(log, 0, sizeof *log);
  log->nthread = log->ngpus = log->warmup_iters = log->iters = -1;
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) { data += 3; len -= 3; } /* UTF-8 byte order mark */
  json_error_t je;
  json_t *root = json_loadb(data, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
  if (!root) return tps_err_set(e, path, je.line, "not valid JSON: %s", je.text);
  int rc = 0;
  long *rl = NULL; /* the line of each results[i] */
  json_t *cfg = json_object_get(root, "config"), *res = json_object_get(root, "results");
  json_t *dev = json_object_get(cfg, "devices");
  if (!dev) dev = json_object_get(root, "devices");
  long v;
  if (!json_is_object(root) || !json_is_array(res) || !json_is_object(cfg)) {
    rc = tps_err_set(e, path, 0, "JSON without \"config\" and \"results\": not an nccl-tests -J file");
    goto done;
  }
  if (!jint(cfg, "nthreads", 1, 1024, &v)) log->nthread = (int)v;
  if (!jint(cfg, "ngpus", 1, 1024, &v)) log->ngpus = (int)v;
  if (!jint(cfg, "warmup_iters", 0, 1e9, &v)) log->warmup_iters = (int)v;
  if (!jint(cfg, "iterations", 0, 1e9, &v)) log->iters = (int)v;
  if (!json_is_array(dev) || json_array_size(dev) == 0 || log->nthread < 1 || log->ngpus < 1) {
    rc = tps_err_set(e, path, 0, "no \"devices\", \"nthreads\" or \"ngpus\": cannot tell the number of ranks");
    goto done;
  }
  size_t nd = json_array_size(dev);
  if (nd > MAX_RANKS || (double)nd * log->nthread * log->ngpus > MAX_RANKS) {
    rc = tps_err_set(e, path, 0, "%zu devices x nthreads %d x ngpus %d is more than %d ranks", nd, log->nthread,
                     log->ngpus, MAX_RANKS);
    goto done;
  }
  log->nranks = (int)nd * log->nthread * log->ngpus;
  log->ranks_from = TPS_NCCLT_RANKS_JSON;
  const char *gname = json_string_value(json_object_get(json_array_get(dev, 0), "device_info"));
  if (gname) ncclt_copy_trim(log->gpu, sizeof log->gpu, gname);
  if (!jint(root, "version", 0, 1e6, &v)) snprintf(log->version, sizeof log->version, "json %ld", v);
  snprintf(log->collective, sizeof log->collective, "all_gather_perf");
  log->layout = TPS_NCCLT_CURRENT;
  log->nruns = log->run = 1;
  size_t n = json_array_size(res);
  log->row = calloc(n ? n : 1, sizeof *log->row);
  rl = calloc(n ? n : 1, sizeof *rl);
  if (!rl) { rc = tps_err_oom(e, "reading %s", path); goto done; }
  result_lines(data, len, rl, n);
  if (!log->row) { rc = tps_err_oom(e, "reading %s", path); goto done; }
  for (size_t i = 0; i < n && !rc; i++) {
    json_t *r = json_array_get(res, i);
    tps_ncclt_row *w = &log->row[log->n];
    memset(w, 0, sizeof *w);
    const char *exp = json_string_value(json_object_get(r, "experiment_name"));
    if (exp && !ncclt_is_allgather_name(exp)) {
      rc = tps_err_set(e, path, rl[i], "results[%zu]: %s log, not all_gather (not an all_gather_perf log (%s))", i, exp, exp);
      break;
    }
    const char *type = json_string_value(json_object_get(r, "type"));
    const char *redop = json_string_value(json_object_get(r, "redop"));
    long cnt;
    if (jnum(r, "size", &w->size_bytes) || jint(r, "count", 0, MAX_SIZE, &cnt) || !type || w->size_bytes < 0 ||
        w->size_bytes > MAX_SIZE || w->size_bytes != floor(w->size_bytes) || !ncclt_is_type_name(type)) {
      rc = tps_err_set(e, path, rl[i], "results[%zu]: size, count or type missing or malformed", i);
      break;
    }
    w->count = cnt;
    snprintf(w->type, sizeof w->type, "%s", type);
    if (redop) {
      if (strlen(redop) >= sizeof w->redop) { rc = tps_err_set(e, path, rl[i], "results[%zu]: bad redop", i); break; }
      snprintf(w->redop, sizeof w->redop, "%s", redop);
      if (strcmp(redop, "none") != 0) {
        rc = tps_err_set(e, path, rl[i], "results[%zu]: redop '%s': a reduction, not an all-gather", i, redop);
        break;
      }
    }
    const char *root_s = json_string_value(json_object_get(r, "root"));
    w->root = -1;
    if (root_s) {
      long rv;
      if (tps_parse_range(ncclt_skip_ws(root_s), -1, 65535, &rv) != 0) {
        rc = tps_err_set(e, path, rl[i], "results[%zu]: root '%s' is not a rank", i, root_s);
        break;
      }
      w->root = (int)rv;
      if (rv >= 0) {
        rc = tps_err_set(e, path, rl[i], "results[%zu]: root %ld: a rooted collective, not an all-gather", i, rv);
        break;
      }
    }
    if (jblock(path, i, rl[i], r, "out_of_place", &w->oop_time_us, &w->oop_algbw_gbps, &w->oop_busbw_gbps, &w->oop_wrong, e) ||
        jblock(path, i, rl[i], r, "in_place", &w->ip_time_us, &w->ip_algbw_gbps, &w->ip_busbw_gbps, &w->ip_wrong, e)) {
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
        if (!pi || jnum(pi, sk[k], st[b][k]) || *st[b][k] < 0 || *st[b][k] > TPS_TABLE_MAX_US) *st[b][k] = NAN;
      if (pi && b == 0) log->has_iter_stats = 1;
    }
    w->line = rl[i];
    if (w->size_bytes == 0) continue; /* -b 0, as in text logs */
    log->n++;
  }
  if (!rc && log->n == 0) rc = tps_err_set(e, path, 0, "no results in the nccl-tests JSON file");
  if (!rc) rc = sizes_agree(path, log, e);
  if (!rc)
    snprintf(log->note, sizeof log->note, "all_gather_perf (-J JSON); ranks %d from %zu devices x nthreads %d x ngpus %d",
             log->nranks, nd, log->nthread, log->ngpus);
done:
  free(rl);
  json_decref(root);
  if (rc) tps_ncclt_free(log);
  return rc;
}

/* ------------------------------------------------------------------ the loader's format
 * (src/io/measure.h): a JSON object, an nccl-tests -J file, normalized to an all-gather table. */
static int json_read(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m, tps_err *e) {
  (void)sel;
  tps_table *t = tps_meas_table(m, path, e);
  if (!t) return -1;
  tps_ncclt log;
  return tps_ncclt_read_json_mem(path, data, len, &log, e) ? -1 : tps_table_from_ncclt(&log, t, e);
}

const tps_format tps_format_ncclt_json = {"ncclt_json", TPS_MEAS_TABLE, tps_ncclt_is_json_mem, json_read};
