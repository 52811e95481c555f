/* bench_nocuda.c: the kernels/bench/bench.h entry points in a build without CUDA (or without NCCL
 * for split and allgather): each says why it cannot run and returns TPS_SKIP, so that the
 * `tpsplit bench` commands still parse and check their options (exit 2 for bad input) and
 * then say there is no GPU support (exit 1).  Weak definitions: the kernels/ CUDA files
 * provide the real ones when they are built. */
#include <stdio.h>
#include <string.h>
#include "kernels/bench/bench.h"

#define NO_CUDA "this tpsplit was built without CUDA, so without GPU support (configure --with-cuda)"
#define NO_NCCL "this tpsplit was built without NCCL, so without multi-GPU benches (configure --with-nccl)"

__attribute__((weak)) int tps_bench_gpus(int *n, char *why, size_t whysz) {
  *n = 0;
  snprintf(why, whysz, "%s", NO_CUDA);
  return TPS_SKIP;
}

__attribute__((weak)) int tps_bench_mpi(void) { return 0; }

__attribute__((weak)) int tps_bench_device_info(int device, tps_bench_prov *p, char *why, size_t whysz) {
  (void)device;
  memset(p, 0, sizeof *p);
  snprintf(why, whysz, "%s", NO_CUDA);
  return TPS_SKIP;
}

__attribute__((weak)) int tps_bench_gemm_run(const tps_bench_gemm_opts *o, tps_bench_gemm_result *r) {
  (void)o;
  snprintf(r->why, sizeof r->why, "%s", NO_CUDA);
  return TPS_SKIP;
}

/* The multi-rank benches: the caller writes nothing and prints why. */
static int without_nccl(tps_bench_world_result *r) {
  memset(r, 0, sizeof *r);
  r->writer = 1;
  r->stopped = -1;
  snprintf(r->why, sizeof r->why, "%s", NO_NCCL);
  return TPS_SKIP;
}

__attribute__((weak)) int tps_bench_split_run(const tps_bench_split_opts *o, tps_bench_split_result *r) {
  (void)o;
  return without_nccl(&r->w);
}

__attribute__((weak)) int tps_bench_allgather_run(const tps_bench_ag_opts *o, tps_bench_ag_result *r) {
  (void)o;
  return without_nccl(&r->w);
}
