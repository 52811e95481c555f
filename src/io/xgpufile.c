/* xgpufile.c: data/xgpu.fit, its writer and its reader (format in xgpufile.h). */
#include "config.h"
#include "src/io/xgpufile.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/io/table.h"
#include "src/base/util.h"

static const char *const provenance[] = {
    "tpsplit cross-GPU fits: `tpsplit fit --xgpu -o data/xgpu.fit` wrote this file (deterministic);",
    "regenerate it after changing data/aic/, data/h200_gemm_*.tsv, data/gpus.tsv or model/latency/xgemm.c,",
    "model/latency/xgather.c (tests/cli/parts.sh checks that it equals a fresh fit).  Fields: src/io/xgpufile.h."};
#define NPROV (sizeof provenance / sizeof provenance[0])

/* The name of gather parameter j (see model/latency/xgather.h). */
static void ga_name(int j, char *b, size_t n) {
  if (j == TPS_XGA_LLCAP) snprintf(b, n, "llcap_gbps");
  else if (j == TPS_XGA_SHARP) snprintf(b, n, "sharp");
  else if (j >= TPS_XGA_PHI(0)) snprintf(b, n, "phi_%s", tps_xga_proto_names[j - TPS_XGA_PHI(0)]);
  else {
    static const char *const w[3] = {"a_%s_us", "b_%s_us", "f_%s"};
    snprintf(b, n, w[j % 3], tps_xga_proto_names[j / 3]);
  }
}

static void num(FILE *fp, double x) {
  char b[64];
  if (!isfinite(x)) { fputs("null", fp); return; }
  if (x == 0) { fputs("0", fp); return; }
  tps_fmt_num(b, sizeof b, x);
  fputs(b, fp);
}

static void str(FILE *fp, const char *s) {
  json_t *j = json_string(s);
  char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
  fputs(d ? d : "\"\"", fp);
  free(d);
  json_decref(j);
}

static void head(FILE *fp, const char *held, double sigma, const char *trained) {
  fputs(", \"held_out\": ", fp);
  if (strcmp(held, "-")) str(fp, held); else fputs("null", fp);
  fputs(", \"sigma\": ", fp);
  num(fp, sigma);
  fputs(", \"trained_on\": ", fp);
  str(fp, trained);
  fputs(", \"params\": {", fp);
}

int tps_xgpu_write(FILE *fp, const tps_xgpu_file *x) {
  fprintf(fp, "{\n  \"format\": \"tpsplit-xgpu\",\n  \"schema_version\": %d,\n  \"provenance\": [\n", TPS_XGPU_VERSION);
  for (size_t i = 0; i < NPROV; i++) { fputs("    ", fp); str(fp, provenance[i]); fputs(i + 1 < NPROV ? ",\n" : "\n", fp); }
  fputs("  ],\n  \"gemm\": [", fp);
  for (int i = 0; i < x->nxg; i++) {
    const tps_res_xgemm *r = &x->xg[i];
    fprintf(fp, "%s{\"path\": \"%s\"", i ? ",\n    " : "\n    ", tps_xg_path_names[r->path]);
    head(fp, r->held, r->sigma, r->trained);
    for (int j = 0; j < TPS_XG_NPAR; j++) { fprintf(fp, "%s\"%s\": ", j ? ", " : "", tps_xg_par_names[j]); num(fp, r->m.p[j]); }
    fputs("}, \"sharp\": ", fp);
    num(fp, r->m.sharp);
    fputs("}", fp);
  }
  fputs(x->nxg ? "\n  ],\n  \"gather\": [" : "],\n  \"gather\": [", fp);
  for (int i = 0; i < x->nxa; i++) {
    const tps_res_xgather *r = &x->xa[i];
    fprintf(fp, "%s{\"fabric\": \"%s\"", i ? ",\n    " : "\n    ", r->pcie ? "pcie" : "nvlink");
    head(fp, r->held, r->sigma, r->trained);
    for (int j = 0; j < TPS_XGA_NPAR; j++) {
      char nm[32];
      ga_name(j, nm, sizeof nm);
      fprintf(fp, "%s\"%s\": ", j ? ", " : "", nm);
      num(fp, r->m.p[j]);
    }
    fputs("}, \"symm_lat_us\": ", fp); num(fp, r->m.symm_lat_us);
    fputs(", \"custom_floor_us\": ", fp); num(fp, r->m.custom_floor_us);
    fputs(", \"custom_eff\": ", fp); num(fp, r->m.custom_eff);
    fputs("}", fp);
  }
  fputs(x->nxa ? "\n  ],\n  \"w8a16\": " : "],\n  \"w8a16\": ", fp);
  if (x->have_w8) {
    fputs("{\"gpu\": ", fp); str(fp, x->w8_gpu);
    fputs(", \"file\": ", fp); str(fp, x->w8_file);
    fputs(", \"sigma\": ", fp); num(fp, x->w8_sigma);
    fputs(", \"params\": {", fp);
    for (int j = 0; j < TPS_XW8_NPAR; j++) { fprintf(fp, "%s\"%s\": ", j ? ", " : "", tps_xw8_par_names[j]); num(fp, x->w8.p[j]); }
    fputs("}}\n}\n", fp);
  } else {
    fputs("null\n}\n", fp);
  }
  return ferror(fp) ? -1 : 0;
}

