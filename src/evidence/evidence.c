/* partsrc.c: resolving each part of a prediction from measurements or models, and saying
 * where it came from (see partsrc.h). */
#include "config.h"
#include "src/evidence/evidence.h"
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "src/io/aic.h"
#include "src/base/util.h"
#include "src/io/fitfile.h"
#include "src/evidence/fit_from_file.h"
#include "src/base/jsonout.h"
#include "src/io/table.h"
#include "model/predict/resolve.h"
#include "src/base/util.h"

#define MAXXG 32
#define MAXXA 16
#define MAXROWS 96
#define MAXUSER 16
#define MAXLOADED 32
#define Z90 1.6448536269514722 /* the 95% quantile of N(0,1): a 90% half-width / Z90 = sd */

/* ------------------------------------------------------------------ data/xgpu.fit */
typedef tps_res_xgemm xg_row;   /* model/predict/resolve.h */
typedef tps_res_xgather xa_row;

/* ------------------------------------------------------------------ data/parts.tsv */
typedef struct {
  const tps_gpu *gpu;
  int gather;           /* 0 gemm, 1 gather */
  const tps_path *path; /* gemm */
  int backend;          /* gather */
  int tps[8], ntp;      /* gather */
  char file[512];       /* as written (under data/) */
  char sel[128];
  long line;
} prow;

/* ------------------------------------------------------------------ files read once */
enum { LF_AIC = 1, LF_TABLE, LF_FIT };
typedef struct {
  char path[4096];
  char name[4200];        /* in messages: as the user gave it, or data/... for bundled files */
  int kind;
  tps_aic_file aic;
  tps_table tab;
  tps_fit *fit;
  char gather_line[128];  /* a bench allgather log's "# Gather: X" word, "" none */
} loaded;

/* A user file: what it is and what it measures. */
typedef struct {
  char spec[4200];        /* as given */
  char path[4096];        /* the file */
  tps_aic_filter sel;     /* AIC selection */
  loaded *lf;
  const tps_gpu *gpu;     /* measured on */
  const tps_path *kpath;  /* GEMM: the path */
  int backend;            /* gather */
  int ranks[16], nranks;  /* gather: the TPs it measures */
  int from_split;         /* split table: replicated column / derived gather */
} ufile;

struct tps_partset {
  const tps_gpu_table *gt;
  tps_partset_opts o;
  pthread_mutex_t lock;
  char xgpu_file[4096];
  xg_row xg[MAXXG];
  int nxg;
  xa_row xa[MAXXA];
  int nxa;
  int have_w8;
  char w8_gpu[32], w8_file[256];
  double w8_sigma;
  tps_xw8_model w8;
  char parts_file[4096];
  prow rows[MAXROWS];
  int nrows;
  int h20_state;          /* 0 not tried, 1 ok, -1 failed */
  tps_fit *h20;
  const tps_gpu *h20_gpu;
  char h20_file[4096];
  loaded *lf[MAXLOADED];
  int nlf;
  ufile ug[MAXUSER], ua[MAXUSER];
  int nug, nua;
  tps_partsrc **res;
  char **key;
  char *used;
  size_t nres, cap;
  int next_id;
  int defer_tab;          /* tps_partset_prepare: tables made afterwards, in threads */
};

/* ------------------------------------------------------------------ small helpers */
/* The same GPU, by name: callers may hold GPUs of another copy of the table. */
#define SAME(a, b) ((a) && (b) && strcmp((a)->name, (b)->name) == 0)
static void cpy(char *d, size_t n, const char *s) {
  if (!n) return;
  size_t l = s ? strlen(s) : 0;
  if (l >= n) l = n - 1;
  if (l) memcpy(d, s, l);
  d[l] = 0;
}

static void catf(char *buf, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void catf(char *buf, size_t sz, const char *fmt, ...) {
  size_t l = strlen(buf);
  if (l + 1 >= sz) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + l, sz - l, fmt, ap);
  va_end(ap);
}

/* "data/x" for a bundled file, else the name as given. */
static const char *shown(const char *path) {
  const char *d = tps_data_dir();
  size_t l = d ? strlen(d) : 0;
  static __thread char buf[4200];
  if (l && strncmp(path, d, l) == 0 && path[l] == '/') {
    snprintf(buf, sizeof buf, "data/%s", path + l + 1);
    return buf;
  }
  return path;
}

static void fmt_bytes(char *b, size_t n, double x) {
  if (x >= 1024.0 * 1024 && fmod(x, 1024.0 * 1024) == 0) snprintf(b, n, "%.0f MiB", x / (1024.0 * 1024));
  else if (x >= 1024 && fmod(x, 1024) == 0) snprintf(b, n, "%.0f KiB", x / 1024);
  else snprintf(b, n, "%.0f B", x);
}

/* AIConfigurator's dtype of a path that predictions take, and back (model/core/path.c). */
static int path_dtype(const tps_path *p, char *dt, size_t n) {
  if ((p->flags & TPS_PATH_F_MODEL) && p->aic_dtype && p->aic_dtype[0]) { cpy(dt, n, p->aic_dtype); return 0; }
  return -1;
}
static const tps_path *dtype_path(const char *dt) {
  for (int i = 0; i < TPS_NPATHS; i++) {
    const tps_path *p = tps_path_get(i);
    if (p && (p->flags & TPS_PATH_F_MODEL) && p->aic_dtype && p->aic_dtype[0] && !strcmp(dt, p->aic_dtype)) return p;
  }
  return NULL;
}

/* ------------------------------------------------------------------ reading */
/* The next line of b from *pos into line[sz], without its end: 1, 0 at the end of b, -1 for a
 * line of sz bytes or more (refused, not cut) or a NUL byte in it. */
static int next_line(const tps_buf *b, size_t *pos, char *line, size_t sz) {
  if (*pos >= b->len) return 0;
  const char *p = b->data + *pos, *q = memchr(p, '\n', b->len - *pos);
  size_t n = q ? (size_t)(q - p) : b->len - *pos;
  *pos += n + (q != NULL);
  if (n >= sz || memchr(p, '\0', n)) return -1;
  memcpy(line, p, n);
  line[n] = 0;
  return 1;
}

static int read_xgpu(tps_partset *ps, tps_err *e) {
  if (tps_data_path(TPS_XGPU_FIT, ps->xgpu_file, sizeof ps->xgpu_file, e)) return -1;
  tps_buf b; /* the bounded reader: the size cap, a FIFO's timeout */
  if (tps_buf_read(ps->xgpu_file, &b, e)) return -1;
  char line[8192];
  long ln = 0;
  int fmt = 0, rc = 0, got;
  size_t pos = 0;
  while ((got = next_line(&b, &pos, line, sizeof line)) != 0) {
    ln++;
    if (got < 0) { rc = tps_err_set(e, ps->xgpu_file, ln, "line of %zu bytes or more, or with a NUL byte", sizeof line); break; }
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    char *f[64];
    int nf = 0;
    for (char *s = line, *t; nf < 64; s = t + 1) {
      f[nf++] = s;
      if (!(t = strchr(s, '\t'))) break;
      *t = 0;
    }
    double v[64];
    int nv = 0;
    if (!fmt) {
      if (nf != 3 || strcmp(f[0], "format") || strcmp(f[1], "tpsplit-xgpu") || strcmp(f[2], "1")) {
        rc = tps_err_set(e, ps->xgpu_file, ln, "not a tpsplit-xgpu file of format 1");
        break;
      }
      fmt = 1;
      continue;
    }
    int first = !strcmp(f[0], "w8a16") ? 4 : 5;
    for (int i = first; i < nf; i++) {
      if (tps_parse_double(f[i], &v[nv])) { rc = tps_err_set(e, ps->xgpu_file, ln, "field %d '%s' is not a number", i + 1, f[i]); break; }
      nv++;
    }
    if (rc) break;
    double sigma;
    if (nf < 4 || tps_parse_double(f[3], &sigma) || !(sigma > 0)) { rc = tps_err_set(e, ps->xgpu_file, ln, "bad sigma"); break; }
    if (!strcmp(f[0], "gemm")) {
      int path = -1;
      for (int p = 0; p < TPS_XG_NPATH; p++) if (!strcmp(f[1], tps_xg_path_names[p])) path = p;
      if (path < 0 || nv != TPS_XG_NPAR + 1 || ps->nxg == MAXXG) { rc = tps_err_set(e, ps->xgpu_file, ln, "bad gemm line"); break; }
      xg_row *r = &ps->xg[ps->nxg++];
      r->path = path;
      cpy(r->held, sizeof r->held, f[2]);
      r->sigma = sigma;
      cpy(r->trained, sizeof r->trained, f[4]);
      r->m.path = (tps_xg_path)path;
      memcpy(r->m.p, v, TPS_XG_NPAR * sizeof *v);
      r->m.sharp = v[TPS_XG_NPAR];
    } else if (!strcmp(f[0], "gather")) {
      if (nv != TPS_XGA_NPAR + 3 || ps->nxa == MAXXA || (strcmp(f[1], "nvlink") && strcmp(f[1], "pcie"))) {
        rc = tps_err_set(e, ps->xgpu_file, ln, "bad gather line");
        break;
      }
      xa_row *r = &ps->xa[ps->nxa++];
      r->pcie = !strcmp(f[1], "pcie");
      cpy(r->held, sizeof r->held, f[2]);
      r->sigma = sigma;
      cpy(r->trained, sizeof r->trained, f[4]);
      tps_xga_prior(&r->m, r->pcie);
      memcpy(r->m.p, v, TPS_XGA_NPAR * sizeof *v);
      r->m.symm_lat_us = v[TPS_XGA_NPAR];
      r->m.custom_floor_us = v[TPS_XGA_NPAR + 1];
      r->m.custom_eff = v[TPS_XGA_NPAR + 2];
    } else if (!strcmp(f[0], "w8a16")) {
      if (nv != TPS_XW8_NPAR) { rc = tps_err_set(e, ps->xgpu_file, ln, "bad w8a16 line"); break; }
      ps->have_w8 = 1;
      cpy(ps->w8_gpu, sizeof ps->w8_gpu, f[1]);
      cpy(ps->w8_file, sizeof ps->w8_file, f[2]);
      ps->w8_sigma = sigma;
      memcpy(ps->w8.p, v, TPS_XW8_NPAR * sizeof *v);
    } else {
      rc = tps_err_set(e, ps->xgpu_file, ln, "unknown line '%s'", f[0]);
      break;
    }
  }
  tps_buf_free(&b);
  if (!rc && !fmt) rc = tps_err_set(e, ps->xgpu_file, 0, "empty file");
  return rc;
}

