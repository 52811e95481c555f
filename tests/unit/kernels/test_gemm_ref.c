/* test_gemm_ref.c: the float64 GEMM reference of the GPU checks (kernels/common/gemm_ref.h)
 * against products worked by hand: Y = X W^T with
 *   X = [1 2 3; 4 5 6],  W = [1 0 -1; 2 1 0; 0.5 0.25 0.125]
 *   Y = [1-3, 2+2, 0.5+0.5+0.375; 4-6, 8+5, 2+1.25+0.75] = [-2 4 1.375; -2 13 4]
 * (every value exact in binary), one row at a time as the checks call it, and k = 0. */
#include <stdio.h>
#include "kernels/common/gemm_ref.h"

#include "tests/unit/expect.h"

int main(void) {
  const double x[6] = {1, 2, 3, 4, 5, 6}, w[9] = {1, 0, -1, 2, 1, 0, 0.5, 0.25, 0.125};
  const double want[6] = {-2, 4, 1.375, -2, 13, 4};
  double y[6] = {0};
  tps_gemm_ref(x, 2, w, 3, 3, y);
  for (int i = 0; i < 6; i++) CHECK(y[i] == want[i], "Y[%d] = %g, want %g", i, y[i], want[i]);
  double y1[3] = {0};
  tps_gemm_ref(x + 3, 1, w, 3, 3, y1); /* the second row alone */
  for (int i = 0; i < 3; i++) CHECK(y1[i] == want[3 + i], "row 2: Y[%d] = %g, want %g", i, y1[i], want[3 + i]);
  double y2[2] = {7, 7};
  tps_gemm_ref(x, 1, w, 2, 0, y2); /* K = 0: an empty sum */
  CHECK(y2[0] == 0 && y2[1] == 0, "k = 0: %g %g, want 0 0", y2[0], y2[1]);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}