/* ------------------------------------------------------------------ reading */
typedef struct {
  const char *path, *data;
  size_t len;
  tps_err *e;
} rd;

/* The line of the i-th element of the top-level list key (the writer puts one a line). */
static long elem_line(const rd *R, const char *key, int i) {
  char k[40];
  snprintf(k, sizeof k, "\n  \"%s\":", key);
  size_t n = strlen(k);
  long ln = 1;
  for (size_t j = 0; j + n <= R->len; j++) {
    if (memcmp(R->data + j, k, n) == 0) return ln + 1 + (i >= 0 ? 1 + i : 0);
    ln += R->data[j] == '\n';
  }
  return 0;
}

/* obj[key] as a number: POS > 0 (sigma, a time, an efficiency, sharpness), NONNEG >= 0 (a model
 * parameter: every one is a time, rate, size or share; quant_bytes is 0 for dense paths).  A
 * negative tile_us read as it was made the B300's replicated GEMM 17.9 us instead of 49.3. */
enum { POS = 1, NONNEG = 2 };
static int getnum(const rd *R, json_t *obj, const char *key, long ln, int sign, double *v) {
  json_t *j = json_object_get(obj, key);
  if (!json_is_number(j)) return tps_err_set(R->e, R->path, ln, "'%s' is missing or not a number", key);
  *v = json_number_value(j);
  if (sign == POS && !(*v > 0)) return tps_err_set(R->e, R->path, ln, "'%s' %g is not > 0", key, *v);
  if (sign == NONNEG && !(*v >= 0)) return tps_err_set(R->e, R->path, ln, "'%s' %g is negative", key, *v);
  return 0;
}

static int getstr(const rd *R, json_t *obj, const char *key, long ln, int nullok, char *dst, size_t n) {
  json_t *j = json_object_get(obj, key);
  if (nullok && json_is_null(j)) { snprintf(dst, n, "-"); return 0; }
  if (!json_is_string(j)) return tps_err_set(R->e, R->path, ln, "'%s' is missing or not a string", key);
  if (strlen(json_string_value(j)) >= n) return tps_err_set(R->e, R->path, ln, "'%s' is longer than %zu bytes", key, n - 1);
  snprintf(dst, n, "%s", json_string_value(j));
  return 0;
}

/* The params object of an element: exactly the names given, each a number. */
static int params(const rd *R, json_t *el, long ln, const char *const *names, int n, double *v) {
  json_t *p = json_object_get(el, "params");
  if (!json_is_object(p) || (int)json_object_size(p) != n)
    return tps_err_set(R->e, R->path, ln, "'params' is not an object of %d numbers", n);
  for (int j = 0; j < n; j++)
    if (getnum(R, p, names[j], ln, NONNEG, &v[j])) return -1;
  return 0;
}

