/* check.h: CUDA and cuBLASLt call checks (nccl-tests style).
 * Each macro logs "tpsplit: FILE:LINE: <call> failed: <error string>" and returns TPS_ERR
 * (model/core/status.h) from the enclosing function, which must return int; TPS_TRY re-returns a
 * failed status, adding one "from here" line per level (none for TPS_SKIP, which is not a
 * failure).  Nothing calls exit(). */
#ifndef TPS_KERNELS_CHECK_H
#define TPS_KERNELS_CHECK_H
#include <stdio.h>
#include <cuda_runtime.h>
#include "model/core/status.h"

/* When `failed`: one line "FILE:LINE: <what> failed: <fmt with arg>", then return TPS_ERR. */
#define TPS_CHECK_(failed, what, fmt, arg)                                                   \
  do {                                                                                       \
    if (failed) {                                                                            \
      fprintf(stderr, "tpsplit: %s:%d: %s failed: " fmt "\n", __FILE__, __LINE__, what, arg); \
      return TPS_ERR;                                                                        \
    }                                                                                        \
  } while (0)

#define CUDA_TRY(call)                                                                       \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    TPS_CHECK_(e_ != cudaSuccess, #call, "%s", cudaGetErrorString(e_));                       \
  } while (0)

/* After every kernel launch. */
#define CUDA_LAUNCH_CHECK() CUDA_TRY(cudaGetLastError())

#define CUBLAS_TRY(call)                                                                     \
  do {                                                                                       \
    cublasStatus_t s_ = (call);                                                              \
    TPS_CHECK_(s_ != CUBLAS_STATUS_SUCCESS, #call, "cuBLAS status %d", (int)s_);              \
  } while (0)

#define TPS_TRY(call)                                                                        \
  do {                                                                                       \
    int rc_ = (call);                                                                        \
    if (rc_ != TPS_OK) {                                                                     \
      if (rc_ != TPS_SKIP) fprintf(stderr, "tpsplit: %s:%d: from here\n", __FILE__, __LINE__); \
      return rc_;                                                                            \
    }                                                                                        \
  } while (0)

#endif