static int read_parts(tps_partset *ps, tps_err *e) {
  if (tps_data_path(TPS_PARTS_TABLE, ps->parts_file, sizeof ps->parts_file, e)) return -1;
  tps_buf b;
  if (tps_buf_read(ps->parts_file, &b, e)) return -1;
  char line[2048];
  long ln = 0;
  int hdr = 0, rc = 0, got;
  size_t pos = 0;
  while (!rc && (got = next_line(&b, &pos, line, sizeof line)) != 0) {
    ln++;
    if (got < 0) { rc = tps_err_set(e, ps->parts_file, ln, "line of %zu bytes or more, or with a NUL byte", sizeof line); break; }
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    char *f[8];
    int nf = 0;
    for (char *s = line, *t; nf < 8; s = t + 1) {
      f[nf++] = s;
      if (!(t = strchr(s, '\t'))) break;
      *t = 0;
    }
    if (!hdr) {
      if (nf != 6 || strcmp(f[0], "gpu") || strcmp(f[1], "part")) rc = tps_err_set(e, ps->parts_file, ln, "header must be gpu part what tp file selector");
      hdr = 1;
      continue;
    }
    if (nf != 6) { rc = tps_err_set(e, ps->parts_file, ln, "%d fields, want 6", nf); break; }
    if (ps->nrows == MAXROWS) { rc = tps_err_set(e, ps->parts_file, ln, "more than %d rows", MAXROWS); break; }
    prow *r = &ps->rows[ps->nrows];
    memset(r, 0, sizeof *r);
    r->line = ln;
    tps_err e2;
    tps_err_clear(&e2);
    if (!(r->gpu = tps_gpus_find(ps->gt, f[0], &e2))) { rc = tps_err_set(e, ps->parts_file, ln, "%s", e2.msg); break; }
    if (!strcmp(f[1], "gemm")) {
      if (!(r->path = tps_path_find(f[2]))) { rc = tps_err_set(e, ps->parts_file, ln, "unknown kernel path '%s'", f[2]); break; }
    } else if (!strcmp(f[1], "gather")) {
      r->gather = 1;
      if ((r->backend = tps_gather_parse(f[2])) < 0) { rc = tps_err_set(e, ps->parts_file, ln, "unknown gather backend '%s'", f[2]); break; }
      double tv[8];
      size_t nt;
      if (tps_parse_numbers(f[3], tv, 8, &nt, 1, 64, 1) != 0) { rc = tps_err_set(e, ps->parts_file, ln, "bad tp list '%s'", f[3]); break; }
      for (size_t i = 0; i < nt; i++) r->tps[i] = (int)tv[i];
      r->ntp = (int)nt;
    } else {
      rc = tps_err_set(e, ps->parts_file, ln, "part '%s': want gemm or gather", f[1]);
      break;
    }
    cpy(r->file, sizeof r->file, f[4]);
    cpy(r->sel, sizeof r->sel, strcmp(f[5], "-") ? f[5] : "");
    ps->nrows++;
  }
  tps_buf_free(&b);
  if (!rc && !hdr) rc = tps_err_set(e, ps->parts_file, 0, "no header");
  return rc;
}

/* A file read once per set (path as found). */
static int load_file(tps_partset *ps, const char *path, int bundled, loaded **out, tps_err *e) {
  for (int i = 0; i < ps->nlf; i++)
    if (!strcmp(ps->lf[i]->path, path)) { *out = ps->lf[i]; return 0; }
  if (ps->nlf == MAXLOADED) return tps_err_set(e, path, 0, "too many files");
  loaded *l = calloc(1, sizeof *l);
  if (!l) return tps_err_oom(e, "reading %s", path);
  cpy(l->path, sizeof l->path, path);
  cpy(l->name, sizeof l->name, bundled ? shown(path) : path);
  int rc;
  /* the format line of a fit file, or a bench log's "# Gather: X", from the first 40 lines of
   * the bytes read (bounded; a pipe is read once and its bytes kept for the reader below) */
  tps_buf b;
  if (tps_buf_read(path, &b, e)) { free(l); return -1; }
  char first[256] = "";
  const char *p = b.data, *end = b.data + b.len;
  for (int nl = 0; p < end && nl < 40; nl++) {
    const char *q = memchr(p, '\n', (size_t)(end - p));
    size_t n = q ? (size_t)(q - p) : (size_t)(end - p);
    char line[1024];
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, p, n);
    line[n] = '\0';
    if (!first[0] && line[0] != '#' && line[0] != '\0') cpy(first, sizeof first, line);
    if (!strncmp(line, "# Gather: ", 10)) sscanf(line + 10, "%127[a-z-]", l->gather_line);
    p = q ? q + 1 : end;
  }
  tps_buf_free(&b);
  if (tps_aic_is(path)) {
    l->kind = LF_AIC;
    rc = tps_aic_read(path, NULL, &l->aic, e);
  } else if (!strncmp(first, "format\ttpsplit-fit", 18)) {
    l->kind = LF_FIT;
    l->fit = calloc(1, sizeof *l->fit);
    rc = l->fit ? tps_fitfile_read(path, l->fit, e) : tps_err_set(e, path, 0, "out of memory");
  } else {
    l->kind = LF_TABLE;
    rc = tps_table_read(path, &l->tab, e);
  }
  if (rc) {
    if (l->kind == LF_AIC) tps_aic_free(&l->aic);
    free(l->fit);
    free(l);
    return -1;
  }
  ps->lf[ps->nlf++] = l;
  *out = l;
  return 0;
}

static void loaded_free(loaded *l) {
  if (!l) return;
  if (l->kind == LF_AIC) tps_aic_free(&l->aic);
  if (l->kind == LF_TABLE) tps_table_free(&l->tab);
  free(l->fit);
  free(l);
}

/* The GPU a file says it measured. */
static const tps_gpu *file_gpu(const tps_partset *ps, const loaded *l, tps_err *e) {
  char name[64];
  tps_err e2;
  tps_err_clear(&e2);
  const char *g = l->kind == LF_AIC ? tps_aic_gpu_name(l->aic.gpu, name, sizeof name) : l->kind == LF_FIT ? l->fit->gpu : l->tab.gpu;
  if (!g || !g[0]) {
    tps_err_set(e, l->name, 0, "names no GPU (a '#@ gpu:' line): which GPU was measured?");
    return NULL;
  }
  const tps_gpu *gp = tps_gpus_find(ps->gt, g, &e2);
  if (!gp) tps_err_set(e, l->name, 0, "its GPU: %s", e2.msg);
  return gp;
}

/* ------------------------------------------------------------------ measured curves */
typedef struct {
  double *x, *t;
  size_t n;
  long lo, hi;           /* lines used */
  char how[400];         /* what was read and how */
} pts;

static void pts_free(pts *p) { free(p->x); free(p->t); memset(p, 0, sizeof *p); }
static int pts_alloc(pts *p, size_t n) {
  memset(p, 0, sizeof *p);
  p->x = malloc((n ? n : 1) * sizeof *p->x);
  p->t = malloc((n ? n : 1) * sizeof *p->t);
  p->lo = -1;
  return p->x && p->t ? 0 : -1;
}
static void pts_line(pts *p, long ln) {
  if (ln <= 0) return;
  if (p->lo < 0 || ln < p->lo) p->lo = ln;
  if (ln > p->hi) p->hi = ln;
}

/* sort by x; equal x: geometric mean */
static void pts_sort_mean(pts *p) {
  for (size_t i = 1; i < p->n; i++)
    for (size_t j = i; j > 0 && p->x[j] < p->x[j - 1]; j--) {
      double a = p->x[j]; p->x[j] = p->x[j - 1]; p->x[j - 1] = a;
      a = p->t[j]; p->t[j] = p->t[j - 1]; p->t[j - 1] = a;
    }
  size_t o = 0;
  for (size_t i = 0; i < p->n;) {
    size_t j = i;
    double s = 0;
    while (j < p->n && p->x[j] == p->x[i]) s += log(p->t[j++]);
    p->x[o] = p->x[i];
    p->t[o] = exp(s / (double)(j - i));
    o++;
    i = j;
  }
  p->n = o;
}

/* AIC GEMM rows of (dtype, backend, k) at n: measured, or log-linear in n between the
 * measured n either side at every m measured at both. */
