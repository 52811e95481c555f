/* aic.c: AIConfigurator GEMM and NCCL tables (see aic.h). */
#include "config.h"
#include "src/io/aic.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdint.h>
#include <sys/stat.h>
#include <zlib.h>
#include <jansson.h>
#include <gsl/gsl_sort_long.h>
#include "src/base/jsonout.h"
#include "src/io/measure.h"
#include "src/io/table.h"
#include "src/io/text.h"
#include "src/base/util.h"

const char *const tps_aic_gemm_dtypes = "bfloat16, float16, fp8, fp8_block, nvfp4, int8_wo, int4_wo, sq";
const char *const tps_aic_nccl_ops = "all_gather, all_reduce, reduce_scatter, alltoall, custom_all_reduce";
static const char *const nccl_dtypes = "half, bfloat16, float, int8";

static const char *const gemm_cols[] = {"gpu", "backend", "version", "dtype", "m", "n", "k", "latency_us",
                                        "kernel_source"};
static const char *const nccl_cols[] = {"gpu", "nccl_version", "op", "num_gpus", "message_size_bytes",
                                        "latency_us", "dtype", "message_size_elements", "kernel_source",
                                        "source_dir"};
#define NGEMM_COLS (sizeof gemm_cols / sizeof gemm_cols[0])
#define NNCCL_COLS (sizeof nccl_cols / sizeof nccl_cols[0])
#define MAXF 16

/* Is word one of the ", "-joined names in list? */
static int in_list(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; *p;) {
    size_t l = strcspn(p, ",");
    if (l == n && strncmp(p, word, n) == 0) return 1;
    p += l;
    while (*p == ',' || *p == ' ') p++;
  }
  return 0;
}

static int split_tabs(char *s, char **f, int max) {
  int n = 0;
  for (char *p = s;;) {
    if (n < max) f[n] = p;
    n++;
    char *t = strchr(p, '\t');
    if (!t) break;
    *t = '\0';
    p = t + 1;
  }
  return n;
}

static int num(const char *s, double *v) { return tps_parse_double(s, v); }

static int whole(const char *s, long *v) {
  double x;
  if (num(s, &x) || x != floor(x) || fabs(x) > 1e15) return -1;
  *v = (long)x;
  return 0;
}

static void copy(char *dst, size_t sz, const char *src) { snprintf(dst, sz, "%s", src); }

static int gemm_match(const tps_aic_filter *f, const tps_aic_gemm_row *r) {
  if (!f) return 1;
  if (f->dtype[0] && strcmp(f->dtype, r->dtype)) return 0;
  if (f->backend[0] && strcmp(f->backend, r->backend)) return 0;
  if (f->m_hi > 0 && (r->m < f->m_lo || r->m > f->m_hi)) return 0;
  if (f->n && r->n != f->n) return 0;
  if (f->k && r->k != f->k) return 0;
  return 1;
}

static int nccl_match(const tps_aic_filter *f, const tps_aic_nccl_row *r) {
  if (!f) return 1;
  if (f->dtype[0] && strcmp(f->dtype, r->dtype)) return 0;
  if (f->op[0] && strcmp(f->op, r->op)) return 0;
  if (f->num_gpus && r->num_gpus != f->num_gpus) return 0;
  return 1;
}

static int filter_any(const tps_aic_filter *f) {
  return f && (f->dtype[0] || f->backend[0] || f->m_hi > 0 || f->n || f->k || f->op[0] || f->num_gpus);
}

/* "dtype fp8, n 1792, k 5120" */
static void filter_str(const tps_aic_filter *f, char *buf, size_t sz) {
  size_t u = 0;
  buf[0] = 0;
#define ADD(...) do { int w_ = snprintf(buf + u, sz - u, "%s", u ? ", " : ""); if (w_ > 0 && (size_t)w_ < sz - u) u += (size_t)w_; \
    w_ = snprintf(buf + u, sz - u, __VA_ARGS__); if (w_ > 0 && (size_t)w_ < sz - u) u += (size_t)w_; } while (0)
  if (f->op[0]) ADD("op %s", f->op);
  if (f->num_gpus) ADD("num_gpus %d", f->num_gpus);
  if (f->dtype[0]) ADD("dtype %s", f->dtype);
  if (f->backend[0]) ADD("backend %s", f->backend);
  if (f->m_hi > 0) { if (f->m_lo == f->m_hi) ADD("m %ld", f->m_lo); else ADD("m %ld-%ld", f->m_lo, f->m_hi); }
  if (f->n) ADD("n %ld", f->n);
  if (f->k) ADD("k %ld", f->k);
#undef ADD
}

/* For a GEMM filter that matched nothing: the values present of the first asked field that
 * is missing (k, then n at that k, then m at that n and k), for the message. */
