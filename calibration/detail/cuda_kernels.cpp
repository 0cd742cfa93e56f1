// Over 400 lines: the CUDA calibration backend: one timing harness and each family's case on
// it.
// The CUDA kernel backend: each family on the rank's GPU, timed with CUDA events.
// - gemm: cuBLASLt in the layout of a linear layer's forward (row-major Y[m, n] = X[m, k]
//   W[n, k]^T, i.e. column-major "TN", the layout FP8 requires), f32 compute, bf16/fp16
//   (fp32, tf32) in and out, fp8 e4m3 in and bf16 out on compute capability >= 8.9; the
//   best heuristic algorithm under a 32 MiB workspace, cublasGemmEx if there is none.
// - jagged/padded attention: strait's HSTU kernels, causal, bf16/fp16.
// - embedding lookup/update: strait's TBE kernels, sum pooling, row-wise AdaGrad, on the ids
//   make_tbe_inputs draws (uniform or Zipf); an update's work follows their unique rows.
// - elementwise: a device-to-device copy; optimizer: one Adam step (device_kernels.cu).
// Inputs are random (a deterministic pattern tiled over each buffer). Every sample waits
// behind a gate kernel so launches are queued before the GPU reaches them; memory-bound
// families also write a buffer of twice the L2 size first, so they start with a cold L2.

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <fmt/format.h>

#include "calibration/detail/backends.hpp"
#include "calibration/detail/cuda_support.hpp"
#include "calibration/device_kernels.hpp"
#include "calibration/lt_gemm.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device.hpp"
#include "kernels/hstu_attention.hpp"
#include "kernels/tbe.hpp"
#include "sim/core/rng.hpp"

namespace strait::calibration::detail {
namespace {

using kernels::DeviceBuffer;
using sim::cost::KernelKind;
using sim::cost::Precision;

constexpr std::uint64_t kInputSeed = 20261123;
constexpr double kGateUs = 200;           // longer than queueing one sample's launches
constexpr double kMemoryHeadroom = 0.85;  // of the free memory a case may use

std::string case_name(const KernelCase& c) {
  return fmt::format("{} {} {}", c.family.name(), c.shape.dump(), sim::cost::to_string(c.dtype));
}

std::int64_t shape_int(const KernelCase& c, const char* key) {
  const auto it = c.shape.find(key);
  if (it == c.shape.end() || !it->is_number_integer())
    throw Error(fmt::format("cuda backend: {}: expected an integer \"{}\" in the shape",
                            case_name(c), key));
  return it->get<std::int64_t>();
}

std::string shape_string(const KernelCase& c, const char* key) {
  const auto it = c.shape.find(key);
  if (it == c.shape.end() || !it->is_string())
    throw Error(
        fmt::format("cuda backend: {}: expected a string \"{}\" in the shape", case_name(c), key));
  return it->get<std::string>();
}

std::vector<int> shape_lengths(const KernelCase& c) {
  const auto it = c.shape.find("lengths");
  if (it == c.shape.end() || !it->is_array() || it->empty())
    throw Error(
        fmt::format("cuda backend: {}: expected a non-empty \"lengths\" array", case_name(c)));
  return it->get<std::vector<int>>();
}

bool padded_attention(const KernelCase& c) {
  return c.family.kernel == KernelKind::kPaddedAttention ||
         c.family.kernel == KernelKind::kPaddedAttentionBackward;
}

// The backward families, or a forward family's case with shape "pass": "backward".
bool backward_attention(const KernelCase& c) {
  const auto it = c.shape.find("pass");
  if (it != c.shape.end() && *it != "forward" && *it != "backward")
    throw Error(
        fmt::format("cuda backend: {}: expected pass \"forward\" or \"backward\"", case_name(c)));
  return is_backward(c);
}

// ---- the backend --------------------------------------------------------------------------

std::optional<kernels::DType> kernel_dtype(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return kernels::DType::kF32;
    case Precision::kFp16:
      return kernels::DType::kF16;
    case Precision::kBf16:
      return kernels::DType::kBF16;
    default:
      return std::nullopt;
  }
}

class CudaKernelBackend final : public KernelBackend {
 public:
  explicit CudaKernelBackend(int local_rank);
  CudaKernelBackend(const CudaKernelBackend&) = delete;
  CudaKernelBackend& operator=(const CudaKernelBackend&) = delete;
  ~CudaKernelBackend() override { release(); }

