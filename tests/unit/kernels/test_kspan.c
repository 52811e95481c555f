/* test_kspan.c: the kernel-span timer's way out (kernels/bench/kspan.h), without a GPU: with
 * TPS_TIMER=events it does not open, says why, keeps that answer, and takes no span. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/bench/kspan.h"

#include "tests/unit/expect.h"

int main(void) {
  setenv("TPS_TIMER", "events", 1);
  const char *why = NULL;
  EXPECT(tps_kspan_open(&why) == -1, "TPS_TIMER=events: the timer opened");
  EXPECT(why && strstr(why, "TPS_TIMER=events"), "reason '%s'", why ? why : "(null)");
  unsetenv("TPS_TIMER");
  const char *why2 = NULL;
  EXPECT(tps_kspan_open(&why2) == -1 && why2 == why, "a second open changed its answer");
  EXPECT(tps_kspan_mark() == 0, "mark of a closed timer is not 0");
  double us = 1;
  int n = 1;
  EXPECT(tps_kspan_take(0, 0, &us, &n) == -1 && us == 0 && n == 0, "take of a closed timer: %d %g", n, us);
  EXPECT(tps_kspan_dropped() == 0, "dropped records of a closed timer");
  printf("%s\n", fails ? "test_kspan: FAILED" : "test_kspan: ok");
  return fails ? 1 : 0;
}