static void gemm_hint(const tps_aic_gemm_row *all, size_t n, const tps_aic_filter *f, char *buf, size_t sz) {
  long *v = malloc((n ? n : 1) * sizeof *v);
  size_t nv = 0;
  buf[0] = 0;
  if (!v) return;
  int has_k = 0, has_n = 0;
  for (size_t i = 0; i < n; i++) {
    if (f->dtype[0] && strcmp(all[i].dtype, f->dtype)) continue;
    if (f->backend[0] && strcmp(all[i].backend, f->backend)) continue;
    if (f->k && all[i].k != f->k) continue;
    has_k = 1;
    if (f->n && all[i].n == f->n) has_n = 1;
  }
  char field = f->k && !has_k ? 'k' : f->n && !has_n ? 'n' : 'm';
  for (size_t i = 0; i < n; i++) {
    if (f->dtype[0] && strcmp(all[i].dtype, f->dtype)) continue;
    if (f->backend[0] && strcmp(all[i].backend, f->backend)) continue;
    if (field != 'k' && f->k && all[i].k != f->k) continue;
    if (field == 'm' && f->n && all[i].n != f->n) continue;
    v[nv++] = field == 'k' ? all[i].k : field == 'n' ? all[i].n : all[i].m;
  }
  if (!nv) {
    snprintf(buf, sz, "%s", f->dtype[0] ? "; the file has no row of that dtype" : "");
    free(v);
    return;
  }
  gsl_sort_long(v, 1, nv);
  int w = snprintf(buf, sz, "; %c in the file%s: ", field, field == 'k' ? "" : field == 'n' ? (f->k ? " at that k" : "")
                                                                            : " at that n and k");
  if (w < 0 || (size_t)w >= sz) { free(v); return; }
  size_t u = (size_t)w, shown = 0;
  for (size_t i = 0; i < nv; i++) {
    if (i && v[i] == v[i - 1]) continue;
    if (shown == 30) { snprintf(buf + u, sz - u, ", ..."); break; }
    w = snprintf(buf + u, sz - u, "%s%ld", shown ? ", " : "", v[i]);
    if (w < 0 || (size_t)w >= sz - u) break;
    u += (size_t)w;
    shown++;
  }
  free(v);
}

/* gzip data (one member or several, as `cat a.gz b.gz` makes) inflated into a new buffer of
 * at most TPS_INPUT_MAX_BYTES, NUL-terminated.  Damaged or cut data is an error naming the
 * line where the readable text stops. */
static int gunzip(const char *path, const unsigned char *in, size_t len, char **outp, size_t *outlen, tps_err *e) {
  const size_t max = (size_t)TPS_INPUT_MAX_BYTES;
  z_stream s;
  memset(&s, 0, sizeof s);
  *outp = NULL;
  *outlen = 0;
  if (len > max) return tps_err_set(e, path, 0, "larger than the limit of %ld bytes", TPS_INPUT_MAX_BYTES);
  int r = inflateInit2(&s, 15 + 16);
  if (r != Z_OK) return r == Z_MEM_ERROR ? tps_err_oom(e, "reading %s", path) : tps_err_resource(e, path, "zlib: %s", zError(r));
  size_t cap = len < max / 4 ? 4 * len + 4096 : max, n = 0;
  if (cap > max) cap = max;
  char *buf = malloc(cap + 1);
  if (!buf) { inflateEnd(&s); return tps_err_oom(e, "reading %s", path); }
  s.next_in = (Bytef *)(uintptr_t)in;
  s.avail_in = (uInt)len;
  const char *what = NULL;
  char zmsg[160];
  for (;;) {
    if (n == cap) {
      if (cap == max) {
        inflateEnd(&s);
        free(buf);
        return tps_err_set(e, path, 0, "more than %ld bytes (64 MiB) once uncompressed, the limit of an input file",
                           TPS_INPUT_MAX_BYTES);
      }
      size_t nc = cap > max / 2 ? max : 2 * cap;
      char *nb = realloc(buf, nc + 1);
      if (!nb) { inflateEnd(&s); free(buf); return tps_err_oom(e, "reading %s", path); }
      buf = nb;
      cap = nc;
    }
    s.next_out = (Bytef *)buf + n;
    s.avail_out = (uInt)(cap - n);
    r = inflate(&s, Z_NO_FLUSH);
    n = cap - s.avail_out;
    if (r == Z_STREAM_END) {
      if (s.avail_in == 0) break;
      if (s.avail_in >= 2 && s.next_in[0] == 0x1f && s.next_in[1] == 0x8b && inflateReset(&s) == Z_OK) continue;
      what = "bytes after the end of the gzip data (other data appended to a gzip file?)";
      break;
    }
    if (r == Z_MEM_ERROR) { inflateEnd(&s); free(buf); return tps_err_oom(e, "reading %s", path); }
    if (r == Z_DATA_ERROR || r == Z_NEED_DICT || r == Z_STREAM_ERROR) {
      snprintf(zmsg, sizeof zmsg, "corrupt gzip data (zlib: %s)", s.msg ? s.msg : zError(r));
      what = zmsg;
      break;
    }
    if (s.avail_out == 0) continue; /* output full: grow */
    /* input used up (or no progress possible) before the end of the stream */
    what = "the gzip data end here, cut short (a partial copy or download?)";
    break;
  }
  inflateEnd(&s);
  buf[n] = '\0';
  if (what) {
    long ln = 1;
    for (size_t i = 0; i < n; i++) ln += buf[i] == '\n';
    free(buf);
    return tps_err_set(e, path, ln, "%s", what);
  }
  *outp = buf;
  *outlen = n;
  return 0;
}