  std::string device() const override { return description_; }
  std::map<std::string, std::string> versions() const override { return versions_; }
  bool supports(const KernelCase& c) const override;
  void prepare(const KernelCase& c) override;

 private:
  void release() noexcept;
  template <class Launch>
  std::vector<double> sample(const Launch& launch, int warmup, int repetitions, bool cold_l2);
  std::vector<double> time_gemm(const KernelCase& c, int warmup, int repetitions) override;
  std::vector<double> time_attention(const KernelCase& c, int warmup, int repetitions) override;
  std::vector<double> time_embedding(KernelCase& c, int warmup, int repetitions) override;
  std::vector<double> time_copy(const KernelCase& c, int warmup, int repetitions) override;
  std::vector<double> time_adam(const KernelCase& c, int warmup, int repetitions) override;
  // Device memory a case allocates besides the backend's own buffers (bytes).
  double case_bytes(const KernelCase& c) const;
  DeviceBuffer random_buffer(std::size_t bytes, Element e);
  DeviceBuffer zero_buffer(std::size_t bytes);
  template <class T>
  DeviceBuffer upload(const std::vector<T>& host);

  int device_;                  // first: the members below are created on it
  int compute_capability_ = 0;  // 10 major + minor
  std::string description_;
  std::map<std::string, std::string> versions_;
  StreamTimer timer_;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;
  DeviceBuffer l2_flush_;
  Rng rng_{kInputSeed};
};

CudaKernelBackend::CudaKernelBackend(int local_rank)
    : device_(select_cuda_device(local_rank)),
      description_(cuda_device_description(device_)),
      versions_(cuda_versions()) {
  cudaDeviceProp prop{};
  STRAIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
  compute_capability_ = 10 * prop.major + prop.minor;
  try {
    STRAIT_CUBLAS_CHECK(cublasCreate(&blas_));
    STRAIT_CUBLAS_CHECK(cublasLtCreate(&lt_));
    workspace_ = DeviceBuffer(kGemmWorkspaceBytes);
    STRAIT_CUBLAS_CHECK(cublasSetStream(blas_, timer_.stream()));
    STRAIT_CUBLAS_CHECK(cublasSetWorkspace(blas_, workspace_.data(), workspace_.bytes()));
    const auto l2 = static_cast<std::size_t>(std::max(prop.l2CacheSize, 1 << 20));
    l2_flush_ = DeviceBuffer(2 * l2);
    int major = 0, minor = 0, patch = 0;
    STRAIT_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
    STRAIT_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
    STRAIT_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
    versions_["cublas"] = fmt::format("{}.{}.{}", major, minor, patch);
    const std::size_t lt = cublasLtGetVersion();
    versions_["cublaslt"] = fmt::format("{}.{}.{}", lt / 10000, lt % 10000 / 100, lt % 100);
  } catch (...) {
    release();
    throw;
  }
}

void CudaKernelBackend::release() noexcept {
  if (lt_ != nullptr) (void)cublasLtDestroy(lt_);
  if (blas_ != nullptr) (void)cublasDestroy(blas_);
  lt_ = nullptr;
  blas_ = nullptr;
}

bool CudaKernelBackend::supports(const KernelCase& c) const {
  if (!c.family.kernel) return false;
  const bool half = c.dtype == Precision::kBf16 || c.dtype == Precision::kFp16;
  bool runs = false;
  switch (*c.family.kernel) {
    case KernelKind::kGemm:
    case KernelKind::kGemmBackward:
      runs = gemm_types(c.dtype).has_value() &&
             (c.dtype != Precision::kFp8 || compute_capability_ >= 89);
      break;
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
    case KernelKind::kJaggedAttentionBackward:
    case KernelKind::kPaddedAttentionBackward: {
      const std::int64_t d = shape_int(c, "head_dim");
      runs = half && d % 16 == 0 && d >= 16 && d <= 256;
      break;
    }
    case KernelKind::kEmbeddingLookup:
      runs = kernel_dtype(c.dtype).has_value();
      break;
    case KernelKind::kEmbeddingUpdate:
      runs = kernel_dtype(c.dtype).has_value() && shape_int(c, "dim") <= 2048;
      break;
    case KernelKind::kElementwise:
      runs = shape_string(c, "op") == "copy";
      break;
    case KernelKind::kOptimizer:
      runs = shape_string(c, "op") == "adam";
      break;
  }
  if (!runs) return false;
  std::size_t free = 0, total = 0;
  STRAIT_CUDA_CHECK(cudaSetDevice(device_));
  STRAIT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return case_bytes(c) <= kMemoryHeadroom * static_cast<double>(free);
}

double CudaKernelBackend::case_bytes(const KernelCase& c) const {
  const auto num = [&](const char* key) { return static_cast<double>(shape_int(c, key)); };
  switch (*c.family.kernel) {
    case KernelKind::kGemm:
    case KernelKind::kGemmBackward: {
      const GemmTypes t = *gemm_types(c.dtype);
      const double forward = (num("m") + num("n")) * num("k") * element_bytes(t.in_element) +
                             num("m") * num("n") * t.out_bytes;
      return is_backward(c) ? 2 * forward : forward;  // + dY, dX, dW
    }
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
    case KernelKind::kJaggedAttentionBackward:
    case KernelKind::kPaddedAttentionBackward: {
      const auto lengths = shape_lengths(c);
      double tokens = 0;
      for (int l : lengths) tokens += l;
      if (padded_attention(c)) tokens = static_cast<double>(lengths.size()) * num("max_len");
      return tokens * num("heads") * num("head_dim") * 2 * (backward_attention(c) ? 7 : 4);
    }
    case KernelKind::kEmbeddingLookup:
    case KernelKind::kEmbeddingUpdate: {
      const double rows = num("tables") * num("rows"), d = num("dim");
      const double ids = num("tables") * num("batch") * num("pooling");
      const double out = num("tables") * num("batch") * d * 4;
      const double e = sim::cost::bytes_per_element(c.dtype);
      if (*c.family.kernel == KernelKind::kEmbeddingLookup) return rows * d * e + out + ids * 16;
      // Backward: the f32 row states, about a dozen int64 of scratch per id (sort, segments,
      // chunks) and f32 partial sums of at most ids (1/64 + 1/256) rows (kernels/detail/tbe.cu).
      return rows * d * e + rows * 4 + out + ids * 16 + ids * 8 * 12 +
             ids * (1.0 / 64 + 1.0 / 256) * d * 4;
    }
    case KernelKind::kElementwise:
      return num("bytes");
    case KernelKind::kOptimizer:
      return num("params") * 16;
  }
  return 0;
}

void CudaKernelBackend::prepare(const KernelCase& c) {
  if (!supports(c))
    throw Error(fmt::format("cuda backend: {} cannot run {}", description_, case_name(c)));
  STRAIT_CUDA_CHECK(cudaSetDevice(device_));
}

// Warm-up launches untimed; then per sample: the gate, the L2 flush where asked, and the
// launch between the two events. Cache states follow the CPU backend's (cpu_kernels.cpp):
// GEMM cold, attention warm, copies warm, embeddings and Adam cold. Lookups stay cold
// here (the CPU backend's steady state needs a fresh batch of ids per repetition, which
// this backend does not upload yet; repeating one batch warm would cache all its rows).
template <class Launch>
std::vector<double> CudaKernelBackend::sample(const Launch& launch, int warmup, int repetitions,
                                              bool cold_l2) {
  for (int i = 0; i < warmup; ++i) launch();
  timer_.synchronize();
  std::vector<double> samples_us;
  samples_us.reserve(static_cast<std::size_t>(std::max(repetitions, 0)));
  for (int i = 0; i < repetitions; ++i) {
    launch_gate(kGateUs, timer_.stream());
    if (cold_l2) {
      STRAIT_CUDA_CHECK(cudaMemsetAsync(l2_flush_.data(), i % 2 == 0 ? 0 : 0xff, l2_flush_.bytes(),
                                        timer_.stream()));
    }
    timer_.start();
    launch();
    samples_us.push_back(timer_.stop_us());
  }
  return samples_us;
}

// A deterministic pattern of 1 MiB of random elements, tiled over the buffer by doubling
// device-to-device copies.
DeviceBuffer CudaKernelBackend::random_buffer(std::size_t bytes, Element e) {
  return random_device_buffer(bytes, e, rng_, timer_.stream());
}

DeviceBuffer CudaKernelBackend::zero_buffer(std::size_t bytes) {
  DeviceBuffer buffer(bytes);
  if (bytes > 0) STRAIT_CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0, bytes, timer_.stream()));
  return buffer;
}

