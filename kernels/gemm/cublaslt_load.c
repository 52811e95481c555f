/* cublaslt_load.c: see cublaslt_load.h. */
#include "config.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/gemm/cublaslt_load.h"
#include "model/core/status.h"

/* configure defines both (cublaslt_load.h); these are for a build without its config.h lines */
#ifndef TPS_CUBLASLT_SONAME
#define TPS_CUBLASLT_SONAME "libcublasLt.so"
#endif
#ifndef TPS_CUBLASLT_DIR
#define TPS_CUBLASLT_DIR ""
#endif

tps_lt_api tps_lt_fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc = TPS_ERR;
static char why_text[1024];

/* dlopen name: its handle, or NULL with dlerror()'s text in err */
static void *open_lib(const char *name, char *err, size_t errsz) {
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(err, errsz, "%s", e ? e : name);
  }
  return h;
}

/* every function of TPS_LT_FUNCS from h into api: 0, or -1 with why_text naming the missing one */
static int resolve(void *h, const char *name, tps_lt_api *api) {
#define TPS_LT_RESOLVE_(f)                                                                          \
  api->f = (tps_lt_##f##_t *)dlsym(h, #f);                                                         \
  if (!api->f) {                                                                                   \
    const char *e = dlerror();                                                                     \
    snprintf(why_text, sizeof why_text, "%s: no function %s (%s)", name, #f, e ? e : "dlsym failed"); \
    return -1;                                                                                     \
  }
  TPS_LT_FUNCS(TPS_LT_RESOLVE_)
#undef TPS_LT_RESOLVE_
  return 0;
}

/* the search of cublaslt_load.h; load_rc TPS_OK with tps_lt_fn filled, or why_text says why not */
static void load(void) {
  const char *env = getenv("TPS_CUBLASLT_LIB");
  const char *name;
  char err[512];
  void *h;
  if (env && *env) {
    name = env;
    if (!(h = open_lib(env, err, sizeof err))) {
      snprintf(why_text, sizeof why_text, "TPS_CUBLASLT_LIB=%s: %s", env, err);
      return;
    }
  } else {
    static const char dir[] = TPS_CUBLASLT_DIR, path[] = TPS_CUBLASLT_DIR "/" TPS_CUBLASLT_SONAME;
    char err_dir[512];
    name = TPS_CUBLASLT_SONAME;
    h = open_lib(name, err, sizeof err); /* the loader's search, as a link would do */
    if (!h && *dir && (h = open_lib(path, err_dir, sizeof err_dir)) != NULL) name = path;
    if (!h) {
      snprintf(why_text, sizeof why_text, "%s%s%s (set TPS_CUBLASLT_LIB to its path)", err, *dir ? "; nor in " : "", dir);
      return;
    }
  }
  tps_lt_api api;
  memset(&api, 0, sizeof api);
  if (resolve(h, name, &api) != 0) {
    dlclose(h);
    return;
  }
  const size_t v = api.cublasLtGetVersion();
  if (v / 10000 != CUBLAS_VER_MAJOR) {
    snprintf(why_text, sizeof why_text, "%s: version %zu, built for major version %d (cublasLt.h)", name, v,
             CUBLAS_VER_MAJOR);
    dlclose(h);
    return;
  }
  tps_lt_fn = api;
  load_rc = TPS_OK;
}

int tps_lt_load(const char **why) {
  if (pthread_once(&once, load) != 0) {
    *why = "pthread_once failed: cuBLASLt not loaded";
    return TPS_ERR;
  }
  *why = load_rc == TPS_OK ? NULL : why_text;
  return load_rc;
}
