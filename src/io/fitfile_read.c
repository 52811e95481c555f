/* fitfile_read.c: the saved fit's reader (format in fitfile.h): jansson parses it (a repeated
 * key refused), every value is checked for its type and range, and the file must be in the
 * writer's canonical form, so what is accepted is written back byte for byte.
 *
 * Ranges (anything outside is an error naming the line; casts happen only after the check):
 *   sms 0..100000, tp 1..65536, k and n 0..TPS_DIM_MAX, out_bytes 0..1024,
 *   out_bytes_per_token 0..2^30, ag ranks and ranks_per_node 0..65536;
 *   gemm values |x| <= 1e9, ag values 0..1e9 (custom_cap_bytes 0..2^40, or 1e300: the
 *   fitter's "no cap", custom at every size); param value, se and interval |x| <= 1e12; cov
 *   |x| <= 1e24; point x 0..2^50, times 0..1e9 us, relative errors |x| <= 1e6; stat dof,
 *   loo_failed, iterations whole 0..1e9, rcond 0..1, other stats |x| <= 1e15 or null. */
#include "config.h"
#include "src/io/fitfile.h"
#include "src/io/fitfile_int.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/base/util.h"

typedef struct {
  const char *path, *data;
  size_t len;
  tps_err *e;
  tps_fit *f;
} rd;

static long line_of(const rd *R, size_t off) {
  long ln = 1;
  for (size_t i = 0; i < off && i < R->len; i++) ln += R->data[i] == '\n';
  return ln;
}

static const char *find(const rd *R, size_t from, const char *s) {
  size_t n = strlen(s);
  for (size_t i = from; i + n <= R->len; i++)
    if (memcmp(R->data + i, s, n) == 0) return R->data + i;
  return NULL;
}

/* The line of "key" (inside the top-level section sec when not NULL; the nth occurrence of key
 * after it, n from 0), 0 when not found.  Called only on a failure: it scans the text, and
 * computing it for every field made reading a fit quadratic in its points (90 s for the made-up
 * fits of tests/unit/io/test_fitfile). */
static long where(const rd *R, const char *sec, const char *key, size_t nth) {
  char k[80];
  size_t at = 0;
  if (sec) {
    snprintf(k, sizeof k, "\"%s\":", sec);
    const char *s = find(R, 0, k);
    if (!s) return 0;
    at = (size_t)(s - R->data) + strlen(k);
  }
  if (!key) return line_of(R, at);
  snprintf(k, sizeof k, "\"%s\":", key);
  for (size_t i = 0;; i++) {
    const char *s = find(R, at, k);
    if (!s) return 0;
    if (i == nth) return line_of(R, (size_t)(s - R->data));
    at = (size_t)(s - R->data) + 1;
  }
}

#define FAIL(ln, ...) tps_err_set(R->e, R->path, (ln), __VA_ARGS__)

/* obj[key] as a number in [lo, hi] (null: NaN, when nullok); sec/nth locate it for messages. */
static int num(const rd *R, json_t *obj, const char *sec, const char *key, size_t nth, double lo, double hi, int nullok,
               double *v) {
  json_t *j = json_object_get(obj, key);
  if (!j) return FAIL(where(R, sec, NULL, 0), "missing '%s'%s%s", key, sec ? " in " : "", sec ? sec : "");
  if (json_is_null(j) && nullok) { *v = NAN; return 0; }
  if (!json_is_number(j)) return FAIL(where(R, sec, key, nth), "'%s'%s%s is not a number%s", key, sec ? " in " : "", sec ? sec : "", nullok ? " or null" : "");
  *v = json_number_value(j);
  if (!(*v >= lo && *v <= hi))
    return FAIL(where(R, sec, key, nth), "%s%s%s %.17g is outside %g..%g", sec ? sec : "", sec ? " " : "", key, *v, lo, hi);
  return 0;
}

