#pragma once
// DeviceSpec: the datasheet of one GPU type, as the cost model uses it.
//
// Peaks are dense (no structured sparsity) tensor-core FLOP/s per precision, except fp32,
// which is the CUDA-core rate (non-tensor kernels are costed at it, see kernel_work.hpp).
// A precision the GPU lacks (fp8 on A100) has no peak; costing a kernel in it is an error.
// In a profile file (configs/profiles/README.md) the device object reads:
//   "device": {"peak_tflops": {"fp32": 66.9, "bf16": 989.4, ...}, "hbm_bandwidth": "3350 GB/s",
//              "hbm_capacity": "81559 MiB", "sm_count": 132, "launch_overhead": "2.5 us",
//              "nccl_sms": 16, "memory_reserved": "2 GiB"}
// Limits: one HBM bandwidth for reads and writes; no clock or power throttling; the SMs
// a collective takes are a fixed count, whatever its size or algorithm.
// "collective_progress" (optional, default "device") says who moves a collective's data:
// "device": the GPU (NCCL's kernels and copy engines), alongside whatever kernels run;
// "host": the rank's own thread between its kernels, as MPI does on a CPU rank (strait
// exec's CPU backend). Then a collective whose data could be done while a member runs a
// kernel completes only when every member has finished the kernel it was in (sim/run).

#include <array>
#include <optional>
#include <string>

#include "sim/core/config_node.hpp"
#include "sim/core/enum_names.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/kernel_work.hpp"

namespace strait::sim::cost {

/// Who progresses a device's collectives (see above).
enum class CollectiveProgress { kDevice, kHost };
constexpr auto enum_names(CollectiveProgress) {
  return std::to_array<EnumName<CollectiveProgress>>(
      {{CollectiveProgress::kDevice, "device"}, {CollectiveProgress::kHost, "host"}});
}

struct DeviceSpec {
  std::string gpu_type;  // the name cluster files use in "gpu_type", e.g. "H100-SXM"
  std::array<std::optional<FlopsPerSec>, kPrecisionCount> peak_flops{};  // per Precision
  BytesPerSec hbm_bandwidth = 0;                                         // > 0
  Bytes hbm_capacity = 0;                                                // > 0
  int sm_count = 0;                                                      // > 0
  Time launch_overhead;       // fixed time before a kernel's work starts (>= 0)
  int nccl_sms = 0;           // SMs one SM-based communication kernel occupies, <= sm_count
  Bytes memory_reserved = 0;  // CUDA context + allocator overhead, not usable by tensors
  CollectiveProgress collective_progress = CollectiveProgress::kDevice;

  /// Peak FLOP/s in `p`, or nullopt where the GPU has no such precision.
  std::optional<FlopsPerSec> peak(Precision p) const {
    return peak_flops[static_cast<std::size_t>(p)];
  }
  /// Fraction of the GPU's SMs a communication kernel occupies, in [0, 1].
  double comm_sm_fraction() const {
    return static_cast<double>(nccl_sms) / static_cast<double>(sm_count);
  }

  /// Reads the "device" object of a profile; `gpu_type` comes from the profile's top level.
  /// fp32, tf32, bf16 and fp16 peaks are required, fp8 is optional.
  static DeviceSpec from_config(const ConfigNode& node, std::string gpu_type);
};

/// The "device" object of a profile file (quantities as strings with units).
Json to_json(const DeviceSpec& spec);

}  // namespace strait::sim::cost