static int read_gemm(const rd *R, json_t *arr, tps_xgpu_file *x) {
  if (!json_is_array(arr)) return tps_err_set(R->e, R->path, elem_line(R, "gemm", -1), "'gemm' is not a list");
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *el = json_array_get(arr, i);
    long ln = elem_line(R, "gemm", (int)i);
    if (x->nxg == TPS_XGPU_MAXG) return tps_err_set(R->e, R->path, ln, "more than %d GEMM fits", TPS_XGPU_MAXG);
    tps_res_xgemm *r = &x->xg[x->nxg];
    char path[32];
    if (!json_is_object(el) || getstr(R, el, "path", ln, 0, path, sizeof path)) return tps_err_set(R->e, R->path, ln, "gemm[%zu] is not a GEMM fit", i);
    r->path = -1;
    for (int p = 0; p < TPS_XG_NPATH; p++) if (!strcmp(path, tps_xg_path_names[p])) r->path = p;
    if (r->path < 0) return tps_err_set(R->e, R->path, ln, "unknown path '%s' (dense-bf16, native-fp8)", path);
    double v[TPS_XG_NPAR];
    if (getstr(R, el, "held_out", ln, 1, r->held, sizeof r->held) || getnum(R, el, "sigma", ln, POS, &r->sigma) ||
        getstr(R, el, "trained_on", ln, 0, r->trained, sizeof r->trained) || params(R, el, ln, tps_xg_par_names, TPS_XG_NPAR, v) ||
        getnum(R, el, "sharp", ln, POS, &r->m.sharp))
      return -1;
    for (int q = 0; q < x->nxg; q++)
      if (x->xg[q].path == r->path && !strcmp(x->xg[q].held, r->held))
        return tps_err_set(R->e, R->path, ln, "a second %s fit held out %s (also gemm[%d])", path, r->held, q);
    r->m.path = (tps_xg_path)r->path;
    memcpy(r->m.p, v, sizeof v);
    x->nxg++;
  }
  return 0;
}

static int read_gather(const rd *R, json_t *arr, tps_xgpu_file *x) {
  if (!json_is_array(arr)) return tps_err_set(R->e, R->path, elem_line(R, "gather", -1), "'gather' is not a list");
  char nm[TPS_XGA_NPAR][32];
  const char *names[TPS_XGA_NPAR];
  for (int j = 0; j < TPS_XGA_NPAR; j++) { ga_name(j, nm[j], sizeof nm[j]); names[j] = nm[j]; }
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *el = json_array_get(arr, i);
    long ln = elem_line(R, "gather", (int)i);
    if (x->nxa == TPS_XGPU_MAXA) return tps_err_set(R->e, R->path, ln, "more than %d gather fits", TPS_XGPU_MAXA);
    tps_res_xgather *r = &x->xa[x->nxa];
    char fab[16];
    if (!json_is_object(el) || getstr(R, el, "fabric", ln, 0, fab, sizeof fab)) return tps_err_set(R->e, R->path, ln, "gather[%zu] is not a gather fit", i);
    if (strcmp(fab, "nvlink") && strcmp(fab, "pcie")) return tps_err_set(R->e, R->path, ln, "unknown fabric '%s' (nvlink, pcie)", fab);
    r->pcie = !strcmp(fab, "pcie");
    tps_xga_prior(&r->m, r->pcie);
    double v[TPS_XGA_NPAR];
    if (getstr(R, el, "held_out", ln, 1, r->held, sizeof r->held) || getnum(R, el, "sigma", ln, POS, &r->sigma) ||
        getstr(R, el, "trained_on", ln, 0, r->trained, sizeof r->trained) || params(R, el, ln, names, TPS_XGA_NPAR, v) ||
        getnum(R, el, "symm_lat_us", ln, POS, &r->m.symm_lat_us) || getnum(R, el, "custom_floor_us", ln, POS, &r->m.custom_floor_us) ||
        getnum(R, el, "custom_eff", ln, POS, &r->m.custom_eff))
      return -1;
    for (int q = 0; q < x->nxa; q++)
      if (x->xa[q].pcie == r->pcie && !strcmp(x->xa[q].held, r->held))
        return tps_err_set(R->e, R->path, ln, "a second %s gather fit held out %s (also gather[%d])", fab, r->held, q);
    memcpy(r->m.p, v, sizeof v);
    x->nxa++;
  }
  return 0;
}

