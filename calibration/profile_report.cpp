#include "calibration/profile_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sim/core/config_node.hpp"
#include "sim/cost/calibration_profile.hpp"

namespace strait::calibration {
namespace {

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string family_header() {
  return fmt::format("  {:<26} {:>4} {:>5} {:>21} {:>8} {:>9} {:>9}\n", "family", "fit", "held",
                     "fitted key range", "fit MAPE", "held MAPE", "held worst");
}

std::string family_line(const std::string& family, int fit, int held, double lo, double hi,
                        double fit_mape, double held_mape, double worst) {
  return fmt::format("  {:<26} {:>4} {:>5} {:>10.4g}..{:<9.4g} {:>8} {:>9} {:>9}\n", family, fit,
                     held, lo, hi, percent(fit_mape), held ? percent(held_mape) : "-",
                     held ? percent(worst) : "-");
}

}  // namespace

std::string format_fit_summary(const FitResult& fit) {
  const auto& d = fit.profile.device;
  std::string out =
      fmt::format("profile {}: peak fp32 {:.4g} TFLOP/s, memory {:.4g} GB/s, launch {:.3g} us\n",
                  d.gpu_type, d.peak(sim::cost::Precision::kFp32).value_or(0) / 1e12,
                  d.hbm_bandwidth / 1e9, d.launch_overhead.to_us());
  out += family_header();
  for (const FamilyFit& f : fit.families) {
    out += family_line(f.family, f.fit_records, f.validation_records, f.key_min, f.key_max,
                       f.fit_mape, f.validation_mape, f.validation_worst);
  }
  // Held-out MAPE over groups of families: the kernel kinds as users name them.
  std::map<std::string, std::pair<double, int>> groups;
  for (const RecordFit& r : fit.records) {
    if (r.measurement.set != SampleSet::kValidation) continue;
    auto& g = groups[family_group(r.family)];
    g.first += std::abs(r.error);
    ++g.second;
  }
  out += "  held-out MAPE by group:";
  for (const auto& [name, g] : groups) {
    out += fmt::format("  {} {}", name, percent(g.first / g.second));
  }
  return out + "\n";
}

std::string family_group(const std::string& family) {
  if (family == "gemm" || family == "gemm_backward") return "gemm";
  if (family.find("attention") != std::string::npos) return "attention";
  if (family.find("embedding") != std::string::npos) return "embedding";
  if (family == "elementwise" || family == "optimizer") return "elementwise";
  return "collectives";
}

std::string format_profile_report(const std::string& profile_path, bool all) {
  const ConfigNode root = load_config(profile_path);
  const auto profile = sim::cost::CalibrationProfile::from_config(root);
  const ConfigNode provenance = root.at("provenance");
  if (!provenance.has("validation") || !provenance.has("records")) {
    provenance.fail(
        "expected a profile fitted by strait calibrate fit (with \"validation\" and "
        "\"records\"); this one is " +
        profile.provenance.status);
  }
  std::string out = fmt::format("{} ({}): {}\n", profile.device.gpu_type, profile.provenance.status,
                                profile.provenance.summary);
  out += "\nper family (errors are the simulator's prediction vs the measured median)\n";
  out += family_header();
  for (const ConfigNode& f : provenance.at("validation").elements()) {
    const ConfigNode range = f.at("key_range");
    out += family_line(f.string("family"), f.int_in("fit_records", 0, 1 << 30),
                       f.int_in("held_out_records", 0, 1 << 30), range.at(0).as_number(),
                       range.at(1).as_number(), f.number("fit_mape"), f.number("held_out_mape"),
                       f.number("held_out_worst"));
  }
  // Records per family, worst first.
  std::map<std::string, std::vector<ConfigNode>> by_family;
  for (const ConfigNode& r : provenance.at("records").elements()) {
    by_family[r.string("family")].push_back(r);
  }
  out += all ? "\nevery measured shape\n"
             : "\nworst three shapes per family, and every extrapolated one\n";
  out += fmt::format("  {:<8} {:>12} {:>12} {:>8}  {}\n", "set", "measured us", "fitted us",
                     "error", "shape");
  for (auto& [family, rows] : by_family) {
    std::sort(rows.begin(), rows.end(), [](const ConfigNode& a, const ConfigNode& b) {
      return std::abs(a.number("error")) > std::abs(b.number("error"));
    });
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const ConfigNode& r = rows[i];
      const bool extrapolated = r.at("extrapolated").as_bool();
      if (!all && i >= 3 && !extrapolated) continue;
      out +=
          fmt::format("  {:<8} {:>12.4g} {:>12.4g} {:>8}  {}{}\n", r.string("set"),
                      r.number("measured_us"), r.number("predicted_us"), percent(r.number("error")),
                      r.string("shape"), extrapolated ? "  (extrapolated)" : "");
    }
  }
  return out;
}

}  // namespace strait::calibration
