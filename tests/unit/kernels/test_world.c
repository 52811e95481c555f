/* test_world.c: the host collectives of kernels/gather/gather_world.c with threads (no GPU used):
 * barrier, allgather, broadcast and element-wise max over 1..8 ranks, and what happens when
 * one rank fails while the others wait in a collective: they must return -1 promptly (not
 * hang), and tps_world_run must report the failure.  Expected values are computed here
 * from the rank numbers.  alarm(60) turns a hang into a failure. */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "kernels/common/check.h"
#include "kernels/gather/gather.h"

#include "tests/unit/expect.h"

static int collectives(tps_world *w, void *arg) {
  (void)arg;
  const int n = tps_world_size(w), r = tps_world_rank(w);
  for (int rep = 0; rep < 50; rep++) {
    long mine = 1000L * r + rep, all[TPS_GATHER_MAX_RANKS];
    if (tps_world_allgather(w, &mine, all, sizeof mine)) return TPS_ERR;
    for (int q = 0; q < n; q++) EXPECT(all[q] == 1000L * q + rep, "allgather rank %d slot %d: %ld", r, q, all[q]);
    double v[3] = {(double)r, (double)(n - r), r == 1 ? 7.5 : -1.0};
    if (tps_world_max(w, v, 3)) return TPS_ERR;
    /* max over ranks of r is n-1; of n-r is n (rank 0); the third is 7.5 when rank 1 exists */
    EXPECT(v[0] == n - 1 && v[1] == n && v[2] == (n > 1 ? 7.5 : -1.0), "max rank %d: %g %g %g", r, v[0], v[1], v[2]);
    int b = r == 0 ? 4242 + rep : -1;
    if (tps_world_bcast(w, &b, sizeof b)) return TPS_ERR;
    EXPECT(b == 4242 + rep, "bcast rank %d: %d", r, b);
    if (tps_world_barrier(w)) return TPS_ERR;
  }
  return TPS_OK;
}

static int waited[TPS_GATHER_MAX_RANKS];
static int one_fails(tps_world *w, void *arg) {
  (void)arg;
  const int r = tps_world_rank(w);
  if (r == 2) { /* fails while the others wait */
    struct timespec t = {0, 100000000};
    nanosleep(&t, NULL);
    return TPS_ERR;
  }
  waited[r] = tps_world_barrier(w);                 /* must come back with -1 */
  return waited[r] == 0 ? TPS_OK : TPS_ERR;
}

int main(void) {
  alarm(60);
  const int ns[] = {1, 2, 3, 4, 8};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    EXPECT(tps_world_run_threads_nodev(ns[i], collectives, NULL) == TPS_OK, "collectives with %d ranks failed", ns[i]);
  memset(waited, 0, sizeof waited);
  EXPECT(tps_world_run_threads_nodev(4, one_fails, NULL) == TPS_ERR, "a failed rank was not reported");
  for (int r = 0; r < 4; r++)
    if (r != 2) EXPECT(waited[r] == -1, "rank %d: barrier returned %d after rank 2 failed", r, waited[r]);
  EXPECT(tps_world_run_threads_nodev(0, collectives, NULL) == TPS_ERR, "0 ranks accepted");
  EXPECT(tps_world_run_threads_nodev(TPS_GATHER_MAX_RANKS + 1, collectives, NULL) == TPS_ERR, "17 ranks accepted");
  printf("%d checks, %d failed\n", checks, fails);
  return fails ? 1 : 0;
}
