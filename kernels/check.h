/* check.h: CUDA / cuBLASLt / NCCL call checks (nccl-tests style).
 * Each macro logs "tpsplit: FILE:LINE: <call> failed: <error string>" and returns
 * TPS_K_ERR from the enclosing function, which must return int; TPS_TRY re-returns a
 * failed status, adding one line per level.  Nothing calls exit(). */
#ifndef TPS_CHECK_H
#define TPS_CHECK_H
#include <stdio.h>
#include <cuda_runtime.h>

enum { TPS_K_OK = 0, TPS_K_ERR = 1, TPS_K_SKIP = 77 };

#define CUDA_TRY(call)                                                                       \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "tpsplit: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
              cudaGetErrorString(e_));                                                       \
      return TPS_K_ERR;                                                                      \
    }                                                                                        \
  } while (0)

/* After every kernel launch. */
#define CUDA_LAUNCH_CHECK() CUDA_TRY(cudaGetLastError())

#define CUBLAS_TRY(call)                                                                     \
  do {                                                                                       \
    cublasStatus_t s_ = (call);                                                              \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
      fprintf(stderr, "tpsplit: %s:%d: %s failed: cuBLAS status %d\n", __FILE__, __LINE__,   \
              #call, (int)s_);                                                               \
      return TPS_K_ERR;                                                                      \
    }                                                                                        \
  } while (0)

#define NCCL_TRY(call)                                                                       \
  do {                                                                                       \
    ncclResult_t r_ = (call);                                                                \
    if (r_ != ncclSuccess) {                                                                 \
      fprintf(stderr, "tpsplit: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
              ncclGetErrorString(r_));                                                       \
      return TPS_K_ERR;                                                                      \
    }                                                                                        \
  } while (0)

#define TPS_TRY(call)                                                                        \
  do {                                                                                       \
    int rc_ = (call);                                                                        \
    if (rc_ != TPS_K_OK) {                                                                   \
      if (rc_ != TPS_K_SKIP) fprintf(stderr, "tpsplit: %s:%d: from here\n", __FILE__, __LINE__); \
      return rc_;                                                                            \
    }                                                                                        \
  } while (0)

#endif