template <class T>
DeviceBuffer CudaKernelBackend::upload(const std::vector<T>& host) {
  DeviceBuffer buffer(host.size() * sizeof(T));
  if (!host.empty()) {
    STRAIT_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), host.data(), buffer.bytes(),
                                      cudaMemcpyHostToDevice, timer_.stream()));
    timer_.synchronize();  // `host` may go before the copy would otherwise finish
  }
  return buffer;
}

std::vector<double> CudaKernelBackend::time_gemm(const KernelCase& c, int warmup, int repetitions) {
  const std::int64_t m = shape_int(c, "m"), n = shape_int(c, "n"), k = shape_int(c, "k");
  if (m <= 0 || n <= 0 || k <= 0)
    throw Error(fmt::format("cuda backend: {}: expected m, n, k >= 1", case_name(c)));
  const GemmTypes t = *gemm_types(c.dtype);
  const auto in = static_cast<std::size_t>(element_bytes(t.in_element));
  const auto count = [](std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a * b); };
  // Rows for the backward's weight gradient too (LtGemmBackward::reduction_rows).
  const std::int64_t rows = LtGemmBackward::reduction_rows(m);
  DeviceBuffer x = random_buffer(count(rows, k) * in, t.in_element);
  DeviceBuffer w = random_buffer(count(n, k) * in, t.in_element);
  DeviceBuffer y(count(m, n) * static_cast<std::size_t>(t.out_bytes));
  if (is_backward(c)) {
    // What strait exec runs for a gemm_backward op (calibration/lt_gemm.hpp).
    DeviceBuffer dy = random_buffer(count(rows, n) * in, t.in_element);
    DeviceBuffer dx(count(m, k) * static_cast<std::size_t>(t.out_bytes));
    DeviceBuffer dw(count(n, k) * static_cast<std::size_t>(t.out_bytes));
    LtGemmBackward backward(lt_, t, m, n, k);
    if (!backward.has_algorithm())
      throw Error(fmt::format("cuda backend: cuBLASLt found no algorithm for {}", case_name(c)));
    return sample(
        [&] {
          backward.run(dy.data(), x.data(), w.data(), dx.data(), dw.data(), workspace_.data(),
                       timer_.stream());
        },
        warmup, repetitions, true);
  }
  LtGemm plan(lt_, t, m, n, k);
  if (plan.has_algorithm()) {
    return sample(
        [&] { plan.run(x.data(), w.data(), y.data(), workspace_.data(), timer_.stream()); }, warmup,
        repetitions, true);
  }
  if (c.dtype == Precision::kFp8 || std::max({m, n, k}) > INT_MAX)
    throw Error(fmt::format("cuda backend: cuBLASLt found no algorithm for {}", case_name(c)));
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const float one = 1.0f, zero = 0.0f;
  return sample(
      [&] {
        STRAIT_CUBLAS_CHECK(cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, ni, mi, ki, &one,
                                         w.data(), t.in, ki, x.data(), t.in, ki, &zero, y.data(),
                                         t.out, ni, t.compute, CUBLAS_GEMM_DEFAULT));
      },
      warmup, repetitions, true);
}

