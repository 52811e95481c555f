/* thr_int.h: what thresholds.c (build, write, look up, check) and thresholds_read.c (read)
 * share; not part of the thresholds API (src/io/thresholds.h). */
#ifndef TPS_IO_THR_INT_H
#define TPS_IO_THR_INT_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void thr_copy(char *dst, size_t sz, const char *src) { snprintf(dst, sz, "%s", src ? src : ""); }

/* Grow *v (n used) by one zeroed element of size sz; NULL on failure. */
static inline void *thr_grow(void **v, size_t *n, size_t sz) {
  void *nv = realloc(*v, (*n + 1) * sz);
  if (!nv) return NULL;
  *v = nv;
  void *e = (char *)nv + *n * sz;
  memset(e, 0, sz);
  (*n)++;
  return e;
}

#endif
