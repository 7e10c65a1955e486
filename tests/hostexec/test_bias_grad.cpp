// The bias-gradient kernel on its own, under host execution: the default (tiled) path folds the bias
// gradient into the weight-gradient product, so the backend's parity tests no longer reach this
// kernel, which the cuBLAS path still launches. Both sums are checked against double column sums.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/kernels.h"

namespace mf::hostexec {
namespace {

// dZ(m,n) with values of both signs, so that the sums cancel as real gradients do.
std::vector<float> gradients(int m, int n) {
  std::vector<float> dZ(size_t(m) * n);
  for (size_t i = 0; i < dZ.size(); ++i) dZ[i] = std::sin(0.37f * float(i)) * (i % 3 == 0 ? 2.f : 0.5f);
  return dZ;
}

void expect_column_sums(const std::vector<float>& dZ, const std::vector<float>& db, int m, int n) {
  for (int c = 0; c < n; ++c) {
    double sum = 0, magnitude = 0;
    for (int r = 0; r < m; ++r) {
      sum += dZ[size_t(r) * n + c];
      magnitude += std::abs(dZ[size_t(r) * n + c]);
    }
    // float32 rounding of a sum of m terms: a bound that grows with the terms, as the parity tests'.
    EXPECT_NEAR(db[c], sum, 1e-6 * magnitude + 1e-6) << "column " << c << " of (" << m << ", " << n << ")";
  }
}

TEST(BiasGrad, ColumnSumsOfEveryShape) {
  for (const auto& [m, n] : {std::pair{1, 1}, {37, 33}, {1030, 70}, {64, 1}}) {
    const std::vector<float> dZ = gradients(m, n);
    std::vector<float> db(n, NAN);
    bias_grad(dZ.data(), db.data(), m, n, {}, nullptr);
    expect_column_sums(dZ, db, m, n);
  }
}

TEST(BiasGrad, TheWeightGradientProductFoldsTheSameSums) {
  // dW(k,n) = Xᵀ·dZ with col_sums: the extra row of ones gives db in the same launch, for shapes of
  // the small tile and one of the large (which needs 128 output tiles: 784 x 1024, inner dimension 3).
  for (const auto& [m, k, n] : {std::tuple{37, 20, 33}, {1030, 3, 70}, {3, 784, 1024}}) {
    const std::vector<float> dZ = gradients(m, n), X(size_t(m) * k, 0.25f);
    std::vector<float> dW(size_t(k) * n), db(n, NAN);
    gemm(X.data(), dZ.data(), dW.data(), k, m, n, true, false, {.col_sums = db.data()}, {}, nullptr);
    expect_column_sums(dZ, db, m, n);
    for (int c = 0; c < n; ++c) EXPECT_NEAR(dW[c], 0.25f * db[c], 1e-4f * (1 + std::abs(db[c])));  // X is 0.25
  }
}

}  // namespace
}  // namespace mf::hostexec
