#pragma once
// CudaKernels: queues kernel ops on a CUDA stream of the current device, at the shapes of
// kernel_shapes.hpp, the CUDA counterpart of CpuKernels (cpu_kernels.hpp) with the code
// `strait calibrate run --backend cuda` measures:
//   GEMM         cuBLASLt (calibration/lt_gemm.hpp) at the op's precision; the
//                backward is two GEMMs, the input gradient (m x k from m x n by n x k)
//                and the weight gradient (n x k from n x m by m x k), in the forward's
//                TN layout.
//   attention    strait's HSTU kernels (kernels/hstu_attention.hpp), causal, f16 when the
//                op's precision is fp16, else bf16 (the CUDA kernels run no f32).
//   embeddings   strait's TBE kernels (kernels/tbe.hpp), sum pooling, row-wise AdaGrad,
//                weights f32/f16/bf16 as the op's precision (else f32).
//   elementwise  a device-to-device cudaMemcpyAsync of hbm_bytes / 2.
//   optimizer    calibration's Adam kernel (calibration/device_kernels.hpp).
// prepare() allocates and fills every input once, before the timed run; run() only queues.
// Buffers are shared by ops of equal shape; each (embedding dim, dtype) has one table for
// all its ops, of `table_rows` rows or fewer: all tables together take at most 40% of the
// GPU's free memory when constructed. Embedding ids are drawn as CpuKernels draws them
// (Zipf with the op's unique fraction, fresh per step and per run) and uploaded by
// prepare() and redraw(), never while the ops run.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "sim/cost/kernel_work.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::executor {

class CudaKernels {
 public:
  /// Kernels of `ops` (one rank's) on the current device, queued on `streams` (by op-graph
  /// stream index); embedding tables of up to `table_rows` rows.
  CudaKernels(std::int64_t table_rows, const std::vector<sim::workload::Op>& ops,
              std::vector<cudaStream_t> streams);
  ~CudaKernels();
  CudaKernels(const CudaKernels&) = delete;
  CudaKernels& operator=(const CudaKernels&) = delete;

  /// Prepares the inputs of kernel `k` of step `step` on op-graph stream `stream`; returns
  /// the handle run() takes. Throws strait::Error for a shape the CUDA kernels do not run.
  int prepare(const sim::cost::KernelWork& k, std::int64_t step, int stream);
  /// Draws and uploads fresh embedding ids for whole-graph run `run` (0: prepare's).
  void redraw(int run);
  /// Queues prepared kernel `handle` on its stream (asynchronous).
  void run(int handle);
  /// Rows each embedding table has (table_rows, or fewer to fit the GPU's memory).
  std::int64_t table_rows() const { return table_rows_; }

 private:
  struct Resources;
  struct Gemm;
  struct Attention;
  struct Embedding;
  struct Table;
  struct Adam;

  Table& table(int dim, int dtype);
  void upload_ids(Embedding& e, int run);
  void prepare_gemm(const sim::cost::KernelWork& k, cudaStream_t stream, void* workspace);
  void prepare_attention(const sim::cost::KernelWork& k, cudaStream_t stream);
  void prepare_embedding(const sim::cost::KernelWork& k, std::int64_t step, cudaStream_t stream);

  std::int64_t table_rows_;
  std::unique_ptr<Resources> resources_;  // cuBLASLt, workspaces, setup stream, rng
  std::vector<cudaStream_t> streams_;
  std::vector<std::function<void()>> work_;
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, std::shared_ptr<Gemm>> gemms_;
  std::map<std::tuple<bool, bool, int, int, int, int, int>, std::shared_ptr<Attention>> attentions_;
  std::map<std::tuple<bool, std::int64_t, int, int, double, std::int64_t, std::int64_t>,
           std::shared_ptr<Embedding>>
      embeddings_;
  std::map<std::pair<int, int>, std::shared_ptr<Table>> tables_;
  std::map<std::int64_t, std::shared_ptr<Adam>> adams_;
};

}  // namespace strait::executor