/* obj[key] as a whole number in [lo, hi]. */
static int whole(const rd *R, json_t *obj, const char *sec, const char *key, long lo, long hi, long *v) {
  json_t *j = json_object_get(obj, key);
  if (!j) return FAIL(where(R, sec, NULL, 0), "missing '%s'%s%s", key, sec ? " in " : "", sec ? sec : "");
  if (!json_is_integer(j)) return FAIL(where(R, sec, key, 0), "'%s' is not a whole number", key);
  json_int_t x = json_integer_value(j);
  if (x < lo || x > hi) return FAIL(where(R, sec, key, 0), "%s%s%s %lld is outside %ld..%ld", sec ? sec : "", sec ? " " : "", key, (long long)x, lo, hi);
  *v = (long)x;
  return 0;
}

/* obj[key] as a string (null allowed when nullok: *s = NULL). */
static int str(const rd *R, json_t *obj, const char *key, int nullok, const char **s) {
  json_t *j = json_object_get(obj, key);
  if (!j) return FAIL(0, "missing '%s'", key);
  if (json_is_null(j) && nullok) { *s = NULL; return 0; }
  if (!json_is_string(j)) return FAIL(where(R, NULL, key, 0), "'%s' is not a string", key);
  *s = json_string_value(j);
  return 0;
}

/* Every key of obj in names (count n), else an error naming the first other. */
static int only(const rd *R, json_t *obj, const char *sec, const char *const *names, size_t n) {
  const char *k;
  json_t *v;
  json_object_foreach(obj, k, v) {
    size_t i = 0;
    while (i < n && strcmp(names[i], k)) i++;
    if (i == n) return FAIL(where(R, sec, k, 0), "unknown key '%s'%s%s", k, sec ? " in " : "", sec ? sec : "");
  }
  return 0;
}

static const char *const top_keys[] = {"format", "schema_version", "written_by", "sources", "kind", "gpu", "path", "sms", "tp", "k",
                                       "n", "out_bytes", "out_bytes_per_token", "gather_mode", "gemm", "ag", "fixed",
                                       "params", "cov", "points", "stats"};
#define NTOP (sizeof top_keys / sizeof top_keys[0])

