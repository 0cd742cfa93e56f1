#include "calibration/detail/kernel_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <Eigen/Dense>

#include "calibration/detail/table_fit.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration::detail {
namespace {

using sim::cost::is_embedding;
using sim::cost::KernelKind;
using sim::cost::Precision;

// Records with a unique fraction at or above this count as free of repeats (uniform ids).
constexpr double kUniformIds = 0.95;

bool compute_bound(KernelKind k) {
  return k == KernelKind::kGemm || sim::cost::uses_tensor_cores(k);
}

// Efficiency tables rise with size for these (more work per launch, fuller tiles, longer
// rows); copies and optimizer steps fall off as they leave the caches.
bool monotone(KernelKind k) { return k != KernelKind::kElementwise && k != KernelKind::kOptimizer; }

double unique_fraction(const Measurement& m) {
  const auto it = m.shape.find("unique_fraction");
  return it != m.shape.end() && it->is_number() ? it->get<double>() : 1.0;
}

// Ids drawn uniformly: the record's id_skew is 0, or, for records that do not say (a
// Kineto import), nearly every id is distinct. Uniform ids repeat (pooling 20 over 1M rows
// repeats 7% of them) but far apart, so the cache sees no reuse: their times fit the
// tables and the fixed time per call, and only skewed ids (hot rows) fit the hit rate.
bool uniform_ids(const Measurement& m) {
  const auto it = m.shape.find("id_skew");
  if (it != m.shape.end() && it->is_number()) return it->get<double>() == 0;
  return unique_fraction(m) >= kUniformIds;
}

// Tile factors of an attention record (sim::cost::attention_tile_factors): of its lengths,
// or of its longest length for every sample where the kernel computes the padded layout.
std::array<double, sim::cost::kAttentionTileCount> tile_factors(const Measurement& m,
                                                                KernelKind kind) {
  const auto it = m.shape.find("lengths");
  if (it == m.shape.end() || !it->is_array()) return {1, 1, 1, 1, 1};
  std::vector<std::int32_t> lengths = it->get<std::vector<std::int32_t>>();
  if (sim::cost::forward_kind(kind) == KernelKind::kPaddedAttention && !lengths.empty()) {
    const std::int32_t longest = *std::max_element(lengths.begin(), lengths.end());
    std::fill(lengths.begin(), lengths.end(), longest);
  }
  return sim::cost::attention_tile_factors(lengths);
}

// Intercept a (us) of t = a + b * bytes through `records`, both coefficients >= 0.
double intercept_us(const std::vector<const Measurement*>& records) {
  Eigen::MatrixXd a(static_cast<Eigen::Index>(records.size()), 2);
  Eigen::VectorXd t(a.rows());
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    a(i, 0) = 1;
    a(i, 1) = records[static_cast<std::size_t>(i)]->bytes;
    t(i) = records[static_cast<std::size_t>(i)]->median_us;
  }
  return nonnegative_least_squares(a, t, {true, true})(0);
}

// Launch overhead: intercept of t = a + b * bytes through the three smallest copies, kept
// within [0, half the fastest kernel] so that no kernel is left with negative work time.
Time fit_launch(const std::vector<const Measurement*>& records, Time fallback) {
  std::vector<const Measurement*> copies;
  double fastest = std::numeric_limits<double>::infinity();
  for (const Measurement* m : records) {
    fastest = std::min(fastest, m->median_us);
    if (m->family.kernel == KernelKind::kElementwise) copies.push_back(m);
  }
  if (copies.size() < 2) return fallback;
  std::sort(copies.begin(), copies.end(),
            [](const Measurement* a, const Measurement* b) { return a->bytes < b->bytes; });
  copies.resize(std::min<std::size_t>(copies.size(), 3));
  return Time::from_s(std::clamp(intercept_us(copies), 0.0, 0.5 * fastest) * 1e-6);
}