/* One data row of a GEMM table into g: -1 with e naming the line. */
static int gemm_row(const char *path, long ln, char **fld, tps_aic_gemm_row *g, tps_err *e) {
  memset(g, 0, sizeof *g);
  if (!in_list(tps_aic_gemm_dtypes, fld[3]))
    return tps_err_set(e, path, ln, "unknown dtype '%s' (known: %s)", fld[3], tps_aic_gemm_dtypes);
  if (whole(fld[4], &g->m) || whole(fld[5], &g->n) || whole(fld[6], &g->k) || g->m < 1 || g->m > TPS_TABLE_MAX_COUNT ||
      g->n < 1 || g->n > TPS_DIM_MAX || g->k < 1 || g->k > TPS_DIM_MAX)
    return tps_err_set(e, path, ln, "m, n, k must be whole numbers in 1..%ld (m), 1..%ld (n, k) (got '%s', '%s', '%s')",
                       TPS_TABLE_MAX_COUNT, TPS_DIM_MAX, fld[4], fld[5], fld[6]);
  if (num(fld[7], &g->latency_us) || !(g->latency_us >= TPS_TABLE_MIN_US && g->latency_us <= TPS_TABLE_MAX_US))
    return tps_err_set(e, path, ln, "latency_us '%s' is not a number in %g..%.0f", fld[7], TPS_TABLE_MIN_US,
                       TPS_TABLE_MAX_US);
  copy(g->dtype, sizeof g->dtype, fld[3]);
  copy(g->backend, sizeof g->backend, fld[1]);
  copy(g->version, sizeof g->version, fld[2]);
  copy(g->kernel_source, sizeof g->kernel_source, fld[8]);
  g->line = ln;
  return 0;
}

/* One data row of an NCCL table into c: -1 with e naming the line. */
static int nccl_row(const char *path, long ln, char **fld, tps_aic_nccl_row *c, tps_err *e) {
  long ng;
  memset(c, 0, sizeof *c);
  if (!in_list(tps_aic_nccl_ops, fld[2]))
    return tps_err_set(e, path, ln, "unknown op '%s' (known: %s)", fld[2], tps_aic_nccl_ops);
  if (!in_list(nccl_dtypes, fld[6])) return tps_err_set(e, path, ln, "unknown dtype '%s' (known: %s)", fld[6], nccl_dtypes);
  if (whole(fld[3], &ng) || ng < 1 || ng > 65536)
    return tps_err_set(e, path, ln, "num_gpus '%s' is not a whole number in 1..65536", fld[3]);
  if (num(fld[4], &c->bytes) || c->bytes != floor(c->bytes) || !(c->bytes >= 1 && c->bytes <= TPS_TABLE_MAX_BYTES))
    return tps_err_set(e, path, ln, "message_size_bytes '%s' is not a whole number in 1..%.0f", fld[4],
                       TPS_TABLE_MAX_BYTES);
  if (whole(fld[7], &c->elements) || c->elements < 1 || (double)c->elements > TPS_TABLE_MAX_BYTES)
    return tps_err_set(e, path, ln, "message_size_elements '%s' is not a whole number in 1..%.0f", fld[7],
                       TPS_TABLE_MAX_BYTES);
  if (num(fld[5], &c->latency_us) || !(c->latency_us >= TPS_TABLE_MIN_US && c->latency_us <= TPS_TABLE_MAX_US))
    return tps_err_set(e, path, ln, "latency_us '%s' is not a number in %g..%.0f", fld[5], TPS_TABLE_MIN_US,
                       TPS_TABLE_MAX_US);
  c->num_gpus = (int)ng;
  copy(c->op, sizeof c->op, fld[2]);
  copy(c->dtype, sizeof c->dtype, fld[6]);
  copy(c->nccl_version, sizeof c->nccl_version, fld[1]);
  copy(c->kernel_source, sizeof c->kernel_source, fld[8]);
  c->line = ln;
  return 0;
}

