#include "calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "calibration/detail/collective_fit.hpp"
#include "calibration/detail/kernel_fit.hpp"
#include "calibration/kernel_case.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/run/calibrated_cluster.hpp"

namespace strait::calibration {
namespace {

using sim::cost::KernelKind;

// Host memory per rank of a CPU device: this machine's memory over the ranks measured.
Bytes host_memory_per_rank(int ranks) {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long long kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") break;
    in.ignore(256, '\n');
  }
  const Bytes total = kib > 0 ? static_cast<Bytes>(kib) * kKiB : 16 * kGiB;
  return total / std::max(ranks, 1) / kMiB * kMiB;
}

sim::cost::CalibrationProfile starting_profile(const MeasurementSet& set, const FitOptions& options,
                                               int ranks) {
  if (!options.base_profile.empty()) {
    auto base = sim::cost::load_profile(options.base_profile);
    if (!options.gpu_type.empty()) base.device.gpu_type = options.gpu_type;
    base.collectives = {};
    return base;
  }
  if (options.gpu_type.empty() && set.backend != "cpu") {
    throw Error(
        "calibrate fit: a GPU profile needs --base (the datasheet profile: peaks, capacity, "
        "SM count) or at least --gpu-type");
  }
  sim::cost::CalibrationProfile p;
  p.device.gpu_type = options.gpu_type.empty() ? "CPU" : options.gpu_type;
  p.device.hbm_capacity = host_memory_per_rank(ranks);
  p.device.sm_count = 1;  // one core per rank
  p.device.nccl_sms = 0;  // MPI progress is not modelled as taking the core
  // MPI moves a CPU rank's collective data when the rank calls into it between kernels.
  if (set.backend == "cpu") p.device.collective_progress = sim::cost::CollectiveProgress::kHost;
  return p;
}

// Puts the implementation `name` of family `kind` in use, for the fit to write into: the
// base's implementation of that name if it has one, else a new one made from the family's
// (whose named implementation stays as an alternative). A fit thus writes into the
// implementation the backend ran and keeps the base's others (production kernels next to
// what strait ran); the fitted ones are the fitted profile's defaults.
void use_implementation(sim::cost::CalibrationProfile& profile, KernelKind kind,
                        const std::string& name) {
  const auto k = static_cast<std::size_t>(kind);
  const auto names = profile.implementations(kind);
  if (std::find(names.begin(), names.end(), name) != names.end()) {
    profile.choose(kind, name);
  } else {
    if (!profile.kernels[k].implementation.empty())
      profile.alternatives[k].push_back(profile.kernels[k]);
    profile.kernels[k].implementation = name;
  }
  // Its tables are about to be fitted: one table (no per-head-dimension ones), and the
  // profile's provenance is theirs.
  profile.kernels[k].compute_by_head_dim.clear();
  profile.kernels[k].provenance.clear();
}

// Families without records of their own. A backward family takes the forward family's
// fitted tables (and implementation) when there is no base profile to keep them from, and
// the GEMM backward always does (profiles before its split costed it as the GEMM, so a
// base's is the base's GEMM, not a measurement); the others keep the base's.
void fill_unmeasured(const std::set<KernelKind>& fitted, bool has_base,
                     sim::cost::CalibrationProfile& profile) {
  for (int i = 0; i < sim::cost::kKernelKindCount; ++i) {
    const auto kind = static_cast<KernelKind>(i);
    if (fitted.count(kind)) continue;
    const KernelKind fwd = sim::cost::forward_kind(kind);
    if (fwd != kind && fitted.count(fwd) && (!has_base || fwd == KernelKind::kGemm)) {
      use_implementation(profile, kind, profile.kernel(fwd).implementation);
      profile.kernels[static_cast<std::size_t>(i)] = profile.kernel(fwd);
      continue;
    }
    if (has_base) continue;
    throw Error(
        fmt::format("calibrate fit: no measurements of {} and no --base profile to take it from",
                    sim::cost::to_string(kind)));
  }
}

std::string family_of(const Measurement& m) {
  return m.family.is_collective() ? m.family.name() : sim::cost::to_string(detail::kind_of(m));
}

std::vector<FamilyFit> summarise(std::vector<RecordFit>& records) {
  std::map<std::string, FamilyFit> by_family;
  std::map<std::string, std::pair<double, double>> sums;  // fit, validation |error| sums
  for (const RecordFit& r : records) {
    FamilyFit& f = by_family[r.family];
    f.family = r.family;
    if (r.measurement.set == SampleSet::kFit) {
      f.key_min = f.fit_records == 0 ? r.key : std::min(f.key_min, r.key);
      f.key_max = f.fit_records == 0 ? r.key : std::max(f.key_max, r.key);
      ++f.fit_records;
      sums[r.family].first += std::abs(r.error);
    }
  }
  for (RecordFit& r : records) {
    FamilyFit& f = by_family[r.family];
    r.extrapolated =
        f.fit_records == 0 || r.key < f.key_min * (1 - 1e-9) || r.key > f.key_max * (1 + 1e-9);
    if (r.measurement.set == SampleSet::kValidation) {
      ++f.validation_records;
      sums[r.family].second += std::abs(r.error);
      f.validation_worst = std::max(f.validation_worst, std::abs(r.error));
    }
  }
  std::vector<FamilyFit> out;
  for (auto& [name, f] : by_family) {
    if (f.fit_records) f.fit_mape = sums[name].first / f.fit_records;
    if (f.validation_records) f.validation_mape = sums[name].second / f.validation_records;
    out.push_back(f);
  }
  return out;
}

// File names only: a profile is shared, the paths of the machine that fitted it are not.
std::string file_name(const std::string& path) {
  return path.empty() ? "" : std::filesystem::path(path).filename().string();
}

void write_provenance(const MeasurementSet& set, FitOptions options, FitResult& fit) {
  options.measurements_file = file_name(options.measurements_file);
  options.base_profile = file_name(options.base_profile);
  options.cluster_file = file_name(options.cluster_file);
  auto& p = fit.profile.provenance;
  p.status = "fitted";
  const Measurement& first = set.records.front();
  std::set<std::string> dates, devices;
  std::map<std::string, std::string> versions;
  for (const Measurement& m : set.records) {
    dates.insert(m.date);
    devices.insert(m.device);
    for (const auto& [k, v] : m.versions) versions[k] = v;
  }
  int held_out = 0;
  for (const auto& f : fit.families) held_out += f.validation_records;
  p.summary = fmt::format(
      "Fitted by strait calibrate fit from {} ({} backend, {} records, {} held out) measured on "
      "{}; tables, launch overhead{} from the measurements{}.",
      options.measurements_file.empty() ? "measurements" : options.measurements_file, set.backend,
      set.records.size(), held_out, first.device,
      fit.profile.collectives.present ? " and collective factors" : "",
      options.base_profile.empty() ? ", device peaks the best measured rates"
                                   : fmt::format(", other values from {}", options.base_profile));
  p.sources = {
      fmt::format("measurements: {} ({} records, {})",
                  options.measurements_file.empty() ? "(in memory)" : options.measurements_file,
                  set.records.size(), *dates.begin())};
  for (const auto& d : devices) p.sources.push_back("device: " + d);
  if (!options.cluster_file.empty() && fit.profile.collectives.present) {
    p.sources.push_back("collective model: cluster " + options.cluster_file);
  }
  Json validation = Json::array();
  for (const FamilyFit& f : fit.families) {
    validation.push_back({{"family", f.family},
                          {"fit_records", f.fit_records},
                          {"held_out_records", f.validation_records},
                          {"fit_mape", f.fit_mape},
                          {"held_out_mape", f.validation_mape},
                          {"held_out_worst", f.validation_worst},
                          {"key_range", {f.key_min, f.key_max}}});
  }
  Json records = Json::array();
  for (const RecordFit& r : fit.records) {
    records.push_back({{"family", r.family},
                       {"shape", r.measurement.label()},
                       {"set", r.measurement.set == SampleSet::kFit ? "fit" : "held_out"},
                       {"key", r.key},
                       {"measured_us", r.measurement.median_us},
                       {"predicted_us", r.predicted_us},
                       {"error", r.error},
                       {"extrapolated", r.extrapolated}});
  }
  p.fit = {{"machine", *devices.begin()},
           {"date", *dates.rbegin()},
           {"versions", versions},
           {"validation", validation},
           {"records", records}};
}

}  // namespace

