/* parallel.h: independent jobs 0..n-1 over worker threads, and how many threads a command
 * uses.  A job writes only its own slots; the caller combines them afterwards in job order, so
 * results never depend on the thread count (tests/cli/loo.sh compares 1 thread with several). */
#ifndef TPS_BASE_PARALLEL_H
#define TPS_BASE_PARALLEL_H

/* TPSPLIT_THREADS (1..64) when set and valid, else the online CPUs, at most 8. */
int tps_threads_default(void);

/* fn(ctx, i) for every i in 0..n-1 on up to nthreads threads (the calling thread is one of
 * them; 1 or fewer: all here, in order).  Returns when every job has run. */
void tps_parallel_for(int n, int nthreads, void (*fn)(void *ctx, int i), void *ctx);

#endif