/* Append one element of size sz to *v (count *n, capacity *cap). */
static int push(void *v, size_t *n, size_t *cap, size_t sz, const void *x) {
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 256;
    void *nv = realloc(*(void **)v, nc * sz);
    if (!nv) return -1;
    *(void **)v = nv;
    *cap = nc;
  }
  memcpy((char *)*(void **)v + *n * sz, x, sz);
  (*n)++;
  return 0;
}

/* The key of a row (GEMM: backend, version, dtype, m, n, k; NCCL: op, dtype, NCCL version, GPUs,
 * bytes): two rows of one key are two answers to one question, refused (which is true?). */
typedef struct {
  char s[80];
  double a, b, c;
  long line;
} rowkey;
static int cmp_key(const void *x, const void *y) {
  const rowkey *p = x, *q = y;
  int r = strcmp(p->s, q->s);
  if (r) return r;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  if (p->c != q->c) return p->c < q->c ? -1 : 1;
  return p->line < q->line ? -1 : p->line > q->line;
}
static int check_keys(const char *path, int kind, rowkey *k, size_t n, tps_err *e) {
  if (n > 1) qsort(k, n, sizeof *k, cmp_key); /* k is NULL when no row was read (qsort of NULL is undefined) */
  for (size_t i = 1; i < n; i++) {
    if (strcmp(k[i].s, k[i - 1].s) || k[i].a != k[i - 1].a || k[i].b != k[i - 1].b || k[i].c != k[i - 1].c) continue;
    return tps_err_set(e, path, k[i].line, "the same %s as line %ld: two times for one measurement", kind == TPS_AIC_GEMM
                       ? "backend, version, dtype, m, n and k" : "op, dtype, NCCL version, num_gpus and message size",
                       k[i - 1].line);
  }
  return 0;
}

/* The lines of tx into out (see tps_aic_read_mem). */
static int parse_lines(const tps_text *tx, const tps_aic_filter *f, tps_aic_file *out, tps_aic_gemm_row **all,
                       size_t *nall, tps_err *e) {
  const char *path = tx->path;
  char *fld[MAXF];
  size_t rcap = 0, pcap = 0, acap = 0, nkey = 0, kcap = 0;
  rowkey *keys = NULL, key;
  int rc = -1;
  for (size_t i = 0; i < tx->n; i++) {
    long ln = (long)i + 1;
    char *buf = tx->line[i];
    if (buf[0] == '#') {
      const char *s = buf + 1;
      if (*s == ' ') s++;
      char *p = strdup(s);
      if (!p || push(&out->prov, &out->nprov, &pcap, sizeof *out->prov, &p)) { free(p); tps_err_oom(e, "reading %s", path); goto out; }
      continue;
    }
    if (!buf[0]) continue;
    int nf = split_tabs(buf, fld, MAXF);
    if (!out->kind) {
      int g = nf == (int)NGEMM_COLS, c = nf == (int)NNCCL_COLS;
      for (int j = 0; g && j < nf; j++) g = strcmp(fld[j], gemm_cols[j]) == 0;
      for (int j = 0; c && j < nf; j++) c = strcmp(fld[j], nccl_cols[j]) == 0;
      if (!g && !c) {
        tps_err_set(e, path, ln, "not an AIConfigurator header: expected 'gpu backend version dtype m n k latency_us "
                    "kernel_source' (GEMM) or 'gpu nccl_version op num_gpus message_size_bytes latency_us ...' (NCCL)");
        goto out;
      }
      out->kind = g ? TPS_AIC_GEMM : TPS_AIC_NCCL;
      continue;
    }
    int want = out->kind == TPS_AIC_GEMM ? (int)NGEMM_COLS : (int)NNCCL_COLS;
    if (nf != want) { tps_err_set(e, path, ln, "%d fields, the header has %d", nf, want); goto out; }
    if (!out->gpu[0]) copy(out->gpu, sizeof out->gpu, fld[0]);
    else if (strcmp(out->gpu, fld[0])) { tps_err_set(e, path, ln, "gpu '%s', the first row's is '%s': one GPU a file", fld[0], out->gpu); goto out; }
    memset(&key, 0, sizeof key);
    key.line = ln;
    if (out->kind == TPS_AIC_GEMM) {
      tps_aic_gemm_row g;
      if (gemm_row(path, ln, fld, &g, e)) goto out;
      snprintf(key.s, sizeof key.s, "%s\t%s\t%s", g.backend, g.version, g.dtype);
      key.a = (double)g.m, key.b = (double)g.n, key.c = (double)g.k;
      if (filter_any(f) && push(all, nall, &acap, sizeof g, &g)) { tps_err_oom(e, "reading %s", path); goto out; }
      if (gemm_match(f, &g) && push(&out->g, &out->nrows, &rcap, sizeof g, &g)) { tps_err_oom(e, "reading %s", path); goto out; }
    } else {
      tps_aic_nccl_row c;
      if (nccl_row(path, ln, fld, &c, e)) goto out;
      snprintf(key.s, sizeof key.s, "%s\t%s\t%s", c.op, c.dtype, c.nccl_version);
      key.a = c.num_gpus, key.b = c.bytes;
      if (nccl_match(f, &c) && push(&out->c, &out->nrows, &rcap, sizeof c, &c)) { tps_err_oom(e, "reading %s", path); goto out; }
    }
    if (push(&keys, &nkey, &kcap, sizeof key, &key)) { tps_err_oom(e, "reading %s", path); goto out; }
  }
  rc = check_keys(path, out->kind, keys, nkey, e);
out:
  free(keys);
  return rc;
}

