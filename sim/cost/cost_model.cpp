#include "sim/cost/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace strait::sim::cost {
namespace {

void check_work(const KernelWork& w) {
  if (!(w.flops >= 0) || !std::isfinite(w.flops) || !(w.hbm_bytes >= 0) ||
      !std::isfinite(w.hbm_bytes)) {
    throw std::invalid_argument(
        fmt::format("{} kernel: flops ({}) and hbm_bytes ({}) must be finite and >= 0",
                    to_string(w.kind), w.flops, w.hbm_bytes));
  }
  for (const double f : w.tile_factor) {
    if (!(f >= 1) || !std::isfinite(f)) {
      throw std::invalid_argument(fmt::format(
          "{} kernel: tile factors must be finite and >= 1, got {}", to_string(w.kind), f));
    }
  }
  if (is_embedding(w.kind) && !(w.unique_fraction > 0 && w.unique_fraction <= 1)) {
    throw std::invalid_argument(fmt::format("{} kernel: unique_fraction must be in (0, 1], got {}",
                                            to_string(w.kind), w.unique_fraction));
  }
}

// Log2 of the family's table key for `w` (see calibration_profile.hpp); -inf when the key
// is not positive, which clamps to the table's first point.
double log2_key(const KernelWork& w) {
  auto safe_log2 = [](double v) {
    return v > 0 ? std::log2(v) : -std::numeric_limits<double>::infinity();
  };
  switch (w.kind) {
    case KernelKind::kGemm:
    case KernelKind::kGemmBackward:
      // (m*n*k)^(1/3) in the log domain: exact for powers of two, no int64 overflow.
      return (safe_log2(static_cast<double>(w.m)) + safe_log2(static_cast<double>(w.n)) +
              safe_log2(static_cast<double>(w.k))) /
             3.0;
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
    case KernelKind::kJaggedAttentionBackward:
    case KernelKind::kPaddedAttentionBackward:
      return safe_log2(w.mean_length);
    case KernelKind::kEmbeddingLookup:
    case KernelKind::kEmbeddingUpdate:
      return safe_log2(static_cast<double>(w.embedding_dim) * bytes_per_element(w.precision));
    case KernelKind::kElementwise:
    case KernelKind::kOptimizer:
      return safe_log2(w.hbm_bytes);
  }
  return 0;
}

}  // namespace

CostModel::CostModel(ProfileSet profiles) : profiles_(std::move(profiles)) {}

KernelCost CostModel::cost(const KernelWork& work, std::string_view gpu_type) const {
  return cost(work, profile(gpu_type));
}

KernelCost CostModel::cost(const KernelWork& work, const CalibrationProfile& profile) {
  check_work(work);
  const DeviceSpec& device = profile.device;
  if (!device.peak(work.precision)) {
    throw CostError(fmt::format(
        "GPU type \"{}\" has no {} peak in its calibration profile ({}): it cannot run the {} "
        "{} kernel",
        device.gpu_type, to_string(work.precision), profile.file, to_string(work.precision),
        to_string(work.kind)));
  }
  const Precision compute_precision =
      uses_tensor_cores(work.kind) ? work.precision : Precision::kFp32;
  const FlopsPerSec peak = *device.peak(compute_precision);

  const KernelEfficiency& eff = profile.kernel(work.kind);
  const double key = log2_key(work);
  KernelCost out;
  out.launch_overhead = device.launch_overhead;
  out.hbm_bytes = work.hbm_bytes;
  if (is_embedding(work.kind)) {
    out.hbm_bytes *= 1.0 - eff.repeat_hit_rate * (1.0 - work.unique_fraction);
    out.launch_overhead += eff.call_latency;
  }
  out.compute_seconds = work.flops / (peak * eff.compute_efficiency(key, work.head_dim));
  if (is_attention(work.kind) && eff.tile_rows > 0) {
    out.compute_seconds *=
        work.tile_factor[static_cast<std::size_t>(attention_tile_index(eff.tile_rows))];
  }
  out.memory_seconds = out.hbm_bytes / (device.hbm_bandwidth * eff.memory.at_log2(key));
  return out;
}

CostModel CostModel::with_choice(const KernelChoice& choice,
                                 const std::vector<std::string>& job_types) const {
  ProfileSet chosen;
  for (const auto& type : profiles_.gpu_types()) {
    CalibrationProfile p = *profiles_.find(type);
    const bool required = std::find(job_types.begin(), job_types.end(), type) != job_types.end();
    for (const auto& [kind, name] : choice) {
      try {
        p.choose(kind, name);
      } catch (const CostError&) {
        if (required) throw;
      }
    }
    chosen.add(std::move(p));
  }
  for (const auto& type : job_types) profile(type);  // a type without a profile: CostError
  return CostModel(std::move(chosen));
}

const CalibrationProfile& CostModel::profile(std::string_view gpu_type) const {
  if (const CalibrationProfile* p = profiles_.find(gpu_type)) return *p;
  std::string known;
  for (const auto& t : profiles_.gpu_types()) known += (known.empty() ? "" : ", ") + t;
  throw CostError(fmt::format("no calibration profile for GPU type \"{}\" (profiles loaded: {})",
                              gpu_type, known.empty() ? "none" : known));
}

const DeviceSpec& CostModel::device(std::string_view gpu_type) const {
  return profile(gpu_type).device;
}

double CostModel::comm_sm_fraction(std::string_view gpu_type) const {
  return device(gpu_type).comm_sm_fraction();
}

}  // namespace strait::sim::cost
