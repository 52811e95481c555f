/* kspan.c: see kspan.h.  Built only with CUDA; without the CUPTI headers it compiles to an
 * "unavailable" answer, and the harness times with CUDA events. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include "kernels/bench/kspan.h"

#ifndef HAVE_CUPTI_H
int tps_kspan_open(const char **why) {
  *why = "built without the CUPTI headers (cupti_activity.h)";
  return -1;
}
uint64_t tps_kspan_mark(void) { return 0; }
int tps_kspan_take(int device, uint64_t mark, double *span_us, int *nkernels) {
  (void)device; (void)mark; *span_us = 0; *nkernels = 0;
  return -1;
}
uint64_t tps_kspan_dropped(void) { return 0; }
#else
#include <dlfcn.h>
#include <cupti_activity.h>
#include <cupti_version.h>

typedef CUptiResult (*get_version_fn)(uint32_t *);
typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*enable_fn)(CUpti_ActivityKind);
typedef CUptiResult (*flush_fn)(uint32_t);
typedef CUptiResult (*next_fn)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*stamp_fn)(uint64_t *);
typedef CUptiResult (*dropped_fn)(CUcontext, uint32_t, size_t *);

static struct {
  next_fn next;
  flush_fn flush;
  stamp_fn stamp;
  dropped_fn dropped;
} api;

typedef struct { uint64_t start, end; uint32_t device, graph; int kernel; } krec; /* kernel: 0 = memcpy/memset */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int open_rc = -1;
static const char *open_why = "not opened";
static krec *store;
static size_t nstore, capstore;
static uint64_t ndropped;

enum { BUF_BYTES = 4 << 20, BUF_ALIGN = 8 };

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *p = NULL;
  if (posix_memalign(&p, BUF_ALIGN, BUF_BYTES) != 0) p = NULL;
  *buffer = (uint8_t *)p;
  *size = p ? BUF_BYTES : 0;
  *max_records = 0; /* as many as fit */
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size, size_t valid) {
  CUpti_Activity *r = NULL;
  pthread_mutex_lock(&lock);
  while (api.next(buffer, valid, &r) == CUPTI_SUCCESS) {
    krec rec;
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
      rec = (krec){k->start, k->end, k->deviceId, k->graphId, 1};
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
      rec = (krec){m->start, m->end, m->deviceId, m->graphId, 0};
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
      const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)r;
      rec = (krec){m->start, m->end, m->deviceId, m->graphId, 0};
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
      rec = (krec){m->start, m->end, m->deviceId, m->graphId, 0};
    } else {
      continue;
    }
    if (nstore == capstore) {
      size_t nc = capstore ? 2 * capstore : 1024;
      krec *ns = (krec *)realloc(store, nc * sizeof *ns);
      if (!ns) { ndropped++; continue; }
      store = ns;
      capstore = nc;
    }
    store[nstore++] = rec;
  }
  size_t d = 0;
  if (api.dropped && api.dropped(ctx, stream_id, &d) == CUPTI_SUCCESS) ndropped += d;
  pthread_mutex_unlock(&lock);
  (void)size;
  free(buffer);
}