int tps_aic_read_mem(const char *path, const char *data, size_t len, const tps_aic_filter *f, tps_aic_file *out,
                     tps_err *e) {
  memset(out, 0, sizeof *out);
  char *plain = NULL;
  size_t plen = len;
  const unsigned char *u = (const unsigned char *)data;
  if (len >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
    if (gunzip(path, u, len, &plain, &plen, e)) return -1;
    data = plain;
  }
  tps_text tx;
  int rc = tps_text_from_buf(path, data, plen, 0, &tx, e);
  free(plain);
  if (rc) return -1;
  tps_aic_gemm_row *all = NULL; /* GEMM rows before filtering (for the missing-shape hint) */
  size_t nall = 0;
  rc = -1;
  if (!(out->path = strdup(path))) { tps_err_oom(e, "reading %s", path); goto done; }
  if (tx.n == 0) { tps_err_set(e, path, 0, "empty file"); goto done; }
  if (parse_lines(&tx, f, out, &all, &nall, e)) goto done;
  if (!out->kind) { tps_err_set(e, path, 0, "no header line: not an AIConfigurator table"); goto done; }
  if (tps_text_check_end(&tx, e)) goto done;
  if (f && out->kind == TPS_AIC_GEMM && (f->op[0] || f->num_gpus)) {
    tps_err_set(e, path, 0, "a GEMM table: op and num_gpus select NCCL rows");
    goto done;
  }
  if (f && out->kind == TPS_AIC_NCCL && (f->m_hi > 0 || f->n || f->k || f->backend[0])) {
    tps_err_set(e, path, 0, "an NCCL table: m, n, k and backend select GEMM rows");
    goto done;
  }
  if (out->nrows == 0) {
    char fs[256], hint[512] = "";
    if (filter_any(f)) {
      filter_str(f, fs, sizeof fs);
      if (out->kind == TPS_AIC_GEMM) gemm_hint(all, nall, f, hint, sizeof hint);
      tps_err_set(e, path, 0, "no rows with %s%s", fs, hint);
    } else {
      tps_err_set(e, path, 0, "no data rows");
    }
    goto done;
  }
  rc = 0;
done:
  free(all);
  tps_text_free(&tx);
  if (rc) tps_aic_free(out);
  return rc;
}

int tps_aic_read(const char *path, const tps_aic_filter *f, tps_aic_file *out, tps_err *e) {
  tps_buf b;
  memset(out, 0, sizeof *out);
  if (tps_buf_read(path, &b, e)) return -1;
  int rc = tps_aic_read_mem(path, b.data, b.len, f, out, e);
  tps_buf_free(&b);
  return rc;
}

void tps_aic_free(tps_aic_file *a) {
  if (!a) return;
  for (size_t i = 0; i < a->nprov; i++) free(a->prov[i]);
  free(a->prov);
  free(a->g);
  free(a->c);
  free(a->path);
  memset(a, 0, sizeof *a);
}

static int exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

