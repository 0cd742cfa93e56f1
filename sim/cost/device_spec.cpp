#include "sim/cost/device_spec.hpp"

#include <fmt/format.h>

namespace strait::sim::cost {

DeviceSpec DeviceSpec::from_config(const ConfigNode& node, std::string gpu_type) {
  node.allow_only({"peak_tflops", "hbm_bandwidth", "hbm_capacity", "sm_count", "launch_overhead",
                   "nccl_sms", "memory_reserved", "collective_progress"});
  DeviceSpec spec;
  spec.gpu_type = std::move(gpu_type);

  const ConfigNode peaks = node.at("peak_tflops");
  std::vector<std::string> precisions;  // by their names (kernel_work.hpp)
  precisions.reserve(kPrecisionCount);
  for (int i = 0; i < kPrecisionCount; ++i)
    precisions.emplace_back(to_string(static_cast<Precision>(i)));
  peaks.allow_only(precisions);
  for (int i = 0; i < kPrecisionCount; ++i) {
    const auto p = static_cast<Precision>(i);
    if (p == Precision::kFp8 && !peaks.has(to_string(p))) continue;  // optional: not on every GPU
    spec.peak_flops[static_cast<std::size_t>(i)] = peaks.positive_number(to_string(p)) * 1e12;
  }

  spec.hbm_bandwidth = node.bandwidth("hbm_bandwidth");
  spec.hbm_capacity = node.bytes("hbm_capacity");
  if (spec.hbm_capacity <= 0) node.at("hbm_capacity").fail("expected a positive size");
  const std::int64_t sm_count = node.positive_integer("sm_count");
  if (sm_count > 1'000'000) node.at("sm_count").fail("expected at most 1000000 SMs");
  spec.sm_count = static_cast<int>(sm_count);
  spec.launch_overhead = node.duration("launch_overhead");
  const std::int64_t nccl_sms = node.integer("nccl_sms");
  if (nccl_sms < 0 || nccl_sms > spec.sm_count) {
    node.at("nccl_sms")
        .fail(fmt::format("expected an SM count in [0, sm_count = {}], got {}", spec.sm_count,
                          nccl_sms));
  }
  spec.nccl_sms = static_cast<int>(nccl_sms);
  if (auto reserved = node.find("memory_reserved")) {
    spec.memory_reserved = reserved->as_bytes();
    if (spec.memory_reserved >= spec.hbm_capacity) {
      reserved->fail("expected less than hbm_capacity");
    }
  }
  spec.collective_progress = read_enum_or(node, "collective_progress", CollectiveProgress::kDevice);
  return spec;
}

Json to_json(const DeviceSpec& spec) {
  Json peaks = Json::object();
  for (int i = 0; i < kPrecisionCount; ++i) {
    const auto p = static_cast<Precision>(i);
    if (auto peak = spec.peak(p)) peaks[to_string(p)] = *peak / 1e12;
  }
  Json out = {{"peak_tflops", peaks},
              {"hbm_bandwidth", fmt::format("{:.6g} GB/s", spec.hbm_bandwidth / 1e9)},
              {"hbm_capacity", fmt::format("{} MiB", spec.hbm_capacity / kMiB)},
              {"sm_count", spec.sm_count},
              {"launch_overhead", fmt::format("{:.6g} us", spec.launch_overhead.to_s() * 1e6)},
              {"nccl_sms", spec.nccl_sms}};
  if (spec.memory_reserved > 0) {
    out["memory_reserved"] = fmt::format("{} MiB", spec.memory_reserved / kMiB);
  }
  if (spec.collective_progress != CollectiveProgress::kDevice)
    out["collective_progress"] = name_of(spec.collective_progress);
  return out;
}

}  // namespace strait::sim::cost
