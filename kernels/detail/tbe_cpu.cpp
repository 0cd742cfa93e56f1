// CPU reference of table-batched embeddings. The backward groups the occurrences of each
// row by sorting (row, position) pairs, so duplicates are summed before the optimizer
// step exactly once per row, as on the GPU.

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/detail/backends.hpp"
#include "kernels/detail/element.hpp"

namespace strait::kernels::detail {
namespace {

// Bag scale of occurrence k in a bag of `len` indices.
float occurrence_scale(PoolingMode pooling, const float* psw, std::int64_t k, std::int64_t len) {
  float w = psw != nullptr ? psw[k] : 1.0f;
  if (pooling == PoolingMode::kMean) w /= static_cast<float>(len);
  return w;
}

}  // namespace

void tbe_forward_cpu(const TbeShape& s, const TbeForwardArgs& a) {
  const int d = s.dim;
  std::vector<float> acc(static_cast<std::size_t>(d));
  for (int t = 0; t < s.tables; ++t) {
    for (int b = 0; b < s.batch; ++b) {
      const std::int64_t bag = static_cast<std::int64_t>(t) * s.batch + b;
      const std::int64_t beg = a.offsets[bag], end = a.offsets[bag + 1];
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (std::int64_t k = beg; k < end; ++k) {
        const std::int64_t row = a.table_row_offsets[t] + a.indices[k];
        const float w = occurrence_scale(s.pooling, a.per_sample_weights, k, end - beg);
        const std::size_t base = static_cast<std::size_t>(row) * d;
        if (s.pooling == PoolingMode::kNone) {
          float* out = a.output + static_cast<std::size_t>(k) * d;
          for (int c = 0; c < d; ++c)
            out[c] = w * load_element(a.weights, s.weights_dtype, base + c);
        } else {
          for (int c = 0; c < d; ++c)
            acc[c] += w * load_element(a.weights, s.weights_dtype, base + c);
        }
      }
      if (s.pooling != PoolingMode::kNone) {
        float* out = a.output + (static_cast<std::size_t>(b) * s.tables + t) * d;
        std::copy(acc.begin(), acc.end(), out);
      }
    }
  }
}

void tbe_backward_cpu(const TbeShape& s, const TbeBackwardArgs& a) {
  const int d = s.dim;
  const std::int64_t n = s.num_indices;
  // For each occurrence: its global row and its bag.
  std::vector<std::pair<std::int64_t, std::int64_t>> order(static_cast<std::size_t>(n));
  std::vector<std::int64_t> bag_of(static_cast<std::size_t>(n));
  const std::int64_t bags = static_cast<std::int64_t>(s.tables) * s.batch;
  for (std::int64_t bag = 0; bag < bags; ++bag) {
    const auto t = static_cast<int>(bag / s.batch);
    for (std::int64_t k = a.offsets[bag]; k < a.offsets[bag + 1]; ++k) {
      order[static_cast<std::size_t>(k)] = {a.table_row_offsets[t] + a.indices[k], k};
      bag_of[static_cast<std::size_t>(k)] = bag;
    }
  }
  std::sort(order.begin(), order.end());

  std::vector<float> g(static_cast<std::size_t>(d));
  for (std::size_t seg = 0; seg < order.size();) {
    const std::int64_t row = order[seg].first;
    std::fill(g.begin(), g.end(), 0.0f);
    std::size_t e = seg;
    for (; e < order.size() && order[e].first == row; ++e) {
      const std::int64_t k = order[e].second;
      const std::int64_t bag = bag_of[static_cast<std::size_t>(k)];
      const float w =
          occurrence_scale(s.pooling, a.per_sample_weights, k, a.offsets[bag + 1] - a.offsets[bag]);
      const float* go =
          s.pooling == PoolingMode::kNone
              ? a.grad_output + static_cast<std::size_t>(k) * d
              : a.grad_output +
                    (static_cast<std::size_t>(bag % s.batch) * s.tables + bag / s.batch) * d;
      for (int c = 0; c < d; ++c) g[c] += w * go[c];
    }
    seg = e;

    float step = a.learning_rate;
    if (a.optimizer == EmbeddingOptimizer::kRowWiseAdagrad) {
      float sq = 0.0f;
      for (int c = 0; c < d; ++c) sq += g[c] * g[c];
      a.momentum[row] += sq / static_cast<float>(d);
      step = a.learning_rate / (std::sqrt(a.momentum[row]) + a.eps);
    }
    const std::size_t base = static_cast<std::size_t>(row) * d;
    for (int c = 0; c < d; ++c) {
      const float w = load_element(a.weights, s.weights_dtype, base + c);
      store_element(a.weights, s.weights_dtype, base + c, w - step * g[c]);
    }
  }
}

}  // namespace strait::kernels::detail