static int aic_gemm_pts(const loaded *l, const char *dtype, const char *backend, long k, long n, pts *out, tps_err *e) {
  const tps_aic_file *a = &l->aic;
  if (a->kind != TPS_AIC_GEMM) return tps_err_set(e, l->name, 0, "an AIConfigurator NCCL table, not a GEMM table");
  long nlo = 0, nhi = 0, kany[16];
  int nk = 0, have_dt = 0;
  char ns[512] = "";
  for (size_t i = 0; i < a->nrows; i++) {
    const tps_aic_gemm_row *r = &a->g[i];
    if (strcmp(r->dtype, dtype) || (backend[0] && strcmp(r->backend, backend))) continue;
    have_dt = 1;
    int seen = 0;
    for (int j = 0; j < nk; j++) seen |= kany[j] == r->k;
    if (!seen && nk < 16) kany[nk++] = r->k;
    if (r->k != k) continue;
    if (r->n <= n && r->n > nlo) nlo = r->n;
    if (r->n >= n && (!nhi || r->n < nhi)) nhi = r->n;
  }
  if (!have_dt)
    return tps_err_set(e, l->name, 0, "no rows with dtype %s%s%s", dtype, backend[0] ? " and backend " : "", backend);
  if (!nlo || !nhi) {
    if (nk && !(nlo || nhi)) {
      int hk = 0;
      for (int j = 0; j < nk; j++) hk |= kany[j] == k;
      if (!hk) {
        char ks[256] = "";
        for (int j = 0; j < nk; j++) catf(ks, sizeof ks, "%s%ld", j ? ", " : "", kany[j]);
        return tps_err_set(e, l->name, 0, "no rows with dtype %s, k %ld (k in the file: %s)", dtype, k, ks);
      }
    }
    long seen[64];
    int nsn = 0;
    for (size_t i = 0; i < a->nrows && nsn < 64; i++) {
      const tps_aic_gemm_row *r = &a->g[i];
      if (strcmp(r->dtype, dtype) || r->k != k || (backend[0] && strcmp(r->backend, backend))) continue;
      int s = 0;
      for (int j = 0; j < nsn; j++) s |= seen[j] == r->n;
      if (!s) { seen[nsn++] = r->n; catf(ns, sizeof ns, "%s%ld", nsn > 1 ? ", " : "", r->n); }
    }
    return tps_err_set(e, l->name, 0, "no rows with dtype %s, k %ld, n %ld, nor measured n on both sides of it (n in the file: %s)",
                       dtype, k, n, ns);
  }
  if (pts_alloc(out, a->nrows)) return tps_err_set(e, l->name, 0, "out of memory");
  double w = nlo == nhi ? 0.0 : log((double)n / nlo) / log((double)nhi / nlo);
  const char *ver = "", *be = "";
  for (size_t i = 0; i < a->nrows; i++) {
    const tps_aic_gemm_row *r = &a->g[i];
    if (strcmp(r->dtype, dtype) || r->k != k || r->n != nlo || (backend[0] && strcmp(r->backend, backend))) continue;
    double t2 = NAN;
    long l2 = 0;
    if (nhi != nlo) {
      for (size_t j = 0; j < a->nrows; j++) {
        const tps_aic_gemm_row *q = &a->g[j];
        if (q->n == nhi && q->m == r->m && q->k == k && !strcmp(q->dtype, dtype) && !strcmp(q->backend, r->backend)) {
          t2 = q->latency_us;
          l2 = q->line;
          break;
        }
      }
      if (isnan(t2)) continue;
    }
    out->x[out->n] = (double)r->m;
    out->t[out->n] = nhi == nlo ? r->latency_us : exp(log(r->latency_us) + w * (log(t2) - log(r->latency_us)));
    out->n++;
    pts_line(out, r->line);
    pts_line(out, l2);
    ver = r->version;
    be = r->backend;
  }
  pts_sort_mean(out);
  if (out->n < 2) { pts_free(out); return tps_err_set(e, l->name, 0, "fewer than 2 rows with dtype %s, k %ld at n %ld", dtype, k, n); }
  if (nlo == nhi)
    snprintf(out->how, sizeof out->how, "AIConfigurator %s %s, dtype %s, K %ld N %ld, M %.0f..%.0f", be, ver, dtype, k, n, out->x[0],
             out->x[out->n - 1]);
  else
    snprintf(out->how, sizeof out->how, "AIConfigurator %s %s, dtype %s, K %ld, N %ld and %ld interpolated log-linearly to %ld, M %.0f..%.0f",
             be, ver, dtype, k, nlo, nhi, n, out->x[0], out->x[out->n - 1]);
  return 0;
}

/* AIC NCCL all_gather rows at num_gpus = tp (dtypes averaged: geometric mean per size). */
static int aic_gather_pts(const loaded *l, int tp, pts *out, tps_err *e) {
  const tps_aic_file *a = &l->aic;
  if (a->kind != TPS_AIC_NCCL) return tps_err_set(e, l->name, 0, "an AIConfigurator GEMM table, not an NCCL table");
  if (pts_alloc(out, a->nrows)) return tps_err_set(e, l->name, 0, "out of memory");
  char gs[128] = "", ver[16] = "";
  int seen[32], nseen = 0, any = 0;
  for (size_t i = 0; i < a->nrows; i++) {
    const tps_aic_nccl_row *r = &a->c[i];
    if (strcmp(r->op, "all_gather")) continue;
    any = 1;
    int s = 0;
    for (int j = 0; j < nseen; j++) s |= seen[j] == r->num_gpus;
    if (!s && nseen < 32) { seen[nseen++] = r->num_gpus; catf(gs, sizeof gs, "%s%d", nseen > 1 ? ", " : "", r->num_gpus); }
    if (r->num_gpus != tp) continue;
    out->x[out->n] = r->bytes;
    out->t[out->n] = r->latency_us;
    out->n++;
    pts_line(out, r->line);
    cpy(ver, sizeof ver, r->nccl_version);
  }
  if (!any) { pts_free(out); return tps_err_set(e, l->name, 0, "no rows with op all_gather (a gather needs all_gather rows)"); }
  if (out->n < 2) {
    pts_free(out);
    return tps_err_set(e, l->name, 0, "no rows with op all_gather, num_gpus %d (num_gpus in the file: %s)", tp, gs);
  }
  pts_sort_mean(out);
  char b0[32], b1[32];
  fmt_bytes(b0, sizeof b0, out->x[0]);
  fmt_bytes(b1, sizeof b1, out->x[out->n - 1]);
  snprintf(out->how, sizeof out->how, "nccl-tests all_gather via AIConfigurator, NCCL %s, %d GPUs, %s..%s (dtypes averaged)", ver, tp, b0, b1);
  return 0;
}

/* A GEMM table (rows, time_us) or a split table's replicated column, at (k, n, path). */
static int table_gemm_pts(const loaded *l, const tps_path *path, long k, long n, pts *out, int strict, tps_err *e) {
  const tps_table *t = &l->tab;
  const char *f = l->name;
  if (t->kind != TPS_TABLE_GEMM && t->kind != TPS_TABLE_SPLIT)
    return tps_err_set(e, f, 0, "an all-gather table, not a GEMM measurement");
  if ((t->k && t->k != k) || (t->n && t->n != n)) {
    if (!strict) return 1;
    return tps_err_set(e, f, 0, "measures K %ld N %ld, not the asked K %ld N %ld (--k, --n)", t->k, t->n, k, n);
  }
  if (!t->k || !t->n) return tps_err_set(e, f, 0, "names no shape ('#@ k:' and '#@ n:' lines)");
  const tps_path *tp = t->kpath[0] ? tps_path_find(t->kpath) : NULL;
  if (!tp) return tps_err_set(e, f, 0, "names no kernel path ('#@ path:' line)");
  if (tp != path) {
    if (!strict) return 1;
    return tps_err_set(e, f, 0, "measures the %s path, not %s", tp->name, path->name);
  }
  size_t nr = t->nrows;
  if (pts_alloc(out, nr)) return tps_err_set(e, f, 0, "out of memory");
  for (size_t i = 0; i < nr; i++) {
    out->x[out->n] = (double)(t->kind == TPS_TABLE_GEMM ? t->rows[i] : t->tokens[i]);
    out->t[out->n] = t->kind == TPS_TABLE_GEMM ? t->time_us[i] : t->replicated_us[i];
    out->n++;
    pts_line(out, t->line[i]);
  }
  if (out->n < 2) { pts_free(out); return tps_err_set(e, f, 0, "fewer than 2 rows"); }
  snprintf(out->how, sizeof out->how, "%s, %s K %ld N %ld, rows %.0f..%.0f",
           t->kind == TPS_TABLE_GEMM ? "tpsplit bench gemm table" : "the replicated column of a split table (rows = tokens)",
           path->name, k, n, out->x[0], out->x[out->n - 1]);
  return 0;
}

/* The measured gather of a split table at its TP: split(T) - replicated(ceil(T/TP)) (the
 * replicated column interpolated in log-log, held at its first value below its rows). */
static int split_gather_pts(const loaded *l, pts *out, tps_err *e) {
  const tps_table *t = &l->tab;
  const char *f = l->name;
  if (t->tp < 2) return tps_err_set(e, f, 0, "a split table without '#@ tp:' >= 2 has no gather");
  tps_mcurve *rep = NULL;
  double *x = malloc(t->nrows * sizeof *x);
  if (!x || pts_alloc(out, t->nrows)) { free(x); return tps_err_set(e, f, 0, "out of memory"); }
  for (size_t i = 0; i < t->nrows; i++) x[i] = (double)t->tokens[i];
  rep = tps_mcurve_alloc(x, t->replicated_us, t->nrows);
  free(x);
  if (!rep) { pts_free(out); return tps_err_set(e, f, 0, "cannot interpolate its replicated column"); }
  for (size_t i = 0; i < t->nrows; i++) {
    double rows = ceil((double)t->tokens[i] / t->tp), lo = tps_mcurve_xlo(rep);
    double g = t->split_us[i] - tps_mcurve_eval(rep, rows < lo ? lo : rows);
    if (!(g > 0)) {
      tps_mcurve_free(rep);
      pts_free(out);
      return tps_err_set(e, f, t->line[i], "split %.4g us is not above the replicated GEMM of %.0f rows: no gather left", t->split_us[i], rows);
    }
    out->x[out->n] = (double)t->tp * rows * t->out_bytes_per_token;
    out->t[out->n++] = g;
    pts_line(out, t->line[i]);
  }
  tps_mcurve_free(rep);
  if (!(t->out_bytes_per_token > 0)) { pts_free(out); return tps_err_set(e, f, 0, "names no '#@ out_bytes_per_token:'"); }
  snprintf(out->how, sizeof out->how, "split - replicated(ceil(T/%d)) of a split table, %s gather, T %ld..%ld", t->tp,
           t->gather[0] ? t->gather : "auto", t->tokens[0], t->tokens[t->nrows - 1]);
  return 0;
}

/* An all-gather table or log at ranks = tp. */
static int table_gather_pts(const loaded *l, int tp, pts *out, tps_err *e) {
  const tps_table *t = &l->tab;
  const char *f = l->name;
  if (t->kind == TPS_TABLE_SPLIT) return split_gather_pts(l, out, e);
  if (t->kind != TPS_TABLE_ALLGATHER) return tps_err_set(e, f, 0, "a GEMM table, not a gather measurement");
  if (t->ranks != tp) return tps_err_set(e, f, t->line[0], "measures %d ranks, not TP %d", t->ranks, tp);
  if (pts_alloc(out, t->nrows)) return tps_err_set(e, f, 0, "out of memory");
  for (size_t i = 0; i < t->nrows; i++) {
    out->x[out->n] = t->bytes[i];
    out->t[out->n++] = t->time_us[i];
    pts_line(out, t->line[i]);
  }
  if (out->n < 2) { pts_free(out); return tps_err_set(e, f, 0, "fewer than 2 rows"); }
  char b0[32], b1[32];
  fmt_bytes(b0, sizeof b0, out->x[0]);
  fmt_bytes(b1, sizeof b1, out->x[out->n - 1]);
  snprintf(out->how, sizeof out->how, "%s, %d ranks, %s..%s", !strcmp(t->source, "nccl-tests") ? "all_gather_perf log" : "all-gather table", tp, b0, b1);
  return 0;
}