std::vector<double> CudaKernelBackend::time_attention(const KernelCase& c, int warmup,
                                                      int repetitions) {
  const bool padded = padded_attention(c);
  const std::vector<int> lengths = shape_lengths(c);
  kernels::HstuAttentionShape s;
  s.batch = static_cast<int>(lengths.size());
  s.heads = static_cast<int>(shape_int(c, "heads"));
  s.head_dim = static_cast<int>(shape_int(c, "head_dim"));
  s.max_seq_len = static_cast<int>(shape_int(c, "max_len"));
  std::vector<std::int32_t> offsets(lengths.size() + 1, 0);
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    if (lengths[b] < 0 || lengths[b] > s.max_seq_len)
      throw Error(fmt::format("cuda backend: {}: expected lengths in [0, max_len]", case_name(c)));
    offsets[b + 1] = offsets[b] + lengths[b];
  }
  s.total_tokens = padded ? std::int64_t{s.batch} * s.max_seq_len : offsets.back();
  s.dtype = *kernel_dtype(c.dtype);
  s.layout = padded ? kernels::AttentionLayout::kPadded : kernels::AttentionLayout::kJagged;
  s.alpha = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  s.causal = true;
  const Element e = c.dtype == Precision::kBf16 ? Element::kBF16 : Element::kF16;
  const auto bytes = static_cast<std::size_t>(s.total_tokens * s.heads * s.head_dim) * 2;
  DeviceBuffer q = random_buffer(bytes, e), k = random_buffer(bytes, e),
               v = random_buffer(bytes, e), dev_offsets = upload(offsets);
  void* stream = timer_.stream();
  if (!backward_attention(c)) {
    DeviceBuffer out(bytes);
    kernels::HstuAttentionForwardArgs a;
    a.q = q.data();
    a.k = k.data();
    a.v = v.data();
    a.offsets = dev_offsets.as<std::int32_t>();
    a.out = out.data();
    return sample([&] { kernels::hstu_attention_forward(kernels::Device::kCuda, s, a, stream); },
                  warmup, repetitions, false);
  }
  DeviceBuffer grad_out = random_buffer(bytes, e), dq(bytes), dk(bytes), dv(bytes);
  kernels::HstuAttentionBackwardArgs a;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.grad_out = grad_out.data();
  a.offsets = dev_offsets.as<std::int32_t>();
  a.grad_q = dq.data();
  a.grad_k = dk.data();
  a.grad_v = dv.data();
  return sample([&] { kernels::hstu_attention_backward(kernels::Device::kCuda, s, a, stream); },
                warmup, repetitions, false);
}