int tps_aic_parse_spec(const char *spec, char **path, tps_aic_filter *f, tps_err *e) {
  memset(f, 0, sizeof *f);
  *path = NULL;
  const char *colon = strrchr(spec, ':');
  if (exists(spec) || !colon || !strchr(colon, '=')) {
    if (!(*path = strdup(spec))) return tps_err_set(e, spec, 0, "out of memory");
    return 0;
  }
  size_t pl = (size_t)(colon - spec);
  if (!(*path = malloc(pl + 1))) return tps_err_set(e, spec, 0, "out of memory");
  memcpy(*path, spec, pl);
  (*path)[pl] = 0;
  char sel[512];
  copy(sel, sizeof sel, colon + 1);
  char *save = NULL;
  for (char *kv = strtok_r(sel, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) goto bad;
    *eq = 0;
    const char *k = kv, *v = eq + 1;
    long x, y;
    if (!strcmp(k, "dtype")) copy(f->dtype, sizeof f->dtype, v);
    else if (!strcmp(k, "backend")) copy(f->backend, sizeof f->backend, v);
    else if (!strcmp(k, "op")) {
      if (!in_list(tps_aic_nccl_ops, v)) { tps_err_set(e, *path, 0, "unknown op '%s' (known: %s)", v, tps_aic_nccl_ops); goto fail; }
      copy(f->op, sizeof f->op, v);
    } else if (!strcmp(k, "num_gpus")) {
      if (whole(v, &x) || x < 1 || x > 1 << 20) goto badnum;
      f->num_gpus = (int)x;
    } else if (!strcmp(k, "n") || !strcmp(k, "k")) {
      if (whole(v, &x) || x < 1) goto badnum;
      if (k[0] == 'n') f->n = x; else f->k = x;
    } else if (!strcmp(k, "m")) {
      char tmp[64], *dash;
      copy(tmp, sizeof tmp, v);
      if ((dash = strchr(tmp, '-'))) {
        *dash = 0;
        if (whole(tmp, &x) || whole(dash + 1, &y) || x < 1 || y < x) goto badnum;
      } else {
        if (whole(tmp, &x) || x < 1) goto badnum;
        y = x;
      }
      f->m_lo = x;
      f->m_hi = y;
    } else {
      tps_err_set(e, *path, 0, "unknown selection key '%s' (known: dtype, m, n, k, backend, op, num_gpus)", k);
      goto fail;
    }
    continue;
  badnum:
    tps_err_set(e, *path, 0, "selection %s=%s: not a positive whole number%s", k, v, !strcmp(k, "m") ? " or range A-B" : "");
    goto fail;
  }
  if (f->dtype[0] && !in_list(tps_aic_gemm_dtypes, f->dtype) && !in_list(nccl_dtypes, f->dtype)) {
    tps_err_set(e, *path, 0, "unknown dtype '%s' (known: %s; NCCL: %s)", f->dtype, tps_aic_gemm_dtypes, nccl_dtypes);
    goto fail;
  }
  return 0;
bad:
  tps_err_set(e, *path, 0, "selection '%s' is not key=value[,key=value...]", colon + 1);
fail:
  free(*path);
  *path = NULL;
  return -1;
}

int tps_aic_read_spec(const char *spec, tps_aic_file *out, tps_err *e) {
  char *path;
  tps_aic_filter f;
  memset(out, 0, sizeof *out);
  if (tps_aic_parse_spec(spec, &path, &f, e)) return -1;
  int rc = tps_aic_read(path, &f, out, e);
  free(path);
  return rc;
}

static const char aic_mark[] = "# source: ai-dynamo/aiconfigurator";

/* Is the first line of data[0..len) (gzip or plain, after a UTF-8 byte order mark, which every
 * text reader skips) aic_mark, alone or followed by a blank and more words?  (Not a mere prefix:
 * a bench table whose first comment began "# source: ai-dynamo/aiconfigurator#..." was read as a
 * table and written back without its byte order mark, and then sniffed as AIConfigurator's;
 * tests/fuzz/crashes/bench_table.) */
static int first_line_is_mark(const char *head, size_t got) {
  const size_t m = sizeof aic_mark - 1;
  if (got >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0) { head += 3; got -= 3; }
  if (got < m || memcmp(head, aic_mark, m) != 0) return 0;
  return got == m || head[m] == ' ' || head[m] == '\t' || head[m] == '\n' || head[m] == '\r';
}

static int starts_aic(const char *data, size_t len) {
  enum { HEAD = sizeof aic_mark - 1 + 4 }; /* a byte order mark, the mark, one byte after it */
  const unsigned char *u = (const unsigned char *)data;
  if (len < 2 || u[0] != 0x1f || u[1] != 0x8b) return first_line_is_mark(data, len < HEAD ? len : HEAD);
  char head[HEAD];
  z_stream s;
  memset(&s, 0, sizeof s);
  if (inflateInit2(&s, 15 + 16) != Z_OK) return 0;
  s.next_in = (Bytef *)(uintptr_t)data;
  s.avail_in = (uInt)(len < (size_t)TPS_INPUT_MAX_BYTES ? len : (size_t)TPS_INPUT_MAX_BYTES);
  s.next_out = (Bytef *)head;
  s.avail_out = (uInt)HEAD;
  int r;
  do r = inflate(&s, Z_NO_FLUSH); while (r == Z_OK && s.avail_out > 0 && s.avail_in > 0);
  const size_t got = HEAD - s.avail_out;
  inflateEnd(&s);
  return first_line_is_mark(head, got);
}


char *tps_aic_gpu_name(const char *aic_gpu, char *buf, size_t bufsz) {
  copy(buf, bufsz, aic_gpu);
  for (char *p = buf; *p; p++)
    if (*p == '_') *p = '-';
  return buf;
}

typedef struct { double x, t; } xt;
static int cmp_xt(const void *a, const void *b) {
  double x = ((const xt *)a)->x, y = ((const xt *)b)->x;
  return x < y ? -1 : x > y;
}

/* sort by x, average duplicate x; returns the count */
static size_t sort_mean(xt *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_xt);
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    double s = 0;
    while (j < n && v[j].x == v[i].x) s += v[j++].t;
    v[o].x = v[i].x;
    v[o].t = s / (double)(j - i);
    o++;
    i = j;
  }
  return o;
}

