// The cuBLAS path's own kernels, under host execution: the bias gradient and the bias+activation
// epilogue. The default (tiled) path folds both into its products, so the backend's parity tests
// no longer reach them. The sums are checked against double column sums, the epilogue against
// element_math.h's formula, and each also for a pack of two members with different inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/kernels.h"

namespace mf::hostexec {
namespace {

// dZ(m,n) with values of both signs, so that the sums cancel as real gradients do.
std::vector<float> gradients(int m, int n) {
  std::vector<float> dZ(size_t(m) * n);
  for (size_t i = 0; i < dZ.size(); ++i)
    dZ[i] = std::sin(0.37f * float(i)) * (i % 3 == 0 ? 2.f : 0.5f);
  return dZ;
}

void expect_column_sums(const std::vector<float>& dZ, const std::vector<float>& db, int m, int n) {
  for (int c = 0; c < n; ++c) {
    double sum = 0, magnitude = 0;
    for (int r = 0; r < m; ++r) {
      sum += dZ[size_t(r) * n + c];
      magnitude += std::abs(dZ[size_t(r) * n + c]);
    }
    // float32 rounding of a sum of m terms: a bound that grows with the terms, as the parity
    // tests'.
    EXPECT_NEAR(db[c], sum, 1e-6 * magnitude + 1e-6)
        << "column " << c << " of (" << m << ", " << n << ")";
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
  // the small tile and one of the large (which needs 128 output tiles: 784 x 1024, inner dimension
  // 3).
  for (const auto& [m, k, n] : {std::tuple{37, 20, 33}, {1030, 3, 70}, {3, 784, 1024}}) {
    const std::vector<float> dZ = gradients(m, n), X(size_t(m) * k, 0.25f);
    std::vector<float> dW(size_t(k) * n), db(n, NAN);
    gemm(X.data(), dZ.data(), dW.data(), k, m, n, true, false, {.col_sums = db.data()}, {},
         nullptr);
    expect_column_sums(dZ, db, m, n);
    // X is 0.25
    for (int c = 0; c < n; ++c) EXPECT_NEAR(dW[c], 0.25f * db[c], 1e-4f * (1 + std::abs(db[c])));
  }
}

// Two members' buffers, `stride` bytes apart, the second member's values different from the
// first's.
constexpr int64_t kStride = 64 * 1024;

TEST(BiasGrad, APackSumsEachMembersColumns) {
  const int m = 37, n = 33;
  std::vector<float> dZ(2 * kStride / sizeof(float)), db(2 * kStride / sizeof(float), NAN);
  // another stretch of sin
  const std::vector<float> first = gradients(m, n), second = gradients(m + 5, n);
  std::copy(first.begin(), first.end(), dZ.begin());
  std::copy(second.begin(), second.begin() + first.size(), member(dZ.data(), 1, kStride));
  bias_grad(dZ.data(), db.data(), m, n, {.count = 2, .stride = kStride}, nullptr);
  expect_column_sums(first, db, m, n);
  expect_column_sums(
      std::vector<float>(second.begin(), second.begin() + first.size()),
      std::vector<float>(member(db.data(), 1, kStride), member(db.data(), 1, kStride) + n), m, n);
}

TEST(BiasActivation, EveryActivationForEachMemberOfAPack) {
  const int m = 5, n = 7;
  for (Activation act :
       {Activation::linear, Activation::relu, Activation::sigmoid, Activation::tanh}) {
    std::vector<float> Y(2 * kStride / sizeof(float)), bias(2 * kStride / sizeof(float));
    for (int z = 0; z < 2; ++z) {
      for (int i = 0; i < m * n; ++i)
        member(Y.data(), z, kStride)[i] = std::cos(0.5f * float(i + 11 * z));
      for (int c = 0; c < n; ++c) member(bias.data(), z, kStride)[c] = 0.1f * float(c - 3 + z);
    }
    const std::vector<float> before = Y;
    bias_activation(Y.data(), bias.data(), nullptr, m, n, act, {.count = 2, .stride = kStride},
                    nullptr);
    for (int z = 0; z < 2; ++z)
      for (int i = 0; i < m * n; ++i)
        EXPECT_EQ(member(Y.data(), z, kStride)[i],
                  activate(act, member(before.data(), z, kStride)[i] +
                                    member(bias.data(), z, kStride)[i % n]))
            << "member " << z << " element " << i << " activation " << int(act);
  }
}

}  // namespace
}  // namespace mf::hostexec
