/* ev_int.h: what the files of src/evidence share (not the API: evidence.h): the part set's
 * state, the loaded files, the measured points, small helpers, and the functions one file
 * calls in another (evidence.c reads; evidence_resolve.c resolves parts and hands a
 * context's parts to model/; evidence_use.c prepares the grid and says where each part came
 * from). */
#ifndef TPS_EVIDENCE_EV_INT_H
#define TPS_EVIDENCE_EV_INT_H
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
#include "src/io/measure.h"
#include "src/io/xgpufile.h"
#include "model/predict/resolve.h"
#include "src/base/util.h"
#define MAXXG TPS_XGPU_MAXG
#define MAXXA TPS_XGPU_MAXA
#define MAXROWS 96
#define MAXUSER 16
#define MAXLOADED 32
#include "model/numeric/robust.h"

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
/* A gather row holds TP tp. */
static inline int prow_has_tp(const prow *r, int tp) {
  for (int j = 0; j < r->ntp; j++)
    if (r->tps[j] == tp) return 1;
  return 0;
}

/* ------------------------------------------------------------------ files read once */
typedef struct {
  char path[4096];
  char name[4200];        /* in messages: as the user gave it, or data/... for bundled files */
  tps_meas m;             /* the loader's normalized record (src/io/measure.h); a bench
                           * allgather log's "# Gather: X" backend: m.tab.log_gather */
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
  tps_part_source **res;
  char **key;
  char *used;
  size_t nres, cap;
  int next_id;
  /* the parts built once, their tables and the contexts' gather tables, shared by the
   * contexts in any threads (model/predict/parts.h: made only after tps_partset_prepare) */
  tps_partcache *cache;
};

/* ------------------------------------------------------------------ small helpers */
/* The same GPU, by name: callers may hold GPUs of another copy of the table. */
#define SAME(a, b) ((a) && (b) && strcmp((a)->name, (b)->name) == 0)
static inline void cpy(char *d, size_t n, const char *s) {
  if (!n) return;
  size_t l = s ? strlen(s) : 0;
  if (l >= n) l = n - 1;
  if (l) memcpy(d, s, l);
  d[l] = 0;
}

static inline void catf(char *buf, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void catf(char *buf, size_t sz, const char *fmt, ...) {
  size_t l = strlen(buf);
  if (l + 1 >= sz) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + l, sz - l, fmt, ap);
  va_end(ap);
}

/* "data/x" for a bundled file, else the name as given. */
static inline const char *shown(const char *path) {
  const char *d = tps_data_dir();
  size_t l = d ? strlen(d) : 0;
  static __thread char buf[4200];
  if (l && strncmp(path, d, l) == 0 && path[l] == '/') {
    snprintf(buf, sizeof buf, "data/%s", path + l + 1);
    return buf;
  }
  return path;
}

static inline void fmt_bytes(char *b, size_t n, double x) {
  if (x >= 1024.0 * 1024 && fmod(x, 1024.0 * 1024) == 0) snprintf(b, n, "%.0f MiB", x / (1024.0 * 1024));
  else if (x >= 1024 && fmod(x, 1024) == 0) snprintf(b, n, "%.0f KiB", x / 1024);
  else snprintf(b, n, "%.0f B", x);
}

/* AIConfigurator's dtype of a path that predictions take, and back (model/core/paths/). */
static inline int path_dtype(const tps_path *p, char *dt, size_t n) {
  if ((p->flags & TPS_PATH_F_MODEL) && p->aic_dtype && p->aic_dtype[0]) { cpy(dt, n, p->aic_dtype); return 0; }
  return -1;
}
static inline const tps_path *dtype_path(const char *dt) {
  for (int i = 0; i < TPS_NPATHS; i++) {
    const tps_path *p = tps_path_get(i);
    if (p && (p->flags & TPS_PATH_F_MODEL) && p->aic_dtype && p->aic_dtype[0] && !strcmp(dt, p->aic_dtype)) return p;
  }
  return NULL;
}

/* A part's measured points, as read (evidence.c) and used (evidence_resolve.c). */
typedef struct {
  double *x, *t;
  size_t n;
  long lo, hi;           /* lines used */
  char how[700];         /* what was read and how */
} pts;

int ev_load_file(tps_partset *ps, const char *path, int bundled, loaded **out, tps_err *e);
/* The file of a data/parts.tsv row, loaded (ev_load_file) and held to its row: the GPU it says it
 * measured is the row's, and a tpsplit table of a gemm row measures the row's kernel path; else
 * -1 with e naming parts.tsv:LINE (a row that contradicts its file answered for the wrong GPU or
 * was skipped in silence). */
int ev_load_row(tps_partset *ps, const prow *r, loaded **out, tps_err *e);
void ev_pts_free(pts *p);
/* p emptied with room for n points (lines unset: lo -1); 0, or -1 out of memory. */
int ev_pts_alloc(pts *p, size_t n);
/* Line ln (> 0) joins the range of lines p was read from. */
void ev_pts_line(pts *p, long ln);
int ev_aic_gemm_pts(const loaded *l, const char *dtype, const char *backend, long k, long n, pts *out, tps_err *e);
int ev_aic_gather_pts(const loaded *l, int tp, pts *out, tps_err *e);
int ev_table_gemm_pts(const loaded *l, const tps_path *path, long k, long n, pts *out, int strict, tps_err *e);
int ev_table_gather_pts(const loaded *l, int tp, pts *out, tps_err *e);
int ev_h20_fit(tps_partset *ps, tps_err *e);
int ev_split_spec(const char *spec, ufile *u, tps_err *e);
int ev_resolve_gemm(tps_partset *ps, const tps_gpu *gpu, const tps_path *path, long k, long n, tps_part_source **out,
                        tps_err *e);
int ev_resolve_gather(tps_partset *ps, const tps_gpu *gpu, int tp, int backend, tps_part_source **out, tps_err *e);

#endif