static int read_head(const rd *R, json_t *root, tps_fitfile_prov *pv) {
  tps_fit *f = R->f;
  const char *s;
  long v;
  double d;
  if (str(R, root, "written_by", 0, &s)) return -1;
  if (pv && !(pv->written_by = strdup(s))) return FAIL(0, "out of memory");
  json_t *src = json_object_get(root, "sources");
  if (!json_is_array(src)) return FAIL(where(R, NULL, "sources", 0), "'sources' is not a list of file names");
  for (size_t i = 0; i < json_array_size(src); i++) {
    json_t *x = json_array_get(src, i);
    if (!json_is_string(x)) return FAIL(where(R, NULL, "sources", 0) + 1 + (long)i, "sources[%zu] is not a file name", i);
    if (!pv) continue;
    char **q = realloc(pv->sources, (pv->nsources + 1) * sizeof *q);
    if (!q) return FAIL(0, "out of memory");
    pv->sources = q;
    if (!(q[pv->nsources] = strdup(json_string_value(x)))) return FAIL(0, "out of memory");
    pv->nsources++;
  }
  if (str(R, root, "kind", 0, &s)) return -1;
  if (!strcmp(s, "split")) f->kind = TPS_FIT_SPLIT;
  else if (!strcmp(s, "gemm")) f->kind = TPS_FIT_GEMM;
  else if (!strcmp(s, "allgather")) f->kind = TPS_FIT_ALLGATHER;
  else return FAIL(where(R, NULL, "kind", 0), "unknown fit kind '%s' (split, gemm, allgather)", s);
  if (str(R, root, "gpu", 0, &s)) return -1;
  if (strlen(s) >= sizeof f->gpu) return FAIL(where(R, NULL, "gpu", 0), "GPU name too long");
  memcpy(f->gpu, s, strlen(s) + 1);
  if (str(R, root, "path", 1, &s)) return -1;
  if (s && !(f->gemm.path = tps_path_find(s))) return FAIL(where(R, NULL, "path", 0), "unknown kernel path '%s'", s);
  if (whole(R, root, NULL, "sms", 0, 100000, &v)) return -1;
  f->gemm.sms = (int)v;
  if (whole(R, root, NULL, "tp", 1, 65536, &v)) return -1;
  f->tp = (int)v;
  if (whole(R, root, NULL, "k", 0, TPS_DIM_MAX, &f->shape.k) || whole(R, root, NULL, "n", 0, TPS_DIM_MAX, &f->shape.n)) return -1;
  if (num(R, root, NULL, "out_bytes", 0, 0, 1024, 0, &d)) return -1;
  f->shape.out_bytes = d;
  if (num(R, root, NULL, "out_bytes_per_token", 0, 0, 1073741824.0, 0, &f->out_bytes_per_token)) return -1;
  if (str(R, root, "gather_mode", 0, &s)) return -1;
  if ((f->gather = tps_gather_parse(s)) < 0) {
    char names[64];
    return FAIL(where(R, NULL, "gather_mode", 0), "unknown gather_mode '%s' (%s)", s, tps_gather_names(names, sizeof names));
  }
  if (str(R, root, "fixed", 0, &s)) return -1;
  /* kept whole or refused: a note cut inside a UTF-8 character would not read back */
  if (strlen(s) >= sizeof f->fixed_note)
    return FAIL(where(R, NULL, "fixed", 0), "'fixed' note of %zu bytes, longer than %zu", strlen(s), sizeof f->fixed_note - 1);
  memcpy(f->fixed_note, s, strlen(s) + 1);
  return 0;
}

static int read_models(const rd *R, json_t *root) {
  tps_fit *f = R->f;
  json_t *g = json_object_get(root, "gemm"), *a = json_object_get(root, "ag");
  if (!json_is_object(g)) return FAIL(where(R, NULL, "gemm", 0), "'gemm' is not an object of the GEMM model's parameters");
  if (!json_is_object(a)) return FAIL(where(R, NULL, "ag", 0), "'ag' is not an object of the all-gather model's fields");
  if (only(R, g, "gemm", tps_gemm_par_names, TPS_GEMM_NPAR)) return -1;
  for (int j = 0; j < TPS_GEMM_NPAR; j++)
    if (num(R, g, "gemm", tps_gemm_par_names[j], 0, -1e9, 1e9, 0, &f->gemm.p[j])) return -1;
  tps_fitfile_field af[32];
  size_t naf = tps_fitfile_ag_fields(f, af);
  const char *names[34] = {"ranks", "ranks_per_node"};
  for (size_t i = 0; i < naf; i++) names[2 + i] = af[i].name;
  if (only(R, a, "ag", names, naf + 2)) return -1;
  long v;
  if (whole(R, a, "ag", "ranks", 0, 65536, &v)) return -1;
  f->ag.ranks = (int)v;
  if (whole(R, a, "ag", "ranks_per_node", 0, 65536, &v)) return -1;
  f->ag.ranks_per_node = (int)v;
  for (size_t i = 0; i < naf; i++) {
    int cap = !strcmp(af[i].name, "custom_cap_bytes");
    json_t *j = json_object_get(a, af[i].name);
    double x = json_is_number(j) ? json_number_value(j) : 0;
    int nocap = cap && x >= 1e299 && x <= 1e301; /* the fitter's "custom at every size" */
    if (num(R, a, "ag", af[i].name, 0, 0, nocap ? 1e301 : cap ? 1099511627776.0 : 1e9, 0, af[i].v)) return -1;
  }
  return 0;
}