/* ------------------------------------------------------------------ open, user files */
static int h20_fit(tps_partset *ps, tps_err *e) {
  if (ps->h20_state) return ps->h20_state > 0 ? 0 : -1;
  ps->h20_state = -1;
  if (tps_data_path(TPS_BUNDLED_TABLE, ps->h20_file, sizeof ps->h20_file, e)) return -1;
  ps->h20 = calloc(1, sizeof *ps->h20);
  if (!ps->h20) return tps_err_set(e, NULL, 0, "out of memory");
  tps_fit_opts fo = {0, 0};
  int status;
  if (tps_fit_file(ps->h20_file, NULL, NULL, &fo, ps->h20, &status, e)) return -1;
  tps_err e2;
  if (!(ps->h20_gpu = tps_gpus_find(ps->gt, ps->h20->gpu, &e2))) return tps_err_set(e, ps->h20_file, 0, "%s", e2.msg);
  ps->h20_state = 1;
  return 0;
}

int tps_partset_open(tps_partset **out, const tps_gpu_table *gt, const tps_partset_opts *o, tps_err *e) {
  tps_partset *ps = calloc(1, sizeof *ps);
  *out = NULL;
  if (!ps) return tps_err_set(e, NULL, 0, "out of memory");
  ps->gt = gt;
  if (o) ps->o = *o;
  if (ps->o.tmax < 1) ps->o.tmax = TPS_PRED_DEFAULT_TMAX;
  if (ps->o.k < 1) ps->o.k = TPS_PRED_DEFAULT_K;
  if (ps->o.n < 1) ps->o.n = TPS_PRED_DEFAULT_N;
  pthread_mutex_init(&ps->lock, NULL);
  if (read_xgpu(ps, e) || (!ps->o.no_bundled && read_parts(ps, e))) { tps_partset_free(ps); return -1; }
  *out = ps;
  return 0;
}

void tps_partset_free(tps_partset *ps) {
  if (!ps) return;
  for (size_t i = 0; i < ps->nres; i++) {
    if (ps->res[i]) tps_part_free(&ps->res[i]->part);
    free(ps->res[i]);
    free(ps->key[i]);
  }
  free(ps->res);
  free(ps->key);
  free(ps->used);
  for (int i = 0; i < ps->nlf; i++) loaded_free(ps->lf[i]);
  free(ps->h20);
  pthread_mutex_destroy(&ps->lock);
  free(ps);
}

/* "FILE[:sel]" -> the file and its AIC selection. */
static int split_spec(const char *spec, ufile *u, tps_err *e) {
  char *path;
  if (tps_aic_parse_spec(spec, &path, &u->sel, e)) return -1;
  cpy(u->path, sizeof u->path, path);
  free(path);
  cpy(u->spec, sizeof u->spec, spec);
  return 0;
}

int tps_partset_user_gemm(tps_partset *ps, const char *spec, const tps_path *hint, tps_err *e) {
  if (ps->nug == MAXUSER) return tps_err_set(e, spec, 0, "more than %d --gemm files", MAXUSER);
  ufile *u = &ps->ug[ps->nug];
  memset(u, 0, sizeof *u);
  if (split_spec(spec, u, e) || load_file(ps, u->path, 0, &u->lf, e)) return -1;
  loaded *l = u->lf;
  const char *f = l->name;
  if (!(u->gpu = file_gpu(ps, l, e))) return -1;
  if (l->kind == LF_AIC) {
    if (l->aic.kind != TPS_AIC_GEMM) return tps_err_set(e, f, 0, "an AIConfigurator NCCL table: give it to --gather");
    if (!u->sel.dtype[0] && (!hint || path_dtype(hint, u->sel.dtype, sizeof u->sel.dtype)))
      return tps_err_set(e, f, 0, "which dtype? give FILE:dtype=bfloat16 (dense-bf16) or FILE:dtype=fp8 (native-fp8)");
    if (!(u->kpath = dtype_path(u->sel.dtype)))
      return tps_err_set(e, f, 0, "dtype %s is not a kernel path of tpsplit (bfloat16 = dense-bf16, fp8 = native-fp8)", u->sel.dtype);
    /* the dtype must be in the file */
    int any = 0;
    for (size_t i = 0; i < l->aic.nrows && !any; i++) any = !strcmp(l->aic.g[i].dtype, u->sel.dtype);
    if (!any) return tps_err_set(e, f, 0, "no rows with dtype %s", u->sel.dtype);
  } else if (l->kind == LF_FIT) {
    if (l->fit->kind == TPS_FIT_ALLGATHER) return tps_err_set(e, f, 0, "an all-gather fit has no GEMM: give it to --gather");
    u->kpath = l->fit->gemm.path;
  } else {
    if (l->tab.kind == TPS_TABLE_ALLGATHER) return tps_err_set(e, f, 0, "an all-gather measurement: give it to --gather");
    if (!(u->kpath = l->tab.kpath[0] ? tps_path_find(l->tab.kpath) : NULL))
      return tps_err_set(e, f, 0, "names no kernel path ('#@ path:' line)");
    u->from_split = l->tab.kind == TPS_TABLE_SPLIT;
  }
  if (!(u->kpath->flags & TPS_PATH_F_MODEL)) return tps_err_set(e, f, 0, "measures the %s path, which tpsplit cannot predict", u->kpath->name);
  for (int i = 0; i < ps->nug; i++)
    if (ps->ug[i].gpu == u->gpu && ps->ug[i].kpath == u->kpath)
      return tps_err_set(e, f, 0, "a second --gemm for %s %s (also %s)", u->gpu->name, u->kpath->name, ps->ug[i].spec);
  ps->nug++;
  return 0;
}

int tps_partset_user_gather(tps_partset *ps, const char *spec0, tps_err *e) {
  if (ps->nua == MAXUSER) return tps_err_set(e, spec0, 0, "more than %d --gather files", MAXUSER);
  ufile *u = &ps->ua[ps->nua];
  memset(u, 0, sizeof *u);
  int backend = -1;
  const char *spec = spec0, *eq = strchr(spec0, '=');
  if (eq && !strchr(spec0, ':')) { /* "custom=FILE" (a selection has ':' first) */
    char b[32];
    snprintf(b, sizeof b, "%.*s", (int)(eq - spec0 < 31 ? eq - spec0 : 31), spec0);
    if ((backend = tps_gather_parse(b)) >= 0) spec = eq + 1;
  } else if (eq && strchr(spec0, ':') > eq) {
    char b[32];
    snprintf(b, sizeof b, "%.*s", (int)(eq - spec0 < 31 ? eq - spec0 : 31), spec0);
    if ((backend = tps_gather_parse(b)) >= 0) spec = eq + 1;
  }
  if (split_spec(spec, u, e) || load_file(ps, u->path, 0, &u->lf, e)) return -1;
  loaded *l = u->lf;
  const char *f = l->name;
  if (!(u->gpu = file_gpu(ps, l, e))) return -1;
  int own = -1;
  if (l->kind == LF_AIC) {
    if (l->aic.kind != TPS_AIC_NCCL) return tps_err_set(e, f, 0, "an AIConfigurator GEMM table: give it to --gemm");
    if (u->sel.op[0] && strcmp(u->sel.op, "all_gather"))
      return tps_err_set(e, f, 0, "op %s is not an all-gather (a gather needs op=all_gather)", u->sel.op);
    own = TPS_GATHER_NCCL;
    for (size_t i = 0; i < l->aic.nrows; i++) {
      const tps_aic_nccl_row *r = &l->aic.c[i];
      if (strcmp(r->op, "all_gather")) continue;
      int s = 0;
      for (int j = 0; j < u->nranks; j++) s |= u->ranks[j] == r->num_gpus;
      if (!s && u->nranks < 16) u->ranks[u->nranks++] = r->num_gpus;
    }
    if (!u->nranks) return tps_err_set(e, f, 0, "no rows with op all_gather (a gather needs all_gather rows)");
  } else if (l->kind == LF_FIT) {
    if (l->fit->kind == TPS_FIT_GEMM) return tps_err_set(e, f, 0, "a GEMM fit has no gather: give it to --gemm");
    own = l->fit->gather;
    u->ranks[u->nranks++] = l->fit->tp > 0 ? l->fit->tp : l->fit->ag.ranks;
  } else {
    const tps_table *t = &l->tab;
    if (t->kind == TPS_TABLE_GEMM) return tps_err_set(e, f, 0, "a GEMM table: give it to --gemm");
    if (t->kind == TPS_TABLE_SPLIT) {
      if (t->tp < 2) return tps_err_set(e, f, 0, "a split table at TP %d has no gather", t->tp);
      u->from_split = 1;
      own = t->gather[0] && tps_gather_parse(t->gather) >= 0 ? tps_gather_parse(t->gather) : TPS_GATHER_AUTO;
      u->ranks[u->nranks++] = t->tp;
    } else {
      own = l->gather_line[0] && tps_gather_parse(l->gather_line) >= 0 ? tps_gather_parse(l->gather_line)
            : t->gather[0] && tps_gather_parse(t->gather) >= 0 ? tps_gather_parse(t->gather) : TPS_GATHER_NCCL;
      u->ranks[u->nranks++] = t->ranks;
    }
  }
  /* an nccl-tests log says nothing of the backend (a bench allgather log says it in its
   * '# Gather:' line): a backend named for it stands */
  int unsaid = l->kind == LF_TABLE && l->tab.kind == TPS_TABLE_ALLGATHER && !strcmp(l->tab.source, "nccl-tests") && !l->gather_line[0];
  if (backend >= 0 && own >= 0 && backend != own && !unsaid)
    return tps_err_set(e, f, 0, "measures the %s gather, not %s", tps_gather_name(own), tps_gather_name(backend));
  u->backend = backend >= 0 ? backend : own;
  for (int i = 0; i < ps->nua; i++)
    if (ps->ua[i].gpu == u->gpu && ps->ua[i].backend == u->backend)
      for (int a = 0; a < ps->ua[i].nranks; a++)
        for (int b = 0; b < u->nranks; b++)
          if (ps->ua[i].ranks[a] == u->ranks[b])
            return tps_err_set(e, f, 0, "a second --gather for %s %s at %d ranks (also %s)", u->gpu->name, tps_gather_name(u->backend),
                               u->ranks[b], ps->ua[i].spec);
  ps->nua++;
  return 0;
}

int tps_partset_has_user(const tps_partset *ps) { return ps->nug + ps->nua > 0; }

size_t tps_partset_user_gpus(const tps_partset *ps, const tps_gpu **out, size_t max) {
  size_t n = 0;
  for (int k = 0; k < ps->nug + ps->nua; k++) {
    const tps_gpu *g = k < ps->nug ? ps->ug[k].gpu : ps->ua[k - ps->nug].gpu;
    int s = 0;
    for (size_t i = 0; i < n; i++) s |= out[i] == g;
    if (!s && n < max) out[n++] = g;
  }
  return n;
}