std::vector<double> CudaKernelBackend::time_embedding(KernelCase& c, int warmup, int repetitions) {
  const bool update = *c.family.kernel == KernelKind::kEmbeddingUpdate;
  const std::int64_t tables = shape_int(c, "tables"), batch = shape_int(c, "batch"),
                     dim = shape_int(c, "dim"), pooling = shape_int(c, "pooling"),
                     rows = shape_int(c, "rows");
  if (tables < 1 || batch < 1 || dim < 1 || pooling < 1 || rows < 1 || tables * batch > INT_MAX)
    throw Error(fmt::format("cuda backend: {}: expected tables, batch, dim, pooling, rows >= 1",
                            case_name(c)));
  // The ids the CPU backend draws too (kernel_case.hpp); an update's work follows their
  // unique rows.
  const TbeInputs in = make_tbe_inputs(c, kInputSeed);
  set_unique_fraction(c, in.unique_fraction);
  kernels::TbeShape s;
  s.tables = static_cast<int>(tables);
  s.batch = static_cast<int>(batch);
  s.dim = static_cast<int>(dim);
  s.total_rows = in.table_row_offsets.back();
  s.num_indices = static_cast<std::int64_t>(in.indices.size());
  s.weights_dtype = *kernel_dtype(c.dtype);
  s.pooling = kernels::PoolingMode::kSum;
  const Element e = s.weights_dtype == kernels::DType::kF32   ? Element::kF32
                    : s.weights_dtype == kernels::DType::kF16 ? Element::kF16
                                                              : Element::kBF16;
  const auto weight_bytes =
      static_cast<std::size_t>(s.total_rows * dim) * static_cast<std::size_t>(element_bytes(e));
  const auto out_bytes = static_cast<std::size_t>(batch * tables * dim) * sizeof(float);
  DeviceBuffer weights = random_buffer(weight_bytes, e), table_rows = upload(in.table_row_offsets),
               indices = upload(in.indices), offsets = upload(in.offsets);
  void* stream = timer_.stream();
  if (!update) {
    DeviceBuffer out(out_bytes);
    kernels::TbeForwardArgs a;
    a.weights = weights.data();
    a.table_row_offsets = table_rows.as<std::int64_t>();
    a.indices = indices.as<std::int64_t>();
    a.offsets = offsets.as<std::int64_t>();
    a.output = out.as<float>();
    a.bounds_check = false;  // the ids are in range by construction; no extra sync
    return sample([&] { kernels::tbe_forward(kernels::Device::kCuda, s, a, stream); }, warmup,
                  repetitions, true);
  }
  DeviceBuffer grad = random_buffer(out_bytes, Element::kF32);
  DeviceBuffer momentum = zero_buffer(static_cast<std::size_t>(s.total_rows) * sizeof(float));
  kernels::TbeBackwardArgs a;
  a.weights = weights.data();
  a.momentum = momentum.as<float>();
  a.table_row_offsets = table_rows.as<std::int64_t>();
  a.indices = indices.as<std::int64_t>();
  a.offsets = offsets.as<std::int64_t>();
  a.grad_output = grad.as<float>();
  a.optimizer = kernels::EmbeddingOptimizer::kRowWiseAdagrad;
  a.bounds_check = false;
  return sample([&] { kernels::tbe_backward(kernels::Device::kCuda, s, a, stream); }, warmup,
                repetitions, true);
}