static int read_params(const rd *R, json_t *root) {
  tps_fit *f = R->f;
  json_t *ps = json_object_get(root, "params"), *cv = json_object_get(root, "cov");
  if (!json_is_array(ps)) return FAIL(where(R, NULL, "params", 0), "'params' is not a list");
  if (json_array_size(ps) > TPS_FIT_MAXPAR) return FAIL(where(R, NULL, "params", 0), "more than %d parameters", TPS_FIT_MAXPAR);
  static const char *const pk[] = {"name", "value", "se", "lo95", "hi95"};
  for (size_t j = 0; j < json_array_size(ps); j++) {
    json_t *p = json_array_get(ps, j);
    if (!json_is_object(p)) return FAIL(where(R, "params", NULL, 0) + 1 + (long)j, "params[%zu] is not an object", j);
    if (only(R, p, "params", pk, 5)) return -1;
    json_t *nm = json_object_get(p, "name");
    int t = json_is_string(nm) ? tps_fit_target_from_name(json_string_value(nm)) : -1;
    if (t < 0) return FAIL(where(R, "params", "name", j), "params[%zu]: unknown parameter name", j);
    for (int q = 0; q < f->npar; q++)
      if (f->par_target[q] == t) return FAIL(where(R, "params", "name", j), "'param %s' given twice", json_string_value(nm));
    double *dst[4] = {&f->theta[j], &f->se[j], &f->lo95[j], &f->hi95[j]};
    for (int k = 1; k < 5; k++) /* se: a standard error, never negative */
      if (num(R, p, "params", pk[k], j, k == 2 ? 0 : -1e12, 1e12, 0, dst[k - 1])) return -1;
    f->par_target[j] = t;
    snprintf(f->par_name[j], sizeof f->par_name[j], "%s", json_string_value(nm));
    f->npar++;
  }
  if (!json_is_array(cv) || json_array_size(cv) != (size_t)f->npar)
    return FAIL(where(R, NULL, "cov", 0), "'cov' is not a list of %d rows (one per parameter)", f->npar);
  long l0 = where(R, NULL, "cov", 0);
  for (int a = 0; a < f->npar; a++) {
    json_t *row = json_array_get(cv, (size_t)a);
    if (!json_is_array(row) || json_array_size(row) != (size_t)f->npar)
      return FAIL(l0 + 1 + a, "cov row %d needs %d values (one per parameter)", a, f->npar);
    for (int b = 0; b < f->npar; b++) {
      json_t *x = json_array_get(row, (size_t)b);
      double v = json_is_number(x) ? json_number_value(x) : NAN;
      if (!(fabs(v) <= 1e24)) return FAIL(l0 + 1 + a, "cov[%d][%d] is not a number in -1e24..1e24", a, b);
      f->cov[a * f->npar + b] = v;
    }
  }
  for (int a = 0; a < f->npar; a++) /* a covariance: variances >= 0, the matrix symmetric */
    for (int b = 0; b <= a; b++) {
      double x = f->cov[a * f->npar + b], y = f->cov[b * f->npar + a];
      if (a == b && x < 0) return FAIL(l0 + 1 + a, "cov[%d][%d] %g: a variance cannot be negative", a, a, x);
      if (fabs(x - y) > 1e-9 * fmax(fabs(x), fabs(y))) return FAIL(l0 + 1 + a, "cov[%d][%d] %g but cov[%d][%d] %g: a covariance is symmetric", a, b, x, b, a, y);
    }
  return 0;
}

