#pragma once
// Measurement: one timed kernel or collective, as `strait calibrate run` and
// `strait calibrate import-kineto` write them and `strait calibrate fit` reads them.
//
// A measurement file is {"format": "strait-measurements-1", "backend": "cpu" | "cuda" |
// "kineto", "records": [...]}; each record:
//   {"family": "gemm", "shape": {"m": 512, "n": 512, "k": 512}, "dtype": "fp32",
//    "set": "fit" | "validation", "flops": 2.7e8, "bytes": 3.1e6,
//    "repetitions": 10, "warmup": 2, "median_us": 812.5,
//    "spread": {"min_us": 801.0, "max_us": 840.2, "iqr_us": 6.1},
//    "device": "AMD EPYC 7B13 (1 core per rank)", "versions": {"eigen": "3.4.0"},
//    "date": "2026-11-23T12:00:00Z"}
// Families are the cost model's kernel families (sim/cost kernel_work.hpp names) and the
// collectives as `strait collective` names them (sim/network collective.hpp). Kernel
// records carry the work as the simulator counts it (flops, bytes: the same formulas as
// sim/workload, see calibration/README.md) and the family's table key is derived from the
// shape. Collective records have shape {"ranks": n, "bytes": S} (nccl-tests' size
// convention) and also "algbw_gbps", "busbw_gbps" and "check": "ok".
// Attention records have "pass": "forward" | "backward" in their shape.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/enum_names.hpp"
#include "sim/cost/kernel_work.hpp"
#include "sim/network/collective.hpp"

namespace strait::calibration {

inline constexpr const char* kMeasurementFormat = "strait-measurements-1";

/// What a record measured: a kernel family of the cost model or a collective.
struct Family {
  std::optional<sim::cost::KernelKind> kernel;
  std::optional<sim::network::CollectiveOp> collective;

  bool is_collective() const { return collective.has_value(); }
  std::string name() const;
  /// Parses a family name; nullopt for anything else.
  static std::optional<Family> parse(const std::string& text);
  /// Every accepted family name, comma-separated (for error messages).
  static std::string names();
  friend bool operator<(const Family& a, const Family& b) { return a.name() < b.name(); }
  friend bool operator==(const Family& a, const Family& b) { return a.name() == b.name(); }
};

/// Whether a record is used to fit the profile or held out to validate it.
enum class SampleSet { kFit, kValidation };
/// The names measurement files use (sim/core/enum_names.hpp).
constexpr auto enum_names(SampleSet) {
  return std::to_array<EnumName<SampleSet>>(
      {{SampleSet::kFit, "fit"}, {SampleSet::kValidation, "validation"}});
}

struct Spread {
  double min_us = 0;
  double max_us = 0;
  double iqr_us = 0;  // interquartile range
};

struct Measurement {
  Family family;
  nlohmann::json shape = nlohmann::json::object();  // family-specific integers and strings
  sim::cost::Precision dtype = sim::cost::Precision::kFp32;
  SampleSet set = SampleSet::kFit;
  double flops = 0;  // kernels: as the simulator counts them; collectives: 0
  double bytes = 0;  // kernels: memory traffic; collectives: nccl-tests size
  int repetitions = 0;
  int warmup = 0;
  double median_us = 0;  // > 0
  Spread spread;
  std::string device;
  std::map<std::string, std::string> versions;
  std::string date;
  // Collectives only.
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::string check;  // "ok" when the result was verified

  /// Integer field of the shape (0 when absent).
  std::int64_t shape_int(const char* key) const;
  /// Ranks of a collective record (shape "ranks").
  int ranks() const { return static_cast<int>(shape_int("ranks")); }
  /// The value of the family's efficiency-table key (sim/cost calibration_profile.hpp):
  /// (m n k)^(1/3), mean sequence length, row bytes or bytes moved; collectives: bytes.
  double table_key() const;
  /// One line naming the record, e.g. "gemm m=512 n=512 k=512 fp32".
  std::string label() const;
};

struct MeasurementSet {
  std::string backend;  // "cpu", "cuda" or "kineto"
  std::vector<Measurement> records;
};

/// Reads and validates a measurement file: a missing field, a negative or zero time, an
/// unknown family or dtype is a ConfigError naming the file and the record's JSON pointer.
MeasurementSet load_measurements(const std::string& path);
/// The same from a parsed document (`file` names it in errors).
MeasurementSet measurements_from_json(const nlohmann::json& doc, const std::string& file);
nlohmann::json to_json(const MeasurementSet& set);
nlohmann::json to_json(const Measurement& m);
/// Writes `set` to `path` atomically.
void save_measurements(const MeasurementSet& set, const std::string& path);

/// A collective record's algbw (bytes / median time) and busbw (algbw x nccl-tests' factor
/// for its op and ranks), in GB/s.
void set_bandwidths(Measurement& m);

/// Median, min, max and interquartile range of `samples_us` (not empty).
struct Summary {
  double median_us = 0;
  Spread spread;
};
Summary summarize(std::vector<double> samples_us);

}  // namespace strait::calibration