int tps_aic_gemm_curve(const tps_aic_file *a, const char *dtype, long n, long k, long **m, double **t_us,
                       size_t *nout, tps_err *e) {
  *m = NULL; *t_us = NULL; *nout = 0;
  if (a->kind != TPS_AIC_GEMM) return tps_err_set(e, a->path, 0, "not a GEMM table");
  xt *v = malloc((a->nrows ? a->nrows : 1) * sizeof *v);
  if (!v) return tps_err_set(e, a->path, 0, "out of memory");
  size_t nv = 0;
  for (size_t i = 0; i < a->nrows; i++)
    if ((!dtype || !strcmp(a->g[i].dtype, dtype)) && a->g[i].n == n && a->g[i].k == k)
      v[nv++] = (xt){(double)a->g[i].m, a->g[i].latency_us};
  if (!nv) {
    free(v);
    return tps_err_set(e, a->path, 0, "no rows with dtype %s, n %ld, k %ld", dtype ? dtype : "(any)", n, k);
  }
  nv = sort_mean(v, nv);
  *m = malloc(nv * sizeof **m);
  *t_us = malloc(nv * sizeof **t_us);
  if (!*m || !*t_us) { free(v); free(*m); free(*t_us); *m = NULL; *t_us = NULL; return tps_err_set(e, a->path, 0, "out of memory"); }
  for (size_t i = 0; i < nv; i++) { (*m)[i] = (long)v[i].x; (*t_us)[i] = v[i].t; }
  *nout = nv;
  free(v);
  return 0;
}

int tps_aic_nccl_curve(const tps_aic_file *a, const char *op, int num_gpus, const char *dtype, double **bytes,
                       double **t_us, size_t *nout, tps_err *e) {
  *bytes = NULL; *t_us = NULL; *nout = 0;
  if (a->kind != TPS_AIC_NCCL) return tps_err_set(e, a->path, 0, "not an NCCL table");
  xt *v = malloc((a->nrows ? a->nrows : 1) * sizeof *v);
  if (!v) return tps_err_set(e, a->path, 0, "out of memory");
  size_t nv = 0;
  for (size_t i = 0; i < a->nrows; i++)
    if (!strcmp(a->c[i].op, op) && a->c[i].num_gpus == num_gpus && (!dtype || !strcmp(a->c[i].dtype, dtype)))
      v[nv++] = (xt){a->c[i].bytes, a->c[i].latency_us};
  if (!nv) {
    free(v);
    return tps_err_set(e, a->path, 0, "no rows with op %s, num_gpus %d%s%s", op, num_gpus, dtype ? ", dtype " : "",
                       dtype ? dtype : "");
  }
  nv = sort_mean(v, nv);
  *bytes = malloc(nv * sizeof **bytes);
  *t_us = malloc(nv * sizeof **t_us);
  if (!*bytes || !*t_us) { free(v); free(*bytes); free(*t_us); *bytes = NULL; *t_us = NULL; return tps_err_set(e, a->path, 0, "out of memory"); }
  for (size_t i = 0; i < nv; i++) { (*bytes)[i] = v[i].x; (*t_us)[i] = v[i].t; }
  *nout = nv;
  free(v);
  return 0;
}

/* ------------------------------------------------------------------ inspect */

static double busbw_factor(const char *op, int n) {
  if (n < 2) return NAN;
  if (!strcmp(op, "all_reduce") || !strcmp(op, "custom_all_reduce")) return 2.0 * (n - 1) / n;
  if (!strcmp(op, "alltoall") || !strcmp(op, "all_gather") || !strcmp(op, "reduce_scatter")) return (double)(n - 1) / n;
  return NAN;
}

