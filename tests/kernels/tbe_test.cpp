#include "kernels/tbe.hpp"

#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "tests/kernels/kernel_test_util.hpp"

namespace strait::kernels {
namespace {

using testing::HostTensor;

// A TBE problem on the host: tables of `rows` rows each, bags of random size and ids.
struct TbeProblem {
  TbeShape shape;
  HostTensor weights;
  std::vector<std::int64_t> table_rows, indices, offsets;
  std::vector<float> psw;

  TbeProblem(int tables, int batch, int dim, std::int64_t rows, DType t, PoolingMode pooling,
             std::uint64_t seed, bool all_equal = false)
      : weights(t, 0) {
    Rng rng(seed);
    shape = {tables, batch, dim, rows * tables, 0, t, pooling};
    weights = testing::random_tensor(t, static_cast<std::size_t>(shape.total_rows) * dim, rng);
    for (int i = 0; i <= tables; ++i) table_rows.push_back(i * rows);
    offsets.push_back(0);
    for (int bag = 0; bag < tables * batch; ++bag) {
      const auto n = static_cast<int>(rng.uniform_int(6));  // 0..5 ids, duplicates likely
      for (int e = 0; e < n; ++e)
        indices.push_back(all_equal ? 1
                                    : static_cast<std::int64_t>(
                                          rng.uniform_int(static_cast<std::uint64_t>(rows))));
      offsets.push_back(static_cast<std::int64_t>(indices.size()));
    }
    shape.num_indices = static_cast<std::int64_t>(indices.size());
    for (std::size_t i = 0; i < indices.size(); ++i)
      psw.push_back(static_cast<float>(rng.uniform() + 0.5));
  }
  std::size_t output_size() const {
    return shape.pooling == PoolingMode::kNone
               ? indices.size() * shape.dim
               : static_cast<std::size_t>(shape.batch) * shape.tables * shape.dim;
  }
  std::vector<float> forward(bool with_psw) const {
    std::vector<float> out(output_size());
    TbeForwardArgs a;
    a.weights = weights.data();
    a.table_row_offsets = table_rows.data();
    a.indices = indices.data();
    a.offsets = offsets.data();
    a.output = out.data();
    if (with_psw) a.per_sample_weights = psw.data();
    tbe_forward(Device::kCpu, shape, a);
    return out;
  }
  void backward(const std::vector<float>& go, EmbeddingOptimizer opt, float lr,
                std::vector<float>& state, bool with_psw) {
    TbeBackwardArgs a;
    a.weights = weights.data();
    a.momentum = state.data();
    a.table_row_offsets = table_rows.data();
    a.indices = indices.data();
    a.offsets = offsets.data();
    a.grad_output = go.data();
    a.optimizer = opt;
    a.learning_rate = lr;
    if (with_psw) a.per_sample_weights = psw.data();
    tbe_backward(Device::kCpu, shape, a);
  }
};

TEST(TbeCpu, PoolsTwoTablesByHand) {
  // Two tables of 2 rows, dim 2, batch 2. Table 0 rows (1,2), (3,4); table 1 rows (10,20), (30,40).
  // Bags: (t0,b0) = {0, 1}, (t0,b1) = {}, (t1,b0) = {1}, (t1,b1) = {0, 0, 1}.
  TbeShape s{2, 2, 2, 4, 6, DType::kF32, PoolingMode::kSum};
  std::vector<float> w{1, 2, 3, 4, 10, 20, 30, 40}, out(8);
  std::vector<std::int64_t> rows{0, 2, 4}, idx{0, 1, 1, 0, 0, 1}, off{0, 2, 2, 3, 6};
  TbeForwardArgs a;
  a.weights = w.data();
  a.table_row_offsets = rows.data();
  a.indices = idx.data();
  a.offsets = off.data();
  a.output = out.data();
  tbe_forward(Device::kCpu, s, a);
  // Output [batch, tables * dim]: b0 = (4, 6 | 30, 40), b1 = (0, 0 | 50, 80).
  EXPECT_EQ(out, (std::vector<float>{4, 6, 30, 40, 0, 0, 50, 80}));
  s.pooling = PoolingMode::kMean;
  tbe_forward(Device::kCpu, s, a);
  testing::expect_close(out, {2, 3, 30, 40, 0, 0, 50.0f / 3, 80.0f / 3}, 0.0f, 1e-6f,
                        "mean pooling");
  s.pooling = PoolingMode::kNone;
  std::vector<float> seq(12), psw{1, 2, 1, 1, 1, 0.5f};
  a.output = seq.data();
  a.per_sample_weights = psw.data();
  tbe_forward(Device::kCpu, s, a);
  EXPECT_EQ(seq, (std::vector<float>{1, 2, 6, 8, 30, 40, 10, 20, 10, 20, 15, 20}));
}

TEST(TbeCpu, RowWiseAdagradSumsDuplicatesBeforeOneUpdate) {
  // One table, one bag {0, 0}, dim 2, grad_output (1.5, 2): the row's gradient is
  // g = (3, 4), state = mean(g^2) = 12.5, w -= 0.1 * g / (sqrt(12.5) + 1e-8).
  TbeShape s{1, 1, 2, 2, 2, DType::kF32, PoolingMode::kSum};
  std::vector<float> w{1, 1, 5, 5}, state{0, 0}, go{1.5f, 2};
  std::vector<std::int64_t> rows{0, 2}, idx{0, 0}, off{0, 2};
  TbeBackwardArgs a;
  a.weights = w.data();
  a.momentum = state.data();
  a.table_row_offsets = rows.data();
  a.indices = idx.data();
  a.offsets = off.data();
  a.grad_output = go.data();
  a.learning_rate = 0.1f;
  tbe_backward(Device::kCpu, s, a);
  const double step = 0.1 / (std::sqrt(12.5) + 1e-8);
  EXPECT_FLOAT_EQ(state[0], 12.5f);
  EXPECT_FLOAT_EQ(w[0], static_cast<float>(1 - step * 3));
  EXPECT_FLOAT_EQ(w[1], static_cast<float>(1 - step * 4));
  EXPECT_EQ(state[1], 0.0f);  // untouched row
  EXPECT_EQ(w[2], 5.0f);
}

// With SGD and lr = 1 the update is exactly -dL/dw; check it against central differences
// of L = sum(forward * G), for every pooling mode, with duplicates and all ids equal.
TEST(TbeCpu, SgdGradientMatchesFiniteDifferences) {
  for (const auto pooling : {PoolingMode::kSum, PoolingMode::kMean, PoolingMode::kNone}) {
    for (const bool all_equal : {false, true}) {
      const bool psw = pooling != PoolingMode::kMean;
      TbeProblem p(3, 4, 5, 6, DType::kF32, pooling, 17, all_equal);
      Rng rng(2);
      std::vector<float> go(p.output_size());
      for (auto& x : go) x = static_cast<float>(rng.uniform() - 0.5);
      auto loss = [&](const TbeProblem& pp) {
        const auto out = pp.forward(psw);
        double l = 0;
        for (std::size_t i = 0; i < out.size(); ++i) l += static_cast<double>(out[i]) * go[i];
        return l;
      };
      TbeProblem updated = p;
      std::vector<float> state(static_cast<std::size_t>(p.shape.total_rows), 0.0f);
      updated.backward(go, EmbeddingOptimizer::kSgd, 1.0f, state, psw);
      for (std::size_t i = 0; i < p.weights.size(); ++i) {
        TbeProblem plus = p, minus = p;
        plus.weights.set(i, p.weights.get(i) + 1e-2f);
        minus.weights.set(i, p.weights.get(i) - 1e-2f);
        const double fd = (loss(plus) - loss(minus)) / 2e-2;
        EXPECT_NEAR(p.weights.get(i) - updated.weights.get(i), fd, 1e-4) << "element " << i;
      }
    }
  }
}

TEST(TbeErrors, OutOfRangeIndexNamesTableAndPosition) {
  TbeShape s{1, 1, 2, 2, 1, DType::kF32, PoolingMode::kSum};
  std::vector<float> w(4), out(2);
  std::vector<std::int64_t> rows{0, 2}, idx{2}, off{0, 1};
  TbeForwardArgs a;
  a.weights = w.data();
  a.table_row_offsets = rows.data();
  a.indices = idx.data();
  a.offsets = off.data();
  a.output = out.data();
  try {
    tbe_forward(Device::kCpu, s, a);
    FAIL() << "expected KernelArgumentError";
  } catch (const KernelArgumentError& e) {
    EXPECT_STREQ(e.what(),
                 "tbe_forward: indices: expected indices of table 0 in [0, 2), got indices[0] = 2");
  }
}

}  // namespace
}  // namespace strait::kernels
