/* bench_nocuda.c: `tpsplit bench` in a build without CUDA (or without the part asked for).
 * Weak definitions: the kernels/ CUDA files provide the real ones when they are built. */
#include "tpsplit.h"
#include "err.h"
#include "bench.h"

static int unavailable(const char *what) {
  tps_die_msg("bench %s: this tpsplit was built without it (configure --with-cuda --with-nccl)", what);
  return TPS_EXIT_FAIL;
}
__attribute__((weak)) int tps_bench_gemm_main(int argc, char **argv) { (void)argc; (void)argv; return unavailable("gemm"); }
__attribute__((weak)) int tps_bench_split_main(int argc, char **argv) { (void)argc; (void)argv; return unavailable("split"); }
__attribute__((weak)) int tps_bench_allgather_main(int argc, char **argv) { (void)argc; (void)argv; return unavailable("allgather"); }