size_t tps_partset_user_paths(const tps_partset *ps, const tps_path **out, size_t max) {
  size_t n = 0;
  for (int k = 0; k < ps->nug; k++) {
    int s = 0;
    for (size_t i = 0; i < n; i++) s |= out[i] == ps->ug[k].kpath;
    if (!s && n < max) out[n++] = ps->ug[k].kpath;
  }
  return n;
}

size_t tps_partset_user_tps(const tps_partset *ps, int *out, size_t max) {
  size_t n = 0;
  for (int k = 0; k < ps->nua; k++)
    for (int j = 0; j < ps->ua[k].nranks; j++) {
      int s = 0, r = ps->ua[k].ranks[j];
      for (size_t i = 0; i < n; i++) s |= out[i] == r;
      if (!s && r >= 1 && r <= 64 && n < max) out[n++] = r;
    }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && out[j] < out[j - 1]; j--) { int t = out[j]; out[j] = out[j - 1]; out[j - 1] = t; }
  return n;
}

int tps_partset_check_targets(const tps_partset *ps, const tps_gpu *const *gpus, size_t ngpu, const int *tps, size_t ntp,
                              const tps_path *const *paths, size_t npath, tps_err *e) {
  for (int k = 0; k < ps->nug + ps->nua; k++) {
    const ufile *u = k < ps->nug ? &ps->ug[k] : &ps->ua[k - ps->nug];
    int is_fit = u->lf->kind == LF_FIT, found = 0;
    for (size_t i = 0; i < ngpu; i++) found |= SAME(gpus[i], u->gpu);
    if (!found && !is_fit)
      return tps_err_set(e, u->path, 0, "measures %s, not the target%s%s", u->gpu->name, ngpu == 1 ? " " : "s",
                         ngpu == 1 ? gpus[0]->name : "");
    if (k < ps->nug) {
      found = 0;
      for (size_t i = 0; i < npath; i++) found |= paths[i] == u->kpath;
      if (!found && !is_fit)
        return tps_err_set(e, u->path, 0, "measures the %s path, not the asked %s%s", u->kpath->name,
                           npath == 1 ? paths[0]->name : "paths", npath == 1 ? " (--path)" : " (--paths)");
    } else if (!is_fit) {
      for (size_t i = 0; i < ntp; i++) {
        if (tps[i] == 1) continue;
        int has = 0;
        for (int j = 0; j < u->nranks; j++) has |= u->ranks[j] == tps[i];
        if (!has) {
          char rs[64] = "";
          for (int j = 0; j < u->nranks; j++) catf(rs, sizeof rs, "%s%d", j ? ", " : "", u->ranks[j]);
          return tps_err_set(e, u->path, 0, "no gather at TP %d (%s: %s)", tps[i],
                             u->lf->kind == LF_AIC ? "num_gpus in the file" : "ranks", rs);
        }
      }
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ resolution */
static tps_partsrc *cache_find(tps_partset *ps, const char *key) {
  for (size_t i = 0; i < ps->nres; i++)
    if (!strcmp(ps->key[i], key)) return ps->res[i];
  return NULL;
}

static int cache_add(tps_partset *ps, const char *key, tps_partsrc *s, tps_err *e) {
  if (ps->nres == ps->cap) {
    size_t nc = ps->cap ? 2 * ps->cap : 32;
    tps_partsrc **r = realloc(ps->res, nc * sizeof *r);
    if (r) ps->res = r;
    char **k = realloc(ps->key, nc * sizeof *k);
    if (k) ps->key = k;
    char *u = realloc(ps->used, nc);
    if (u) ps->used = u;
    if (!r || !k || !u) return tps_err_set(e, NULL, 0, "out of memory");
    ps->cap = nc;
  }
  ps->key[ps->nres] = strdup(key);
  if (!ps->key[ps->nres]) return tps_err_set(e, NULL, 0, "out of memory");
  ps->used[ps->nres] = 0;
  ps->res[ps->nres++] = s;
  return 0;
}

/* The loaded models as model/predict/resolve.h sees them (the H20 fit made first when the
 * part may need it: Marlin GEMM, custom gather). */
static tps_resolve_models models_view(tps_partset *ps, int need_h20) {
  tps_resolve_models r;
  memset(&r, 0, sizeof r);
  r.xg = ps->xg;
  r.nxg = ps->nxg;
  r.xa = ps->xa;
  r.nxa = ps->nxa;
  static __thread char xf[4200];
  cpy(xf, sizeof xf, shown(ps->xgpu_file));
  r.xgpu_file = xf;
  if (ps->have_w8) {
    tps_err e2;
    r.w8 = &ps->w8;
    r.w8_gpu = tps_gpus_find(ps->gt, ps->w8_gpu, &e2);
    r.w8_file = ps->w8_file;
    r.w8_sigma = ps->w8_sigma;
  }
  tps_err e3;
  tps_err_clear(&e3);
  if (need_h20 && h20_fit(ps, &e3) == 0) {
    static __thread char hf[4200];
    cpy(hf, sizeof hf, shown(ps->h20_file));
    r.h20 = ps->h20;
    r.h20_gpu = ps->h20_gpu;
    r.h20_file = hf;
  }
  r.gpus = ps->gt->gpu;
  r.ngpus = ps->gt->n;
  r.tmax = ps->o.tmax;
  return r;
}

/* A measured GEMM source for (gpu, path, k, n): a user file (strict: an error when it does
 * not hold the shape), else a bundled row.  1: none; 0: pts, file; -1: error. */
static int gemm_meas(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, pts *p, char *file, size_t fsz,
                     int *user, int *is_aic, const tps_fit **fit, tps_err *e) {
  *user = *is_aic = 0;
  *fit = NULL;
  for (int i = 0; i < ps->nug; i++) {
    ufile *u = &ps->ug[i];
    if (u->kpath != path || (!SAME(u->gpu, gpu) && u->lf->kind != LF_FIT)) continue;
    *user = 1;
    cpy(file, fsz, u->path);
    if (u->lf->kind == LF_FIT) { *fit = u->lf->fit; return 1; }
    if (u->lf->kind == LF_AIC) { *is_aic = 1; return aic_gemm_pts(u->lf, u->sel.dtype, u->sel.backend, k, n, p, e) ? -1 : 0; }
    return table_gemm_pts(u->lf, path, k, n, p, 1, e) ? -1 : 0;
  }
  for (int i = 0; i < ps->nrows; i++) {
    const prow *r = &ps->rows[i];
    if (r->gather || !SAME(r->gpu, gpu) || r->path != path) continue;
    char full[4096];
    loaded *l;
    tps_err e2;
    tps_err_clear(&e2);
    if (tps_data_path(r->file, full, sizeof full, e)) return -1;
    if (load_file(ps, full, 1, &l, e)) return -1;
    cpy(file, fsz, l->name);
    if (l->kind == LF_AIC) {
      ufile u;
      memset(&u, 0, sizeof u);
      char spec[4200];
      snprintf(spec, sizeof spec, "%s:%s", full, r->sel);
      if (r->sel[0] && split_spec(spec, &u, e)) return -1;
      *is_aic = 1;
      int rc = aic_gemm_pts(l, u.sel.dtype, u.sel.backend, k, n, p, &e2);
      if (rc == 0) return 0;
      continue; /* the shape is not there: the model */
    }
    int rc = table_gemm_pts(l, path, k, n, p, 0, e);
    if (rc < 0) return -1;
    if (rc == 0) return 0;
  }
  return 1;
}


/* The nearest measured sibling of gpu for a GEMM of (path, k, n) (model/predict/resolve.h):
 * its points moved to gpu into p, its name into sib_name, the source line into src.
 * 1: none; 0: found; -1: error. */
static int sibling_gemm(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, pts *p, char *file,
                        size_t fsz, const tps_gpu **sib_out, tps_err *e) {
  const tps_gpu *best = NULL;
  double bd = 0;
  for (size_t i = 0; i < ps->gt->n; i++) {
    const tps_gpu *h = &ps->gt->gpu[i];
    if (!tps_resolve_gemm_sibling(h, gpu)) continue;
    int has = 0;
    for (int r = 0; r < ps->nrows && !has; r++) has = !ps->rows[r].gather && SAME(ps->rows[r].gpu, h) && ps->rows[r].path == path;
    if (!has) continue;
    double d = tps_resolve_sibling_distance(h, gpu);
    if (!best || d < bd) { best = h; bd = d; }
  }
  if (!best) return 1;
  int user, is_aic;
  const tps_fit *fit;
  int rc = gemm_meas(ps, best, path, k, n, p, file, fsz, &user, &is_aic, &fit, e);
  if (rc != 0) return rc;
  double hr = NAN, pr = NAN;
  double *src = malloc(p->n * sizeof *src);
  if (!src) return tps_err_set(e, NULL, 0, "out of memory");
  memcpy(src, p->t, p->n * sizeof *src);
  for (size_t i = 0; i < p->n; i++) p->t[i] = tps_resolve_sibling_gemm_us(best, gpu, path, p->x[i], n, k, p->t[i], &hr, &pr);
  size_t raised = tps_resolve_monotone(src, p->t, p->n);
  free(src);
  char how[400], mono[64] = "";
  if (raised) snprintf(mono, sizeof mono, "; %zu of %zu raised: non-decreasing", raised % 1000, p->n % 1000);
  snprintf(how, sizeof how, "%s's %.220s, moved to %s by the regime's spec ratio: HBM x%.3f where the weights stream, %s peak "
           "x%.3f where it computes%s", best->name, p->how, gpu->name, hr, path->fp8_peak ? "fp8" : "bf16", pr, mono);
  cpy(p->how, sizeof p->how, how);
  *sib_out = best;
  return 0;
}

/* The nearest sibling of gpu (same fabric) with a measured gather of (tp, backend): its
 * points as they are.  1: none; 0: found; -1: error. */
static int sibling_gather(tps_partset *ps, const tps_gpu *gpu, int tp, int backend, pts *p, char *file, size_t fsz,
                          const tps_gpu **sib_out, tps_err *e) {
  const prow *best = NULL;
  double bd = 0;
  for (int i = 0; i < ps->nrows; i++) {
    const prow *r = &ps->rows[i];
    if (!r->gather || r->backend != backend || !tps_resolve_gather_sibling(r->gpu, gpu)) continue;
    int has = 0;
    for (int j = 0; j < r->ntp; j++) has |= r->tps[j] == tp;
    if (!has) continue;
    double d = tps_resolve_sibling_distance(r->gpu, gpu);
    if (!best || d < bd) { best = r; bd = d; }
  }
  if (!best) return 1;
  char full[4096];
  loaded *l;
  if (tps_data_path(best->file, full, sizeof full, e) || load_file(ps, full, 1, &l, e)) return -1;
  cpy(file, fsz, l->name);
  int rc = l->kind == LF_AIC ? aic_gather_pts(l, tp, p, e) : table_gather_pts(l, tp, p, e);
  if (rc) return rc;
  char how[400];
  snprintf(how, sizeof how, "%s's %.300s, as measured (%s has the same fabric)", best->gpu->name, p->how, gpu->name);
  cpy(p->how, sizeof p->how, how);
  *sib_out = best->gpu;
  return 0;
}

/* A part measured on a sibling (set_measured done): its provenance, spread and source. */
static void mark_sibling(tps_partsrc *s, const tps_gpu *sib, double rsd) {
  s->prov = TPS_PROV_SIBLING;
  s->part.meas_rsd = rsd;
  cpy(s->from, sizeof s->from, sib->name);
  char src[sizeof s->src];
  snprintf(src, sizeof src, "sibling: %.1000s", s->src + (strncmp(s->src, "measured: ", 10) ? 0 : 10));
  cpy(s->src, sizeof s->src, src);
}

/* A part measured at points p (owned; freed here): its curve, provenance and source line, and,
 * when have_model, the model msrc for outside them (dropped when it cannot be anchored).
 * -1 with e set (why: what is wrong with the points) when no curve can be made. */
static int set_measured(tps_partsrc *s, pts *p, int have_model, const char *msrc, const char *why, tps_err *e) {
  s->part.meas = tps_mcurve_alloc(p->x, p->t, p->n);
  if (!s->part.meas) {
    pts_free(p);
    return tps_err_set(e, s->file, 0, "cannot interpolate its points%s", why);
  }
  s->part.meas_rsd = TPS_PART_MEASURED_RSD;
  s->prov = TPS_PROV_MEASURED;
  s->line_lo = p->lo;
  s->line_hi = p->hi;
  s->xlo = p->x[0];
  s->xhi = p->x[p->n - 1];
  snprintf(s->src, sizeof s->src, "measured: %.480s lines %ld-%ld (%s)", s->file, p->lo, p->hi, p->how);
  if (have_model) cpy(s->model_src, sizeof s->model_src, msrc);
  if (have_model && tps_part_finish(&s->part) != TPS_OK) { s->part.model.kind = TPS_PM_NONE; s->model_src[0] = 0; }
  pts_free(p);
  return 0;
}

/* The facts a transferred part reads, in a cache key: a GPU moved by src/cli/gpu_doubt.c (its
 * uncertain facts at -10% / +10%, the same name) gets parts of its own. */
static void facts_tag(const tps_gpu *g, char *buf, size_t sz) {
  snprintf(buf, sz, "%d/%.9g/%.9g/%.9g/%.9g/%.9g/%.9g", g->sms, g->bf16_tflops, g->fp8_tflops, g->hbm_gbps, g->l2_mb,
           g->link_gbps, g->nccl_link_gbps);
}

static int resolve_gemm(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, tps_partsrc **out,
                        tps_err *e) {
  char key[256], tag[128];
  facts_tag(gpu, tag, sizeof tag);
  snprintf(key, sizeof key, "gemm|%s|%s|%ld|%ld|%s", gpu->name, path->name, k, n, tag);
  if ((*out = cache_find(ps, key))) return 0;
  tps_partsrc *s = calloc(1, sizeof *s);
  if (!s) return tps_err_set(e, NULL, 0, "out of memory");
  s->part.what = TPS_PART_GEMM;
  s->xlo = s->xhi = NAN;
  cpy(s->gpu, sizeof s->gpu, gpu->name);
  snprintf(s->what, sizeof s->what, "GEMM %s on %s, K %ld N %ld", path->name, gpu->name, k, n);
  pts p;
  memset(&p, 0, sizeof p);
  int user, is_aic;
  const tps_fit *fit;
  int rc = gemm_meas(ps, gpu, path, k, n, &p, s->file, sizeof s->file, &user, &is_aic, &fit, e);
  if (rc < 0) { free(s); return -1; }
  s->user = user;
  if (fit) {
    /* a user fit: its GEMM, transferred when of another GPU */
    tps_part_model *m = &s->part.model;
    tps_err e2;
    const tps_gpu *fg = tps_gpus_find(ps->gt, fit->gpu, &e2);
    m->kind = TPS_PM_GEMM;
    m->gpu = *gpu;
    m->shape.k = k; m->shape.n = n; m->shape.out_bytes = TPS_PRED_DEFAULT_OUT_BYTES;
    m->n = n; m->k = k;
    if (!fg || tps_gemm_transfer(&m->gm, &fit->gemm, fg, gpu, path) != 0) {
      tps_err_set(e, s->file, 0, "its GEMM cannot be moved to %s (%s)", gpu->name, path->name);
      free(s);
      return -1;
    }
    m->prov = SAME(fg, gpu) && fit->gemm.path == path ? TPS_PROV_FITTED : TPS_PROV_TRANSFERRED;
    m->rsd = m->prov == TPS_PROV_FITTED ? fit->rms_rel : path->compute_eff_rsd;
    s->prov = m->prov;
    if (m->prov == TPS_PROV_FITTED)
      snprintf(s->src, sizeof s->src, "fitted: the GEMM of the fit %s (%s %s)", s->file, fit->gpu, fit->gemm.path->name);
    else {
      cpy(s->from, sizeof s->from, fit->gpu);
      snprintf(s->src, sizeof s->src, "transferred: the GEMM of the fit %s (%s %s), by peak x efficiency and HBM bandwidth", s->file, fit->gpu,
               fit->gemm.path->name);
    }
  } else {
    char msrc[600], from[400];
    tps_resolve_models rm = models_view(ps, path->model == TPS_PATH_MODEL_TABLE_FIT);
    int have_model = tps_resolve_gemm_model(&rm, gpu, path, k, n, is_aic, &s->part.model, msrc, sizeof msrc, from, sizeof from) == 0;
    if (!have_model) s->part.model.kind = TPS_PM_NONE;
    const tps_gpu *sib = NULL;
    if (rc == 1 && !user) {
      rc = sibling_gemm(ps, gpu, path, k, n, &p, s->file, sizeof s->file, &sib, e);
      if (rc < 0) { free(s); return -1; }
    }
    if (rc == 0) {
      if (set_measured(s, &p, have_model, msrc, " (not increasing?)", e)) { free(s); return -1; }
      if (sib) mark_sibling(s, sib, tps_resolve_sibling_gemm_rsd(sib, gpu));
    } else {
      if (!have_model) { free(s); return tps_err_set(e, NULL, 0, "no model of %s on %s", path->name, gpu->name); }
      s->prov = s->part.model.prov;
      cpy(s->src, sizeof s->src, msrc);
      cpy(s->from, sizeof s->from, from);
    }
  }
  /* usable at both ends of the question (tps_partset_prepare tabulates 1..tmax for the
   * grids, whose cells share a part; a single context evaluates the part directly) */
  if (!(tps_part_eval(&s->part, 1, NULL) > 0) || !(tps_part_eval(&s->part, (double)ps->o.tmax, NULL) > 0)) {
    tps_part_free(&s->part);
    free(s);
    return tps_err_set(e, NULL, 0, "the %s GEMM on %s has no usable times on 1..%ld rows", path->name, gpu->name, ps->o.tmax);
  }
  if (cache_add(ps, key, s, e)) { tps_part_free(&s->part); free(s); return -1; }
  *out = s;
  return 0;
}

static int resolve_gather(tps_partset *ps, const tps_gpu *gpu, int tp, int backend, tps_partsrc **out, tps_err *e) {
  char key[256], tag[128];
  *out = NULL;
  facts_tag(gpu, tag, sizeof tag);
  snprintf(key, sizeof key, "gather|%s|%d|%d|%s", gpu->name, tp, backend, tag);
  for (size_t i = 0; i < ps->nres; i++)
    if (!strcmp(ps->key[i], key)) { *out = ps->res[i]; return 0; }
  /* a negative entry is a key with no part: keep looking it up cheaply */
  char nkey[300];
  snprintf(nkey, sizeof nkey, "none|%s", key);
  for (size_t i = 0; i < ps->nres; i++) if (!strcmp(ps->key[i], nkey)) return 0;
  tps_partsrc *s = calloc(1, sizeof *s);
  if (!s) return tps_err_set(e, NULL, 0, "out of memory");
  s->part.what = TPS_PART_GATHER;
  s->part.backend = backend;
  s->part.ranks = tp;
  s->xlo = s->xhi = NAN;
  cpy(s->gpu, sizeof s->gpu, gpu->name);
  snprintf(s->what, sizeof s->what, "gather %s on %s at TP %d", tps_gather_name(backend), gpu->name, tp);
  pts p;
  memset(&p, 0, sizeof p);
  int rc = 1;
  const tps_fit *fit = NULL;
  for (int i = 0; i < ps->nua && rc == 1; i++) {
    ufile *u = &ps->ua[i];
    if (u->backend != backend || (!SAME(u->gpu, gpu) && u->lf->kind != LF_FIT)) continue;
    int has = 0;
    for (int j = 0; j < u->nranks; j++) has |= u->ranks[j] == tp;
    if (!has && u->lf->kind != LF_FIT) continue;
    s->user = 1;
    cpy(s->file, sizeof s->file, u->path);
    if (u->lf->kind == LF_FIT) { fit = u->lf->fit; break; }
    rc = u->lf->kind == LF_AIC ? aic_gather_pts(u->lf, tp, &p, e) : table_gather_pts(u->lf, tp, &p, e);
    if (rc) { free(s); return -1; }
  }
  /* a measured curve of the auto rule yields to the user's own nccl or custom gathers here */
  int user_here = 0;
  for (int i = 0; i < ps->nua; i++)
    for (int j = 0; j < ps->ua[i].nranks; j++)
      user_here |= SAME(ps->ua[i].gpu, gpu) && ps->ua[i].ranks[j] == tp && ps->ua[i].backend != TPS_GATHER_AUTO;
  for (int i = 0; i < ps->nrows && rc == 1 && !fit && !(backend == TPS_GATHER_AUTO && user_here); i++) {
    const prow *r = &ps->rows[i];
    if (!r->gather || !SAME(r->gpu, gpu) || r->backend != backend) continue;
    int has = 0;
    for (int j = 0; j < r->ntp; j++) has |= r->tps[j] == tp;
    if (!has) continue;
    char full[4096];
    loaded *l;
    if (tps_data_path(r->file, full, sizeof full, e) || load_file(ps, full, 1, &l, e)) { free(s); return -1; }
    cpy(s->file, sizeof s->file, l->name);
    rc = l->kind == LF_AIC ? aic_gather_pts(l, tp, &p, e) : table_gather_pts(l, tp, &p, e);
    if (rc) { free(s); return -1; }
  }
  if (fit) {
    tps_part_model *m = &s->part.model;
    tps_err e2;
    const tps_gpu *fg = tps_gpus_find(ps->gt, fit->gpu, &e2);
    int fn = fit->ag.ranks > 0 ? fit->ag.ranks : fit->tp;
    m->kind = TPS_PM_AG;
    m->gpu = *gpu;
    m->backend = backend;
    m->ag = fit->ag;
    if (!fg || !SAME(fg, gpu) || fn != tp) {
      /* moved by the ratio of the spec models, as predict.c's model scaling does */
      tps_ag_model ss, ds;
      tps_ag_from_spec(&ss, fg ? fg : gpu, fn > 0 ? fn : tp);
      tps_ag_from_spec(&ds, gpu, tp);
      tps_ag_model d = ds;
      for (int q = 0; q < TPS_NPROTO; q++) {
        if (fit->ag.lat_us[q] > 0 && ss.lat_us[q] > 0) d.lat_us[q] = fit->ag.lat_us[q] * ds.lat_us[q] / ss.lat_us[q];
        if (ss.busbw_gbps[q] > 0) d.busbw_gbps[q] = fit->ag.busbw_gbps[q] * ds.busbw_gbps[q] / ss.busbw_gbps[q];
      }
      if (ds.custom_gbps > 0 && fit->ag.custom_gbps > 0 && ss.custom_gbps > 0) {
        d.custom_floor_us = fit->ag.custom_floor_us * (ss.custom_floor_us > 0 ? ds.custom_floor_us / ss.custom_floor_us : 1.0);
        d.custom_gbps = fit->ag.custom_gbps * ds.custom_gbps / ss.custom_gbps;
      }
      d.custom_cap_bytes = fit->ag.custom_cap_bytes > 0 ? fit->ag.custom_cap_bytes : TPS_GATHER_CUSTOM_CAP_BYTES;
      m->ag = d;
      m->prov = TPS_PROV_TRANSFERRED;
      m->rsd = TPS_PRED_GATHER_RSD;
      cpy(s->from, sizeof s->from, fit->gpu);
      snprintf(s->src, sizeof s->src, "transferred: the gather of the fit %s (%s, %d ranks), by the spec models' link bandwidth and ring steps",
               s->file, fit->gpu, fn);
    } else {
      m->prov = TPS_PROV_FITTED;
      m->rsd = fit->rms_rel;
      snprintf(s->src, sizeof s->src, "fitted: the gather of the fit %s (%s, %d ranks)", s->file, fit->gpu, fn);
    }
    m->ag.ranks = tp;
    m->ag.ranks_per_node = TPS_PRED_DEFAULT_NODE_GPUS;
    m->ag.internode_gbps = TPS_PRED_DEFAULT_IB_GBPS / 8.0;
    m->ag.internode_lat_us = TPS_PRED_DEFAULT_INTERNODE_LAT_US;
    s->prov = m->prov;
  } else {
    char msrc[600], from[400];
    tps_resolve_models rm = models_view(ps, backend == TPS_GATHER_CUSTOM);
    int have_model = backend != TPS_GATHER_AUTO &&
                     tps_resolve_gather_model(&rm, gpu, tp, backend, &s->part.model, msrc, sizeof msrc, from, sizeof from) == 0;
    if (!have_model) s->part.model.kind = TPS_PM_NONE;
    const tps_gpu *sib = NULL;
    if (rc == 1 && !s->user && backend != TPS_GATHER_AUTO) {
      rc = sibling_gather(ps, gpu, tp, backend, &p, s->file, sizeof s->file, &sib, e);
      if (rc < 0) { free(s); return -1; }
    }
    if (rc == 0) {
      if (set_measured(s, &p, have_model, msrc, "", e)) { free(s); return -1; }
      if (sib) mark_sibling(s, sib, TPS_RESOLVE_SIBLING_GATHER_RSD);
      if (backend == TPS_GATHER_AUTO)
        snprintf(s->model_src, sizeof s->model_src, "the auto rule over %s's custom and nccl gathers at TP %d (their own sources)",
                 gpu->name, tp);
    } else if (have_model) {
      s->prov = s->part.model.prov;
      cpy(s->src, sizeof s->src, msrc);
      cpy(s->from, sizeof s->from, from);
    } else {
      free(s);
      return cache_add(ps, nkey, NULL, e);
    }
  }
  if (cache_add(ps, key, s, e)) { tps_part_free(&s->part); free(s); return -1; }
  *out = s;
  return 0;
}

/* ------------------------------------------------------------------ contexts */
static void use_ranges(const tps_pred *p, long tmax, int b, double *xlo, double *xhi) {
  /* the T served by backend b under the context's rule */
  long tc = p->tp * (long)floor(p->ag.custom_cap_bytes / p->out_bytes_per_token); /* last T of the custom gather */
  long a = 1, z = tmax;
  if (p->backend == TPS_GATHER_AUTO && b != TPS_GATHER_AUTO && p->ag.custom_cap_bytes > 0 && p->tp <= p->opts.node_gpus) {
    if (b == TPS_GATHER_CUSTOM) z = tc < tmax ? tc : tmax;
    else a = tc + 1;
  }
  if (a > z) { *xlo = *xhi = NAN; return; }
  *xlo = tps_pred_gathered_bytes(p, a);
  *xhi = tps_pred_gathered_bytes(p, z);
}

int tps_partset_context(tps_partset *ps, const tps_gpu *gpu, int tp, const tps_path *path, const tps_pred_opts *po,
                        const tps_gemm_shape *shape, double obpt, tps_pred *p, tps_partuse *use, tps_err *e) {
  tps_partuse u0;
  tps_partuse *u = use ? use : &u0;
  memset(u, 0, sizeof *u);
  memset(p, 0, sizeof *p);
  tps_pred_parts pp;
  memset(&pp, 0, sizeof pp);
  long k = shape ? shape->k : ps->o.k, n = shape ? shape->n : ps->o.n;
  pp.shape.k = k;
  pp.shape.n = n;
  pp.shape.out_bytes = shape ? shape->out_bytes : TPS_PRED_DEFAULT_OUT_BYTES;
  pp.out_bytes_per_token = obpt > 0 ? obpt : n * pp.shape.out_bytes;
  /* applicability first (no parts for a path that cannot run here) */
  tps_pred_opts o;
  if (po) o = *po; else tps_pred_opts_default(&o);
  int st = tps_pred_init_spec(p, gpu, tp, path, &pp.shape, pp.out_bytes_per_token, &o);
  tps_pred_free(p);
  if (st != TPS_OK) return st;
  pthread_mutex_lock(&ps->lock);
  tps_partsrc *g = NULL, *a[TPS_NGATHERS] = {NULL, NULL, NULL};
  int rc = resolve_gemm(ps, gpu, path, k, n, &g, e);
  for (int b = 0; b < TPS_NGATHERS && !rc; b++) rc = resolve_gather(ps, gpu, tp, b, &a[b], e);
  pthread_mutex_unlock(&ps->lock);
  if (rc) return TPS_EBADDATA;
  pp.gemm = &g->part;
  pp.compute_rsd = tps_part_rsd(&g->part, 1, (double)ps->o.tmax);
  for (int b = 0; b < TPS_NGATHERS; b++) pp.gather[b] = a[b] ? &a[b]->part : NULL;
  st = tps_pred_init_parts(p, gpu, tp, path, &pp, &o);
  if (st != TPS_OK) return st;
  /* spreads, coverage and the spec-only gather, for what this rule uses */
  long tmax = ps->o.tmax;
  u->gemm = g;
  u->gemm_prov = g->prov;
  u->gemm_outside = !g->part.meas || !tps_part_covers(&g->part, 1, (double)tmax);
  double grsd = 0;
  int bs[3];
  for (int b = 0; b < TPS_NGATHERS; b++) u->gather[b] = a[b];
  int nb = tps_partuse_backends(u, p->backend, tp, tps_pred_custom_possible(p), bs);
  for (int i = 0; i < nb; i++) {
    int b = bs[i];
    double xlo, xhi;
    use_ranges(p, tmax, b, &xlo, &xhi);
    if (isnan(xlo)) continue;
    if (a[b]) {
      double r = tps_part_rsd(&a[b]->part, xlo, xhi);
      if (r > grsd) grsd = r;
      u->gather_outside[b] = !a[b]->part.meas || !tps_part_covers(&a[b]->part, xlo, xhi);
    } else {
      u->gather_outside[b] = 1;
      if (TPS_PRED_GATHER_RSD > grsd) grsd = TPS_PRED_GATHER_RSD;
      snprintf(u->gather_spec_src, sizeof u->gather_spec_src,
               "spec-only: the datasheet NCCL model (model/latency/allgather.h)%s", tp > p->opts.node_gpus
               ? " across nodes: TP spans more than one 8-GPU NVLink domain, inter-node bandwidth per GPU (--ib-gbps)" : "");
    }
    if (ps->o.measured_only && !u->gather_outside[b] && a[b] && a[b]->prov == TPS_PROV_SIBLING) {
      tps_err_set(e, a[b]->file, a[b]->line_lo, "%s TP%d: the %s gather is %s's measurement, a sibling's (--measured-only "
                  "allows only %s's own; give --gather %s=FILE)", gpu->name, tp, tps_gather_name(b), a[b]->from, gpu->name,
                  tps_gather_name(b));
      tps_pred_free(p);
      return TPS_EBADDATA;
    }
    if (ps->o.measured_only && u->gather_outside[b]) {
      const tps_partsrc *s = a[b];
      char b0[32], b1[32];
      fmt_bytes(b0, sizeof b0, xlo);
      fmt_bytes(b1, sizeof b1, xhi);
      if (s && s->part.meas) {
        char m0[32], m1[32];
        fmt_bytes(m0, sizeof m0, s->xlo);
        fmt_bytes(m1, sizeof m1, s->xhi);
        tps_err_set(e, s->file, s->line_lo, "measured %s..%s does not reach the question's %s..%s (%s gather, TP %d, T 1..%ld) and "
                    "--measured-only allows no model", m0, m1, b0, b1, tps_gather_name(b), tp, tmax);
      } else {
        tps_err_set(e, NULL, 0, "%s TP%d: no measurement of the %s gather (--measured-only allows no model; give --gather %s=FILE)",
                    gpu->name, tp, tps_gather_name(b), tps_gather_name(b));
      }
      tps_pred_free(p);
      return TPS_EBADDATA;
    }
  }
  p->gather_rsd = grsd;
  if (ps->o.measured_only && !u->gemm_outside && g->prov == TPS_PROV_SIBLING) {
    tps_err_set(e, g->file, g->line_lo, "%s %s: the GEMM is %s's measurement, a sibling's (--measured-only allows only %s's own; "
                "give --gemm FILE)", gpu->name, path->name, g->from, gpu->name);
    tps_pred_free(p);
    return TPS_EBADDATA;
  }
  if (ps->o.measured_only && u->gemm_outside) {
    if (g->part.meas)
      tps_err_set(e, g->file, g->line_lo, "measured rows %.0f..%.0f do not reach the question's 1..%ld (%s, TP %d) and --measured-only "
                  "allows no model", g->xlo, g->xhi, tmax, path->name, tp);
    else
      tps_err_set(e, NULL, 0, "%s %s: no measurement of the GEMM at K %ld N %ld (--measured-only allows no model; give --gemm FILE)",
                  gpu->name, path->name, k, n);
    tps_pred_free(p);
    return TPS_EBADDATA;
  }
  if (g->part.meas && g->part.model.kind == TPS_PM_NONE && u->gemm_outside) {
    tps_err_set(e, g->file, g->line_lo, "measured rows %.0f..%.0f do not reach the question's 1..%ld and no model of %s on %s exists",
                g->xlo, g->xhi, tmax, path->name, gpu->name);
    tps_pred_free(p);
    return TPS_EBADDATA;
  }
  return TPS_OK;
}

/* Tables of the GEMM parts made in threads (each writes its own part). */
typedef struct {
  tps_partset *ps;
  pthread_mutex_t lock;
  size_t next;
  int bad;
} tab_job;

static void *tab_worker(void *arg) {
  tab_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    size_t i = j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->ps->nres) return NULL;
    tps_partsrc *s = j->ps->res[i];
    if (s && s->part.what == TPS_PART_GEMM && !s->part.tab && tps_part_tabulate(&s->part, j->ps->o.tmax) != TPS_OK) {
      pthread_mutex_lock(&j->lock);
      j->bad = 1;
      pthread_mutex_unlock(&j->lock);
    }
  }
}

int tps_partset_prepare(tps_partset *ps, const tps_gpu *const *gpus, size_t ngpu, const int *tps, size_t ntp,
                        const tps_path *const *paths, size_t npath, const tps_pred_opts *po, tps_err *e) {
  int rc = 0;
  ps->defer_tab = 1;
  for (size_t i = 0; i < ngpu && !rc; i++)
    for (size_t j = 0; j < ntp && !rc; j++)
      for (size_t k = 0; k < npath && !rc; k++) {
        tps_pred p;
        int st = tps_partset_context(ps, gpus[i], tps[j], paths[k], po, NULL, 0, &p, NULL, e);
        tps_pred_free(&p);
        if (st == TPS_EBADDATA) rc = -1;
      }
  ps->defer_tab = 0;
  tab_job job = {ps, PTHREAD_MUTEX_INITIALIZER, 0, 0};
  long nt = sysconf(_SC_NPROCESSORS_ONLN);
  const char *env = getenv("TPSPLIT_THREADS");
  long ev;
  if (env && tps_parse_long(env, &ev) == 0 && ev >= 1 && ev <= 64) nt = ev;
  if (nt < 1) nt = 1;
  if (nt > 8) nt = 8;
  pthread_t th[8];
  int started = 0;
  for (long i = 1; i < nt; i++)
    if (pthread_create(&th[started], NULL, tab_worker, &job) == 0) started++;
  tab_worker(&job);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  if (!rc && job.bad) rc = tps_err_set(e, NULL, 0, "a GEMM part has no usable times on 1..%ld rows", ps->o.tmax);
  return rc;
}

/* ------------------------------------------------------------------ output */
int tps_partuse_backends(const tps_partuse *u, int backend, int tp, int custom_possible, int *b) {
  /* one rank: no gather, unless a one-rank gather was measured */
  if (tp <= 1 && !u->gather[TPS_GATHER_NCCL] && !u->gather[TPS_GATHER_CUSTOM] && !u->gather[TPS_GATHER_AUTO]) return 0;
  if (backend == TPS_GATHER_AUTO && u->gather[TPS_GATHER_AUTO]) { b[0] = TPS_GATHER_AUTO; return 1; }
  if (backend == TPS_GATHER_AUTO) {
    int n = 0;
    if (custom_possible) b[n++] = TPS_GATHER_CUSTOM;
    b[n++] = TPS_GATHER_NCCL;
    return n;
  }
  b[0] = backend;
  return 1;
}

static void short_of(int prov, int outside, int id, int model_ok, char *buf, size_t sz) {
  const char *k = prov >= 0 && prov < TPS_PROV_N ? tps_prov_names[prov] : "?";
  if (prov == TPS_PROV_MEASURED && outside) snprintf(buf, sz, "%s+model%s", k, model_ok ? "" : "?");
  else snprintf(buf, sz, "%s", k);
  if (id > 0) catf(buf, sz, "[%d]", id);
}

void tps_partuse_gemm_short(const tps_partuse *u, char *buf, size_t sz) {
  if (!u->gemm) { snprintf(buf, sz, "-"); return; }
  short_of(u->gemm->prov, u->gemm_outside, u->gemm->id, u->gemm->part.model.kind != TPS_PM_NONE, buf, sz);
}

void tps_partuse_gather_short(const tps_partuse *u, int backend, int tp, char *buf, size_t sz) {
  int b[3], n = tps_partuse_backends(u, backend, tp, 1, b);
  buf[0] = 0;
  if (!n) { snprintf(buf, sz, "none"); return; }
  for (int i = 0; i < n; i++) {
    char one[64];
    const tps_partsrc *s = u->gather[b[i]];
    if (s) short_of(s->prov, u->gather_outside[b[i]], s->id, s->part.model.kind != TPS_PM_NONE || b[i] == TPS_GATHER_AUTO, one,
                    sizeof one);
    else snprintf(one, sizeof one, "spec-only");
    catf(buf, sz, "%s%s", i ? "," : "", one);
  }
}

static json_t *src_json(const tps_partsrc *s, int outside) {
  json_t *o = json_object();
  json_object_set_new(o, "provenance", json_string(tps_prov_names[s->prov]));
  json_object_set_new(o, "source", json_string(s->src));
  if (s->file[0] && s->prov == TPS_PROV_MEASURED) {
    json_object_set_new(o, "file", json_string(s->file));
    char l[64];
    snprintf(l, sizeof l, "%ld-%ld", s->line_lo, s->line_hi);
    json_object_set_new(o, "lines", json_string(l));
    tps_json_set_num(o, "measured_from", s->xlo);
    tps_json_set_num(o, "measured_to", s->xhi);
  } else if (s->file[0]) {
    json_object_set_new(o, "file", json_string(s->file));
  }
  if (s->from[0]) json_object_set_new(o, "transferred_from", json_string(s->from));
  json_object_set_new(o, "outside_measured", json_boolean(outside));
  json_object_set_new(o, "model_outside", s->model_src[0] ? json_string(s->model_src) : json_null());
  json_object_set_new(o, "user_file", json_boolean(s->user));
  if (s->id > 0) json_object_set_new(o, "id", json_integer(s->id));
  return o;
}

json_t *tps_partuse_json(const tps_partuse *u, int backend, int tp, int custom_possible) {
  json_t *o = json_object(), *g = json_object();
  if (u->gemm) json_object_set_new(o, "gemm", src_json(u->gemm, u->gemm_outside));
  int b[3], n = tps_partuse_backends(u, backend, tp, custom_possible, b);
  for (int i = 0; i < n; i++) {
    const tps_partsrc *s = u->gather[b[i]];
    json_t *x;
    if (s) x = src_json(s, u->gather_outside[b[i]]);
    else {
      x = json_object();
      json_object_set_new(x, "provenance", json_string(tps_prov_names[TPS_PROV_SPEC]));
      json_object_set_new(x, "source", json_string(u->gather_spec_src));
      json_object_set_new(x, "outside_measured", json_true());
    }
    json_object_set_new(g, tps_gather_name(b[i]), x);
  }
  json_object_set_new(o, "gather", g);
  return o;
}

void tps_partset_mark(tps_partset *ps, const tps_partuse *u, int backend, int tp, int custom_possible) {
  int b[3], n = tps_partuse_backends(u, backend, tp, custom_possible, b);
  const tps_partsrc *want[4] = {u->gemm, NULL, NULL, NULL};
  for (int i = 0; i < n; i++) want[1 + i] = u->gather[b[i]];
  pthread_mutex_lock(&ps->lock);
  for (int w = 0; w < 1 + n; w++)
    for (size_t i = 0; i < ps->nres && want[w]; i++)
      if (ps->res[i] == want[w] && !ps->used[i]) {
        ps->used[i] = 1;
        ps->res[i]->id = ++ps->next_id;
      }
  pthread_mutex_unlock(&ps->lock);
}

/* the marked parts in id order */
static size_t marked(const tps_partset *ps, const tps_partsrc **out, size_t max) {
  size_t n = 0;
  for (int id = 1; id <= ps->next_id; id++)
    for (size_t i = 0; i < ps->nres; i++)
      if (ps->used[i] && ps->res[i] && ps->res[i]->id == id && n < max) out[n++] = ps->res[i];
  return n;
}

void tps_partset_print_sources(const tps_partset *ps, const char *prefix) {
  const tps_partsrc *v[512];
  size_t n = marked(ps, v, 512);
  for (size_t i = 0; i < n; i++) {
    printf("%s[%d] %s: %s\n", prefix, v[i]->id, v[i]->what, v[i]->src);
    if (v[i]->model_src[0]) printf("%s    outside the measured range: %s\n", prefix, v[i]->model_src);
  }
}

json_t *tps_partset_sources_json(const tps_partset *ps) {
  const tps_partsrc *v[512];
  size_t n = marked(ps, v, 512);
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *o = src_json(v[i], 0);
    json_object_del(o, "outside_measured");
    json_object_set_new(o, "part", json_string(v[i]->what));
    json_array_append_new(a, o);
  }
  return a;
}
