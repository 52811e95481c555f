/* gemm_ref.c: the float64 GEMM reference (see gemm_ref.h). */
#include "kernels/common/gemm_ref.h"
#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>

void tps_gemm_ref(const double *x, size_t m, const double *w, size_t n, size_t k, double *y) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (size_t i = 0; i < m * n; i++) y[i] = 0;
    return;
  }
  gsl_matrix_const_view X = gsl_matrix_const_view_array(x, m, k);
  gsl_matrix_const_view W = gsl_matrix_const_view_array(w, n, k);
  gsl_matrix_view Y = gsl_matrix_view_array(y, m, n);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &X.matrix, &W.matrix, 0.0, &Y.matrix);
}
