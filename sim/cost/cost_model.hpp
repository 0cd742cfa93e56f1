#pragma once
// CostModel: kernel durations on a GPU type from its calibration profile (a roofline with
// per-family efficiencies), and the share of its SMs an NCCL kernel takes.
//
// Roofline. For a kernel w on device d with family efficiencies e_c, e_m at w's table key
// (calibration_profile.hpp):
//   compute_seconds = w.flops / (peak * e_c), peak = d.peak(w.precision) for GEMM and
//                     attention (tensor cores), d.peak(fp32) for the others (CUDA cores);
//                     attention times the batch's tile factor at the profile's tile_rows;
//   hbm_bytes       = w.hbm_bytes, times (1 - h * (1 - unique_fraction)) for embeddings;
//   memory_seconds  = hbm_bytes / (d.hbm_bandwidth * e_m);
//   duration        = d.launch_overhead (+ the family's call_latency for embeddings)
//                     + max(compute_seconds, memory_seconds).
//
// How a kernel loads its GPU's SMs and HBM in flow mode, and what an NCCL collective takes
// from them: gpu_model.hpp.
//
// Known limits: efficiencies depend on one key per family only.

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/device_spec.hpp"
#include "sim/cost/kernel_work.hpp"
#include "sim/cost/profile_set.hpp"

namespace strait::sim::cost {

struct KernelCost {
  double compute_seconds = 0;  // time at the achievable FLOP rate alone
  double hbm_bytes = 0;        // bytes reaching HBM (after cache reuse of embedding rows)
  double memory_seconds = 0;   // time at the achievable HBM bandwidth alone
  Time launch_overhead;        // fixed delay before the work starts, using no resource

  /// launch_overhead + max(compute_seconds, memory_seconds), rounded to the picosecond.
  Time duration() const {
    return launch_overhead +
           Time::from_s(compute_seconds > memory_seconds ? compute_seconds : memory_seconds);
  }
};

class CostModel {
 public:
  explicit CostModel(ProfileSet profiles);

  /// Cost of `work` on a GPU of `gpu_type`; CostError if the type has no profile or lacks
  /// the kernel's precision. Throws std::invalid_argument on negative or non-finite work,
  /// or an embedding unique_fraction outside (0, 1] (the workload layer's duty).
  KernelCost cost(const KernelWork& work, std::string_view gpu_type) const;
  /// The same with the profile already looked up (hot loops).
  static KernelCost cost(const KernelWork& work, const CalibrationProfile& profile);

  /// The profile / device spec of `gpu_type`; CostError naming it and the known types.
  const CalibrationProfile& profile(std::string_view gpu_type) const;
  const DeviceSpec& device(std::string_view gpu_type) const;
  /// Fraction of `gpu_type`'s SMs an SM-based communication kernel occupies, in [0, 1].
  double comm_sm_fraction(std::string_view gpu_type) const;
  /// GPU types with a profile, sorted.
  std::vector<std::string> gpu_types() const { return profiles_.gpu_types(); }
  /// This model with `choice`'s implementations in use: in the profile of every GPU type
  /// of `job_types` (CostError naming the profile and what it has where one is missing),
  /// and in the other profiles where they have it.
  CostModel with_choice(const KernelChoice& choice,
                        const std::vector<std::string>& job_types) const;

 private:
  ProfileSet profiles_;
};

}  // namespace strait::sim::cost
