// Over 400 lines: CudaKernels prepares every kernel family on one set of device resources, as
// CpuKernels does on the CPU.

#include "executor/cuda_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "calibration/device_kernels.hpp"
#include "calibration/kernel_case.hpp"
#include "calibration/lt_gemm.hpp"
#include "executor/kernel_shapes.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device.hpp"
#include "kernels/hstu_attention.hpp"
#include "kernels/tbe.hpp"
#include "sim/core/error.hpp"

namespace strait::executor {

using calibration::Element;
using calibration::GemmTypes;
using calibration::LtGemm;
using kernels::DeviceBuffer;
using sim::cost::KernelKind;
using sim::cost::Precision;

namespace {

constexpr std::uint64_t kInputSeed = 20261123;
constexpr double kTableMemoryShare = 0.4;  // of the free memory all tables may take

// Embedding weights: the op's precision where the TBE kernels have it, else f32.
kernels::DType table_dtype(Precision p) {
  switch (p) {
    case Precision::kFp16:
      return kernels::DType::kF16;
    case Precision::kBf16:
      return kernels::DType::kBF16;
    default:
      return kernels::DType::kF32;
  }
}

Element element_of(kernels::DType t) {
  return t == kernels::DType::kF32   ? Element::kF32
         : t == kernels::DType::kF16 ? Element::kF16
                                     : Element::kBF16;
}

std::size_t as_size(std::int64_t n) {
  return static_cast<std::size_t>(std::max<std::int64_t>(n, 0));
}

bool is_embedding(const sim::workload::Op& op) {
  return op.kind == sim::workload::OpKind::kKernel && sim::cost::is_embedding(op.kernel.kind);
}

}  // namespace

struct CudaKernels::Resources {
  Resources() {
    try {
      STRAIT_CUDA_CHECK(cudaStreamCreateWithFlags(&setup, cudaStreamNonBlocking));
      STRAIT_CUBLAS_CHECK(cublasLtCreate(&lt));
    } catch (...) {
      release();
      throw;
    }
  }
  ~Resources() { release(); }
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;
  void release() noexcept {
    if (lt != nullptr) (void)cublasLtDestroy(lt);
    if (setup != nullptr) (void)cudaStreamDestroy(setup);
    lt = nullptr;
    setup = nullptr;
  }
  DeviceBuffer random(std::size_t bytes, Element e) {
    return calibration::random_device_buffer(bytes, e, rng, setup);
  }
  DeviceBuffer zeros(std::size_t bytes) {
    DeviceBuffer b(bytes);
    if (bytes > 0) b.zero();
    return b;
  }