// The case's bytes count the copy's read and write: it copies half of them.
std::vector<double> CudaKernelBackend::time_copy(const KernelCase& c, int warmup, int repetitions) {
  const std::int64_t bytes = shape_int(c, "bytes");
  if (bytes < 2) throw Error(fmt::format("cuda backend: {}: expected bytes >= 2", case_name(c)));
  const auto half = static_cast<std::size_t>(bytes / 2);
  DeviceBuffer src = zero_buffer(half), dst(half);
  return sample(
      [&] {
        STRAIT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), half, cudaMemcpyDeviceToDevice,
                                          timer_.stream()));
      },
      warmup, repetitions, false);
}

std::vector<double> CudaKernelBackend::time_adam(const KernelCase& c, int warmup, int repetitions) {
  const std::int64_t params = shape_int(c, "params");
  if (params < 1) throw Error(fmt::format("cuda backend: {}: expected params >= 1", case_name(c)));
  const auto bytes = static_cast<std::size_t>(params) * sizeof(float);
  DeviceBuffer p = random_buffer(bytes, Element::kF32), g = random_buffer(bytes, Element::kF32),
               m = zero_buffer(bytes), v = zero_buffer(bytes);
  AdamStep step;
  step.params = p.as<float>();
  step.grads = g.as<float>();
  step.exp_avg = m.as<float>();
  step.exp_avg_sq = v.as<float>();
  step.count = params;
  return sample([&] { launch_adam_step(step, timer_.stream()); }, warmup, repetitions, true);
}

}  // namespace

std::unique_ptr<KernelBackend> make_cuda_kernel_backend(int local_rank) {
  return std::make_unique<CudaKernelBackend>(local_rank);
}

}  // namespace strait::calibration::detail
