/* thresholds.c: the thresholds file (schema in thresholds.h): build, write, read and check
 * it, look entries up, and score a calibration against full benches.  Reading the JSON:
 * thresholds_read.c. */
#include "config.h"
#include "model/core/harness.h"
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
#include "src/io/thr_int.h"


/* ------------------------------------------------------------------ building */


void tps_thr_init(tps_thr_file *f) {
  memset(f, 0, sizeof *f);
  f->schema_version = TPS_THR_SCHEMA_VERSION;
  thr_copy(f->tool, sizeof f->tool, PACKAGE_NAME);
  thr_copy(f->version, sizeof f->version, PACKAGE_VERSION);
  thr_copy(f->command, sizeof f->command, tps_cmdline());
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(f->date, sizeof f->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  f->wall_s = f->budget_s = NAN;
}

void tps_thr_device_key(const char *name, char *key, size_t sz) {
  thr_copy(key, sz, name);
  for (char *c = key; *c; c++)
    if (*c == ' ') *c = '_';
}

tps_thr_device *tps_thr_add_device(tps_thr_file *f, const char *device_name) {
  tps_thr_device *d = thr_grow((void **)&f->dev, &f->ndev, sizeof *f->dev);
  if (!d) return NULL;
  thr_copy(d->name, sizeof d->name, device_name);
  tps_thr_device_key(device_name, d->key, sizeof d->key);
  d->cublaslt = -1;
  return d;
}

tps_thr_device *tps_thr_add_spec_device(tps_thr_file *f, const tps_gpu *gpu) {
  const char *cuda = tps_thr_cuda_name(gpu);
  tps_thr_device *d = tps_thr_add_device(f, cuda ? cuda : gpu->name);
  if (!d) return NULL;
  tps_thr_gpu_key(gpu, d->key, sizeof d->key);
  thr_copy(d->gpu_spec, sizeof d->gpu_spec, gpu->name);
  d->sms = gpu->sms;
  d->cc_major = gpu->cc_major;
  d->cc_minor = gpu->cc_minor;
  d->l2_bytes = (long)llround(gpu->l2_mb * 1048576.0); /* gpus.tsv holds MiB as CUDA reports them (H20 60, B200 126.5), as
                                                        * calibrate's l2_bytes (cudaDeviceProp) is bytes: 1e6 wrote 50000000 */
  d->gpus_visible = 0;
  return d;
}

tps_thr_prov tps_thr_prov_make(int kind, const char *source, const char *method) {
  tps_thr_prov p;
  memset(&p, 0, sizeof p);
  p.kind = kind;
  thr_copy(p.source, sizeof p.source, source);
  thr_copy(p.method, sizeof p.method, method);
  p.points = -1;
  p.w90_log = NAN;
  p.harness = -1;
  return p;
}

tps_thr_entry *tps_thr_add_entry(tps_thr_device *d) {
  tps_thr_entry *e = thr_grow((void **)&d->e, &d->nentries, sizeof *d->e);
  if (!e) return NULL;
  e->gemm = e->gather = tps_thr_prov_make(TPS_PROV_MEASURED, "", "");
  return e;
}

tps_thr_gemm *tps_thr_add_gemm(tps_thr_device *d) {
  tps_thr_gemm *g = thr_grow((void **)&d->gemm, &d->ngemm, sizeof *d->gemm);
  if (g) {
    g->w90_log = NAN;
    g->lopo_med[0] = g->lopo_med[1] = g->lopo_max[0] = g->lopo_max[1] = NAN;
    g->heldout_max[0] = g->heldout_max[1] = g->heldout_med[0] = g->heldout_med[1] = NAN;
    g->first_method = -1;
  }
  return g;
}

tps_thr_gather *tps_thr_add_gather(tps_thr_device *d) {
  tps_thr_gather *g = thr_grow((void **)&d->gather, &d->ngather, sizeof *d->gather);
  if (g) g->prov = tps_thr_prov_make(TPS_PROV_MEASURED, "", "");
  return g;
}

int tps_thr_add_note(tps_thr_file *f, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **slot = thr_grow((void **)&f->notes, &f->nnotes, sizeof *f->notes);
  if (!slot) return -1;
  if (!(*slot = strdup(buf))) { f->nnotes--; return -1; }
  return 0;
}

void tps_thr_entry_answer(tps_thr_entry *e, long split_from, double breakeven, double lo, double hi, long max_tokens) {
  e->breakeven = breakeven > 0 ? breakeven : 0;
  e->lo = lo > 0 ? lo : 0;
  e->hi = hi > 0 ? hi : 0;
  e->max_tokens = max_tokens;
  e->split_from = split_from > 0 ? split_from : 0;
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
  if (gpu->engine_key[0]) { thr_copy(key, sz, gpu->engine_key); return 1; }
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

json_t *tps_thr_prov_json(const tps_thr_prov *p) {
  json_t *o = json_object();
  json_object_set_new(o, "kind", json_string(tps_prov_kind_names[p->kind]));
  json_object_set_new(o, "source", json_string(p->source));
  json_object_set_new(o, "method", json_string(p->method));
  if (p->points >= 0) json_object_set_new(o, "points", json_integer(p->points));
  if (isfinite(p->w90_log)) json_object_set_new(o, "w90_log", json_real(p->w90_log));
  if (p->harness >= 0) json_object_set_new(o, "harness", json_string(tps_harness_name(p->harness)));
  if (p->kind == TPS_PROV_TRANSFERRED || p->kind == TPS_PROV_SIBLING || p->from_gpus[0]) {
    json_t *a = json_array();
    char buf[sizeof p->from_gpus], *save = NULL;
    thr_copy(buf, sizeof buf, p->from_gpus);
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
    json_object_set_new(x, "gemm", tps_thr_prov_json(&e->gemm));
    json_object_set_new(x, "gather", tps_thr_prov_json(&e->gather));
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
      json_object_set_new(x, "provenance", tps_thr_prov_json(&g->prov));
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
  json_object_set_new(root, "rule", json_string(TPS_THR_RULE));
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
  if (tps_prov_is_own_measurement(p->kind) && p->points >= 0) snprintf(buf, sz, "%s (%d points)", tps_prov_kind_names[p->kind], p->points);
  else if (p->kind == TPS_PROV_TRANSFERRED) snprintf(buf, sz, "transferred from %s", p->from_gpus);
  else if (p->kind == TPS_PROV_SIBLING) snprintf(buf, sz, "sibling %s, scaled", p->from_gpus);
  else snprintf(buf, sz, "%s", tps_prov_kind_names[p->kind]);
  if (p->harness >= 0) {
    size_t l = strlen(buf);
    snprintf(buf + l, sz - l, ", %s harness", tps_harness_name(p->harness));
  }
}

void tps_thr_entry_line(const tps_thr_entry *e, char *buf, size_t sz) {
  char g[320], a[320], iv[96];
  prov_short(&e->gemm, g, sizeof g);
  prov_short(&e->gather, a, sizeof a);
  if (e->hi > 0) snprintf(iv, sizeof iv, "90%% %.0f..%.0f", e->lo, e->hi);
  else if (e->lo > 0) snprintf(iv, sizeof iv, "90%% %.0f..beyond %ld", e->lo, e->max_tokens);
  else snprintf(iv, sizeof iv, "no interval: a rule"); /* [null, null]: a rule (pessimistic), no spread to draw */
  if (e->split_from > 0)
    snprintf(buf, sz, "%ldx%ld %s TP%d %s: split from %ld tokens (break-even %.0f, %s); gemm %s, gather %s", e->k,
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
    thr_copy(row->bench, sizeof row->bench, bench[b]);
    const tps_path *p = tps_path_find(t.kpath);
    int rc = 0;
    /* the table must be of this device: the same CUDA name, or the same GPU table row */
    const tps_gpu *tg = NULL;
    if (t.gpu[0] && gt) {
      tps_err ge;
      tps_err_clear(&ge);
      tg = tps_gpus_find(gt, t.gpu, &ge);
    }
    if (t.kind != TPS_TABLE_GEMM) rc = tps_err_set(e, bench[b], 0, "not a bench gemm table (%s)", tps_table_kind_names[t.kind]);
    else if (!t.gpu[0])
      rc = tps_err_set(e, bench[b], 0, "names no GPU ('#@ gpu:'): it cannot be checked against %s's calibration", d->name);
    else if (strcmp(t.gpu, d->name) && !(tg && gpu && tg == gpu))
      rc = tps_err_set(e, bench[b], t.gpu_line, "a table of '%s', not of %s (%s): nothing scored", t.gpu, d->name,
                       d->gpu_spec[0] ? d->gpu_spec : "not in the GPU table");
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
    /* the calibrated model stays with the row (the threshold calibrate writes from it:
     * src/cli/thr_excess.c) */
    if (!rc && (row->cal = malloc(sizeof *row->cal)) != NULL) *row->cal = cg;
    else tps_cal_gemm_free(&cg);
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
    if (rows[i].cal) tps_cal_gemm_free(rows[i].cal);
    free(rows[i].cal);
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
  for (size_t i = 0; i < n; i++)
    if (tps_path_get(rows[i].path) && tps_path_get(rows[i].path)->model == TPS_PATH_MODEL_OWN) { /* this tpsplit's dispatch */
      fprintf(fp, "# %s: between the sweep rows, the model of this tpsplit's dispatch (model/core/w8plan.h); a file whose sweep "
                  "ran\n# another dispatch (an older tpsplit) is scored against this one, not against its own\n",
              tps_path_name(rows[i].path));
      break;
    }
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
