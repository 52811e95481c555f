/* thresholds_read.c: the thresholds file read back (tps_thr_read and its helpers): every
 * value checked against the schema of src/io/thresholds.h, errors at FILE:LINE with the JSON
 * path of the value. */
#include "config.h"
#include "model/core/harness.h"
#include "src/io/thresholds.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "model/latency/allgather.h"
#include "src/base/jsonout.h"
#include "model/core/path.h"
#include "model/core/status.h"
#include "src/io/table.h"
#include "src/base/util.h"
#include "src/io/thr_int.h"

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
  if (pos == (size_t)-1) /* a key missing at the root (or a root that is no object): the line where the object opens */
    for (pos = 0; pos < len && t[pos] != '{'; pos++) {}
  if (pos >= len) pos = 0;
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
  else thr_copy(dst, sz, json_string_value(v));
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
      rc = bad(r, "'%s' is not a provenance kind (measured, converted, fitted, sibling, transferred, spec-only)", kind);
      pop(r, l2);
    }
  }
  if (!rc) rc = get_str(r, v, "source", 1, 0, p->source, sizeof p->source);
  if (!rc) rc = get_str(r, v, "method", 1, 0, p->method, sizeof p->method);
  long pts = -1;
  if (!rc) rc = get_int(r, v, "points", tps_prov_is_own_measurement(p->kind), 0, 1000000, 0, -1, &pts);
  p->points = (int)pts;
  if (!rc) rc = get_num(r, v, "w90_log", 0, 0, 1, 0, NAN, &p->w90_log);
  char hname[16] = "";
  p->harness = -1;
  if (!rc) rc = get_str(r, v, "harness", 0, 0, hname, sizeof hname);
  if (!rc && hname[0] && (p->harness = tps_harness_parse(hname)) < 0) {
    size_t l2 = push(r, "harness", 0);
    rc = bad(r, "'%s' is not a harness (bench, aic)", hname);
    pop(r, l2);
  }
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
  /* split_from_tokens and breakeven_tokens are not tied: the threshold of least excess may lie
   * below the break-even (an earlier win band pays) or exist without one (model/predict/excess.h) */
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
  if (!rc && e->n > 0) { /* a token's output is N elements of 1, 2 or 4 bytes (fp8, bf16, fp32): 3585 at N 1792 cannot be */
    const double b = e->out_bytes_per_token / (double)e->n;
    if (b != 1 && b != 2 && b != 4) {
      size_t l = push(r, "out_bytes_per_token", 0);
      rc = bad(r, "%g is not N %ld x 1, 2 or 4 bytes (an fp8, bf16 or fp32 output)", e->out_bytes_per_token, e->n);
      pop(r, l);
    }
  }
  if (!rc) rc = read_bands(r, x, e);
  /* a threshold no answer can write: past max_tokens, or where the split wins nowhere or only
   * later (tps_threshold_choose takes the start of a win band, --round only moves it up) */
  if (!rc && e->split_from > 0) {
    size_t l = push(r, "split_from_tokens", 0);
    if (e->split_from > e->max_tokens) rc = bad(r, "%ld is past max_tokens %ld", e->split_from, e->max_tokens);
    else if (e->have_bands && e->nbands == 0) rc = bad(r, "%ld, but win_bands_tokens is empty: the split never wins", e->split_from);
    else if (e->have_bands && e->split_from < e->band_from[0])
      rc = bad(r, "%ld is before the first win band (%ld): the split loses there", e->split_from, e->band_from[0]);
    pop(r, l);
  }
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
    thr_copy(g->config[i], TPS_THR_CONFIG, json_string_value(v));
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
  char rule[256];
  if (get_str(r, root, "rule", 1, 0, rule, sizeof rule)) return -1;
  if (strcmp(rule, TPS_THR_RULE)) {
    l = push(r, "rule", 0);
    return bad(r, "'%s', not the rule this tpsplit reads ('%s')", rule, TPS_THR_RULE);
  }
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
    tps_thr_device *d = thr_grow((void **)&f->dev, &f->ndev, sizeof *f->dev);
    if (!d) return bad(r, "out of memory");
    if (read_device(r, key, dv, d)) return -1;
    pop(r, l2);
  }
  pop(r, l);
  return 0;
}

int tps_thr_read_mem(const char *name, const char *data, size_t len, tps_thr_file *f, tps_err *e) {
  memset(f, 0, sizeof *f);
  f->wall_s = f->budget_s = NAN;
  json_error_t je;
  /* a repeated key of one object is refused (jansson would keep the last one silently) */
  json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
  if (!root) return je.line > 0 ? tps_err_set(e, name, je.line, "not JSON: %s", je.text) : tps_err_set(e, name, 0, "%s", je.text);
  rd r = {.file = name, .e = e, .path = "$", .text = data, .len = len};
  int rc = read_root(&r, root, f);
  json_decref(root);
  if (rc) { tps_thr_free(f); return -1; }
  f->path = strdup(name);
  return 0;
}

int tps_thr_read(const char *path, tps_thr_file *f, tps_err *e) {
  tps_buf b = {0};
  memset(f, 0, sizeof *f);
  if (tps_buf_read(path, &b, e)) return -1; /* the 64 MiB cap, the pipe and FIFO timeout */
  int rc = tps_thr_read_mem(path, b.data, b.len, f, e);
  tps_buf_free(&b);
  return rc;
}