/* No point twice (a series at one x): sorted, not pairwise (a reader quadratic in its points took 90 s). */
typedef struct { int s; double x; size_t i; } pkey;
static int cmp_pkey(const void *a, const void *b) {
  const pkey *p = a, *q = b;
  if (p->s != q->s) return p->s < q->s ? -1 : 1;
  if (p->x != q->x) return p->x < q->x ? -1 : 1;
  return p->i < q->i ? -1 : p->i > q->i;
}
static int check_points(const rd *R, json_t *pts) {
  size_t n = json_array_size(pts);
  pkey *k = malloc((n ? n : 1) * sizeof *k);
  if (!k) return FAIL(where(R, NULL, "points", 0), "out of memory");
  static const char *const sn[] = {"replicated", "split", "gemm", "allgather"};
  for (size_t i = 0; i < n; i++) {
    const char *s = json_string_value(json_object_get(json_array_get(pts, i), "series"));
    k[i].s = 0;
    for (int j = 0; j < 4; j++) if (s && !strcmp(s, sn[j])) k[i].s = j;
    k[i].x = R->f->pt[i].x, k[i].i = i;
  }
  qsort(k, n, sizeof *k, cmp_pkey);
  for (size_t i = 1; i < n; i++)
    if (k[i].s == k[i - 1].s && k[i].x == k[i - 1].x) {
      size_t at = k[i].i, before = k[i - 1].i;
      int si = k[i].s;
      free(k);
      return FAIL(where(R, "points", "series", at), "points[%zu]: %s at x %g again (also points[%zu])", at, sn[si], R->f->pt[at].x,
                  before);
    }
  free(k);
  return 0;
}

static int read_points(const rd *R, json_t *root) {
  tps_fit *f = R->f;
  json_t *pts = json_object_get(root, "points");
  if (!json_is_array(pts)) return FAIL(where(R, NULL, "points", 0), "'points' is not a list");
  if (json_array_size(pts) > TPS_FIT_MAXPTS) return FAIL(where(R, NULL, "points", 0), "more than %d points", TPS_FIT_MAXPTS);
  static const char *const k[] = {"series", "x", "measured_us", "model_us", "rel_resid", "loo_rel", "gather_us", "gather_se_us", "backend"};
  static const double lo[7] = {0, 0, 0, -1e6, -1e6, 0, 0}, hi[7] = {1125899906842624.0, 1e9, 1e9, 1e6, 1e6, 1e9, 1e9};
  for (size_t i = 0; i < json_array_size(pts); i++) {
    json_t *p = json_array_get(pts, i);
    if (!json_is_object(p)) return FAIL(where(R, "points", "series", i), "points[%zu] is not an object", i);
    if (only(R, p, "points", k, 9)) return -1;
    tps_fit_point *q = &f->pt[i];
    const char *s = json_string_value(json_object_get(p, "series"));
    if (!s || (strcmp(s, "split") && strcmp(s, "replicated") && strcmp(s, "gemm") && strcmp(s, "allgather")))
      return FAIL(where(R, "points", "series", i), "points[%zu]: unknown series (replicated, split, gemm, allgather)", i);
    q->series = !strcmp(s, "split");
    double *dst[7] = {&q->x, &q->measured_us, &q->model_us, &q->rel_resid, &q->loo_rel, &q->gather_us, &q->gather_se_us};
    for (int j = 0; j < 7; j++)
      if (num(R, p, "points", k[1 + j], i, lo[j], hi[j], j >= 3, dst[j])) return -1;
    json_t *b = json_object_get(p, "backend");
    q->backend = json_is_string(b) ? tps_gather_parse(json_string_value(b)) : -1;
    if (!(json_is_null(b) || (q->backend >= 0 && !tps_gathers[q->backend].rule))) /* a point ran one backend */
      return FAIL(where(R, "points", "series", i), "points[%zu]: backend is not a backend that runs (custom, nccl) or null", i);
    f->npts++;
  }
  return check_points(R, pts);
}