/* libcupti.so.<major> in dir ("" = the loader path) */
static void *try_dir(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s%slibcupti.so.%d", dir, *dir ? "/" : "", CUPTI_API_VERSION / 10000);
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* the search order of kspan.h */
static void *load_lib(void) {
  const char *env = getenv("TPS_CUPTI_LIB");
  if (env && *env) return dlopen(env, RTLD_NOW | RTLD_LOCAL);
  void *h = try_dir("");
  if (!h) h = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
  const char *home = getenv("CUDA_HOME");
  if (!h && home && *home) {
    char dir[480];
    snprintf(dir, sizeof dir, "%s/extras/CUPTI/lib64", home);
    h = try_dir(dir);
  }
  static const char *const dirs[] = {"/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/lib64", "/usr/local/cuda/lib"};
  for (size_t i = 0; !h && i < sizeof dirs / sizeof *dirs; i++) h = try_dir(dirs[i]);
  return h;
}

static void do_open(void) {
  const char *t = getenv("TPS_TIMER");
  if (t && !strcmp(t, "events")) { open_why = "TPS_TIMER=events"; return; }
  void *h = load_lib();
  if (!h) { open_why = "libcupti not found (set TPS_CUPTI_LIB to its path)"; return; }
  get_version_fn getv = (get_version_fn)dlsym(h, "cuptiGetVersion");
  register_fn reg = (register_fn)dlsym(h, "cuptiActivityRegisterCallbacks");
  enable_fn en = (enable_fn)dlsym(h, "cuptiActivityEnable");
  api.next = (next_fn)dlsym(h, "cuptiActivityGetNextRecord");
  api.flush = (flush_fn)dlsym(h, "cuptiActivityFlushAll");
  api.stamp = (stamp_fn)dlsym(h, "cuptiGetTimestamp");
  api.dropped = (dropped_fn)dlsym(h, "cuptiActivityGetNumDroppedRecords");
  if (!getv || !reg || !en || !api.next || !api.flush || !api.stamp) { open_why = "libcupti lacks an activity function"; return; }
  uint32_t v = 0;
  if (getv(&v) != CUPTI_SUCCESS || v != CUPTI_API_VERSION) {
    open_why = "libcupti's API version differs from the headers built against (record layout)";
    return;
  }
  if (reg(buf_requested, buf_completed) != CUPTI_SUCCESS) { open_why = "cuptiActivityRegisterCallbacks failed (another profiler attached?)"; return; }
  if (en(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) { open_why = "cuptiActivityEnable(CONCURRENT_KERNEL) failed (another profiler attached?)"; return; }
  /* copies and memsets: the span of a replay that runs no kernel (kspan.h) */
  (void)en(CUPTI_ACTIVITY_KIND_MEMCPY);
  (void)en(CUPTI_ACTIVITY_KIND_MEMCPY2);
  (void)en(CUPTI_ACTIVITY_KIND_MEMSET);
  open_why = NULL;
  open_rc = 0;
}

int tps_kspan_open(const char **why) {
  pthread_once(&once, do_open);
  *why = open_why;
  return open_rc;
}

uint64_t tps_kspan_mark(void) {
  uint64_t t = 0;
  if (open_rc == 0 && api.stamp(&t) != CUPTI_SUCCESS) t = 0;
  return t;
}

/* scan this device's records: span of the graph kernels started at/after mark (of its
 * copies and memsets if it ran no kernel); then remove all records of this device (the
 * replay is complete, nothing of it is still to come) */
static int scan(int device, uint64_t mark, uint64_t *t0, uint64_t *t1) {
  int n[2] = {0, 0};
  uint64_t a[2] = {0, 0}, b[2] = {0, 0};
  size_t w = 0;
  for (size_t i = 0; i < nstore; i++) {
    const krec *r = &store[i];
    if ((int)r->device != device) { store[w++] = *r; continue; }
    if (r->graph != 0 && r->start >= mark) {
      const int k = r->kernel ? 1 : 0;
      if (n[k] == 0 || r->start < a[k]) a[k] = r->start;
      if (n[k] == 0 || r->end > b[k]) b[k] = r->end;
      n[k]++;
    }
  }
  const int k = n[1] > 0 ? 1 : 0;
  if (n[k] > 0) {
    nstore = w;
    *t0 = a[k];
    *t1 = b[k];
  }
  return n[k];
}

int tps_kspan_take(int device, uint64_t mark, double *span_us, int *nkernels) {
  *span_us = 0;
  *nkernels = 0;
  if (open_rc != 0) return -1;
  uint64_t t0 = 0, t1 = 0;
  int n = 0;
  /* the records of completed work arrive with the first forced flush; allow a few more
   * (1 ms apart) before giving up (a replay with no kernel, copy or memset has none) */
  for (int tries = 0; tries < 5 && n == 0; tries++) {
    if (tries) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
    api.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&lock);
    n = scan(device, mark, &t0, &t1);
    pthread_mutex_unlock(&lock);
  }
  if (n == 0) return -1;
  *span_us = (double)(t1 - t0) * 1e-3;
  *nkernels = n;
  return 0;
}

uint64_t tps_kspan_dropped(void) {
  pthread_mutex_lock(&lock);
  uint64_t d = ndropped;
  pthread_mutex_unlock(&lock);
  return d;
}
#endif
