#include "calibration/measurement.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/core/statistics.hpp"

namespace strait::calibration {
namespace {

using sim::cost::KernelKind;
using sim::network::CollectiveOp;

constexpr CollectiveOp kCollectives[] = {CollectiveOp::kAllReduce,     CollectiveOp::kAllGather,
                                         CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll,
                                         CollectiveOp::kAllToAllV,     CollectiveOp::kBroadcast,
                                         CollectiveOp::kReduce,        CollectiveOp::kSendRecv};

double positive_time(const ConfigNode& node, std::string_view key) {
  const ConfigNode v = node.at(key);
  const double t = v.as_number();
  if (!(t > 0) || !std::isfinite(t)) v.fail(fmt::format("expected a time > 0 us, got {}", t));
  return t;
}

double non_negative(const ConfigNode& node, std::string_view key) {
  const ConfigNode v = node.at(key);
  const double x = v.as_number();
  if (!(x >= 0) || !std::isfinite(x)) v.fail(fmt::format("expected a number >= 0, got {}", x));
  return x;
}

Measurement read_record(const ConfigNode& r) {
  r.allow_only({"family", "shape", "dtype", "set", "flops", "bytes", "repetitions", "warmup",
                "median_us", "spread", "device", "versions", "date", "algbw_gbps", "busbw_gbps",
                "check"});
  Measurement m;
  const ConfigNode family = r.at("family");
  const auto parsed = Family::parse(family.as_string());
  if (!parsed) {
    family.fail(fmt::format("unknown family \"{}\"; expected one of {}", family.as_string(),
                            Family::names()));
  }
  m.family = *parsed;
  const ConfigNode shape = r.at("shape");
  if (!shape.is_object()) shape.fail("expected an object of shape fields");
  m.shape = shape.json();
  const ConfigNode dtype = r.at("dtype");
  const auto p = sim::cost::parse_precision(dtype.as_string());
  if (!p) {
    std::string names;  // sim/cost's (kernel_work.hpp)
    for (int i = 0; i < sim::cost::kPrecisionCount; ++i)
      names += fmt::format("{}{}", i ? ", " : "", to_string(static_cast<sim::cost::Precision>(i)));
    dtype.fail("expected one of " + names);
  }
  m.dtype = *p;
  m.set = read_enum<SampleSet>(r, "set");
  m.flops = non_negative(r, "flops");
  m.bytes = non_negative(r, "bytes");
  m.repetitions = r.int_in("repetitions", 1, 1 << 30);
  const ConfigNode warmup = r.at("warmup");
  m.warmup = warmup.as_int_in(0, 1 << 30);
  if (m.warmup < 0) warmup.fail("expected a count >= 0");
  m.median_us = positive_time(r, "median_us");
  const ConfigNode spread = r.at("spread");
  spread.allow_only({"min_us", "max_us", "iqr_us"});
  m.spread = {positive_time(spread, "min_us"), positive_time(spread, "max_us"),
              non_negative(spread, "iqr_us")};
  if (m.spread.min_us > m.median_us || m.spread.max_us < m.median_us) {
    spread.fail(fmt::format("expected min_us <= median_us ({}) <= max_us", m.median_us));
  }
  m.device = r.string("device");
  for (const std::string& key : r.at("versions").keys()) {
    m.versions[key] = r.at("versions").string(key);
  }
  m.date = r.string("date");
  if (m.family.is_collective()) {
    for (const char* key : {"ranks", "bytes"}) {
      const ConfigNode v = shape.at(key);
      if (v.as_integer() <= 0) v.fail("expected an integer > 0");
    }
    m.algbw_gbps = non_negative(r, "algbw_gbps");
    m.busbw_gbps = non_negative(r, "busbw_gbps");
    m.check = r.choice("check", {"ok"});
  } else if (shape.has("pass") || (sim::cost::is_attention(*m.family.kernel) &&
                                   m.family.kernel != sim::cost::backward_kind(*m.family.kernel))) {
    // Which pass the record timed: a forward attention family says so; a GEMM's is the
    // forward unless it says backward (records written before its split have no pass).
    shape.choice("pass", {"forward", "backward"});
  }
  if (m.table_key() <= 0) {
    shape.fail(fmt::format("the {} table key of this shape is not > 0", m.family.name()));
  }
  return m;
}

}  // namespace

std::string Family::name() const {
  if (kernel) return sim::cost::to_string(*kernel);
  if (collective) return sim::network::to_string(*collective);
  return "";
}

std::optional<Family> Family::parse(const std::string& text) {
  if (auto k = sim::cost::parse_kernel_kind(text)) return Family{k, std::nullopt};
  if (auto c = sim::network::parse_collective_op(text)) return Family{std::nullopt, c};
  return std::nullopt;
}

std::string Family::names() {
  std::string out;
  for (int i = 0; i < sim::cost::kKernelKindCount; ++i) {
    out += fmt::format("{}{}", out.empty() ? "" : ", ",
                       sim::cost::to_string(static_cast<KernelKind>(i)));
  }
  for (CollectiveOp op : kCollectives) out += fmt::format(", {}", sim::network::to_string(op));
  return out;
}

std::int64_t Measurement::shape_int(const char* key) const {
  const auto it = shape.find(key);
  return it != shape.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

double Measurement::table_key() const {
  if (family.is_collective()) return static_cast<double>(shape_int("bytes"));
  switch (*family.kernel) {
    case KernelKind::kGemm:
    case KernelKind::kGemmBackward:
      return std::cbrt(static_cast<double>(shape_int("m")) * static_cast<double>(shape_int("n")) *
                       static_cast<double>(shape_int("k")));
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
    case KernelKind::kJaggedAttentionBackward:
    case KernelKind::kPaddedAttentionBackward: {
      const auto it = shape.find("mean_length");
      return it != shape.end() && it->is_number() ? it->get<double>() : 0.0;
    }
    case KernelKind::kEmbeddingLookup:
    case KernelKind::kEmbeddingUpdate:
      return static_cast<double>(shape_int("dim") * sim::cost::bytes_per_element(dtype));
    case KernelKind::kElementwise:
    case KernelKind::kOptimizer:
      return bytes;
  }
  return 0;
}

std::string Measurement::label() const {
  std::string out = family.name();
  for (const auto& [key, value] : shape.items()) {
    if (value.is_string()) {
      out += fmt::format(" {}={}", key, value.get<std::string>());
    } else if (value.is_number_integer()) {
      out += fmt::format(" {}={}", key, value.get<std::int64_t>());
    } else if (value.is_number()) {
      out += fmt::format(" {}={:.4g}", key, value.get<double>());
    }
  }
  return out + " " + sim::cost::to_string(dtype);
}

MeasurementSet measurements_from_json(const nlohmann::json& doc, const std::string& file) {
  const ConfigNode root(doc, file);
  root.allow_only({"format", "backend", "records"});
  root.choice("format", {kMeasurementFormat});
  MeasurementSet set;
  set.backend = root.choice("backend", {"cpu", "cuda", "kineto"});
  for (const ConfigNode& r : root.at("records").elements()) set.records.push_back(read_record(r));
  return set;
}

MeasurementSet load_measurements(const std::string& path) {
  const ConfigNode root = load_config(path);
  return measurements_from_json(root.json(), path);
}

nlohmann::json to_json(const Measurement& m) {
  nlohmann::json j = {
      {"family", m.family.name()},
      {"shape", m.shape},
      {"dtype", sim::cost::to_string(m.dtype)},
      {"set", name_of(m.set)},
      {"flops", m.flops},
      {"bytes", m.bytes},
      {"repetitions", m.repetitions},
      {"warmup", m.warmup},
      {"median_us", m.median_us},
      {"spread",
       {{"min_us", m.spread.min_us}, {"max_us", m.spread.max_us}, {"iqr_us", m.spread.iqr_us}}},
      {"device", m.device},
      {"versions", m.versions},
      {"date", m.date}};
  if (m.family.is_collective()) {
    j["algbw_gbps"] = m.algbw_gbps;
    j["busbw_gbps"] = m.busbw_gbps;
    j["check"] = m.check;
  }
  return j;
}

nlohmann::json to_json(const MeasurementSet& set) {
  nlohmann::json records = nlohmann::json::array();
  for (const Measurement& m : set.records) records.push_back(to_json(m));
  return {{"format", kMeasurementFormat}, {"backend", set.backend}, {"records", records}};
}

void save_measurements(const MeasurementSet& set, const std::string& path) {
  write_file_atomically(path, to_json(set).dump(1) + "\n");
}

void set_bandwidths(Measurement& m) {
  m.algbw_gbps = m.bytes / (m.median_us * 1e3);
  m.busbw_gbps = m.algbw_gbps * sim::network::busbw_factor(*m.family.collective, m.ranks());
}

Summary summarize(std::vector<double> samples_us) {
  std::sort(samples_us.begin(), samples_us.end());
  const auto quantile = [&](double q) { return percentile(samples_us, q); };
  Summary s;
  s.median_us = quantile(0.5);
  s.spread = {samples_us.front(), samples_us.back(), quantile(0.75) - quantile(0.25)};
  return s;
}

}  // namespace strait::calibration
