/* parallel.c: see parallel.h. */
#include "src/base/parallel.h"
#include "src/base/util.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

int tps_threads_default(void) {
  const char *s = getenv("TPSPLIT_THREADS");
  long n;
  if (s && tps_parse_long(s, &n) == 0 && n >= 1 && n <= 64) return (int)n;
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

typedef struct {
  pthread_mutex_t lock;
  int next, n;
  void (*fn)(void *ctx, int i);
  void *ctx;
} pool;

static void *worker(void *arg) {
  pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    int i = p->next < p->n ? p->next++ : -1;
    pthread_mutex_unlock(&p->lock);
    if (i < 0) return NULL;
    p->fn(p->ctx, i);
  }
}

void tps_parallel_for(int n, int nthreads, void (*fn)(void *ctx, int i), void *ctx) {
  if (nthreads > n) nthreads = n;
  if (nthreads > 64) nthreads = 64;
  if (nthreads <= 1) {
    for (int i = 0; i < n; i++) fn(ctx, i);
    return;
  }
  pool p = {PTHREAD_MUTEX_INITIALIZER, 0, n, fn, ctx};
  pthread_t th[64];
  int started = 0;
  for (int t = 1; t < nthreads; t++)
    if (pthread_create(&th[started], NULL, worker, &p) == 0) started++;
  worker(&p); /* this thread too; a thread that could not start leaves its jobs to the others */
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
}
