#pragma once
// Writes one rank of a Timeline as a PyTorch profiler (Kineto) JSON trace, the shape real
// PyTorch 2.x traces have, so Holistic Trace Analysis (HTA) and other tools that read real
// traces run on simulated ones unchanged.
//
// Top level: "schemaVersion", "deviceProperties" (one GPU), "distributedInfo" {"backend":
// "nccl", "rank", "world_size"}, "traceEvents", "displayTimeUnit", "baseTimeNanoseconds"
// (a fixed epoch; ts are microseconds after it, exact from integer picoseconds).
// GPU work (pid = device id, tid = stream: track "compute" -> 7, others 20, 21, ... in
// TrackId order): a span whose category is a strait kernel kind ("gemm", "embedding_lookup",
// ...) becomes a "kernel" event named like the library kernel that does that work (cuBLAS
// GEMM, FBGEMM TBE, HSTU/flash attention, ATen elementwise, multi_tensor_apply); a
// collective span (an "op" arg, or a category naming a collective op) an NCCL >= 2.19
// kernel ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)", all-to-all(v) "ncclDevKernel_
// SendRecv(...)") with record_param_comms' metadata: "Collective name", "In msg nelems",
// "Out msg nelems", "Group size" (arg "group_size", else world_size), "dtype" ("Float";
// "Byte" when the size is no whole number of floats), "Process Group Name" (arg "group").
// Kernel args: device, stream, correlation, External id, grid, block, "strait op" (the
// span's name), "step", and the span's other args prefixed "strait " ("op" -> "strait
// collective"). Other spans ("wait for peers", transfers) are not GPU work: left out.
// CPU side (pid = tid = 10000 + rank): per kernel a "cpu_op" (the strait op, or
// record_param_comms for a collective) around a "cuda_runtime" cudaLaunchKernel with the
// same correlation, starting at max(previous launch end, kernel start - 5 us) and never
// after the kernel; an "ac2g" flow ("s" on the launch, "f" bp "e" on the kernel, id =
// correlation). Steps (arg "step", else 0): a "user_annotation" ProfilerStep#N on the CPU
// from the first launch of step N to the next step's (pipelined steps launch early work of
// step N+1 inside ProfilerStep#N, as real train pipelines do) and a "gpu_user_annotation"
// ProfilerStep#N on stream 7 from the first kernel start to the last kernel end of step N.
// Limits: "Process Group Ranks" is not written (spans carry the group's name and size, not
// its members); every collective is one kernel; CPU times are made up, not simulated.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "traces/timeline.hpp"

namespace strait::traces {

/// The GPU a rank runs on, as "deviceProperties" describes it.
struct KinetoDevice {
  int id = 0;              // CUDA device index on its host: the GPU events' pid
  std::string name;        // the GPU type, e.g. "H100-SXM"
  Bytes total_memory = 0;  // "totalGlobalMem"
  int sm_count = 0;        // "numSms"
};

struct KinetoTraceOptions {
  int rank = 0;        // the timeline rank written ("distributedInfo.rank")
  int world_size = 1;  // ranks in the job ("distributedInfo.world_size")
  KinetoDevice device;
};

/// Writes `options.rank` of `timeline` to `path` as a Kineto trace, atomically; throws
/// strait::IoError naming the file when it cannot be written.
void write_kineto_trace(const Timeline& timeline, const std::string& path,
                        const KinetoTraceOptions& options);

/// The job around the ranks of a timeline: its size and each rank's GPU.
struct KinetoJob {
  int world_size = 1;
  std::function<KinetoDevice(int rank)> device_of;  // unset: device 0, "unknown GPU"
};

/// Writes every rank of `timeline` to `directory`/rank-<r>.json (HTA reads such a
/// directory), creating the directory; returns the paths written, by rank. Throws IoError.
std::vector<std::string> write_kineto_trace_directory(const Timeline& timeline,
                                                      const std::string& directory,
                                                      const KinetoJob& job);

/// (major, minor) compute capability of a known GPU type ("H100-SXM" -> 9.0), else (0, 0).
std::pair<int, int> compute_capability(std::string_view gpu_type);

}  // namespace strait::traces
