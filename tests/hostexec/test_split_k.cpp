// gemm's split-K path (kernels/gemm.cu, planned by kernels/gemm_plan.h at an H200's 132 SMs),
// called directly under host execution: each of the three dense-layer products with its fused
// epilogue, for one model and for packs of two and three with different inputs, against the CPU
// reference (kernels/dense_cpu.h, OpenBLAS), bit for bit against the unsplit path, and bit for bit
// from one run to the next.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "kernels/dense_cpu.h"
#include "kernels/kernels.h"
#include "tests/parity/test_sizes.h"

namespace mf::hostexec {
namespace {

// Values in [-1, 1) from a seed: sums of K of them cancel as real products do.
std::vector<float> values(size_t n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(n);
  uint32_t x = 2463534242u ^ (seed * 2654435761u);
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    f = lo + (hi - lo) * float(x >> 8) / float(1 << 24);
  }
  return v;
}

// As the parity tests: a sum of K terms in [-1,1] in another order is off by about an ulp a term.
float sum_tolerance(int terms) { return std::max(1e-5f, 1.2e-7f * float(terms)); }

void expect_close(const float* want, const float* got, size_t n, float tolerance, const char* what,
                  int z) {
  for (size_t i = 0; i < n; ++i)
    if (!(std::abs(want[i] - got[i]) <= tolerance)) {
      ADD_FAILURE() << what << " of member " << z << " at " << i << ": " << got[i] << ", want "
                    << want[i];
      return;
    }
}

struct Workspace {
  std::vector<float> data = std::vector<float>(size_t(gemm_workspace_floats(kHostExecSms)), NAN);
  GemmWorkspace get() { return {data.data(), int64_t(data.size()), kHostExecSms}; }
};

enum class Product { forward, backward_input, backward_params };

// One product of a dense layer (m, k, n) for `members` models side by side, split as planned;
// returns C (and db) after checking them against the CPU's, and against the unsplit launch.
struct Case {
  Product product;
  int m, k, n;
  Activation act;
  int members;
};

std::vector<float> run(const Case& c, bool split) {
  const int m = c.m, k = c.k, n = c.n, members = c.members;
  const size_t xs = size_t(m) * k, ws = size_t(k) * n, zs = size_t(m) * n;
  std::vector<float> x, w, dz, y, bias;
  for (int z = 0; z < members; ++z) {  // each member its own inputs
    auto add = [&](std::vector<float>& v, size_t size, unsigned seed, float lo = -1.f) {
      const auto more = values(size, seed + 100 * z, lo);
      v.insert(v.end(), more.begin(), more.end());
    };
    add(x, xs, 1), add(w, ws, 2), add(dz, zs, 3);
    add(y, xs, 4, c.act == Activation::sigmoid ? 0.05f : -0.9f);
    add(bias, ws, 5);  // at W's stride: member z's bias is the first n of its stretch
  }
  Workspace work;
  const GemmWorkspace with = split ? work.get() : GemmWorkspace{};
  std::vector<float> out;
  switch (c.product) {
    case Product::forward: {  // Y(m,n) = act(X·W + b)
      out.assign(members * zs, NAN);
      gemm(x.data(), w.data(), out.data(), m, k, n, false, false,
           {.bias = bias.data(), .act = c.act},
           {members, int64_t(xs * 4), int64_t(ws * 4), int64_t(zs * 4)}, nullptr, with);
      for (int z = 0; z < members; ++z) {
        std::vector<float> want(zs);
        cpu::dense_forward(&x[z * xs], &w[z * ws], &bias[z * ws], want.data(), nullptr, m, k, n,
                           c.act);
        expect_close(want.data(), &out[z * zs], zs, sum_tolerance(k), "Y", z);
      }
      break;
    }
    case Product::backward_input: {  // dX(m,k) = dZ·Wᵀ ⊙ act'(Y): trans_b, K = n
      out.assign(members * xs, NAN);
      gemm(dz.data(), w.data(), out.data(), m, n, k, false, true,
           {.through = {c.act, y.data(), nullptr}},
           {members, int64_t(zs * 4), int64_t(ws * 4), int64_t(xs * 4)}, nullptr, with);
      for (int z = 0; z < members; ++z) {
        std::vector<float> want(xs);
        cpu::dense_backward_input_columns(&dz[z * zs], &w[z * ws], want.data(), m, k, n,
                                          {c.act, &y[z * xs], nullptr}, 0, k);
        expect_close(want.data(), &out[z * xs], xs, sum_tolerance(n), "dX", z);
      }
      break;
    }
    case Product::backward_params: {  // dW(k,n) = Xᵀ·dZ, db = 1ᵀ·dZ: trans_a with col_sums, K = m
      // dW and db share one buffer per member, db after dW, so both lie at C's stride.
      const size_t cs = ws + n;
      out.assign(members * cs, NAN);
      gemm(x.data(), dz.data(), out.data(), k, m, n, true, false, {.col_sums = out.data() + ws},
           {members, int64_t(xs * 4), int64_t(zs * 4), int64_t(cs * 4)}, nullptr, with);
      for (int z = 0; z < members; ++z) {
        std::vector<float> dw(ws), db(n);
        cpu::dense_backward_params(&x[z * xs], &dz[z * zs], dw.data(), db.data(), m, k, n);
        expect_close(dw.data(), &out[z * cs], ws, sum_tolerance(m), "dW", z);
        expect_close(db.data(), &out[z * cs + ws], n, sum_tolerance(m), "db", z);
      }
      break;
    }
  }
  return out;
}

// C's shape and K for the plan.
GemmPlan plan_of(const Case& c) {
  switch (c.product) {
    case Product::forward:
      return gemm_plan(c.m, c.k, c.n, c.members, kHostExecSms);
    case Product::backward_input:
      return gemm_plan(c.m, c.n, c.k, c.members, kHostExecSms);
    default:
      return gemm_plan(c.k, c.m, c.n, c.members, kHostExecSms, true);
  }
}

// The MLPs' products that an H200 splits (kernels/gemm_plan.h's unit tests give their plans).
const Case kMlpCases[] = {
    {Product::forward, 32, 784, 256, Activation::relu, 1},  // the Fashion-MNIST first layer: S = 8
    {Product::forward, 32, 784, 256, Activation::tanh, 3},  // a pack of 3: 24 blocks x 8
    {Product::forward, 128, 784, 100, Activation::sigmoid, 1},     // S = 8
    {Product::forward, 32, 256, 10, Activation::linear, 2},        // S = 4
    {Product::backward_input, 32, 784, 256, Activation::relu, 1},  // dX(32,784), K = 256: S = 4
    {Product::backward_input, 32, 784, 256, Activation::sigmoid, 2},
    {Product::backward_input, 128, 100, 256, Activation::tanh, 2},
    {Product::backward_params, 1024, 256, 10, Activation::linear,
     1},  // dW(256,10) and db, K = 1024: S = 8
    {Product::backward_params, 1024, 100, 10, Activation::linear, 3},
    {Product::backward_params, 128, 64, 1, Activation::linear, 2},  // one column, K = 128: S = 2
};
// At the small sizes (tests/parity/test_sizes.h), C of one to six tiles, each with an edge, and
// the same splits of K (8 down to 2, ranges of lengths that are no multiple of the kernel's 16) for
// each product, alone and in packs: the split path's kernels at a fifth of the threads' work.
const Case kSmallCases[] = {
    {Product::forward, 20, 515, 33, Activation::relu, 1},         // 2 tiles, S = 8
    {Product::forward, 20, 515, 33, Activation::tanh, 3},         // a pack of 3: 6 blocks x 8
    {Product::forward, 40, 300, 10, Activation::sigmoid, 1},      // S = 4, ranges of 75
    {Product::forward, 32, 256, 10, Activation::linear, 2},       // S = 4
    {Product::backward_input, 20, 40, 515, Activation::relu, 1},  // dX(20,40), K = 515: S = 8
    {Product::backward_input, 20, 40, 515, Activation::sigmoid, 2},
    {Product::backward_input, 33, 70, 200, Activation::tanh, 2},  // 6 tiles, K = 200: S = 3
    // dW(40,10) and db, K = 520: S = 8
    {Product::backward_params, 520, 40, 10, Activation::linear, 1},
    {Product::backward_params, 300, 33, 10, Activation::linear, 3},  // K = 300: S = 4
    {Product::backward_params, 128, 64, 1, Activation::linear, 2},   // one column, K = 128: S = 2
};
const std::span<const Case> kCases =
    test::small_sizes() ? std::span<const Case>(kSmallCases) : kMlpCases;

TEST(SplitK, EachProductAndEpilogueEqualsTheCpuAndTheUnsplitPath) {
  for (const Case& c : kCases) {
    ASSERT_GT(plan_of(c).splits, 1) << "case " << &c - kCases.data() << " must take the split path";
    const std::vector<float> split = run(c, true), unsplit = run(c, false);
    // The same additions in the same order (gemm_plan.h: gemm_k_ranges): equal bit for bit.
    ASSERT_EQ(split.size(), unsplit.size());
    EXPECT_EQ(std::memcmp(split.data(), unsplit.data(), split.size() * sizeof(float)), 0)
        << "split vs unsplit";
    if (HasFailure())
      FAIL() << "case " << &c - kCases.data() << ": " << c.m << "x" << c.k << "x" << c.n;
  }
}

TEST(SplitK, IsDeterministicBitForBit) {
  for (const Case& c : {kCases[1], kCases[5], kCases[8]}) {  // one of each product, each a pack
    const std::vector<float> first = run(c, true), second = run(c, true);
    ASSERT_EQ(first.size(), second.size());
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0)
        << c.m << "x" << c.k << "x" << c.n;
  }
}

TEST(SplitK, AWorkspaceTooSmallForThePlanIsRefused) {
  std::vector<float> a(32 * 784, 0.f), b(784 * 256, 0.f), c(32 * 256), work(16);
  EXPECT_THROW(gemm(a.data(), b.data(), c.data(), 32, 784, 256, false, false, {}, {}, nullptr,
                    {work.data(), int64_t(work.size()), kHostExecSms}),
               std::invalid_argument);
}

}  // namespace
}  // namespace mf::hostexec