FitResult fit_profile(const MeasurementSet& set, const FitOptions& options) {
  if (set.records.empty()) throw Error("calibrate fit: the measurement file has no records");
  std::vector<const Measurement*> kernel_fit, collective_fit;
  int ranks = 1;
  for (const Measurement& m : set.records) {
    if (m.family.is_collective()) ranks = std::max(ranks, m.ranks());
    if (m.set != SampleSet::kFit) continue;
    (m.family.is_collective() ? collective_fit : kernel_fit).push_back(&m);
  }
  const bool has_base = !options.base_profile.empty();
  FitResult fit;
  fit.profile = starting_profile(set, options, ranks);
  // The tables fitted, or filled from a fitted forward family, describe the kernels the
  // backend ran.
  std::set<KernelKind> measured_kinds;
  for (const Measurement* m : kernel_fit) measured_kinds.insert(detail::kind_of(*m));
  for (const KernelKind kind : measured_kinds)
    use_implementation(fit.profile, kind, implementation_of(set.backend, kind));
  const auto fitted = detail::fit_kernels(kernel_fit, !has_base, fit.profile);
  fill_unmeasured({fitted.begin(), fitted.end()}, has_base, fit.profile);

  std::optional<sim::topology::Cluster> cluster;
  bool has_collectives = false;
  for (const Measurement& m : set.records) has_collectives |= m.family.is_collective();
  if (has_collectives) {
    if (options.cluster_file.empty()) {
      throw Error(
          "calibrate fit: collectives were measured; give the cluster they ran on (--cluster)");
    }
    cluster = sim::topology::Cluster::load(options.cluster_file);
    for (const auto& g : cluster->gpus()) {
      if (g.type != fit.profile.device.gpu_type) {
        throw Error(fmt::format(
            "calibrate fit: the cluster {} has devices of type \"{}\", the profile is for \"{}\" "
            "(set --gpu-type or use a cluster of that type)",
            options.cluster_file, g.type, fit.profile.device.gpu_type));
      }
    }
    detail::fit_collectives(collective_fit, *cluster, fit.profile.collectives);
  }

  // Predictions: what the simulator does with this profile.
  sim::cost::ProfileSet profiles;
  profiles.add(fit.profile);
  const sim::cost::CostModel cost(profiles);
  std::optional<sim::topology::Cluster> calibrated;
  sim::network::CollectiveCalibration ops{};
  if (cluster) {
    calibrated = sim::run::calibrated_cluster(*cluster, cost);
    ops = sim::run::collective_calibration(*cluster, cost);
  }
  for (const Measurement& m : set.records) {
    RecordFit r;
    r.measurement = m;
    r.family = family_of(m);
    r.key = m.table_key();
    r.predicted_us =
        m.family.is_collective()
            ? detail::predict_collective_us(m, *calibrated, ops)
            : sim::cost::CostModel::cost(detail::work_of(m), fit.profile).duration().to_s() * 1e6;
    r.error = r.predicted_us / m.median_us - 1;
    fit.records.push_back(std::move(r));
  }
  fit.families = summarise(fit.records);
  write_provenance(set, options, fit);
  return fit;
}

void save_profile(const FitResult& fit, const std::string& path) {
  const Json doc = sim::cost::to_json(fit.profile);
  // The file must read back as the profile it is (checked before anything is written).
  sim::cost::CalibrationProfile::from_config(ConfigNode(doc, path));
  write_file_atomically(path, doc.dump(2) + "\n");
}

}  // namespace strait::calibration
