/* bench.h: entry points of `tpsplit bench <what>`, implemented in kernels/ (CUDA) or,
 * in a build without CUDA, by src/bench_nocuda.c (which says so and exits 1).
 * Each takes argc/argv starting at <what> and returns an exit code (tpsplit.h). */
#ifndef TPS_BENCH_H
#define TPS_BENCH_H
#ifdef __cplusplus
extern "C" {
#endif

int tps_bench_gemm_main(int argc, char **argv);      /* kernels/bench_gemm.cu */
int tps_bench_split_main(int argc, char **argv);     /* kernels/bench_split.cu */
int tps_bench_allgather_main(int argc, char **argv); /* kernels/bench_allgather.cu */

#ifdef __cplusplus
}
#endif
#endif