// An embedding family's fixed time per call beyond the launch overhead: per row size and
// type with at least two sizes of uniform-id records, the intercept of t = a + b * bytes;
// their mean less the launch, at least 0. -1 when no row size has two sizes.
double fit_call_latency(const std::vector<const Measurement*>& uniform, Time launch) {
  std::map<std::pair<double, int>, std::vector<const Measurement*>> by_row;
  for (const Measurement* m : uniform)
    by_row[{m->table_key(), static_cast<int>(m->dtype)}].push_back(m);
  double sum = 0;
  int lines = 0;
  for (const auto& [row, records] : by_row) {
    double lo = records.front()->bytes, hi = lo;
    for (const Measurement* m : records) {
      lo = std::min(lo, m->bytes);
      hi = std::max(hi, m->bytes);
    }
    if (hi <= lo) continue;
    sum += intercept_us(records);
    ++lines;
  }
  if (lines == 0) return -1;
  return std::max(0.0, sum / lines * 1e-6 - launch.to_s());
}

// Seconds of work once the launch overhead is off (never below 1% of the sample).
double work_seconds(const Measurement& m, Time launch) {
  return std::max(m.median_us * 1e-6 - launch.to_s(), 0.01 * m.median_us * 1e-6);
}

void fit_peaks(const std::vector<const Measurement*>& records, Time launch,
               sim::cost::DeviceSpec& device) {
  std::map<Precision, double> best_flops;
  double best_bandwidth = 0;
  for (const Measurement* m : records) {
    const double s = work_seconds(*m, launch);
    if (kind_of(*m) == KernelKind::kGemm) {
      best_flops[m->dtype] = std::max(best_flops[m->dtype], m->flops / s);
    }
    if (m->family.kernel == KernelKind::kElementwise) {
      best_bandwidth = std::max(best_bandwidth, m->bytes / s);
    }
  }
  if (best_flops.empty() || best_bandwidth <= 0) {
    throw Error(
        "calibrate fit: peaks come from the GEMM and elementwise (copy) measurements, and "
        "there are none of one of them; measure them or give --base PROFILE");
  }
  // Precisions without their own GEMM records run at the best measured rate (a CPU
  // computes every precision in fp32); fp8 only where it was measured.
  double best = 0;
  for (const auto& [p, f] : best_flops) best = std::max(best, f);
  for (int i = 0; i < sim::cost::kPrecisionCount; ++i) {
    const auto p = static_cast<Precision>(i);
    if (best_flops.count(p)) {
      device.peak_flops[static_cast<std::size_t>(i)] = best_flops[p];
    } else if (p != Precision::kFp8) {
      device.peak_flops[static_cast<std::size_t>(i)] = best;
    } else {
      device.peak_flops[static_cast<std::size_t>(i)] = std::nullopt;
    }
  }
  device.hbm_bandwidth = best_bandwidth;
}

// Observed efficiency of `m` against the peak that binds its family; attention's FLOPs
// times its tile factor at the profile's tile (what the cost model charges).
double observed_efficiency(const Measurement& m, KernelKind kind,
                           const sim::cost::CalibrationProfile& profile, double repeat_hit_rate) {
  const sim::cost::DeviceSpec& d = profile.device;
  const double s =
      work_seconds(m, d.launch_overhead +
                          (is_embedding(kind) ? profile.kernel(kind).call_latency : Time::zero()));
  if (compute_bound(kind)) {
    const Precision p = sim::cost::uses_tensor_cores(kind) ? m.dtype : Precision::kFp32;
    const auto peak = d.peak(p);
    if (!peak) {
      throw Error(
          fmt::format("calibrate fit: {} was measured in {}, which the profile's device "
                      "has no peak for",
                      m.label(), sim::cost::to_string(p)));
    }
    double flops = m.flops;
    const int tile = sim::cost::attention_tile_index(profile.kernel(kind).tile_rows);
    if (sim::cost::is_attention(kind) && tile >= 0) {
      flops *= tile_factors(m, kind)[static_cast<std::size_t>(tile)];
    }
    return flops / (*peak * s);
  }
  double bytes = m.bytes;
  if (is_embedding(kind)) bytes *= 1.0 - repeat_hit_rate * (1.0 - unique_fraction(m));
  return bytes / (d.hbm_bandwidth * s);
}

sim::cost::EfficiencyTable table_for(const std::vector<const Measurement*>& records,
                                     KernelKind kind, const sim::cost::CalibrationProfile& profile,
                                     double repeat_hit_rate) {
  std::vector<ObservedEfficiency> observed;
  observed.reserve(records.size());
  for (const Measurement* m : records) {
    observed.push_back({m->table_key(), observed_efficiency(*m, kind, profile, repeat_hit_rate)});
  }
  return fit_table(observed, monotone(kind));
}

