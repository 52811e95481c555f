/* thresholds.c: the thresholds file (schema in thresholds.h): build, write, read and check
 * it, look entries up, and score a calibration against full benches. */
#include "config.h"
#include "src/io/thresholds.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "model/latency/allgather.h"
#include "src/base/jsonout.h"
#include "model/core/path.h"
#include "model/core/status.h"
#include "src/io/table.h"
#include "src/base/util.h"


/* ------------------------------------------------------------------ building */

static void copy(char *dst, size_t sz, const char *src) { snprintf(dst, sz, "%s", src ? src : ""); }

void tps_thr_init(tps_thr_file *f) {
  memset(f, 0, sizeof *f);
  f->schema_version = TPS_THR_SCHEMA_VERSION;
  copy(f->tool, sizeof f->tool, PACKAGE_NAME);
  copy(f->version, sizeof f->version, PACKAGE_VERSION);
  copy(f->command, sizeof f->command, tps_cmdline());
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(f->date, sizeof f->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  f->wall_s = f->budget_s = NAN;
}

/* Grow *v (n used) by one zeroed element of size sz; NULL on failure. */
static void *grow(void **v, size_t *n, size_t sz) {
  void *nv = realloc(*v, (*n + 1) * sz);
  if (!nv) return NULL;
  *v = nv;
  void *e = (char *)nv + *n * sz;
  memset(e, 0, sz);
  (*n)++;
  return e;
}

void tps_thr_device_key(const char *name, char *key, size_t sz) {
  copy(key, sz, name);
  for (char *c = key; *c; c++)
    if (*c == ' ') *c = '_';
}

tps_thr_device *tps_thr_add_device(tps_thr_file *f, const char *device_name) {
  tps_thr_device *d = grow((void **)&f->dev, &f->ndev, sizeof *f->dev);
  if (!d) return NULL;
  copy(d->name, sizeof d->name, device_name);
  tps_thr_device_key(device_name, d->key, sizeof d->key);
  d->cublaslt = -1;
  return d;
}

tps_thr_device *tps_thr_add_spec_device(tps_thr_file *f, const tps_gpu *gpu) {
  const char *cuda = tps_thr_cuda_name(gpu);
  tps_thr_device *d = tps_thr_add_device(f, cuda ? cuda : gpu->name);
  if (!d) return NULL;
  tps_thr_gpu_key(gpu, d->key, sizeof d->key);
  copy(d->gpu_spec, sizeof d->gpu_spec, gpu->name);
  d->sms = gpu->sms;
  d->cc_major = gpu->cc_major;
  d->cc_minor = gpu->cc_minor;
  d->l2_bytes = (long)(gpu->l2_mb * 1e6);
  d->gpus_visible = 0;
  return d;
}

tps_thr_prov tps_thr_prov_make(int kind, const char *source, const char *method) {
  tps_thr_prov p;
  memset(&p, 0, sizeof p);
  p.kind = kind;
  copy(p.source, sizeof p.source, source);
  copy(p.method, sizeof p.method, method);
  p.points = -1;
  p.w90_log = NAN;
  return p;
}

tps_thr_entry *tps_thr_add_entry(tps_thr_device *d) {
  tps_thr_entry *e = grow((void **)&d->e, &d->nentries, sizeof *d->e);
  if (!e) return NULL;
  e->gemm = e->gather = tps_thr_prov_make(TPS_PROV_MEASURED, "", "");
  return e;
}

tps_thr_gemm *tps_thr_add_gemm(tps_thr_device *d) {
  tps_thr_gemm *g = grow((void **)&d->gemm, &d->ngemm, sizeof *d->gemm);
  if (g) {
    g->w90_log = NAN;
    g->lopo_med[0] = g->lopo_med[1] = g->lopo_max[0] = g->lopo_max[1] = NAN;
    g->heldout_max[0] = g->heldout_max[1] = g->heldout_med[0] = g->heldout_med[1] = NAN;
    g->first_method = -1;
  }
  return g;
}

tps_thr_gather *tps_thr_add_gather(tps_thr_device *d) {
  tps_thr_gather *g = grow((void **)&d->gather, &d->ngather, sizeof *d->gather);
  if (g) g->prov = tps_thr_prov_make(TPS_PROV_MEASURED, "", "");
  return g;
}

int tps_thr_add_note(tps_thr_file *f, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **slot = grow((void **)&f->notes, &f->nnotes, sizeof *f->notes);
  if (!slot) return -1;
  if (!(*slot = strdup(buf))) { f->nnotes--; return -1; }
  return 0;
}

void tps_thr_entry_answer(tps_thr_entry *e, double breakeven, double lo, double hi, long max_tokens) {
  e->breakeven = breakeven > 0 ? breakeven : 0;
  e->lo = lo > 0 ? lo : 0;
  e->hi = hi > 0 ? hi : 0;
  e->max_tokens = max_tokens;
  e->split_from = tps_cal_pow2_ceil(e->breakeven);
}

int tps_thr_entry_bands(tps_thr_entry *e, const tps_bands *b, char *why, size_t whysz) {
  e->have_bands = 0;
  e->nbands = 0;
  if (b->nbands > TPS_THR_MAX_BANDS) {
    snprintf(why, whysz, "%zu win bands, more than the %d an entry holds", b->nbands, TPS_THR_MAX_BANDS);
    return -1;
  }
  if (b->tmin != 1 || b->tmax != e->max_tokens) {
    snprintf(why, whysz, "the bands were scanned on %ld..%ld, not 1..max_tokens %ld", b->tmin, b->tmax, e->max_tokens);
    return -1;
  }
  if ((b->breakeven > 0 ? (double)b->breakeven : 0) != e->breakeven) {
    snprintf(why, whysz, "the band reaching max_tokens starts at %ld, not at the break-even %.0f", b->breakeven, e->breakeven);
    return -1;
  }
  for (size_t i = 0; i + 1 < b->nbands; i++)
    if (!(b->gap_min_speedup[i] > 0)) {
      snprintf(why, whysz, "the depth of the gap after %ld tokens is not known", b->to_tokens[i]);
      return -1;
    }
  for (size_t i = 0; i < b->nbands; i++) {
    e->band_from[i] = b->from_tokens[i];
    e->band_to[i] = b->to_tokens[i] >= e->max_tokens ? 0 : b->to_tokens[i];
    e->gap_min_speedup[i] = i + 1 < b->nbands ? b->gap_min_speedup[i] : NAN;
  }
  e->nbands = b->nbands;
  e->have_bands = 1;
  return 0;
}

void tps_thr_free(tps_thr_file *f) {
  if (!f) return;
  for (size_t i = 0; i < f->ndev; i++) {
    free(f->dev[i].e);
    free(f->dev[i].gemm);
    free(f->dev[i].gather);
  }
  free(f->dev);
  for (size_t i = 0; i < f->nnotes; i++) free(f->notes[i]);
  free(f->notes);
  free(f->path);
  memset(f, 0, sizeof *f);
}

/* The device name and engine key of a data/gpus.tsv GPU come from its row (cuda_names,
 * engine_key): a new GPU is one row of the table. */
const char *tps_thr_cuda_name(const tps_gpu *gpu) { return gpu && gpu->cuda_name[0] ? gpu->cuda_name : NULL; }

int tps_thr_gpu_key(const tps_gpu *gpu, char *key, size_t sz) {
  if (gpu->engine_key[0]) { copy(key, sz, gpu->engine_key); return 1; }
  tps_thr_device_key(gpu->cuda_name[0] ? gpu->cuda_name : gpu->name, key, sz);
  return gpu->cuda_name[0] ? 1 : 0;
}

/* ------------------------------------------------------------------ JSON out */

static json_t *jstr_or_null(const char *s) { return s && *s ? json_string(s) : json_null(); }
static json_t *jnum(double x) {
  if (!isfinite(x)) return json_null();
  if (x == floor(x) && fabs(x) < 9e15) return json_integer((json_int_t)x);
  return json_real(x);
}
static json_t *jtok(double x) { return x > 0 ? jnum(x) : json_null(); }

static json_t *prov_json(const tps_thr_prov *p) {
  json_t *o = json_object();
  json_object_set_new(o, "kind", json_string(tps_prov_kind_names[p->kind]));
  json_object_set_new(o, "source", json_string(p->source));
  json_object_set_new(o, "method", json_string(p->method));
  if (p->points >= 0) json_object_set_new(o, "points", json_integer(p->points));
  if (isfinite(p->w90_log)) json_object_set_new(o, "w90_log", json_real(p->w90_log));
  if (p->kind == TPS_PROV_TRANSFERRED || p->kind == TPS_PROV_SIBLING || p->from_gpus[0]) {
    json_t *a = json_array();
    char buf[sizeof p->from_gpus], *save = NULL;
    copy(buf, sizeof buf, p->from_gpus);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) json_array_append_new(a, json_string(t));
    json_object_set_new(o, "from_gpus", a);
  }
  return o;
}

