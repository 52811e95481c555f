/* expect.h: the check macro of the C unit tests.  CHECK(cond, fmt, ...) (or EXPECT) counts a
 * check and, when cond is false, counts a failure and prints "FAIL file:line: message"; a test's
 * main ends with printf("%d checks, %d failed\n", checks, fails) and returns fails != 0.
 * CHECK_TRUE(cond) is CHECK with the condition's text as its message.
 * One test program per translation unit includes it (the counters are static). */
#ifndef TPS_TESTS_EXPECT_H
#define TPS_TESTS_EXPECT_H
#include <stdio.h>

static int fails = 0, checks = 0;
#define CHECK(cond, ...)                          \
  do {                                            \
    checks++;                                     \
    if (!(cond)) {                                \
      fails++;                                    \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)
#define EXPECT CHECK
/* CHECK_TRUE(cond): a check whose message is the condition's text */
#define CHECK_TRUE(cond) CHECK(cond, "%s", #cond)

#endif