// h in [-1, 1] minimising the relative error of the records with skewed ids, given their
// table `t`; nullopt without such records. Negative where repeated ids cost more than the
// bytes they save (a hot row's occurrences summed in sequence, sim/cost's profile).
std::optional<double> fit_repeat_hit_rate(const std::vector<const Measurement*>& records,
                                          const sim::cost::EfficiencyTable& t,
                                          const sim::cost::DeviceSpec& d, Time call_latency) {
  double num = 0, den = 0;
  for (const Measurement* m : records) {
    if (uniform_ids(*m)) continue;
    const double u = unique_fraction(*m);
    const double seconds = m->median_us * 1e-6;
    const double full = m->bytes / (d.hbm_bandwidth * t.at(m->table_key()));  // h = 0
    // predicted = launch + full * (1 - h (1 - u)): residual r - h s, relative to t.
    const double r = (seconds - (d.launch_overhead + call_latency).to_s() - full) / seconds;
    const double slope = -full * (1 - u) / seconds;
    num += slope * r;
    den += slope * slope;
  }
  if (den <= 0) return std::nullopt;
  return std::clamp(num / den, -1.0, 1.0);
}

}  // namespace

KernelKind kind_of(const Measurement& m) {
  const KernelKind k = *m.family.kernel;
  const auto pass = m.shape.find("pass");
  if (pass != m.shape.end() && pass->is_string() && pass->get<std::string>() == "backward") {
    return sim::cost::backward_kind(k);
  }
  return k;
}

sim::cost::KernelWork work_of(const Measurement& m) {
  sim::cost::KernelWork w;
  w.kind = kind_of(m);
  w.precision = m.dtype;
  w.flops = m.flops;
  w.hbm_bytes = m.bytes;
  w.m = m.shape_int("m");
  w.n = m.shape_int("n");
  w.k = m.shape_int("k");
  if (sim::cost::is_attention(w.kind)) {
    w.mean_length = m.table_key();
    w.heads = static_cast<int>(m.shape_int("heads"));
    w.head_dim = static_cast<int>(m.shape_int("head_dim"));
    w.tile_factor = tile_factors(m, w.kind);
  }
  if (is_embedding(w.kind)) {
    w.embedding_dim = static_cast<int>(m.shape_int("dim"));
    w.unique_fraction = std::clamp(unique_fraction(m), 1e-9, 1.0);
  }
  return w;
}

std::vector<KernelKind> fit_kernels(const std::vector<const Measurement*>& fit_records,
                                    bool fit_device_peaks, sim::cost::CalibrationProfile& profile) {
  std::map<KernelKind, std::vector<const Measurement*>> by_kind;
  for (const Measurement* m : fit_records) by_kind[kind_of(*m)].push_back(m);
  profile.device.launch_overhead = fit_launch(fit_records, profile.device.launch_overhead);
  if (fit_device_peaks) fit_peaks(fit_records, profile.device.launch_overhead, profile.device);

  std::vector<KernelKind> fitted;
  for (const auto& [kind, records] : by_kind) {
    auto& eff = profile.kernels[static_cast<std::size_t>(kind)];
    double h = is_embedding(kind) ? eff.repeat_hit_rate : 0;
    if (is_embedding(kind)) {
      std::vector<const Measurement*> uniform;
      for (const Measurement* m : records) {
        if (uniform_ids(*m)) uniform.push_back(m);
      }
      if (!uniform.empty()) {
        if (const double c = fit_call_latency(uniform, profile.device.launch_overhead); c >= 0)
          eff.call_latency = Time::from_s(c);
        const auto t = table_for(uniform, kind, profile, 0);
        if (const auto fitted_h = fit_repeat_hit_rate(records, t, profile.device, eff.call_latency))
          h = *fitted_h;
      }
      eff.repeat_hit_rate = h;
    }
    const auto table = table_for(records, kind, profile, h);
    if (compute_bound(kind)) {
      eff.compute = table;
      if (fit_device_peaks) eff.memory = sim::cost::EfficiencyTable::constant(1.0);
    } else {
      eff.memory = table;
      if (fit_device_peaks) eff.compute = sim::cost::EfficiencyTable::constant(1.0);
    }
    fitted.push_back(kind);
  }
  return fitted;
}

}  // namespace strait::calibration::detail