static json_t *child(json_t *o, const char *key) {
  json_t *c = json_object_get(o, key);
  if (!c) { c = json_object(); json_object_set_new(o, key, c); }
  return c;
}

static json_t *lopo_json(const double *v) {
  json_t *o = json_object();
  json_object_set_new(o, "steffen", jnum(v[TPS_CAL_STEFFEN]));
  json_object_set_new(o, "shaped", jnum(v[TPS_CAL_SHAPED]));
  return o;
}

void tps_thr_bands_json_set(json_t *obj, const long *from, const long *to, const double *gap, size_t n, long t_max) {
  json_t *wb = json_array(), *lg = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *band = json_array();
    json_array_append_new(band, json_integer(from[i]));
    json_array_append_new(band, to[i] > 0 && to[i] < t_max ? json_integer(to[i]) : json_null());
    json_array_append_new(wb, band);
    if (i + 1 < n) {
      json_t *g = json_object();
      json_object_set_new(g, "from_tokens", json_integer(to[i] + 1));
      json_object_set_new(g, "to_tokens", json_integer(from[i + 1] - 1));
      tps_json_set_num(g, "min_speedup", gap[i]);
      json_array_append_new(lg, g);
    }
  }
  json_object_set_new(obj, "win_bands_tokens", wb);
  json_object_set_new(obj, "losing_gaps", lg);
}

static json_t *device_json(const tps_thr_device *d) {
  json_t *o = json_object();
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
  json_object_set_new(o, "device_name", json_string(d->name));
  json_object_set_new(o, "gpu_spec", jstr_or_null(d->gpu_spec));
  json_object_set_new(o, "sm_count", json_integer(d->sms));
  json_object_set_new(o, "compute_capability", json_string(cc));
  json_object_set_new(o, "sm_clock_mhz", json_integer(d->sm_clock_mhz));
  json_object_set_new(o, "mem_clock_mhz", json_integer(d->mem_clock_mhz));
  json_object_set_new(o, "l2_bytes", json_integer(d->l2_bytes));
  json_object_set_new(o, "gpus_visible", json_integer(d->gpus_visible));
  json_object_set_new(o, "driver", json_string(d->driver));
  json_object_set_new(o, "cuda_runtime", json_string(d->cuda_runtime));
  json_object_set_new(o, "cublaslt", d->cublaslt >= 0 ? json_integer(d->cublaslt) : json_null());
  json_object_set_new(o, "nccl", jstr_or_null(d->nccl));
  json_t *th = json_object();
  for (size_t i = 0; i < d->nentries; i++) {
    const tps_thr_entry *e = &d->e[i];
    char shape[64], tp[16];
    snprintf(shape, sizeof shape, "%ldx%ld", e->k, e->n);
    snprintf(tp, sizeof tp, "%d", e->tp);
    json_t *b = child(child(child(th, shape), tps_path_name(e->path)), tp);
    json_t *x = json_object();
    json_object_set_new(x, "split_from_tokens", e->split_from > 0 ? json_integer(e->split_from) : json_null());
    json_object_set_new(x, "breakeven_tokens", jtok(e->breakeven));
    json_t *iv = json_array();
    json_array_append_new(iv, jtok(e->lo));
    json_array_append_new(iv, jtok(e->hi));
    json_object_set_new(x, "interval_tokens", iv);
    json_object_set_new(x, "max_tokens", json_integer(e->max_tokens));
    json_object_set_new(x, "out_bytes_per_token", jnum(e->out_bytes_per_token));
    if (e->have_bands) tps_thr_bands_json_set(x, e->band_from, e->band_to, e->gap_min_speedup, e->nbands, e->max_tokens);
    json_object_set_new(x, "gemm", prov_json(&e->gemm));
    json_object_set_new(x, "gather", prov_json(&e->gather));
    json_object_set_new(b, tps_gather_name(e->backend), x);
  }
  json_object_set_new(o, "thresholds", th);
  if (d->ngemm || d->ngather) {
    json_t *cal = json_object(), *ga = json_array(), *aa = json_array();
    for (size_t i = 0; i < d->ngemm; i++) {
      const tps_thr_gemm *g = &d->gemm[i];
      json_t *x = json_object(), *r = json_array(), *t = json_array();
      json_object_set_new(x, "k", json_integer(g->k));
      json_object_set_new(x, "n", json_integer(g->n));
      json_object_set_new(x, "path", json_string(tps_path_name(g->path)));
      json_object_set_new(x, "status", json_string(g->status));
      json_object_set_new(x, "reason", json_string(g->reason));
      json_object_set_new(x, "samples", json_integer(g->samples));
      for (size_t j = 0; j < g->npts; j++) {
        json_array_append_new(r, json_integer(g->rows[j]));
        json_array_append_new(t, json_real(g->t_us[j]));
      }
      json_object_set_new(x, "rows", r);
      json_object_set_new(x, "time_us", t);
      int have_cfg = 0;
      for (size_t j = 0; j < g->npts; j++) have_cfg |= g->config[j][0] != 0;
      if (have_cfg) { /* optional: the kernel each row ran, as the bench names it */
        json_t *c = json_array();
        for (size_t j = 0; j < g->npts; j++) json_array_append_new(c, json_string(g->config[j]));
        json_object_set_new(x, "configs", c);
      }
      json_object_set_new(x, "method", json_string(tps_cal_method_names[g->method]));
      json_object_set_new(x, "base", json_string(tps_cal_base_names[g->base]));
      json_object_set_new(x, "w90_log", jnum(g->w90_log));
      json_object_set_new(x, "lopo_median", lopo_json(g->lopo_med));
      json_object_set_new(x, "lopo_max", lopo_json(g->lopo_max));
      json_object_set_new(x, "first_phase_method",
                          g->first_method == TPS_CAL_STEFFEN || g->first_method == TPS_CAL_SHAPED
                              ? json_string(tps_cal_method_names[g->first_method])
                              : json_null());
      json_t *hr = json_array();
      for (size_t j = 0; j < g->heldout_n; j++) json_array_append_new(hr, json_integer(g->heldout_rows[j]));
      json_object_set_new(x, "heldout_rows", hr);
      json_object_set_new(x, "heldout_max_err", lopo_json(g->heldout_max));
      json_object_set_new(x, "heldout_median_err", lopo_json(g->heldout_med));
      json_array_append_new(ga, x);
    }
    for (size_t i = 0; i < d->ngather; i++) {
      const tps_thr_gather *g = &d->gather[i];
      json_t *x = json_object(), *b = json_array(), *t = json_array();
      json_object_set_new(x, "tp", json_integer(g->tp));
      json_object_set_new(x, "backend", json_string(tps_gather_name(g->backend)));
      json_object_set_new(x, "status", json_string(g->status));
      json_object_set_new(x, "reason", json_string(g->reason));
      json_object_set_new(x, "samples", json_integer(g->samples));
      for (size_t j = 0; j < g->npts; j++) {
        json_array_append_new(b, jnum(g->bytes[j]));
        json_array_append_new(t, json_real(g->t_us[j]));
      }
      json_object_set_new(x, "bytes", b);
      json_object_set_new(x, "time_us", t);
      json_object_set_new(x, "provenance", prov_json(&g->prov));
      json_array_append_new(aa, x);
    }
    json_object_set_new(cal, "gemm", ga);
    json_object_set_new(cal, "gather", aa);
    json_object_set_new(o, "calibration", cal);
  }
  return o;
}

json_t *tps_thr_to_json(const tps_thr_file *f) {
  json_t *root = json_object(), *gen = json_object(), *notes = json_array(), *devs = json_object();
  json_object_set_new(root, "schema_version", json_integer(f->schema_version));
  json_object_set_new(gen, "tool", json_string(f->tool));
  json_object_set_new(gen, "version", json_string(f->version));
  json_object_set_new(gen, "command", json_string(f->command));
  json_object_set_new(gen, "date", json_string(f->date));
  if (isfinite(f->wall_s)) json_object_set_new(gen, "wall_s", json_real(f->wall_s));
  if (isfinite(f->budget_s)) json_object_set_new(gen, "budget_s", jnum(f->budget_s));
  json_object_set_new(root, "generator", gen);
  json_object_set_new(root, "partial", json_boolean(f->partial));
  json_object_set_new(root, "rule", json_string("split a K x N projection of T tokens when T >= split_from_tokens (null: never, up to max_tokens)"));
  for (size_t i = 0; i < f->nnotes; i++) json_array_append_new(notes, json_string(f->notes[i]));
  json_object_set_new(root, "notes", notes);
  for (size_t i = 0; i < f->ndev; i++) json_object_set_new(devs, f->dev[i].key, device_json(&f->dev[i]));
  json_object_set_new(root, "devices", devs);
  return root;
}

