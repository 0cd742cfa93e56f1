#pragma once
// CpuKernels: runs kernel ops on the calling thread, at the shapes of kernel_shapes.hpp:
// GEMM with Eigen (f32, single thread), attention and embeddings through the CPU
// references of kernels/, elementwise as memcpy, the dense optimizer as Adam — the code
// `strait calibrate run --backend cpu` measures (calibration/cpu_buffers.hpp).
//
// prepare() allocates and fills every input once, before the timed run; run() only
// computes. Buffers are shared by ops of equal shape (the same layer in every step), and
// each embedding dim has one table of `table_rows` rows, on huge pages, for all its ops.
// Embedding ids are drawn Zipf over the table with the exponent that gives the op's
// unique_fraction (kernel_shapes.hpp), fresh for every step and every run (redraw) as a
// real job's batches bring new ids, hot rows the same ones as in a real job. A step's
// lookup and update of one shape use the same ids. Limits: attention runs dqk = dv
// = head_dim; every family computes in f32.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "calibration/kernel_case.hpp"
#include "sim/cost/kernel_work.hpp"

namespace strait::executor {

class CpuKernels {
 public:
  explicit CpuKernels(std::int64_t table_rows);
  ~CpuKernels();
  CpuKernels(const CpuKernels&) = delete;
  CpuKernels& operator=(const CpuKernels&) = delete;

  /// Prepares the inputs of kernel `k` of step `step`; returns the handle run() takes.
  int prepare(const sim::cost::KernelWork& k, std::int64_t step);
  /// Draws fresh embedding rows for whole-graph run `run` (0 is what prepare drew).
  void redraw(int run);
  /// Runs prepared kernel `handle` once.
  void run(int handle);

 private:
  struct Gemm;
  struct Attention;
  struct Embedding;
  struct Table;
  struct Adam;

  // One job per kernel family: the inputs of `k`, then its run as the next work_ entry.
  void prepare_gemm(const sim::cost::KernelWork& k);
  void prepare_attention(const sim::cost::KernelWork& k);
  void prepare_embedding(const sim::cost::KernelWork& k, std::int64_t step);
  void prepare_elementwise(const sim::cost::KernelWork& k);
  void prepare_optimizer(const sim::cost::KernelWork& k);
  // The buffers of `k`'s shape, made at the first op of that shape.
  std::shared_ptr<Attention> attention(const sim::cost::KernelWork& k);
  std::shared_ptr<Embedding> embedding(const sim::cost::KernelWork& k, std::int64_t step);

  Table& table(int dim);
  std::vector<std::int64_t> draw_ids(std::int64_t ids, double skew, int run, std::int64_t step,
                                     int dim);

  std::int64_t table_rows_;
  std::vector<std::function<void()>> work_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::shared_ptr<Gemm>> gemms_;
  std::map<std::tuple<bool, bool, int, int, int, int>, std::shared_ptr<Attention>> attentions_;
  std::map<std::tuple<bool, std::int64_t, int, double, std::int64_t, std::int64_t>,
           std::shared_ptr<Embedding>>
      embeddings_;
  std::map<int, std::shared_ptr<Table>> tables_;
  std::map<double, std::shared_ptr<calibration::RowSampler>> samplers_;
  std::map<std::int64_t, std::shared_ptr<Adam>> adams_;
  std::vector<char> copy_src_, copy_dst_;
  volatile float sink_ = 0;  // keeps results observable
};

}  // namespace strait::executor