static json_t *file_json(const tps_aic_file *a) {
  json_t *o = json_object(), *prov = json_array(), *rows = json_array();
  json_object_set_new(o, "file", json_string(a->path));
  json_object_set_new(o, "kind", json_string(a->kind == TPS_AIC_GEMM ? "aic-gemm" : "aic-nccl"));
  json_object_set_new(o, "gpu", json_string(a->gpu));
  for (size_t i = 0; i < a->nprov; i++) json_array_append_new(prov, json_string(a->prov[i]));
  json_object_set_new(o, "provenance", prov);
  json_object_set_new(o, "nrows", json_integer((json_int_t)a->nrows));
  for (size_t i = 0; i < a->nrows; i++) {
    json_t *r = json_object();
    if (a->kind == TPS_AIC_GEMM) {
      const tps_aic_gemm_row *g = &a->g[i];
      json_object_set_new(r, "backend", json_string(g->backend));
      json_object_set_new(r, "version", json_string(g->version));
      json_object_set_new(r, "dtype", json_string(g->dtype));
      json_object_set_new(r, "m", json_integer(g->m));
      json_object_set_new(r, "n", json_integer(g->n));
      json_object_set_new(r, "k", json_integer(g->k));
      tps_json_set_num(r, "time_us", g->latency_us);
      tps_json_set_num(r, "tflops", 2.0 * (double)g->m * (double)g->n * (double)g->k / g->latency_us / 1e6);
      json_object_set_new(r, "kernel_source", json_string(g->kernel_source));
      json_object_set_new(r, "line", json_integer(g->line));
    } else {
      const tps_aic_nccl_row *c = &a->c[i];
      double alg = c->bytes / c->latency_us / 1e3;
      json_object_set_new(r, "op", json_string(c->op));
      json_object_set_new(r, "num_gpus", json_integer(c->num_gpus));
      json_object_set_new(r, "dtype", json_string(c->dtype));
      tps_json_set_num(r, "bytes", c->bytes);
      tps_json_set_num(r, "time_us", c->latency_us);
      tps_json_set_num(r, "algbw_gbps", alg);
      tps_json_set_num(r, "busbw_gbps", alg * busbw_factor(c->op, c->num_gpus));
      json_object_set_new(r, "nccl_version", json_string(c->nccl_version));
      json_object_set_new(r, "line", json_integer(c->line));
    }
    json_array_append_new(rows, r);
  }
  json_object_set_new(o, "rows", rows);
  return o;
}

static void file_text(const tps_aic_file *a, int first) {
  char b1[64];
  if (!first) putchar('\n');
  printf("# %s: AIConfigurator %s table, gpu %s, %zu rows\n", a->path, a->kind == TPS_AIC_GEMM ? "GEMM" : "NCCL",
         a->gpu, a->nrows);
  for (size_t i = 0; i < a->nprov; i++) printf("# %s\n", a->prov[i]);
  if (a->kind == TPS_AIC_GEMM) {
    printf("%-10s %-10s %-10s %6s %6s %6s %12s %9s %6s\n", "backend", "version", "dtype", "m", "n", "k", "time_us",
           "tflops", "line");
    for (size_t i = 0; i < a->nrows; i++) {
      const tps_aic_gemm_row *g = &a->g[i];
      tps_fmt_num(b1, sizeof b1, g->latency_us);
      printf("%-10s %-10s %-10s %6ld %6ld %6ld %12s %9.1f %6ld\n", g->backend, g->version, g->dtype, g->m, g->n, g->k,
             b1, 2.0 * (double)g->m * (double)g->n * (double)g->k / g->latency_us / 1e6, g->line);
    }
  } else {
    printf("%-18s %8s %-8s %12s %12s %11s %11s %6s\n", "op", "num_gpus", "dtype", "bytes", "time_us", "algbw_gbps",
           "busbw_gbps", "line");
    for (size_t i = 0; i < a->nrows; i++) {
      const tps_aic_nccl_row *c = &a->c[i];
      double alg = c->bytes / c->latency_us / 1e3, bus = alg * busbw_factor(c->op, c->num_gpus);
      tps_fmt_num(b1, sizeof b1, c->latency_us);
      printf("%-18s %8d %-8s %12.0f %12s %11.3f %11.3f %6ld\n", c->op, c->num_gpus, c->dtype, c->bytes, b1, alg, bus,
             c->line);
    }
  }
}

int tps_aic_inspect(char *const *specs, int nspecs, int json) {
  tps_aic_file *a = calloc((size_t)(nspecs > 0 ? nspecs : 1), sizeof *a);
  tps_err e;
  tps_err_clear(&e);
  if (!a) { tps_die_msg("out of memory"); return 1; }
  int rc = 0, nread = 0;
  for (int i = 0; i < nspecs; i++) {
    if (tps_aic_read_spec(specs[i], &a[i], &e)) { tps_err_print(&e); rc = 2; break; }
    nread++;
  }
  if (!rc) {
    if (json) {
      json_t *root = json_object(), *files = json_array();
      for (int i = 0; i < nspecs; i++) json_array_append_new(files, file_json(&a[i]));
      json_object_set_new(root, "files", files);
      if (tps_json_print(root)) rc = 1;
    } else {
      for (int i = 0; i < nspecs; i++) file_text(&a[i], i == 0);
    }
  }
  for (int i = 0; i < nread; i++) tps_aic_free(&a[i]);
  free(a);
  return rc;
}

/* ------------------------------------------------------------------ the loader's format
 * (src/io/measure.h): a table that starts with AIConfigurator's provenance line, gzip or plain. */
static int aic_read(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m, tps_err *e) {
  m->kind = TPS_MEAS_AIC;
  return tps_aic_read_mem(path, data, len, sel, &m->aic, e);
}

const tps_format tps_format_aic = {"aic", TPS_MEAS_AIC, starts_aic, aic_read};