int tps_thr_write(const tps_thr_file *f, const char *path, tps_err *e) {
  json_t *j = tps_thr_to_json(f);
  char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12)) : NULL;
  json_decref(j);
  if (!s) return tps_err_set(e, path, 0, "out of memory");
  tps_outfile o;
  memset(&o, 0, sizeof o);
  int rc = tps_out_open(&o, path, e);
  if (rc == 0) {
    fputs(s, o.fp);
    fputc('\n', o.fp);
    rc = tps_out_commit(&o, e);
  }
  tps_out_abort(&o);
  free(s);
  return rc;
}

/* ------------------------------------------------------------------ JSON in */

#define RD_DEPTH 16
typedef struct {
  const char *file;
  tps_err *e;
  char path[512];            /* JSON path of the value being read */
  const char *text;          /* the file's bytes, for the line of an error */
  size_t len;
  struct { const char *key; size_t at; } keys[RD_DEPTH]; /* the path's object keys (NULL: an array index) */
  size_t nkeys;
} rd;

static int blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* In the object whose '{' is at t[o], where its member KEY starts (the key's opening quote),
 * or (size_t)-1: only the object's own keys count, not those of objects inside it. */
static size_t key_in(const char *t, size_t len, size_t o, const char *key) {
  size_t kl = strlen(key);
  int depth = 0;
  for (size_t i = o; i < len; i++) {
    char c = t[i];
    if (c == '"') {
      size_t q0 = i++;
      while (i < len && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
      if (depth == 1 && i - q0 - 1 == kl && memcmp(t + q0 + 1, key, kl) == 0) {
        size_t q = i + 1;
        while (q < len && blank(t[q])) q++;
        if (q < len && t[q] == ':') return q0;
      }
    } else if (c == '{' || c == '[') {
      depth++;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      break;
    }
  }
  return (size_t)-1;
}

/* The line of the value at the path: each key looked up among the members of the object
 * found for the key before it, as far as the first array index, a key that is not there
 * (an error about a missing member names its object's line) or a value that is not an
 * object; 0 when not even the first key is found. */
static long path_line(const rd *r) {
  const char *t = r->text;
  size_t len = r->len, o = 0, pos = (size_t)-1;
  while (o < len && t[o] != '{') o++;
  for (size_t k = 0; k < r->nkeys && r->keys[k].key && o < len; k++) {
    size_t at = key_in(t, len, o, r->keys[k].key);
    if (at == (size_t)-1) break;
    pos = at;
    o = at + 1;
    while (o < len && t[o] != '"') o += t[o] == '\\' ? 2 : 1; /* the key's end, its ':', the value */
    for (o++; o < len && (blank(t[o]) || t[o] == ':'); o++) {}
    if (o >= len || t[o] != '{') break;
  }
  if (pos == (size_t)-1) return 0;
  long line = 1;
  for (size_t i = 0; i < pos; i++) line += t[i] == '\n';
  return line;
}

static int bad(rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(rd *r, const char *fmt, ...) {
  char msg[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tps_err_set(r->e, r->file, path_line(r), "%s: %s", r->path, msg);
}

/* Append ".key" (or "[i]" when key is NULL) to the path; returns the old length. */
static size_t push(rd *r, const char *key, size_t i) {
  size_t l = strlen(r->path);
  if (key) snprintf(r->path + l, sizeof r->path - l, ".%s", key);
  else snprintf(r->path + l, sizeof r->path - l, "[%zu]", i);
  if (r->nkeys < RD_DEPTH) {
    r->keys[r->nkeys].key = key;
    r->keys[r->nkeys++].at = l;
  }
  return l;
}
static void pop(rd *r, size_t l) {
  r->path[l] = 0;
  while (r->nkeys && r->keys[r->nkeys - 1].at >= l) r->nkeys--;
}

static const char *type_name(const json_t *v) {
  switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
  }
}

/* A member: required (missing: error) or optional (NULL). */
static json_t *member(rd *r, json_t *o, const char *key, int required) {
  json_t *v = json_object_get(o, key);
  if (!v && required) {
    size_t l = push(r, key, 0);
    bad(r, "missing");
    pop(r, l);
  }
  return v;
}

static int get_str(rd *r, json_t *o, const char *key, int required, int nullable, char *dst, size_t sz) {
  json_t *v = member(r, o, key, required);
  if (!v) return required ? -1 : 0;
  size_t l = push(r, key, 0);
  int rc = 0;
  if (json_is_null(v) && nullable) dst[0] = 0;
  else if (!json_is_string(v)) rc = bad(r, "a string%s, not %s", nullable ? " or null" : "", type_name(v));
  else if (strlen(json_string_value(v)) >= sz) rc = bad(r, "longer than %zu bytes", sz - 1);
  else copy(dst, sz, json_string_value(v));
  pop(r, l);
  return rc;
}

/* An integer in [lo, hi]; nullable: null gives *out = nullval. */
static int get_int(rd *r, json_t *o, const char *key, int required, long lo, long hi, int nullable, long nullval,
                   long *out) {
  json_t *v = member(r, o, key, required);
  if (!v) return required ? -1 : 0;
  size_t l = push(r, key, 0);
  int rc = 0;
  if (json_is_null(v) && nullable) *out = nullval;
  else if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
    char got[64];
    if (json_is_integer(v)) snprintf(got, sizeof got, "%lld", (long long)json_integer_value(v));
    else snprintf(got, sizeof got, "%s", type_name(v));
    rc = bad(r, "an integer from %ld to %ld%s, not %s", lo, hi, nullable ? " or null" : "", got);
  } else {
    *out = (long)json_integer_value(v);
  }
  pop(r, l);
  return rc;
}

/* A number > lo (or >= lo when closed); nullable: null gives nullval. */
static int num_of(rd *r, json_t *v, double lo, int closed, int nullable, double nullval, double *out) {
  if (json_is_null(v) && nullable) { *out = nullval; return 0; }
  if (!json_is_number(v)) return bad(r, "a number%s, not %s", nullable ? " or null" : "", type_name(v));
  double x = json_number_value(v);
  if (!isfinite(x) || (closed ? x < lo : x <= lo)) return bad(r, "a number %s %g%s, not %g", closed ? ">=" : ">", lo, nullable ? " or null" : "", x);
  *out = x;
  return 0;
}

static int get_num(rd *r, json_t *o, const char *key, int required, double lo, int closed, int nullable,
                   double nullval, double *out) {
  json_t *v = member(r, o, key, required);
  if (!v) return required ? -1 : 0;
  size_t l = push(r, key, 0);
  int rc = num_of(r, v, lo, closed, nullable, nullval, out);
  pop(r, l);
  return rc;
}

static int need_obj(rd *r, json_t *v) { return json_is_object(v) ? 0 : bad(r, "an object, not %s", type_name(v)); }

static int read_prov(rd *r, json_t *o, const char *key, tps_thr_prov *p) {
  json_t *v = member(r, o, key, 1);
  if (!v) return -1;
  size_t l = push(r, key, 0);
  *p = tps_thr_prov_make(TPS_PROV_MEASURED, "", "");
  char kind[32];
  int rc = need_obj(r, v);
  if (!rc) rc = get_str(r, v, "kind", 1, 0, kind, sizeof kind);
  if (!rc) {
    p->kind = -1;
    for (int i = 0; i < TPS_NPROV; i++) if (!strcmp(kind, tps_prov_kind_names[i])) p->kind = i;
    if (p->kind < 0) {
      size_t l2 = push(r, "kind", 0);
      rc = bad(r, "'%s' is not a provenance kind (measured, fitted, sibling, transferred, spec-only)", kind);
      pop(r, l2);
    }
  }
  if (!rc) rc = get_str(r, v, "source", 1, 0, p->source, sizeof p->source);
  if (!rc) rc = get_str(r, v, "method", 1, 0, p->method, sizeof p->method);
  long pts = -1;
  if (!rc) rc = get_int(r, v, "points", p->kind == TPS_PROV_MEASURED, 0, 1000000, 0, -1, &pts);
  p->points = (int)pts;
  if (!rc) rc = get_num(r, v, "w90_log", 0, 0, 1, 0, NAN, &p->w90_log);
  int needs_from = p->kind == TPS_PROV_TRANSFERRED || p->kind == TPS_PROV_SIBLING;
  json_t *fg = rc ? NULL : member(r, v, "from_gpus", needs_from);
  if (!rc && !fg && needs_from) rc = -1;
  if (!rc && fg) {
    size_t l2 = push(r, "from_gpus", 0);
    if (!json_is_array(fg) || (needs_from && json_array_size(fg) == 0))
      rc = bad(r, "a non-empty array of GPU names");
    for (size_t i = 0; !rc && i < json_array_size(fg); i++) {
      json_t *g = json_array_get(fg, i);
      size_t l3 = push(r, NULL, i);
      if (!json_is_string(g) || !json_string_length(g) || strchr(json_string_value(g), ','))
        rc = bad(r, "a GPU name (a string without ','), not %s", type_name(g));
      else {
        size_t u = strlen(p->from_gpus);
        if (u + json_string_length(g) + 2 > sizeof p->from_gpus) rc = bad(r, "too many GPU names");
        else snprintf(p->from_gpus + u, sizeof p->from_gpus - u, "%s%s", u ? "," : "", json_string_value(g));
      }
      pop(r, l3);
    }
    pop(r, l2);
  }
  pop(r, l);
  return rc;
}

/* win_bands_tokens and losing_gaps (optional, together; after breakeven_tokens and
 * max_tokens): the shape of thresholds.h, bands ascending with a losing token between
 * them, only the last one open (and then starting at the break-even), one gap per pair of
 * neighbouring bands covering the tokens between them. */
static int read_bands(rd *r, json_t *x, tps_thr_entry *e) {
  json_t *wb = json_object_get(x, "win_bands_tokens"), *lg = json_object_get(x, "losing_gaps");
  e->have_bands = 0;
  e->nbands = 0;
  if (!wb && !lg) return 0;
  if (!wb || !lg) {
    size_t l = push(r, wb ? "losing_gaps" : "win_bands_tokens", 0);
    int rc = bad(r, "missing (win_bands_tokens and losing_gaps come together)");
    pop(r, l);
    return rc;
  }
  size_t l = push(r, "win_bands_tokens", 0);
  if (!json_is_array(wb) || json_array_size(wb) > TPS_THR_MAX_BANDS)
    return bad(r, "an array of at most %d bands [from, to|null], not %s", TPS_THR_MAX_BANDS,
               json_is_array(wb) ? "a longer one" : type_name(wb));
  size_t n = json_array_size(wb);
  for (size_t i = 0; i < n; i++) {
    json_t *band = json_array_get(wb, i);
    size_t l2 = push(r, NULL, i);
    if (!json_is_array(band) || json_array_size(band) != 2)
      return bad(r, "a band [from, to|null] (tokens; null: up to max_tokens), not %s",
                 json_is_array(band) ? "an array of another length" : type_name(band));
    json_t *a = json_array_get(band, 0), *b = json_array_get(band, 1);
    long lo = i ? e->band_to[i - 1] + 2 : 1; /* a losing token after the band before */
    char got[64];
    if (i && e->band_to[i - 1] == 0) return bad(r, "a band after one that reaches max_tokens (null)");
    if (!json_is_integer(a) || json_integer_value(a) < lo || json_integer_value(a) > e->max_tokens) {
      if (json_is_integer(a)) snprintf(got, sizeof got, "%lld", (long long)json_integer_value(a));
      else snprintf(got, sizeof got, "%s", type_name(a));
      return bad(r, "from: an integer from %ld to max_tokens %ld%s, not %s", lo, e->max_tokens,
                 i ? " (after a losing token)" : "", got);
    }
    e->band_from[i] = (long)json_integer_value(a);
    if (json_is_null(b)) e->band_to[i] = 0;
    else if (!json_is_integer(b) || json_integer_value(b) < e->band_from[i] || json_integer_value(b) >= e->max_tokens) {
      if (json_is_integer(b)) snprintf(got, sizeof got, "%lld", (long long)json_integer_value(b));
      else snprintf(got, sizeof got, "%s", type_name(b));
      return bad(r, "to: an integer from %ld to %ld, or null when the band reaches max_tokens, not %s", e->band_from[i],
                 e->max_tokens - 1, got);
    } else e->band_to[i] = (long)json_integer_value(b);
    pop(r, l2);
  }
  int open = n && e->band_to[n - 1] == 0;
  if (open && e->band_from[n - 1] != e->breakeven) {
    push(r, NULL, n - 1);
    return bad(r, "the band reaching max_tokens starts at %ld, breakeven_tokens is %g", e->band_from[n - 1], e->breakeven);
  }
  if (!open && e->breakeven > 0) return bad(r, "no band reaches max_tokens, but breakeven_tokens is %g", e->breakeven);
  pop(r, l);
  l = push(r, "losing_gaps", 0);
  size_t ng = n ? n - 1 : 0;
  if (!json_is_array(lg) || json_array_size(lg) != ng)
    return bad(r, "an array of %zu gap%s (one between each two bands), not %s", ng, ng == 1 ? "" : "s",
               json_is_array(lg) ? "an array of another length" : type_name(lg));
  for (size_t i = 0; i < ng; i++) {
    json_t *g = json_array_get(lg, i);
    size_t l2 = push(r, NULL, i);
    long from, to;
    if (need_obj(r, g) || get_int(r, g, "from_tokens", 1, 1, 1L << 40, 0, 0, &from) ||
        get_int(r, g, "to_tokens", 1, 1, 1L << 40, 0, 0, &to) ||
        get_num(r, g, "min_speedup", 1, 0, 0, 0, 0, &e->gap_min_speedup[i]))
      return -1;
    if (from != e->band_to[i] + 1 || to != e->band_from[i + 1] - 1)
      return bad(r, "%ld..%ld is not the gap %ld..%ld between win_bands_tokens[%zu] and [%zu]", from, to, e->band_to[i] + 1,
                 e->band_from[i + 1] - 1, i, i + 1);
    if (e->gap_min_speedup[i] > 1) {
      push(r, "min_speedup", 0);
      return bad(r, "at most 1 (the split loses in a gap), not %g", e->gap_min_speedup[i]);
    }
    pop(r, l2);
  }
  pop(r, l);
  e->nbands = n;
  e->have_bands = 1;
  return 0;
}

static int read_entry(rd *r, json_t *x, tps_thr_entry *e) {
  int rc = need_obj(r, x);
  long sf = 0;
  if (!rc) rc = get_int(r, x, "split_from_tokens", 1, 1, 1L << 40, 1, 0, &sf);
  e->split_from = sf;
  if (!rc) rc = get_num(r, x, "breakeven_tokens", 1, 1, 1, 1, 0, &e->breakeven);
  if (!rc && (e->split_from > 0) != (e->breakeven > 0)) {
    size_t l = push(r, "split_from_tokens", 0);
    rc = bad(r, "null exactly when breakeven_tokens is null (%ld, %g)", e->split_from, e->breakeven);
    pop(r, l);
  }
  if (!rc && e->split_from > 0 && (double)e->split_from < e->breakeven) {
    size_t l = push(r, "split_from_tokens", 0);
    rc = bad(r, "%ld is below breakeven_tokens %g", e->split_from, e->breakeven);
    pop(r, l);
  }
  json_t *iv = rc ? NULL : member(r, x, "interval_tokens", 1);
  if (!rc && !iv) rc = -1;
  if (!rc) {
    size_t l = push(r, "interval_tokens", 0);
    if (!json_is_array(iv) || json_array_size(iv) != 2) rc = bad(r, "an array [lo, hi] of token counts or nulls");
    double v[2] = {0, 0};
    for (size_t i = 0; !rc && i < 2; i++) {
      size_t l2 = push(r, NULL, i);
      rc = num_of(r, json_array_get(iv, i), 1, 1, 1, 0, &v[i]);
      pop(r, l2);
    }
    if (!rc && v[0] > 0 && v[1] > 0 && v[0] > v[1]) rc = bad(r, "lo %g above hi %g", v[0], v[1]);
    if (!rc && e->breakeven > 0 && ((v[0] > 0 && v[0] > e->breakeven) || (v[1] > 0 && v[1] < e->breakeven)))
      rc = bad(r, "[%g, %g] does not contain breakeven_tokens %g", v[0], v[1], e->breakeven);
    e->lo = v[0];
    e->hi = v[1];
    pop(r, l);
  }
  if (!rc) rc = get_int(r, x, "max_tokens", 1, 1, 1L << 40, 0, 0, &e->max_tokens);
  if (!rc) rc = get_num(r, x, "out_bytes_per_token", 1, 0, 0, 0, 0, &e->out_bytes_per_token);
  if (!rc) rc = read_bands(r, x, e);
  if (!rc) rc = read_prov(r, x, "gemm", &e->gemm);
  if (!rc) rc = read_prov(r, x, "gather", &e->gather);
  return rc;
}

/* "5120x1792", spelled one way only: no sign, space or leading zero ("05120x1792" and
 * "+5120x1792" would be a second key for the same shape). */
static int parse_shape(const char *s, long *k, long *n) {
  char *end, canon[64];
  if (*s < '1' || *s > '9') return -1;
  long a = strtol(s, &end, 10);
  if (end == s || *end != 'x' || a < 1 || a > TPS_DIM_MAX) return -1;
  const char *t = end + 1;
  long b = strtol(t, &end, 10);
  if (end == t || *end || b < 1 || b > TPS_DIM_MAX) return -1;
  snprintf(canon, sizeof canon, "%ldx%ld", a, b);
  if (strcmp(canon, s)) return -1;
  *k = a;
  *n = b;
  return 0;
}

/* A TP key: an integer from 2 to 1024 written as printf writes it ("8", not "+8", " 8", "08"). */
static int parse_tp_key(const char *s, long *tp) {
  char canon[32];
  if (tps_parse_long(s, tp) || *tp < 2 || *tp > 1024) return -1;
  snprintf(canon, sizeof canon, "%ld", *tp);
  return strcmp(canon, s) ? -1 : 0;
}

static int read_thresholds(rd *r, json_t *th, tps_thr_device *d) {
  if (need_obj(r, th)) return -1;
  const char *shape, *pname, *tpk, *bk;
  json_t *sv, *pv, *tv, *bv;
  json_object_foreach(th, shape, sv) {
    size_t l1 = push(r, shape, 0);
    long k, n;
    if (parse_shape(shape, &k, &n))
      return bad(r, "a shape key is KxN, K and N whole numbers from 1 to %ld written without sign, space or leading zero "
                 "(e.g. 5120x1792)", TPS_DIM_MAX);
    if (need_obj(r, sv)) return -1;
    json_object_foreach(sv, pname, pv) {
      size_t l2 = push(r, pname, 0);
      const tps_path *p = tps_path_find(pname);
      char names[128];
      if (!p || strcmp(p->name, pname))
        return bad(r, "unknown kernel path '%s' (%s)", pname, tps_path_names(0, names, sizeof names));
      if (need_obj(r, pv)) return -1;
      json_object_foreach(pv, tpk, tv) {
        size_t l3 = push(r, tpk, 0);
        long tp;
        if (parse_tp_key(tpk, &tp))
          return bad(r, "a TP key is an integer from 2 to 1024 written without sign, space or leading zero (e.g. \"8\")");
        if (need_obj(r, tv)) return -1;
        json_object_foreach(tv, bk, bv) {
          size_t l4 = push(r, bk, 0);
          int b = tps_gather_parse(bk);
          if (b < 0 || strcmp(tps_gather_name(b), bk)) {
            char gn[64];
            return bad(r, "unknown gather backend '%s' (%s)", bk, tps_gather_names(gn, sizeof gn));
          }
          tps_thr_entry *e = tps_thr_add_entry(d);
          if (!e) return bad(r, "out of memory");
          e->k = k;
          e->n = n;
          e->path = p->id;
          e->tp = (int)tp;
          e->backend = b;
          if (read_entry(r, bv, e)) return -1;
          pop(r, l4);
        }
        pop(r, l3);
      }
      pop(r, l2);
    }
    pop(r, l1);
  }
  return 0;
}

static int read_lopo(rd *r, json_t *x, const char *key, double *v) {
  v[0] = v[1] = NAN;
  json_t *o = member(r, x, key, 0);
  if (!o) return 0;
  size_t l = push(r, key, 0);
  int rc = need_obj(r, o);
  if (!rc) rc = get_num(r, o, "steffen", 0, 0, 1, 1, NAN, &v[TPS_CAL_STEFFEN]);
  if (!rc) rc = get_num(r, o, "shaped", 0, 0, 1, 1, NAN, &v[TPS_CAL_SHAPED]);
  pop(r, l);
  return rc;
}

/* The held-out check of a calibration record (optional: files before it have none). */
static int read_heldout(rd *r, json_t *x, tps_thr_gemm *g) {
  g->first_method = -1;
  g->heldout_n = 0;
  json_t *v = member(r, x, "first_phase_method", 0);
  if (v && !json_is_null(v)) {
    size_t l = push(r, "first_phase_method", 0);
    g->first_method = json_is_string(v) ? tps_cal_method_parse(json_string_value(v)) : -1;
    if (g->first_method != TPS_CAL_STEFFEN && g->first_method != TPS_CAL_SHAPED)
      return bad(r, "steffen, shaped or null, not %s", json_is_string(v) ? json_string_value(v) : type_name(v));
    pop(r, l);
  }
  json_t *a = member(r, x, "heldout_rows", 0);
  if (a) {
    size_t l = push(r, "heldout_rows", 0);
    if (!json_is_array(a) || json_array_size(a) > TPS_CAL_MAX_PTS) return bad(r, "an array of at most %d rows", TPS_CAL_MAX_PTS);
    for (size_t i = 0; i < json_array_size(a); i++) {
      json_t *e = json_array_get(a, i);
      size_t l2 = push(r, NULL, i);
      if (!json_is_integer(e) || json_integer_value(e) < 1) return bad(r, "a row count >= 1, not %s", type_name(e));
      g->heldout_rows[g->heldout_n++] = (long)json_integer_value(e);
      pop(r, l2);
    }
    pop(r, l);
  }
  return read_lopo(r, x, "heldout_max_err", g->heldout_max) || read_lopo(r, x, "heldout_median_err", g->heldout_med) ? -1 : 0;
}

static const char *const statuses[] = {"measured", "skipped", "failed", "not-run"};
static int check_status(rd *r, json_t *x, char *dst, size_t sz) {
  if (get_str(r, x, "status", 1, 0, dst, sz)) return -1;
  for (size_t i = 0; i < sizeof statuses / sizeof *statuses; i++) if (!strcmp(dst, statuses[i])) return 0;
  size_t l = push(r, "status", 0);
  bad(r, "'%s' is not measured, skipped, failed or not-run", dst);
  pop(r, l);
  return -1;
}

/* "rows"/"bytes" and "time_us": arrays of the same length (<= TPS_CAL_MAX_PTS), x
 * ascending, times > 0.  Integer x when xi != NULL. */
static int read_points(rd *r, json_t *x, const char *xkey, long *xi, double *xd, double *t, size_t *n) {
  json_t *a = member(r, x, xkey, 1), *b = member(r, x, "time_us", 1);
  if (!a || !b) return -1;
  size_t l = push(r, xkey, 0);
  if (!json_is_array(a) || json_array_size(a) > TPS_CAL_MAX_PTS) { bad(r, "an array of at most %d values", TPS_CAL_MAX_PTS); return -1; }
  *n = json_array_size(a);
  for (size_t i = 0; i < *n; i++) {
    json_t *v = json_array_get(a, i);
    size_t l2 = push(r, NULL, i);
    double d;
    if (xi && (!json_is_integer(v) || json_integer_value(v) < 1)) return bad(r, "a row count >= 1, not %s", type_name(v));
    if (xi) { xi[i] = (long)json_integer_value(v); d = (double)xi[i]; }
    else if (num_of(r, v, 0, 0, 0, 0, &d)) return -1;
    else xd[i] = d;
    if (i && d <= (xi ? (double)xi[i - 1] : xd[i - 1])) return bad(r, "not ascending");
    pop(r, l2);
  }
  pop(r, l);
  l = push(r, "time_us", 0);
  if (!json_is_array(b) || json_array_size(b) != *n) return bad(r, "an array as long as %s (%zu)", xkey, *n);
  for (size_t i = 0; i < *n; i++) {
    size_t l2 = push(r, NULL, i);
    if (num_of(r, json_array_get(b, i), 0, 0, 0, 0, &t[i])) return -1;
    pop(r, l2);
  }
  pop(r, l);
  return 0;
}

/* "configs" (optional): one string per row, as long as "rows". */
static int read_configs(rd *r, json_t *x, tps_thr_gemm *g) {
  json_t *a = member(r, x, "configs", 0);
  for (size_t i = 0; i < TPS_CAL_MAX_PTS; i++) g->config[i][0] = 0;
  if (!a) return 0;
  size_t l = push(r, "configs", 0);
  if (!json_is_array(a) || json_array_size(a) != g->npts) return bad(r, "an array of strings as long as rows (%zu)", g->npts);
  for (size_t i = 0; i < g->npts; i++) {
    json_t *v = json_array_get(a, i);
    size_t l2 = push(r, NULL, i);
    if (!json_is_string(v)) return bad(r, "a string, not %s", type_name(v));
    if (strlen(json_string_value(v)) >= TPS_THR_CONFIG) return bad(r, "longer than %d bytes", TPS_THR_CONFIG - 1);
    copy(g->config[i], TPS_THR_CONFIG, json_string_value(v));
    pop(r, l2);
  }
  pop(r, l);
  return 0;
}

static int read_calibration(rd *r, json_t *cal, tps_thr_device *d) {
  if (need_obj(r, cal)) return -1;
  json_t *ga = member(r, cal, "gemm", 1), *aa = member(r, cal, "gather", 1);
  if (!ga || !aa) return -1;
  size_t l = push(r, "gemm", 0);
  if (!json_is_array(ga)) return bad(r, "an array, not %s", type_name(ga));
  for (size_t i = 0; i < json_array_size(ga); i++) {
    json_t *x = json_array_get(ga, i);
    size_t l2 = push(r, NULL, i);
    tps_thr_gemm *g = tps_thr_add_gemm(d);
    if (!g) return bad(r, "out of memory");
    char pname[64], s[32];
    long v;
    if (need_obj(r, x) || get_int(r, x, "k", 1, 1, 1L << 30, 0, 0, &g->k) || get_int(r, x, "n", 1, 1, 1L << 30, 0, 0, &g->n) ||
        get_str(r, x, "path", 1, 0, pname, sizeof pname))
      return -1;
    const tps_path *p = tps_path_find(pname);
    if (!p || strcmp(p->name, pname)) {
      push(r, "path", 0);
      return bad(r, "unknown kernel path '%s'", pname);
    }
    g->path = p->id;
    if (check_status(r, x, g->status, sizeof g->status) || get_str(r, x, "reason", 1, 0, g->reason, sizeof g->reason) ||
        get_int(r, x, "samples", 1, 0, 100000, 0, 0, &v))
      return -1;
    g->samples = (int)v;
    if (read_points(r, x, "rows", g->rows, NULL, g->t_us, &g->npts)) return -1;
    if (read_configs(r, x, g)) return -1;
    if (!strcmp(g->status, "measured") && g->npts < 2) {
      push(r, "rows", 0);
      return bad(r, "a measured sweep has at least 2 rows, not %zu", g->npts);
    }
    if (get_str(r, x, "method", 1, 0, s, sizeof s)) return -1;
    g->method = tps_cal_method_parse(s);
    if (g->method != TPS_CAL_STEFFEN && g->method != TPS_CAL_SHAPED) {
      push(r, "method", 0);
      return bad(r, "'%s' is not steffen or shaped", s);
    }
    if (get_str(r, x, "base", 1, 0, s, sizeof s)) return -1;
    g->base = -1;
    for (int b = 0; b < 3; b++) if (!strcmp(s, tps_cal_base_names[b])) g->base = b;
    if (g->base < 0) {
      push(r, "base", 0);
      return bad(r, "'%s' is not none, xgemm or xw8", s);
    }
    if (get_num(r, x, "w90_log", 1, 0, 1, 1, NAN, &g->w90_log) || read_lopo(r, x, "lopo_median", g->lopo_med) ||
        read_lopo(r, x, "lopo_max", g->lopo_max) || read_heldout(r, x, g))
      return -1;
    pop(r, l2);
  }
  pop(r, l);
  l = push(r, "gather", 0);
  if (!json_is_array(aa)) return bad(r, "an array, not %s", type_name(aa));
  for (size_t i = 0; i < json_array_size(aa); i++) {
    json_t *x = json_array_get(aa, i);
    size_t l2 = push(r, NULL, i);
    tps_thr_gather *g = tps_thr_add_gather(d);
    if (!g) return bad(r, "out of memory");
    long v;
    char bname[32];
    if (need_obj(r, x) || get_int(r, x, "tp", 1, 2, 1024, 0, 0, &v)) return -1;
    g->tp = (int)v;
    if (get_str(r, x, "backend", 1, 0, bname, sizeof bname)) return -1;
    if ((g->backend = tps_gather_parse(bname)) < 0) {
      push(r, "backend", 0);
      return bad(r, "unknown gather backend '%s'", bname);
    }
    if (check_status(r, x, g->status, sizeof g->status) || get_str(r, x, "reason", 1, 0, g->reason, sizeof g->reason) ||
        get_int(r, x, "samples", 1, 0, 100000, 0, 0, &v))
      return -1;
    g->samples = (int)v;
    if (read_points(r, x, "bytes", NULL, g->bytes, g->t_us, &g->npts) || read_prov(r, x, "provenance", &g->prov))
      return -1;
    pop(r, l2);
  }
  pop(r, l);
  return 0;
}

static int read_device(rd *r, const char *key, json_t *o, tps_thr_device *d) {
  if (need_obj(r, o)) return -1;
  long v;
  char cc[16];
  if (get_str(r, o, "device_name", 1, 0, d->name, sizeof d->name)) return -1;
  tps_thr_device_key(d->name, d->key, sizeof d->key);
  if (strcmp(d->key, key)) {
    push(r, "device_name", 0);
    return bad(r, "'%s' is keyed '%s'; engines key it '%s' (spaces as '_')", d->name, key, d->key);
  }
  if (get_str(r, o, "gpu_spec", 1, 1, d->gpu_spec, sizeof d->gpu_spec) || get_int(r, o, "sm_count", 1, 1, 100000, 0, 0, &v))
    return -1;
  d->sms = (int)v;
  if (get_str(r, o, "compute_capability", 1, 0, cc, sizeof cc)) return -1;
  int n = 0;
  if (sscanf(cc, "%d.%d%n", &d->cc_major, &d->cc_minor, &n) != 2 || cc[n] || d->cc_major < 0 || d->cc_minor < 0) {
    push(r, "compute_capability", 0);
    return bad(r, "'%s' is not MAJOR.MINOR (e.g. 9.0)", cc);
  }
  if (get_int(r, o, "sm_clock_mhz", 1, 0, 100000, 0, 0, &v)) return -1;
  d->sm_clock_mhz = (int)v;
  if (get_int(r, o, "mem_clock_mhz", 1, 0, 100000, 0, 0, &v)) return -1;
  d->mem_clock_mhz = (int)v;
  if (get_int(r, o, "l2_bytes", 1, 0, 1L << 40, 0, 0, &d->l2_bytes) || get_int(r, o, "gpus_visible", 1, 0, 100000, 0, 0, &v))
    return -1;
  d->gpus_visible = (int)v;
  if (get_str(r, o, "driver", 1, 0, d->driver, sizeof d->driver) ||
      get_str(r, o, "cuda_runtime", 1, 0, d->cuda_runtime, sizeof d->cuda_runtime) ||
      get_int(r, o, "cublaslt", 1, 0, 1L << 40, 1, -1, &d->cublaslt) || get_str(r, o, "nccl", 1, 1, d->nccl, sizeof d->nccl))
    return -1;
  json_t *th = member(r, o, "thresholds", 1);
  if (!th) return -1;
  size_t l = push(r, "thresholds", 0);
  if (read_thresholds(r, th, d)) return -1;
  pop(r, l);
  json_t *cal = member(r, o, "calibration", 0);
  if (cal) {
    l = push(r, "calibration", 0);
    if (read_calibration(r, cal, d)) return -1;
    pop(r, l);
  }
  return 0;
}

static int read_root(rd *r, json_t *root, tps_thr_file *f) {
  if (need_obj(r, root)) return -1;
  json_t *sv = member(r, root, "schema_version", 1);
  if (!sv) return -1;
  size_t l = push(r, "schema_version", 0);
  if (!json_is_integer(sv)) return bad(r, "an integer, not %s", type_name(sv));
  if (json_integer_value(sv) != TPS_THR_SCHEMA_VERSION)
    return bad(r, "version %lld; this tpsplit reads version %d", (long long)json_integer_value(sv), TPS_THR_SCHEMA_VERSION);
  f->schema_version = TPS_THR_SCHEMA_VERSION;
  pop(r, l);
  json_t *gen = member(r, root, "generator", 1);
  if (!gen) return -1;
  l = push(r, "generator", 0);
  if (need_obj(r, gen) || get_str(r, gen, "tool", 1, 0, f->tool, sizeof f->tool) ||
      get_str(r, gen, "version", 1, 0, f->version, sizeof f->version) ||
      get_str(r, gen, "command", 1, 0, f->command, sizeof f->command) || get_str(r, gen, "date", 1, 0, f->date, sizeof f->date) ||
      get_num(r, gen, "wall_s", 0, 0, 1, 0, NAN, &f->wall_s) || get_num(r, gen, "budget_s", 0, 0, 0, 0, NAN, &f->budget_s))
    return -1;
  pop(r, l);
  json_t *p = member(r, root, "partial", 1);
  if (!p) return -1;
  if (!json_is_boolean(p)) {
    l = push(r, "partial", 0);
    return bad(r, "true or false, not %s", type_name(p));
  }
  f->partial = json_is_true(p);
  json_t *notes = member(r, root, "notes", 0);
  if (notes) {
    l = push(r, "notes", 0);
    if (!json_is_array(notes)) return bad(r, "an array of strings, not %s", type_name(notes));
    for (size_t i = 0; i < json_array_size(notes); i++) {
      json_t *s = json_array_get(notes, i);
      if (!json_is_string(s)) {
        push(r, NULL, i);
        return bad(r, "a string, not %s", type_name(s));
      }
      if (tps_thr_add_note(f, "%s", json_string_value(s))) return bad(r, "out of memory");
    }
    pop(r, l);
  }
  json_t *devs = member(r, root, "devices", 1);
  if (!devs) return -1;
  l = push(r, "devices", 0);
  if (need_obj(r, devs)) return -1;
  if (json_object_size(devs) == 0) return bad(r, "no device");
  const char *key;
  json_t *dv;
  json_object_foreach(devs, key, dv) {
    size_t l2 = push(r, key, 0);
    tps_thr_device *d = grow((void **)&f->dev, &f->ndev, sizeof *f->dev);
    if (!d) return bad(r, "out of memory");
    if (read_device(r, key, dv, d)) return -1;
    pop(r, l2);
  }
  pop(r, l);
  return 0;
}

int tps_thr_read(const char *path, tps_thr_file *f, tps_err *e) {
  memset(f, 0, sizeof *f);
  f->wall_s = f->budget_s = NAN;
  json_error_t je;
  tps_buf b = {0};
  if (tps_buf_read(path, &b, e)) return -1; /* the 64 MiB cap, the pipe and FIFO timeout */
  /* a repeated key of one object is refused (jansson would keep the last one silently) */
  json_t *root = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
  if (!root) {
    int rc = je.line > 0 ? tps_err_set(e, path, je.line, "not JSON: %s", je.text) : tps_err_set(e, path, 0, "%s", je.text);
    tps_buf_free(&b);
    return rc;
  }
  rd r = {.file = path, .e = e, .path = "$", .text = b.data, .len = b.len};
  int rc = read_root(&r, root, f);
  json_decref(root);
  tps_buf_free(&b);
  if (rc) { tps_thr_free(f); return -1; }
  f->path = strdup(path);
  return 0;
}

/* ------------------------------------------------------------------ look-up */

const tps_thr_device *tps_thr_find_device(const tps_thr_file *f, const char *name_or_key) {
  char key[256];
  tps_thr_device_key(name_or_key, key, sizeof key);
  for (size_t i = 0; i < f->ndev; i++)
    if (!strcmp(f->dev[i].key, key)) return &f->dev[i];
  return NULL;
}

const tps_thr_entry *tps_thr_find(const tps_thr_device *d, long k, long n, int path, int tp, int backend) {
  for (size_t i = 0; d && i < d->nentries; i++) {
    const tps_thr_entry *e = &d->e[i];
    if (e->k == k && e->n == n && e->path == path && e->tp == tp && e->backend == backend) return e;
  }
  return NULL;
}

int tps_thr_split(const tps_thr_entry *e, long tokens) { return e && e->split_from > 0 && tokens >= e->split_from; }

static void prov_short(const tps_thr_prov *p, char *buf, size_t sz) {
  if (p->kind == TPS_PROV_MEASURED && p->points >= 0) snprintf(buf, sz, "measured (%d points)", p->points);
  else if (p->kind == TPS_PROV_TRANSFERRED) snprintf(buf, sz, "transferred from %s", p->from_gpus);
  else if (p->kind == TPS_PROV_SIBLING) snprintf(buf, sz, "sibling %s, scaled", p->from_gpus);
  else snprintf(buf, sz, "%s", tps_prov_kind_names[p->kind]);
}

void tps_thr_entry_line(const tps_thr_entry *e, char *buf, size_t sz) {
  char g[320], a[320], iv[96];
  prov_short(&e->gemm, g, sizeof g);
  prov_short(&e->gather, a, sizeof a);
  if (e->hi > 0) snprintf(iv, sizeof iv, "%.0f..%.0f", e->lo, e->hi);
  else snprintf(iv, sizeof iv, "%.0f..beyond %ld", e->lo, e->max_tokens);
  if (e->split_from > 0)
    snprintf(buf, sz, "%ldx%ld %s TP%d %s: split from %ld tokens (break-even %.0f, 90%% %s); gemm %s, gather %s", e->k,
             e->n, tps_path_name(e->path), e->tp, tps_gather_name(e->backend), e->split_from, e->breakeven, iv, g, a);
  else if (e->lo > 0)
    snprintf(buf, sz, "%ldx%ld %s TP%d %s: never split up to %ld tokens (90%% interval of the break-even from %.0f); gemm %s, gather %s",
             e->k, e->n, tps_path_name(e->path), e->tp, tps_gather_name(e->backend), e->max_tokens, e->lo, g, a);
  else
    snprintf(buf, sz, "%ldx%ld %s TP%d %s: never split up to %ld tokens; gemm %s, gather %s", e->k, e->n,
             tps_path_name(e->path), e->tp, tps_gather_name(e->backend), e->max_tokens, g, a);
}

int tps_thr_entry_bands_line(const tps_thr_entry *e, char *buf, size_t sz) {
  buf[0] = 0;
  if (!e->have_bands || e->nbands == 0 || (e->nbands == 1 && e->band_to[0] == 0)) return 0;
  size_t u = 0;
  u += (size_t)snprintf(buf + u, u < sz ? sz - u : 0, "win bands ");
  for (size_t i = 0; i < e->nbands && u < sz; i++) {
    if (e->band_to[i] > 0)
      u += (size_t)snprintf(buf + u, sz - u, "%s%ld..%ld", i ? ", " : "", e->band_from[i], e->band_to[i]);
    else
      u += (size_t)snprintf(buf + u, sz - u, "%s%ld..%ld (max_tokens)", i ? ", " : "", e->band_from[i], e->max_tokens);
  }
  for (size_t i = 0; i + 1 < e->nbands && u < sz; i++)
    u += (size_t)snprintf(buf + u, sz - u, "%s%ld..%ld at worst %.3fx",
                          i ? ", " : e->nbands > 2 ? "; losing gaps " : "; losing gap ", e->band_to[i] + 1,
                          e->band_from[i + 1] - 1, floor(e->gap_min_speedup[i] * 1000 + 1e-9) / 1000);
  if (u >= sz && sz > 5) {
    /* cut: end after the last whole band or gap, and say so */
    size_t c = sz - 5;
    while (c > 0 && buf[c] != ',' && buf[c] != ';') c--;
    memcpy(buf + c + 1, " ...", 5);
  }
  return 1;
}

/* ------------------------------------------------------------------ check */

int tps_thr_check(const tps_thr_file *f, const char *device, char *const *bench, size_t nbench, double tol_med,
                  double tol_max, const tps_gpu_table *gt, tps_thr_check_row **rows, size_t *nrows, tps_err *e) {
  *rows = NULL;
  *nrows = 0;
  const tps_thr_device *d = NULL;
  if (device) d = tps_thr_find_device(f, device);
  else if (f->ndev == 1) d = &f->dev[0];
  if (!d) {
    if (device) return tps_err_set(e, f->path, 0, "no device '%s' in the file", device);
    return tps_err_set(e, f->path, 0, "%zu devices in the file: name one", f->ndev);
  }
  if (!d->ngemm) return tps_err_set(e, f->path, 0, "device %s has no calibration section (not written by calibrate)", d->key);
  const tps_gpu *gpu = NULL;
  if (d->gpu_spec[0] && gt) {
    tps_err ge;
    tps_err_clear(&ge);
    gpu = tps_gpus_find(gt, d->gpu_spec, &ge);
  }
  tps_thr_check_row *out = calloc(nbench ? nbench : 1, sizeof *out);
  if (!out) return tps_err_set(e, NULL, 0, "out of memory");
  for (size_t b = 0; b < nbench; b++) {
    tps_table t;
    if (tps_table_read(bench[b], &t, e)) { free(out); return -1; }
    tps_thr_check_row *row = &out[b];
    copy(row->bench, sizeof row->bench, bench[b]);
    const tps_path *p = tps_path_find(t.kpath);
    int rc = 0;
    if (t.kind != TPS_TABLE_GEMM) rc = tps_err_set(e, bench[b], 0, "not a bench gemm table (%s)", tps_table_kind_names[t.kind]);
    else if (!p || t.k < 1 || t.n < 1) rc = tps_err_set(e, bench[b], 0, "no '#@ path', '#@ k' and '#@ n' lines (a bench gemm table has them)");
    const tps_thr_gemm *g = NULL;
    for (size_t i = 0; !rc && i < d->ngemm; i++)
      if (d->gemm[i].k == t.k && d->gemm[i].n == t.n && d->gemm[i].path == (int)p->id && !strcmp(d->gemm[i].status, "measured"))
        g = &d->gemm[i];
    if (!rc && !g)
      rc = tps_err_set(e, bench[b], 0, "%s has no measured calibration of %ldx%ld %s", f->path, t.k, t.n, p->name);
    tps_cal_gemm cg;
    memset(&cg, 0, sizeof cg);
    if (!rc && tps_cal_gemm_fit(&cg, g->path, g->k, g->n, gpu, NULL, TPS_XG_FLUSHED, g->rows, g->t_us, g->npts, g->method) != TPS_OK)
      rc = tps_err_set(e, f->path, 0, "the calibration of %ldx%ld %s cannot be refitted", g->k, g->n, p->name);
    if (!rc) {
      double *rel = calloc(t.nrows, sizeof *rel);
      if (!rel) rc = tps_err_set(e, NULL, 0, "out of memory");
      else {
        row->k = t.k;
        row->n = t.n;
        row->path = p->id;
        row->nscored = tps_cal_gemm_score(&cg, t.rows, t.time_us, t.nrows, rel);
        row->nswept = 0;
        row->nm = t.nrows;
        row->m = malloc(t.nrows * sizeof *row->m);
        row->measured_us = malloc(t.nrows * sizeof *row->measured_us);
        row->model_us = malloc(t.nrows * sizeof *row->model_us);
        row->swept = calloc(t.nrows, 1);
        if (!row->m || !row->measured_us || !row->model_us || !row->swept) rc = tps_err_set(e, NULL, 0, "out of memory");
        for (size_t i = 0; !rc && i < t.nrows; i++) {
          row->m[i] = t.rows[i];
          row->measured_us[i] = t.time_us[i];
          row->model_us[i] = tps_cal_gemm_time_us(&cg, (double)t.rows[i]);
          for (size_t j = 0; j < g->npts; j++) if (g->rows[j] == t.rows[i]) row->swept[i] = 1;
          row->nswept += (size_t)row->swept[i];
        }
        tps_loo_err s = tps_loo_summary(rel, t.nrows);
        row->med_abs = s.med_abs;
        row->max_abs = s.max_abs;
        row->within = row->nscored > 0 && s.med_abs <= tol_med && s.max_abs <= tol_max;
        if (!rc && !row->nscored) rc = tps_err_set(e, bench[b], 0, "no row outside the calibration sweep to score");
        free(rel);
      }
    }
    tps_cal_gemm_free(&cg);
    tps_table_free(&t);
    if (rc) { tps_thr_check_free(out, b + 1); return -1; }
  }
  *rows = out;
  *nrows = nbench;
  return 0;
}

void tps_thr_check_free(tps_thr_check_row *rows, size_t n) {
  for (size_t i = 0; rows && i < n; i++) {
    free(rows[i].m);
    free(rows[i].measured_us);
    free(rows[i].model_us);
    free(rows[i].swept);
  }
  free(rows);
}

int tps_thr_check_within(const tps_thr_check_row *rows, size_t n) {
  for (size_t i = 0; i < n; i++) if (!rows[i].within) return 0;
  return n > 0;
}

int tps_thr_check_print(FILE *fp, const tps_thr_check_row *rows, size_t n, double tol_med, double tol_max, int per_row) {
  int all = 1;
  fprintf(fp, "# calibrated GEMM model vs full bench gemm tables, rows outside the sweep; tolerance median <= %.1f%%, max <= %.1f%%\n",
          100 * tol_med, 100 * tol_max);
  fprintf(fp, "# thr_mean, thr_worst: the largest mean and worst excess of the part's thresholds (split_from_tokens), be_: of\n"
              "# breakeven_tokens as the threshold; '-': not scored (decision quality below)\n");
  fprintf(fp, "shape\tpath\tscored\tswept\tmed_err\tmax_err\tverdict\tbench\tthr_mean\tthr_worst\tbe_mean\tbe_worst\n");
  for (size_t i = 0; i < n; i++) {
    const tps_thr_check_row *r = &rows[i];
    double m, w, bm, bw;
    tps_thr_check_excess_max(r, 0, &m, &w);
    tps_thr_check_excess_max(r, 1, &bm, &bw);
    fprintf(fp, "%ldx%ld\t%s\t%zu\t%zu\t%.2f%%\t%.2f%%\t%s\t%s", r->k, r->n, tps_path_name(r->path), r->nscored, r->nswept,
            100 * r->med_abs, 100 * r->max_abs, r->within ? "within" : "OUTSIDE", r->bench);
    tps_thr_pct_or_dash(fp, m, 2);
    tps_thr_pct_or_dash(fp, w, 1);
    tps_thr_pct_or_dash(fp, bm, 2);
    tps_thr_pct_or_dash(fp, bw, 1);
    fprintf(fp, "\n");
    if (!r->within) all = 0;
  }
  fprintf(fp, "# %s\n", all ? "every part within tolerance" : "some part outside tolerance");
  tps_thr_check_print_excess(fp, rows, n);
  if (per_row) {
    fprintf(fp, "# every bench row: the calibrated model vs the bench ('sweep': a row of the calibration, not scored)\n");
    fprintf(fp, "shape\tpath\trows\tbench_us\tcalibrated_us\terr\n");
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < rows[i].nm; j++)
        fprintf(fp, "%ldx%ld\t%s\t%ld\t%.3f\t%.3f\t%+.2f%%%s\n", rows[i].k, rows[i].n, tps_path_name(rows[i].path),
                rows[i].m[j], rows[i].measured_us[j], rows[i].model_us[j],
                100 * (rows[i].model_us[j] / rows[i].measured_us[j] - 1), rows[i].swept[j] ? "\tsweep" : "");
  }
  return all;
}

json_t *tps_thr_check_json(const tps_thr_check_row *rows, size_t n, double tol_med, double tol_max) {
  json_t *root = json_object(), *a = json_array();
  int all = 1;
  for (size_t i = 0; i < n; i++) {
    const tps_thr_check_row *r = &rows[i];
    json_t *x = json_object();
    json_object_set_new(x, "bench", json_string(r->bench));
    json_object_set_new(x, "k", json_integer(r->k));
    json_object_set_new(x, "n", json_integer(r->n));
    json_object_set_new(x, "path", json_string(tps_path_name(r->path)));
    json_object_set_new(x, "scored", json_integer((json_int_t)r->nscored));
    json_object_set_new(x, "swept", json_integer((json_int_t)r->nswept));
    json_object_set_new(x, "median_abs_rel", jnum(r->med_abs));
    json_object_set_new(x, "max_abs_rel", jnum(r->max_abs));
    json_object_set_new(x, "within", json_boolean(r->within));
    if (r->nex) json_object_set_new(x, "excess", tps_thr_check_excess_json(r));
    json_array_append_new(a, x);
    if (!r->within) all = 0;
  }
  json_object_set_new(root, "tolerance", json_pack("{s:f,s:f}", "median_abs_rel", tol_med, "max_abs_rel", tol_max));
  json_object_set_new(root, "parts", a);
  json_object_set_new(root, "within", json_boolean(all));
  return root;
}
