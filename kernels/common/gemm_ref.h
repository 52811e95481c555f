/* gemm_ref.h: the float64 CPU reference of a GEMM, Y = X W^T, that every check of a GPU GEMM
 * compares with (kernels/bench/bench_gemm.cu, tests/unit/kernels/test_gemm_gpu.c): X is m x k
 * (the activations exactly as the kernel reads them), W is n x k (one row per output, the
 * exact weights), Y is m x n; all row-major.  GSL's dgemm (CBLAS).  Plain C, built with or
 * without CUDA. */
#ifndef TPS_KERNELS_GEMM_REF_H
#define TPS_KERNELS_GEMM_REF_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

void tps_gemm_ref(const double *x, size_t m, const double *w, size_t n, size_t k, double *y);

#ifdef __cplusplus
}
#endif
#endif
