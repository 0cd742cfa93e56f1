#include "executor/cpu_kernels.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "calibration/cpu_buffers.hpp"
#include "calibration/kernel_case.hpp"
#include "executor/kernel_shapes.hpp"
#include "kernels/hstu_attention.hpp"
#include "kernels/tbe.hpp"
#include "sim/core/error.hpp"

namespace strait::executor {

using sim::cost::KernelKind;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct CpuKernels::Gemm {
  Matrix a, b, out;     // forward
  Matrix dout, da, db;  // backward (allocated when a backward op has this shape)
};

struct CpuKernels::Attention {
  kernels::HstuAttentionShape shape;
  std::vector<std::int32_t> offsets;
  std::vector<float> q, k, v, dout, out, dq, dk, dv;
};

struct CpuKernels::Table {
  Table(std::int64_t rows, int dim)
      : weights(static_cast<std::size_t>(rows) * static_cast<std::size_t>(dim)),
        momentum(static_cast<std::size_t>(rows), 0.0f) {
    const auto init = calibration::random_floats(weights.size, 5, 0.1f);
    std::copy(init.begin(), init.end(), weights.data);
  }
  calibration::HugePageFloats weights;
  std::vector<float> momentum;
};

struct CpuKernels::Embedding {
  std::int64_t ids = 0, step = 0;
  double skew = 0;
  kernels::TbeShape shape;
  calibration::TbeInputs inputs;
  std::vector<float> output, grad;
};

struct CpuKernels::Adam {
  std::vector<float> p, g, m, v;
  int step = 0;
};

CpuKernels::CpuKernels(std::int64_t table_rows)
    : table_rows_(std::max<std::int64_t>(1, table_rows)) {}
CpuKernels::~CpuKernels() = default;

CpuKernels::Table& CpuKernels::table(int dim) {
  auto& t = tables_[dim];
  if (!t) t = std::make_shared<Table>(table_rows_, dim);
  return *t;
}

int CpuKernels::prepare(const sim::cost::KernelWork& k, std::int64_t step) {
  const auto handle = static_cast<int>(work_.size());
  switch (k.kind) {
    case KernelKind::kGemm:
    case KernelKind::kGemmBackward:
      prepare_gemm(k);
      break;
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
    case KernelKind::kJaggedAttentionBackward:
    case KernelKind::kPaddedAttentionBackward:
      prepare_attention(k);
      break;
    case KernelKind::kEmbeddingLookup:
    case KernelKind::kEmbeddingUpdate:
      prepare_embedding(k, step);
      break;
    case KernelKind::kElementwise:
      prepare_elementwise(k);
      break;
    case KernelKind::kOptimizer:
      prepare_optimizer(k);
      break;
  }
  return handle;
}

// Forward: out[m x n] = a[m x k] b[k x n]. Backward: the input gradient da[m x k] = dout b^T
// and the weight gradient db[k x n] = a^T dout. An op of several GEMMs (gemm_runs) runs them
// one after the other on the same buffers.
void CpuKernels::prepare_gemm(const sim::cost::KernelWork& k) {
  const bool backward = k.kind == KernelKind::kGemmBackward;
  const int runs = gemm_runs(k);
  auto& g = gemms_[{k.m, k.n, k.k}];
  if (!g) {
    g = std::make_shared<Gemm>();
    g->a = Matrix::Random(k.m, k.k);
    g->b = Matrix::Random(k.k, k.n);
    g->out.resize(k.m, k.n);
  }
  if (backward && g->da.size() == 0) {
    g->dout = Matrix::Random(k.m, k.n);
    g->da.resize(k.m, k.k);
    g->db.resize(k.k, k.n);
  }
  if (!backward) {
    work_.emplace_back([this, g, runs] {
      for (int i = 0; i < runs; ++i) g->out.noalias() = g->a * g->b;
      sink_ = sink_ + (g->out.size() > 0 ? g->out(0, 0) : 0.0f);
    });
  } else {
    work_.emplace_back([this, g, runs] {
      for (int i = 0; i < runs; ++i) calibration::gemm_backward(g->a, g->b, g->dout, g->da, g->db);
      sink_ = sink_ + (g->da.size() > 0 ? g->da(0, 0) + g->db(0, 0) : 0.0f);
    });
  }
}

std::shared_ptr<CpuKernels::Attention> CpuKernels::attention(const sim::cost::KernelWork& k) {
  const auto b = attention_batch(k);
  const bool padded = sim::cost::forward_kind(k.kind) == KernelKind::kPaddedAttention;
  const bool backward = k.kind != sim::cost::forward_kind(k.kind);
  auto& a = attentions_[{padded, backward, b.batch, b.length, k.heads, k.head_dim}];
  if (a) return a;
  a = std::make_shared<Attention>();
  auto& s = a->shape;
  s.batch = b.batch;
  s.heads = std::max(1, k.heads);
  s.head_dim = std::max(1, k.head_dim);
  s.max_seq_len = b.length;
  s.dtype = kernels::DType::kF32;
  s.layout = padded ? kernels::AttentionLayout::kPadded : kernels::AttentionLayout::kJagged;
  a->offsets.assign(1, 0);
  for (int i = 0; i < b.batch; ++i) a->offsets.push_back(a->offsets.back() + b.length);
  s.total_tokens = a->offsets.back();
  s.alpha = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  const auto n =
      static_cast<std::size_t>(s.total_tokens) * static_cast<std::size_t>(s.heads * s.head_dim);
  a->q = calibration::random_floats(n, 1);
  a->k = calibration::random_floats(n, 2);
  a->v = calibration::random_floats(n, 3);
  a->out.resize(n);
  if (backward) {
    a->dout = calibration::random_floats(n, 4);
    a->dq.resize(n);
    a->dk.resize(n);
    a->dv.resize(n);
  }
  return a;
}

void CpuKernels::prepare_attention(const sim::cost::KernelWork& k) {
  const auto a = attention(k);
  if (k.kind == sim::cost::forward_kind(k.kind)) {
    work_.emplace_back([a] {
      const kernels::HstuAttentionForwardArgs args{a->q.data(),       a->k.data(),  a->v.data(),
                                                   a->offsets.data(), nullptr,      nullptr,
                                                   nullptr,           a->out.data()};
      kernels::hstu_attention_forward(kernels::Device::kCpu, a->shape, args);
    });
  } else {
    work_.emplace_back([a] {
      kernels::HstuAttentionBackwardArgs args;
      args.q = a->q.data();
      args.k = a->k.data();
      args.v = a->v.data();
      args.grad_out = a->dout.data();
      args.offsets = a->offsets.data();
      args.grad_q = a->dq.data();
      args.grad_k = a->dk.data();
      args.grad_v = a->dv.data();
      kernels::hstu_attention_backward(kernels::Device::kCpu, a->shape, args);
    });
  }
}

std::shared_ptr<CpuKernels::Embedding> CpuKernels::embedding(const sim::cost::KernelWork& k,
                                                             std::int64_t step) {
  const auto ids = embedding_ids(k);
  const int dim = std::max(1, k.embedding_dim);
  const bool update = k.kind == KernelKind::kEmbeddingUpdate;
  const double skew = embedding_id_skew(k, table_rows_);
  auto& e = embeddings_[{update, ids, dim, skew, embedding_bags(k), step}];
  if (e) return e;
  e = std::make_shared<Embedding>();
  // One table; the ids spread evenly over the op's bags, with the op's share of distinct
  // rows (drawn by redraw()).
  e->ids = std::max<std::int64_t>(1, ids);
  e->skew = skew;
  e->step = step;
  const auto bags = std::max<std::int64_t>(1, embedding_bags(k));
  e->inputs.table_row_offsets = {0, table_rows_};
  e->inputs.indices = draw_ids(e->ids, skew, 0, step, dim);
  e->inputs.offsets.resize(static_cast<std::size_t>(bags) + 1);
  for (std::int64_t b = 0; b <= bags; ++b)
    e->inputs.offsets[static_cast<std::size_t>(b)] = b * e->ids / bags;
  auto& s = e->shape;
  s.tables = 1;
  s.batch = static_cast<int>(bags);
  s.dim = dim;
  s.total_rows = table_rows_;
  s.num_indices = static_cast<std::int64_t>(e->inputs.indices.size());
  s.weights_dtype = kernels::DType::kF32;
  s.pooling = kernels::PoolingMode::kSum;
  e->output.resize(static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(dim));
  if (update) e->grad = calibration::random_floats(e->output.size(), 6, 0.01f);
  return e;
}

void CpuKernels::prepare_embedding(const sim::cost::KernelWork& k, std::int64_t step) {
  Table& t = table(std::max(1, k.embedding_dim));
  const auto e = embedding(k, step);
  if (k.kind != KernelKind::kEmbeddingUpdate) {
    work_.emplace_back([e, &t] {
      kernels::TbeForwardArgs args;
      args.weights = t.weights.data;
      args.table_row_offsets = e->inputs.table_row_offsets.data();
      args.indices = e->inputs.indices.data();
      args.offsets = e->inputs.offsets.data();
      args.output = e->output.data();
      kernels::tbe_forward(kernels::Device::kCpu, e->shape, args);
    });
  } else {
    work_.emplace_back([e, &t] {
      kernels::TbeBackwardArgs args;
      args.weights = t.weights.data;
      args.momentum = t.momentum.data();
      args.table_row_offsets = e->inputs.table_row_offsets.data();
      args.indices = e->inputs.indices.data();
      args.offsets = e->inputs.offsets.data();
      args.grad_output = e->grad.data();
      kernels::tbe_backward(kernels::Device::kCpu, e->shape, args);
    });
  }
}

void CpuKernels::prepare_elementwise(const sim::cost::KernelWork& k) {
  const auto bytes = static_cast<std::size_t>(elementwise_copy_bytes(k));
  if (copy_src_.size() < bytes) {
    copy_src_.assign(bytes, 1);
    copy_dst_.assign(bytes, 0);
  }
  work_.emplace_back([this, bytes] {
    if (bytes == 0) return;
    std::memcpy(copy_dst_.data(), copy_src_.data(), bytes);
    sink_ = sink_ + static_cast<float>(copy_dst_[bytes / 2]);
  });
}

void CpuKernels::prepare_optimizer(const sim::cost::KernelWork& k) {
  const auto params = optimizer_params(k);
  auto& a = adams_[params];
  if (!a) {
    a = std::make_shared<Adam>();
    const auto n = static_cast<std::size_t>(params);
    a->p = calibration::random_floats(n, 8);
    a->g = calibration::random_floats(n, 9, 0.01f);
    a->m.assign(n, 0.0f);
    a->v.assign(n, 0.0f);
  }
  work_.emplace_back([a] {
    calibration::adam_step(a->p.data(), a->g.data(), a->m.data(), a->v.data(), a->p.size(),
                           ++a->step);
  });
}

std::vector<std::int64_t> CpuKernels::draw_ids(std::int64_t ids, double skew, int run,
                                               std::int64_t step, int dim) {
  auto& sampler = samplers_[skew];
  if (!sampler) sampler = std::make_shared<calibration::RowSampler>(table_rows_, skew);
  return embedding_rows(*sampler, ids, run, step, dim);
}

void CpuKernels::redraw(int run) {
  for (auto& [key, e] : embeddings_) {
    e->inputs.indices = draw_ids(e->ids, e->skew, run, e->step, e->shape.dim);
  }
}

void CpuKernels::run(int handle) { work_.at(static_cast<std::size_t>(handle))(); }

}  // namespace strait::executor