static int read_stats(const rd *R, json_t *root) {
  json_t *st = json_object_get(root, "stats");
  if (!json_is_object(st)) return FAIL(where(R, NULL, "stats", 0), "'stats' is not an object");
  if (only(R, st, "stats", tps_fitfile_stat_names, TPS_FITFILE_NSTAT)) return -1;
  int *wi[TPS_FITFILE_NSTAT];
  double *wd[TPS_FITFILE_NSTAT];
  tps_fitfile_stats(R->f, wi, wd);
  for (int i = 0; i < TPS_FITFILE_NSTAT; i++) {
    const char *nm = tps_fitfile_stat_names[i];
    long v;
    if (wi[i]) {
      if (whole(R, st, "stats", nm, 0, 1000000000L, &v)) return -1;
      *wi[i] = (int)v;
    } else if (num(R, st, "stats", nm, 0, !strcmp(nm, "rcond") ? 0 : -1e15, !strcmp(nm, "rcond") ? 1 : 1e15, 1, wd[i])) {
      return -1;
    }
  }
  return 0;
}

/* What the kind needs, the model usable, and one value per fitted parameter. */
static int check_fit(const rd *R) {
  tps_fit *f = R->f;
  if (f->kind != TPS_FIT_ALLGATHER) {
    if (!f->gemm.path) return FAIL(where(R, NULL, "path", 0), "a %s fit needs a kernel path", tps_fit_kind_name(f->kind));
    if (f->gemm.sms < 1 || f->shape.k < 1 || f->shape.n < 1 || !(f->shape.out_bytes > 0))
      return FAIL(where(R, NULL, "sms", 0), "sms, k, n and out_bytes must be > 0");
  }
  if (f->kind == TPS_FIT_SPLIT && (f->tp < 2 || !(f->out_bytes_per_token > 0)))
    return FAIL(where(R, NULL, "tp", 0), "a split fit needs tp >= 2 and out_bytes_per_token > 0");
  f->gemm.kind = TPS_GEMM_PARAMETRIC;
  tps_fit before = *f;
  if (tps_fit_set_theta(f, f->theta) != 0)
    return FAIL(where(R, NULL, "params", 0), "a fitted parameter is outside its domain (a bandwidth or throughput <= 0, a time < 0)");
  for (int j = 0; j < TPS_GEMM_NPAR; j++)
    if (memcmp(&before.gemm.p[j], &f->gemm.p[j], sizeof f->gemm.p[j]))
      return FAIL(where(R, "gemm", tps_gemm_par_names[j], 0), "gemm %s is %.17g but its fitted value in params is %.17g: one value "
                  "per parameter", tps_gemm_par_names[j], before.gemm.p[j], f->gemm.p[j]);
  if (memcmp(&before.ag, &f->ag, sizeof f->ag))
    return FAIL(where(R, NULL, "ag", 0), "an 'ag' value differs from its fitted value in params: one value per parameter");
  for (int j = 0; j < f->npar; j++) /* after the domain: a value outside its own interval was edited without it */
    if (!(f->lo95[j] <= f->theta[j] && f->theta[j] <= f->hi95[j]))
      return FAIL(where(R, "params", "lo95", (size_t)j), "params[%d]: value %g outside its own 95%% interval %g..%g", j, f->theta[j],
                  f->lo95[j], f->hi95[j]);
  if (f->kind != TPS_FIT_ALLGATHER && !isfinite(tps_gemm_time_us(&f->gemm, &f->shape, 1)))
    return FAIL(where(R, NULL, "params", 0), "the GEMM model is not usable (a bandwidth or throughput <= 0)");
  return 0;
}

/* The old positional text form: refused, saying how to regenerate it from its sources. */
static int refuse_old(const rd *R) {
  char src[1024] = "";
  const char *p = R->data, *end = R->data + R->len;
  long ln = 0, fmt = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    ln++;
    if (!fmt && n >= 7 && !strncmp(p, "format\t", 7)) fmt = ln;
    if (n > 7 && !strncmp(p, "source\t", 7) && strlen(src) + n < sizeof src - 8) {
      size_t l = strlen(src);
      snprintf(src + l, sizeof src - l, " %.*s", (int)(n - 7), p + 7);
    }
    p = nl ? nl + 1 : end;
  }
  return FAIL(fmt ? fmt : 1, "a fit file of the old positional text form (tpsplit-fit 1), which this tpsplit no longer reads "
              "(fit files are JSON since schema version %d): regenerate it with `tpsplit fit -o FILE%s`", TPS_FITFILE_VERSION,
              src[0] ? src : " MEASUREMENTS");
}