  cudaStream_t setup = nullptr;  // fills and uploads, synchronised before the run
  cublasLtHandle_t lt = nullptr;
  std::map<int, DeviceBuffer> workspaces;  // per op-graph stream: GEMMs on two streams may overlap
  DeviceBuffer copy_src, copy_dst;         // elementwise
  Rng rng{kInputSeed};
};

struct CudaKernels::Gemm {
  std::unique_ptr<LtGemm> forward;
  std::unique_ptr<calibration::LtGemmBackward> backward;
  DeviceBuffer x, w, y;       // forward: y[m, n] = x[m, k] w[n, k]^T
  DeviceBuffer dout, dx, dw;  // backward (allocated when a backward op has this shape)
};

struct CudaKernels::Attention {
  kernels::HstuAttentionShape shape;
  DeviceBuffer offsets, q, k, v, dout, out, dq, dk, dv;
};

struct CudaKernels::Table {
  DeviceBuffer weights, momentum;
  kernels::DType dtype = kernels::DType::kF32;
};

struct CudaKernels::Embedding {
  std::int64_t ids = 0, step = 0;
  double skew = 0;
  kernels::TbeShape shape;
  std::vector<std::int64_t> host_offsets;
  DeviceBuffer table_row_offsets, indices, offsets, output, grad;
  std::shared_ptr<calibration::RowSampler> sampler;
};

struct CudaKernels::Adam {
  DeviceBuffer p, g, m, v;
  std::int64_t count = 0;
  int step = 0;
};

CudaKernels::CudaKernels(std::int64_t table_rows, const std::vector<sim::workload::Op>& ops,
                         std::vector<cudaStream_t> streams)
    : table_rows_(std::max<std::int64_t>(1, table_rows)),
      resources_(std::make_unique<Resources>()),
      streams_(std::move(streams)) {
  // Every table this rank's ops use, and the rows they can all have in the memory share.
  std::set<std::pair<int, int>> tables;
  for (const auto& op : ops) {
    if (is_embedding(op))
      tables.insert({std::max(1, op.kernel.embedding_dim),
                     static_cast<int>(table_dtype(op.kernel.precision))});
  }
  double row_bytes = 0;
  for (const auto& [dim, dtype] : tables)
    row_bytes += dim * kernels::dtype_size(static_cast<kernels::DType>(dtype)) + 4.0;
  if (row_bytes > 0) {
    std::size_t free = 0, total = 0;
    STRAIT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const double fit = std::floor(kTableMemoryShare * static_cast<double>(free) / row_bytes);
    table_rows_ = std::max<std::int64_t>(1, std::min(table_rows_, static_cast<std::int64_t>(fit)));
  }
}

CudaKernels::~CudaKernels() = default;

CudaKernels::Table& CudaKernels::table(int dim, int dtype) {
  auto& t = tables_[{dim, dtype}];
  if (!t) {
    t = std::make_shared<Table>();
    t->dtype = static_cast<kernels::DType>(dtype);
    t->weights = resources_->random(as_size(table_rows_) * as_size(dim) *
                                        static_cast<std::size_t>(kernels::dtype_size(t->dtype)),
                                    element_of(t->dtype));
    t->momentum = resources_->zeros(as_size(table_rows_) * sizeof(float));
  }
  return *t;
}

void CudaKernels::upload_ids(Embedding& e, int run) {
  const auto ids = embedding_rows(*e.sampler, e.ids, run, e.step, e.shape.dim);
  e.indices.upload(ids.data(), ids.size() * sizeof(std::int64_t));
}

int CudaKernels::prepare(const sim::cost::KernelWork& k, std::int64_t step, int stream) {
  if (stream < 0 || static_cast<std::size_t>(stream) >= streams_.size())
    throw Error(fmt::format("cuda backend: stream {} of {}", stream, streams_.size()));
  const cudaStream_t s = streams_[static_cast<std::size_t>(stream)];
  const auto handle = static_cast<int>(work_.size());
  Resources& r = *resources_;
  switch (k.kind) {
    case KernelKind::kGemm:
    case KernelKind::kGemmBackward: {
      // One workspace per stream: GEMMs on two streams may run at once.
      auto& workspace = r.workspaces[stream];
      if (workspace.bytes() == 0) workspace = DeviceBuffer(calibration::kGemmWorkspaceBytes);
      prepare_gemm(k, s, workspace.data());
      break;
    }
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
    case KernelKind::kJaggedAttentionBackward:
    case KernelKind::kPaddedAttentionBackward:
      prepare_attention(k, s);
      break;
    case KernelKind::kEmbeddingLookup:
    case KernelKind::kEmbeddingUpdate:
      prepare_embedding(k, step, s);
      break;
    case KernelKind::kElementwise: {
      const auto bytes = as_size(elementwise_copy_bytes(k));
      if (r.copy_src.bytes() < bytes) {
        r.copy_src = r.zeros(bytes);
        r.copy_dst = DeviceBuffer(bytes);
      }
      work_.emplace_back([&r, bytes, s] {
        if (bytes == 0) return;
        STRAIT_CUDA_CHECK(cudaMemcpyAsync(r.copy_dst.data(), r.copy_src.data(), bytes,
                                          cudaMemcpyDeviceToDevice, s));
      });
      break;
    }
    case KernelKind::kOptimizer: {
      const auto params = optimizer_params(k);
      auto& a = adams_[params];
      if (!a) {
        a = std::make_shared<Adam>();
        const auto bytes = as_size(params) * sizeof(float);
        a->p = r.random(bytes, Element::kF32);
        a->g = r.random(bytes, Element::kF32);
        a->m = r.zeros(bytes);
        a->v = r.zeros(bytes);
        a->count = params;
      }
      work_.emplace_back([a, s] {
        if (a->count <= 0) return;
        calibration::AdamStep adam;
        adam.params = a->p.as<float>();
        adam.grads = a->g.as<float>();
        adam.exp_avg = a->m.as<float>();
        adam.exp_avg_sq = a->v.as<float>();
        adam.count = a->count;
        adam.step = ++a->step;
        calibration::launch_adam_step(adam, s);
      });
      break;
    }
  }
  STRAIT_CUDA_CHECK(cudaStreamSynchronize(r.setup));
  return handle;
}

void CudaKernels::prepare_gemm(const sim::cost::KernelWork& k, cudaStream_t s, void* workspace) {
  // Forward y[m, n] = x[m, k] w[n, k]^T; backward: calibration's LtGemmBackward (the input
  // and the weight gradient), what calibrate times for the gemm_backward family. An op of
  // several GEMMs (gemm_runs) runs them one after the other on the same buffers.
  Resources& r = *resources_;
  const bool backward = k.kind == KernelKind::kGemmBackward;
  const int runs = gemm_runs(k);
  const auto types = calibration::gemm_types(k.precision);
  if (!types || k.m <= 0 || k.n <= 0 || k.k <= 0)
    throw Error(fmt::format("cuda backend: cannot run a {} GEMM of m {}, n {}, k {}",
                            sim::cost::to_string(k.precision), k.m, k.n, k.k));
  const GemmTypes t = *types;
  const auto in = static_cast<std::size_t>(calibration::element_bytes(t.in_element));
  const auto out = static_cast<std::size_t>(t.out_bytes);
  const auto m = as_size(k.m), n = as_size(k.n), kk = as_size(k.k);
  const auto no_algorithm = [&](const char* pass) {
    return Error(
        fmt::format("cuda backend: cuBLASLt found no algorithm for the {} of a {} GEMM "
                    "of m {}, n {}, k {}",
                    pass, sim::cost::to_string(k.precision), k.m, k.n, k.k));
  };
  auto& g = gemms_[{static_cast<int>(k.precision), k.m, k.n, k.k}];
  if (!g) {
    g = std::make_shared<Gemm>();
    g->forward = std::make_unique<LtGemm>(r.lt, t, k.m, k.n, k.k);
    if (!g->forward->has_algorithm()) throw no_algorithm("forward");
    // Rows for the backward's weight gradient too (LtGemmBackward::reduction_rows).
    const auto rows = as_size(calibration::LtGemmBackward::reduction_rows(k.m));
    g->x = r.random(rows * kk * in, t.in_element);
    g->w = r.random(n * kk * in, t.in_element);
    g->y = DeviceBuffer(m * n * out);
  }
  if (backward && !g->backward) {
    g->backward = std::make_unique<calibration::LtGemmBackward>(r.lt, t, k.m, k.n, k.k);
    if (!g->backward->has_algorithm()) throw no_algorithm("backward");
    g->dout =
        r.random(as_size(calibration::LtGemmBackward::reduction_rows(k.m)) * n * in, t.in_element);
    g->dx = DeviceBuffer(m * kk * out);
    g->dw = DeviceBuffer(n * kk * out);
  }
  if (!backward) {
    work_.emplace_back([g, s, workspace, runs] {
      for (int i = 0; i < runs; ++i)
        g->forward->run(g->x.data(), g->w.data(), g->y.data(), workspace, s);
    });
  } else {
    work_.emplace_back([g, s, workspace, runs] {
      for (int i = 0; i < runs; ++i)
        g->backward->run(g->dout.data(), g->x.data(), g->w.data(), g->dx.data(), g->dw.data(),
                         workspace, s);
    });
  }
}

void CudaKernels::prepare_attention(const sim::cost::KernelWork& k, cudaStream_t s) {
  Resources& r = *resources_;
  const auto b = attention_batch(k);
  const bool padded = sim::cost::forward_kind(k.kind) == KernelKind::kPaddedAttention;
  const bool backward = k.kind != sim::cost::forward_kind(k.kind);
  const auto dtype = k.precision == Precision::kFp16 ? kernels::DType::kF16 : kernels::DType::kBF16;
  const int heads = std::max(1, k.heads), head_dim = std::max(1, k.head_dim);
  if (head_dim % 16 != 0 || head_dim > 256)
    throw Error(fmt::format(
        "cuda backend: attention of head_dim {}: the CUDA kernels need a multiple of 16 in "
        "[16, 256]",
        head_dim));
  auto& a =
      attentions_[{padded, backward, b.batch, b.length, heads, head_dim, static_cast<int>(dtype)}];
  if (!a) {
    a = std::make_shared<Attention>();
    auto& shape = a->shape;
    shape.batch = b.batch;
    shape.heads = heads;
    shape.head_dim = head_dim;
    shape.max_seq_len = b.length;
    shape.dtype = dtype;
    shape.layout = padded ? kernels::AttentionLayout::kPadded : kernels::AttentionLayout::kJagged;
    std::vector<std::int32_t> offsets(1, 0);
    for (int i = 0; i < b.batch; ++i) offsets.push_back(offsets.back() + b.length);
    shape.total_tokens = offsets.back();
    shape.alpha = 1.0f / std::sqrt(static_cast<float>(head_dim));
    a->offsets = DeviceBuffer::from_host(offsets);
    const Element e = element_of(dtype);
    const auto bytes = as_size(shape.total_tokens) * as_size(heads) * as_size(head_dim) * 2;
    a->q = r.random(bytes, e);
    a->k = r.random(bytes, e);
    a->v = r.random(bytes, e);
    a->out = DeviceBuffer(bytes);
    if (backward) {
      a->dout = r.random(bytes, e);
      a->dq = DeviceBuffer(bytes);
      a->dk = DeviceBuffer(bytes);
      a->dv = DeviceBuffer(bytes);
    }
  }
  if (a->shape.total_tokens == 0) {
    work_.emplace_back([] {});
  } else if (!backward) {
    work_.emplace_back([a, s] {
      kernels::HstuAttentionForwardArgs args;
      args.q = a->q.data();
      args.k = a->k.data();
      args.v = a->v.data();
      args.offsets = a->offsets.as<std::int32_t>();
      args.out = a->out.data();
      kernels::hstu_attention_forward(kernels::Device::kCuda, a->shape, args, s);
    });
  } else {
    work_.emplace_back([a, s] {
      kernels::HstuAttentionBackwardArgs args;
      args.q = a->q.data();
      args.k = a->k.data();
      args.v = a->v.data();
      args.grad_out = a->dout.data();
      args.offsets = a->offsets.as<std::int32_t>();
      args.grad_q = a->dq.data();
      args.grad_k = a->dk.data();
      args.grad_v = a->dv.data();
      kernels::hstu_attention_backward(kernels::Device::kCuda, a->shape, args, s);
    });
  }
}

void CudaKernels::prepare_embedding(const sim::cost::KernelWork& k, std::int64_t step,
                                    cudaStream_t s) {
  Resources& r = *resources_;
  const auto ids = embedding_ids(k);
  const int dim = std::max(1, k.embedding_dim);
  const bool update = k.kind == KernelKind::kEmbeddingUpdate;
  const auto dtype = table_dtype(k.precision);
  if (update && dim > 2048)
    throw Error(fmt::format(
        "cuda backend: embedding update of dim {}: the CUDA kernel needs dim <= 2048", dim));
  Table& t = table(dim, static_cast<int>(dtype));
  const double skew = embedding_id_skew(k, table_rows_);
  auto& e = embeddings_[{update, ids, dim, static_cast<int>(dtype), skew, embedding_bags(k), step}];
  if (!e) {
    // One table; the ids spread evenly over the op's bags, with the op's share of distinct
    // rows.
    e = std::make_shared<Embedding>();
    e->ids = std::max<std::int64_t>(1, ids);
    e->skew = skew;
    e->step = step;
    e->sampler = std::make_shared<calibration::RowSampler>(table_rows_, skew);
    const auto bags = std::max<std::int64_t>(1, embedding_bags(k));
    std::vector<std::int64_t> offsets(as_size(bags) + 1);
    for (std::int64_t b = 0; b <= bags; ++b) offsets[as_size(b)] = b * e->ids / bags;
    e->table_row_offsets = DeviceBuffer::from_host(std::vector<std::int64_t>{0, table_rows_});
    e->offsets = DeviceBuffer::from_host(offsets);
    e->indices = DeviceBuffer(as_size(e->ids) * sizeof(std::int64_t));
    auto& shape = e->shape;
    shape.tables = 1;
    shape.batch = static_cast<int>(bags);
    shape.dim = dim;
    shape.total_rows = table_rows_;
    shape.num_indices = e->ids;
    shape.weights_dtype = dtype;
    shape.pooling = kernels::PoolingMode::kSum;
    const auto out_bytes = as_size(bags) * as_size(dim) * sizeof(float);
    e->output = DeviceBuffer(out_bytes);
    if (update) e->grad = r.random(out_bytes, Element::kF32);
    upload_ids(*e, 0);
  }
  if (!update) {
    work_.emplace_back([e, &t, s] {
      kernels::TbeForwardArgs args;
      args.weights = t.weights.data();
      args.table_row_offsets = e->table_row_offsets.as<std::int64_t>();
      args.indices = e->indices.as<std::int64_t>();
      args.offsets = e->offsets.as<std::int64_t>();
      args.output = e->output.as<float>();
      args.bounds_check = false;  // in range by construction; no extra sync
      kernels::tbe_forward(kernels::Device::kCuda, e->shape, args, s);
    });
  } else {
    work_.emplace_back([e, &t, s] {
      kernels::TbeBackwardArgs args;
      args.weights = t.weights.data();
      args.momentum = t.momentum.as<float>();
      args.table_row_offsets = e->table_row_offsets.as<std::int64_t>();
      args.indices = e->indices.as<std::int64_t>();
      args.offsets = e->offsets.as<std::int64_t>();
      args.grad_output = e->grad.as<float>();
      args.optimizer = kernels::EmbeddingOptimizer::kRowWiseAdagrad;
      args.bounds_check = false;
      kernels::tbe_backward(kernels::Device::kCuda, e->shape, args, s);
    });
  }
}

void CudaKernels::redraw(int run) {
  for (auto& [key, e] : embeddings_) upload_ids(*e, run);
}

void CudaKernels::run(int handle) { work_.at(static_cast<std::size_t>(handle))(); }

}  // namespace strait::executor
