#pragma once
// import_kineto: the GPU kernels of a PyTorch profiler (Kineto) trace as measurement
// records (backend "kineto"), so `strait calibrate fit` can fit a profile to a real
// training step as well as to the benchmark suite (`strait calibrate import-kineto`).
//
// Linking (detail/kineto_trace_index.hpp): a GPU event (cat "kernel", "gpu_memcpy",
// "gpu_memset") belongs to the CPU op (cat "cpu_op") with its "External id", else to the
// op around its launch (the "cuda_runtime"/"cuda_driver" event with its "correlation") on
// the launching thread, and to the ops enclosing that op; they are searched innermost first.
// Families (kernel name by calibration/kernel_names.hpp, then the first linked op that
// gives the shape; optimizer kernels carry no shape and are unrecognised):
//   gemm            *gemm*, *cutlass*, *xmma*, *cublasLt*, *nvjet* under aten::mm, addmm, bmm,
//                   baddbmm, matmul, linear ("Input Dims", "Input type"; bmm folds b into m;
//                   fp32 inputs on a kernel named *tf32* are tf32)
//   embedding       *embedding_forward*, *split_embedding*codegen_forward*,
//                   *EmbeddingBag_updateOutput* -> lookup; *embedding_backward*,
//                   *embedding*codegen_backward* -> update; under an op whose first input
//                   is a 2-D floating [rows, dim] and second the integer ids
//                   (aten::embedding, embedding_bag; lookup bags from a third, offsets
//                   input, all of one size)
//   attention       *hstu*, *attention*, *flash* (backward if *bwd*/*backward*) under
//                   aten::_scaled_dot_product_flash_attention[_backward] or
//                   aten::scaled_dot_product_attention with q [B, H, L, D], causal: the
//                   jagged family of attention_case with B sequences of length L
//   elementwise     *elementwise_kernel*, *reduce_kernel*, *layer_norm*: the innermost op's
//                   tensor inputs read plus the largest written; device-to-device memcpy
//                   ("bytes" read + written) and memset ("bytes" written)
//   collectives     ncclKernel_<Op>_* and ncclDevKernel_<Op>_*; op, size, dtype and ranks
//                   from the kernel's args or the enclosing record_param_comms ("Collective
//                   name", "In msg nelems", "Out msg nelems", "dtype", "Group size"), an
//                   all_to_all(v) of SendRecv kernels is all_to_all(v); sizes per nccl-tests;
//                   ranks without "Group size": distributedInfo.world_size; a dtype with no
//                   strait precision (int64, fp64) is recorded as fp32 at its true size
// A kernel that matches no family or whose shape cannot be found counts as unrecognised.
// Instances: the kernels of one family under one op are summed (a split-K GEMM, a TBE
// backward of several kernels); memcpy, memset and NCCL kernels are one instance each.
// Records: one per (family, shape, dtype) with the median, min, max and IQR of its
// instances (repetitions = instances, warmup 0); within a family, sorted by table key,
// every 5th is "validation". Collectives get check "ok" because the record format requires
// it: imported results were not checked. Limits: HSTU and FBGEMM TBE ops carry no shapes
// a trace records (jagged lengths, flattened weights), so their kernels are unrecognised;
// host-device copies are not HBM work and are unrecognised too; one process per trace.

#include <map>
#include <string>

#include "calibration/measurement.hpp"

namespace strait::calibration {

struct KinetoImportOptions {
  /// The records' device; empty = the trace's deviceProperties[0].name, else "unknown GPU".
  std::string device;
};

/// What the import recognised, for a summary line.
struct KinetoImportStats {
  int kernels = 0;     // GPU events (kernels, memcpys, memsets)
  int recognised = 0;  // of them, those in a record
  std::map<std::string, int> unrecognised_by_name;
};

/// Turns the Kineto trace at `path` into measurement records (backend "kineto"). A
/// malformed trace throws ConfigError (file, JSON pointer), an unreadable one IoError.
MeasurementSet import_kineto(const std::string& path, const KinetoImportOptions& options = {});
/// The same, also counting the recognised and unrecognised kernels into `stats` (if set).
MeasurementSet import_kineto(const std::string& path, const KinetoImportOptions& options,
                             KinetoImportStats* stats);

}  // namespace strait::calibration
