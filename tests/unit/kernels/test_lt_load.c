/* test_lt_load.c: cuBLASLt loaded at first use (kernels/gemm/cublaslt_load.h), without a GPU.
 * Each case runs in its own process (the first answer is kept for the process): a
 * TPS_CUBLASLT_LIB that does not exist and one that lacks cuBLASLt's functions give TPS_ERR
 * with one line naming the library and what failed, and fill no pointer; by default the
 * library configure found loads, every pointer is set and its major version is the headers'. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernels/gemm/cublaslt_load.h"
#include "model/core/status.h"

#include "tests/unit/expect.h"

/* pointers of tps_lt_fn that are set */
static int nset(void) {
  int n = 0;
#define TPS_COUNT_(f) n += tps_lt_fn.f != NULL;
  TPS_LT_FUNCS(TPS_COUNT_)
#undef TPS_COUNT_
  return n;
}

static int nfuncs(void) {
  int n = 0;
#define TPS_COUNT_(f) n++;
  TPS_LT_FUNCS(TPS_COUNT_)
#undef TPS_COUNT_
  return n;
}

/* lib: TPS_CUBLASLT_LIB (NULL: unset); want: the status; need1, need2: in the reason (or NULL) */
static void expect_load(const char *lib, int want, const char *need1, const char *need2) {
  if (lib) setenv("TPS_CUBLASLT_LIB", lib, 1);
  else unsetenv("TPS_CUBLASLT_LIB");
  const char *why = NULL, *why2 = NULL;
  const int rc = tps_lt_load(&why);
  const char *w = why ? why : "(null)";
  CHECK(rc == want, "TPS_CUBLASLT_LIB=%s: status %d, want %d (%s)", lib ? lib : "(unset)", rc, want, w);
  CHECK(tps_lt_load(&why2) == rc && why2 == why, "a second load changed its answer");
  if (want != TPS_OK) {
    CHECK(why && !strchr(why, '\n'), "the reason is not one line: '%s'", w);
    CHECK(!need1 || strstr(w, need1), "the reason '%s' lacks '%s'", w, need1);
    CHECK(!need2 || strstr(w, need2), "the reason '%s' lacks '%s'", w, need2);
    CHECK(nset() == 0, "%d pointers set after a failed load", nset());
    return;
  }
  CHECK(why == NULL, "loaded, with a reason '%s'", w);
  CHECK(nset() == nfuncs(), "%d of %d pointers set", nset(), nfuncs());
  const size_t v = tps_lt_fn.cublasLtGetVersion ? tps_lt_fn.cublasLtGetVersion() : 0;
  CHECK(v / 10000 == CUBLAS_VER_MAJOR, "cublasLtGetVersion() %zu, headers' major %d", v, CUBLAS_VER_MAJOR);
  printf("loaded cuBLASLt %zu (%s, else %s)\n", v, TPS_CUBLASLT_SONAME, TPS_CUBLASLT_DIR);
}

int main(void) {
  static const struct {
    const char *lib;
    int want;
    const char *need1, *need2;
  } cases[] = {
      {"/nonexistent/libcublasLt.so.13", TPS_ERR, "TPS_CUBLASLT_LIB=/nonexistent/libcublasLt.so.13", "cannot open"},
      {"libc.so.6", TPS_ERR, "libc.so.6", "no function cublasLtGetVersion"},
      {NULL, TPS_OK, NULL, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
      perror("test_lt_load: fork");
      return 1;
    }
    if (pid == 0) {
      expect_load(cases[i].lib, cases[i].want, cases[i].need1, cases[i].need2);
      fflush(stdout);
      _exit(fails ? 1 : 0);
    }
    int st = 0;
    const pid_t w = waitpid(pid, &st, 0);
    CHECK(w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %zu (TPS_CUBLASLT_LIB=%s): %s", i,
          cases[i].lib ? cases[i].lib : "(unset)", w != pid ? "waitpid failed" : WIFEXITED(st) ? "failed" : "crashed");
  }
  printf("%d checks, %d failed\n", checks, fails);
  return fails ? 1 : 0;
}
