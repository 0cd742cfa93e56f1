#pragma once
// KinetoRun: a real job's PyTorch profiler (Kineto) traces, one per rank, read as the
// measured side of `strait compare SIMULATED --sim-trace S --kineto PATH...`.
//
//   - Files: a PATH is a trace or a directory whose *.json files are traces (by name). A
//     trace's rank is its "distributedInfo"."rank", else its position among the files.
//   - Steps: the "ProfilerStep#N" annotations (cat "user_annotation" on the CPU, or
//     "gpu_user_annotation" on the GPU streams; one step per N, from its earliest start to
//     its latest end), in order of N. A GPU event (cat "kernel", "gpu_memcpy",
//     "gpu_memset") belongs to the CPU step in which it was launched (the "cuda_runtime" or
//     "cuda_driver" event with its "correlation"), else to the GPU step around its start,
//     else to the CPU step around its start; events in no step are left out.
//   - A step's time on a rank is its GPU time: from the start of its first GPU event to the
//     end of its last (host time before the first launch, e.g. the data loader, is not in
//     it). Compute: the union of its kernels' intervals other than NCCL's, any stream.
//   - Kernels (cat "kernel") get their family from calibration/kernel_names.hpp. An NCCL
//     kernel's collective is its "Collective name" arg (newer PyTorch copies
//     record_param_comms' args onto it), else that of the cpu_op with its "External id",
//     else its name's (ncclKernel_AllReduce_* is all_reduce, ncclDevKernel_SendRecv send/recv).
// Limits: times of different ranks are not compared (their hosts' clocks may differ); a
// kernel the name rules miss is counted in `unknown_kernels`, not compared.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/kernel_names.hpp"
#include "sim/network/collective.hpp"

namespace strait::executor {

/// One GPU kernel of a known family (or NCCL) in a profiler step.
struct KinetoKernel {
  std::int64_t step = 0;  // 0 = the trace's first ProfilerStep
  std::string name;
  calibration::KernelNameFamily family = calibration::KernelNameFamily::kUnknown;
  std::optional<sim::network::CollectiveOp> collective;  // NCCL kernels whose op is known
  double ms = 0;
};

/// One rank's trace.
struct KinetoRankTrace {
  std::string file;
  std::vector<std::int64_t> step_numbers;  // N of each ProfilerStep#N, ascending
  std::vector<double> step_ms;             // GPU time of each step (first to last GPU event)
  std::vector<double> compute_ms;          // union of the step's non-NCCL kernels
  std::vector<KinetoKernel> kernels;       // in order of start
};

struct KinetoRun {
  std::map<int, KinetoRankTrace> ranks;
  std::map<std::string, int> unknown_kernels;  // kernels of no family, by name
  /// Files, by rank, joined with ", " (for messages).
  std::string files() const;
};

/// The trace files `paths` name: a file as given, a directory's *.json files by name;
/// throws IoError naming a path that does not exist or a directory without *.json.
std::vector<std::string> kineto_trace_files(const std::vector<std::string>& paths);

/// Reads one trace per rank; ConfigError names the file and what it lacks (ProfilerStep
/// annotations, kernel events) or a rank two files claim; IoError an unreadable file.
KinetoRun read_kineto_run(const std::vector<std::string>& files);

}  // namespace strait::executor