/* The bytes must be what the writer writes for what was read (pv: the provenance read). */
static int check_canonical(const rd *R, const tps_fitfile_prov *pv) {
  char *buf = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&buf, &n);
  if (!fp) return FAIL(0, "out of memory");
  int wrc = tps_fitfile_write_prov(fp, R->f, pv);
  if (fclose(fp) || wrc) { free(buf); return FAIL(0, "out of memory"); }
  size_t i = 0;
  while (i < n && i < R->len && buf[i] == R->data[i]) i++;
  int rc = 0;
  if (i == R->len && n == R->len + 1 && buf[i] == '\n') {
    rc = FAIL(line_of(R, i), "no newline at the end of the file: the last line may be cut short (a copy or a run that stopped?)");
  } else if (i < n || i < R->len) {
    size_t a = i, b;
    while (a > 0 && buf[a - 1] != '\n') a--;
    for (b = a; b < n && buf[b] != '\n'; b++) {}
    rc = FAIL(line_of(R, i), "not in the canonical form tpsplit writes (key order, two-space indent, one list element a "
              "line, numbers in their shortest exact form): this line should read '%.*s'", (int)(b - a > 200 ? 200 : b - a), buf + a);
  }
  free(buf);
  return rc;
}

int tps_fitfile_read_prov(const char *path, const char *data, size_t len, tps_fit *f, tps_fitfile_prov *pv, tps_err *e) {
  rd R0 = {path, data, len, e, f}, *R = &R0;
  tps_fitfile_prov own = {NULL, NULL, 0};
  memset(f, 0, sizeof *f);
  if (pv) memset(pv, 0, sizeof *pv);
  if (len == 0) return FAIL(0, "empty file");
  if (tps_fitfile_sniff_old(data, len)) return refuse_old(R);
  json_error_t je;
  json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) return FAIL(je.line > 0 ? je.line : 1, "not a tpsplit fit file (JSON: %s)", je.text);
  int rc = -1;
  json_t *fm = json_object_get(root, "format"), *sv = json_object_get(root, "schema_version");
  if (!json_is_string(fm) || strcmp(json_string_value(fm), "tpsplit-fit")) {
    FAIL(1, "not a tpsplit fit file (no \"format\": \"tpsplit-fit\")");
    goto out;
  }
  if (!json_is_integer(sv) || json_integer_value(sv) != TPS_FITFILE_VERSION) {
    FAIL(where(R, NULL, "schema_version", 0), "fit file schema_version is not %d, the one this tpsplit reads", TPS_FITFILE_VERSION);
    goto out;
  }
  if (only(R, root, NULL, top_keys, NTOP) || read_head(R, root, &own) || read_models(R, root) || read_params(R, root) ||
      read_points(R, root) || read_stats(R, root) || check_canonical(R, &own) || check_fit(R))
    goto out;
  rc = 0;
out:
  json_decref(root);
  if (pv && !rc) *pv = own;
  else tps_fitfile_prov_free(&own);
  if (rc) memset(f, 0, sizeof *f);
  return rc;
}

int tps_fitfile_read_mem(const char *path, const char *data, size_t len, tps_fit *f, tps_err *e) {
  return tps_fitfile_read_prov(path, data, len, f, NULL, e);
}

int tps_fitfile_read(const char *path, tps_fit *f, tps_err *e) {
  tps_buf b;
  memset(f, 0, sizeof *f);
  if (tps_buf_read(path, &b, e)) return -1; /* the 64 MiB cap, a pipe's or FIFO's timeout */
  int rc = tps_fitfile_read_mem(path, b.data, b.len, f, e);
  tps_buf_free(&b);
  return rc;
}
