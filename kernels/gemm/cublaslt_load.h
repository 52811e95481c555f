/* cublaslt_load.h: cuBLASLt, loaded at its first use instead of at every start.
 *
 * tpsplit does not link libcublasLt: loading it runs its static initializers, 0.3-0.9 s of
 * every start, `tpsplit --help` included (issue 29 item 4).  tps_lt_load() dlopens it once
 * (the first cuBLASLt GEMM plan calls it, through tps_lt_setup) and fills tps_lt_fn, one
 * pointer per cuBLASLt function the GEMM paths call, each of the type cublasLt.h declares:
 * call tps_lt_fn.cublasLtCreate(&h) where a linked build calls cublasLtCreate(&h).
 *
 * Which library: $TPS_CUBLASLT_LIB alone when set (a path, or a name for the loader's
 * search); else TPS_CUBLASLT_SONAME (config.h: the SONAME of the libcublasLt.so configure
 * found, e.g. libcublasLt.so.13) by the loader's search, the one a link would do
 * (LD_LIBRARY_PATH, the binary's run path = the configured CUDA library folder, ld.so.cache),
 * then in TPS_CUBLASLT_DIR (config.h: that library's folder) by path.  The library's major
 * version must be the headers' (CUBLAS_VER_MAJOR): the descriptors' attributes are theirs. */
#ifndef TPS_KERNELS_CUBLASLT_LOAD_H
#define TPS_KERNELS_CUBLASLT_LOAD_H
#include <cublasLt.h>

/* every cuBLASLt function kernels/gemm calls (a new one: one X here) */
#define TPS_LT_FUNCS(X)                                                                         \
  X(cublasLtGetVersion) X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtMatmul)                 \
  X(cublasLtMatmulAlgoConfigGetAttribute) X(cublasLtMatmulAlgoGetHeuristic)                    \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)   \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy)                         \
  X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatrixLayoutCreate)                        \
  X(cublasLtMatrixLayoutDestroy)

/* tps_lt_<function>_t: the function's type, as cublasLt.h declares it */
#define TPS_LT_TYPE_(f) typedef __typeof__(f) tps_lt_##f##_t;
TPS_LT_FUNCS(TPS_LT_TYPE_)
#undef TPS_LT_TYPE_

typedef struct {
#define TPS_LT_MEMBER_(f) tps_lt_##f##_t *f;
  TPS_LT_FUNCS(TPS_LT_MEMBER_)
#undef TPS_LT_MEMBER_
} tps_lt_api;

#ifdef __cplusplus
extern "C" {
#endif
/* Filled by the first successful tps_lt_load(), read-only after it; all NULL before. */
extern tps_lt_api tps_lt_fn;
/* Load cuBLASLt once (thread-safe; later calls give the first one's answer): TPS_OK, or
 * TPS_ERR with *why one line naming the library and what failed (dlerror()'s text, a
 * missing function, the version), for the caller to print. */
int tps_lt_load(const char **why);
#ifdef __cplusplus
}
#endif
#endif
