#pragma once
// CpuKernels: runs kernel ops on the calling thread, at the shapes of kernel_shapes.hpp:
// GEMM with Eigen (f32, single thread), attention and embeddings through the CPU
// references of kernels/, elementwise as memcpy, the dense optimizer as Adam — the code
// `strait calibrate run --backend cpu` measures (calibration/cpu_buffers.hpp).
//
// prepare() allocates and fills every input once, before the timed run; run() only
// computes. Buffers are shared by ops of equal shape (the same layer in every step), and
// each embedding dim has one table of `table_rows` rows, on huge pages, for all its ops.
// Embedding ids hit round(unique_fraction * ids) distinct rows spread uniformly over the
// table (the op's reuse, not its skew). Limits: attention runs dqk = dv = head_dim; every
// family computes in f32.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "sim/cost/kernel_work.hpp"

namespace strait::executor {

class CpuKernels {
 public:
  explicit CpuKernels(std::int64_t table_rows);
  ~CpuKernels();
  CpuKernels(const CpuKernels&) = delete;
  CpuKernels& operator=(const CpuKernels&) = delete;

  /// Prepares the inputs of kernel `k`; returns the handle run() takes.
  int prepare(const sim::cost::KernelWork& k);
  /// Runs prepared kernel `handle` once.
  void run(int handle);

 private:
  struct Gemm;
  struct Attention;
  struct Embedding;
  struct Table;
  struct Adam;

  Table& table(int dim);

  std::int64_t table_rows_;
  std::vector<std::function<void()>> work_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::shared_ptr<Gemm>> gemms_;
  std::map<std::tuple<bool, bool, int, int, int, int>, std::shared_ptr<Attention>> attentions_;
  std::map<std::tuple<bool, std::int64_t, int, std::int64_t, std::int64_t>,
           std::shared_ptr<Embedding>>
      embeddings_;
  std::map<int, std::shared_ptr<Table>> tables_;
  std::map<std::int64_t, std::shared_ptr<Adam>> adams_;
  std::vector<char> copy_src_, copy_dst_;
  volatile float sink_ = 0;  // keeps results observable
};

}  // namespace strait::executor