static int read_w8(const rd *R, json_t *w, tps_xgpu_file *x) {
  long ln = elem_line(R, "w8a16", -1);
  if (json_is_null(w)) return 0;
  if (!json_is_object(w)) return tps_err_set(R->e, R->path, ln, "'w8a16' is not an object or null");
  if (getstr(R, w, "gpu", ln, 0, x->w8_gpu, sizeof x->w8_gpu) || getstr(R, w, "file", ln, 0, x->w8_file, sizeof x->w8_file) ||
      getnum(R, w, "sigma", ln, POS, &x->w8_sigma) || params(R, w, ln, tps_xw8_par_names, TPS_XW8_NPAR, x->w8.p))
    return -1;
  x->have_w8 = 1;
  return 0;
}

/* What the writer writes for x must be the bytes read. */
static int canonical(const rd *R, const tps_xgpu_file *x) {
  char *buf = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&buf, &n);
  if (!fp) return tps_err_oom(R->e, "reading %s", R->path);
  int wrc = tps_xgpu_write(fp, x);
  if (fclose(fp) || wrc) { free(buf); return tps_err_oom(R->e, "reading %s", R->path); }
  size_t i = 0;
  long ln = 1;
  while (i < n && i < R->len && buf[i] == R->data[i]) ln += buf[i++] == '\n';
  int rc = 0;
  if (i < n || i < R->len) {
    size_t a = i, b;
    while (a > 0 && buf[a - 1] != '\n') a--;
    for (b = a; b < n && buf[b] != '\n'; b++) {}
    rc = tps_err_set(R->e, R->path, ln, "not in the canonical form tpsplit writes (regenerate it: `tpsplit fit --xgpu -o %s`); "
                     "this line should begin '%.*s'", R->path, (int)(b - a > 120 ? 120 : b - a), buf + a);
  }
  free(buf);
  return rc;
}

int tps_xgpu_read_mem(const char *path, const char *data, size_t len, tps_xgpu_file *x, tps_err *e) {
  rd R = {path, data, len, e};
  memset(x, 0, sizeof *x);
  if (len >= 12 && (!strncmp(data, "# tpsplit cr", 12) || !strncmp(data, "format\ttpsplit-xgpu", 12)))
    return tps_err_set(e, path, 1, "the old positional text form of the cross-GPU fits (tpsplit-xgpu 1), which this tpsplit no "
                       "longer reads: regenerate it with `tpsplit fit --xgpu -o %s`", path);
  json_error_t je;
  json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) return tps_err_set(e, path, je.line > 0 ? je.line : 1, "not a tpsplit-xgpu file (JSON: %s)", je.text);
  int rc = -1;
  json_t *fm = json_object_get(root, "format"), *sv = json_object_get(root, "schema_version");
  if (!json_is_string(fm) || strcmp(json_string_value(fm), "tpsplit-xgpu")) tps_err_set(e, path, 1, "not a tpsplit-xgpu file (no \"format\": \"tpsplit-xgpu\")");
  else if (!json_is_integer(sv) || json_integer_value(sv) != TPS_XGPU_VERSION)
    tps_err_set(e, path, 3, "schema_version is not %d, the one this tpsplit reads (regenerate it: `tpsplit fit --xgpu -o %s`)", TPS_XGPU_VERSION, path);
  else if (!read_gemm(&R, json_object_get(root, "gemm"), x) && !read_gather(&R, json_object_get(root, "gather"), x) &&
           !read_w8(&R, json_object_get(root, "w8a16"), x) && !canonical(&R, x))
    rc = 0;
  json_decref(root);
  return rc;
}

int tps_xgpu_read(const char *path, tps_xgpu_file *x, tps_err *e) {
  tps_buf b;
  memset(x, 0, sizeof *x);
  if (tps_buf_read(path, &b, e)) return -1; /* the 64 MiB cap, a pipe's or FIFO's timeout */
  int rc = tps_xgpu_read_mem(path, b.data, b.len, x, e);
  tps_buf_free(&b);
  return rc;
}
