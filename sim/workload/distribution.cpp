#include "sim/workload/distribution.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

namespace strait::sim::workload {
namespace {

constexpr std::int64_t kMaxZipfSupport = 10'000'000;
// The largest value a distribution may draw (a sequence length, a pooling factor): 2^30,
// far past any real one, and small enough that sums and squares over a batch stay exact
// and finite (a pooling factor of 1e308 made infinite FLOPs).
constexpr double kMaxValue = 1 << 30;

void check_value(const ConfigNode& node, double v) {
  if (!(v >= 0 && v <= kMaxValue))
    node.fail(fmt::format("expected a value in [0, 2^30 = {}], got {}", 1 << 30, v));
}

}  // namespace

Distribution Distribution::fixed(double value) {
  Distribution d;
  d.kind_ = Kind::kFixed;
  d.a_ = value;
  return d;
}

Distribution Distribution::uniform(std::int64_t min, std::int64_t max) {
  Distribution d;
  d.kind_ = Kind::kUniform;
  d.a_ = static_cast<double>(min);
  d.b_ = static_cast<double>(max);
  return d;
}

Distribution Distribution::lognormal_with_mean(double mean, double sigma) {
  Distribution d;
  d.kind_ = Kind::kLognormal;
  d.a_ = std::log(mean) - sigma * sigma / 2;
  d.b_ = sigma;
  return d;
}

Distribution Distribution::empirical(std::vector<std::int64_t> values,
                                     std::vector<double> weights) {
  Distribution d;
  d.kind_ = Kind::kEmpirical;
  double total = 0;
  for (double w : weights) total += w;
  std::vector<double> cdf;
  cdf.reserve(weights.size());
  double run = 0;
  for (double w : weights) cdf.push_back((run += w) / total);
  d.values_ = std::make_shared<const std::vector<std::int64_t>>(std::move(values));
  d.cdf_ = std::make_shared<const std::vector<double>>(std::move(cdf));
  return d;
}

Distribution Distribution::zipf(double exponent, std::int64_t min, std::int64_t max) {
  std::vector<std::int64_t> values;
  std::vector<double> weights;
  values.reserve(static_cast<std::size_t>(max - min + 1));
  weights.reserve(values.capacity());
  for (std::int64_t x = min; x <= max; ++x) {
    values.push_back(x);
    weights.push_back(std::pow(static_cast<double>(x), -exponent));
  }
  Distribution d = empirical(std::move(values), std::move(weights));
  d.kind_ = Kind::kZipf;
  d.exponent_ = exponent;
  d.a_ = static_cast<double>(min);
  d.b_ = static_cast<double>(max);
  return d;
}

Distribution Distribution::from_config(const ConfigNode& node) {
  const std::string kind =
      node.choice("distribution", {"fixed", "uniform", "lognormal", "zipf", "empirical"});
  if (kind == "fixed") {
    node.allow_only({"distribution", "value"});
    // Every distribution draws a count (a length, a pooling factor): a fixed 1.5 is a
    // mistake, not a mean (a mean belongs to lognormal).
    const ConfigNode value = node.at("value");
    const double v = value.as_number();
    check_value(value, v);
    if (v != std::floor(v))
      value.fail(
          fmt::format("expected a whole count (a fixed distribution draws the same "
                      "count every time; for a mean use \"lognormal\"), got {}",
                      v));
    return fixed(v);
  }
  if (kind == "uniform") {
    node.allow_only({"distribution", "min", "max"});
    const auto lo = node.integer("min"), hi = node.integer("max");
    if (lo < 0) node.at("min").fail(fmt::format("expected min >= 0, got {}", lo));
    if (hi < lo) node.at("max").fail(fmt::format("expected max >= min ({}), got {}", lo, hi));
    check_value(node.at("max"), static_cast<double>(hi));
    return uniform(lo, hi);
  }
  if (kind == "lognormal") {
    node.allow_only({"distribution", "mean", "median", "sigma"});
    const double sigma = node.number("sigma");
    if (sigma < 0) node.at("sigma").fail(fmt::format("expected sigma >= 0, got {}", sigma));
    if (sigma > 10) node.at("sigma").fail(fmt::format("expected sigma <= 10, got {}", sigma));
    if (node.has("median")) {
      if (node.has("mean")) node.at("mean").fail("give either \"mean\" or \"median\", not both");
      check_value(node.at("median"), node.positive_number("median"));
      return lognormal_with_mean(node.positive_number("median") * std::exp(sigma * sigma / 2),
                                 sigma);
    }
    check_value(node.at("mean"), node.positive_number("mean"));
    return lognormal_with_mean(node.positive_number("mean"), sigma);
  }
  if (kind == "zipf") {
    node.allow_only({"distribution", "exponent", "min", "max"});
    const double s = node.number("exponent");
    if (s < 0) node.at("exponent").fail(fmt::format("expected an exponent >= 0, got {}", s));
    const auto lo = node.positive_integer("min"), hi = node.integer("max");
    if (hi < lo) node.at("max").fail(fmt::format("expected max >= min ({}), got {}", lo, hi));
    check_value(node.at("max"), static_cast<double>(hi));
    if (hi - lo >= kMaxZipfSupport) {
      node.at("max").fail(fmt::format("expected max - min < {}", kMaxZipfSupport));
    }
    return zipf(s, lo, hi);
  }
  node.allow_only({"distribution", "file"});
  const ConfigNode file_node = node.at("file");
  const auto base = std::filesystem::path(node.file()).parent_path();
  const std::string path = (base / file_node.as_string()).lexically_normal().string();
  if (!std::filesystem::exists(path)) {
    file_node.fail(fmt::format("histogram file '{}' does not exist", path));
  }
  const ConfigNode hist = load_config(path);
  hist.allow_only({"description", "values", "weights"});
  std::vector<std::int64_t> values;
  std::vector<double> weights;
  for (const auto& v : hist.at("values").elements()) {
    values.push_back(v.as_integer());
    check_value(v, static_cast<double>(values.back()));
  }
  for (const auto& w : hist.at("weights").elements()) {
    weights.push_back(w.as_number());
    if (weights.back() < 0) w.fail("expected a weight >= 0");
  }
  if (values.empty()) hist.at("values").fail("expected at least one value");
  if (weights.size() != values.size()) {
    hist.at("weights").fail(
        fmt::format("expected {} weights (one per value), got {}", values.size(), weights.size()));
  }
  double total = 0;
  for (double w : weights) total += w;
  if (!(total > 0)) hist.at("weights").fail("expected a positive total weight");
  return empirical(std::move(values), std::move(weights));
}

std::int64_t Distribution::sample(Rng& rng, std::int64_t floor, std::int64_t cap) const {
  double x = 0;
  switch (kind_) {
    case Kind::kFixed:
      x = a_;
      break;
    case Kind::kUniform:
      x = a_ + static_cast<double>(rng.uniform_int(static_cast<std::uint64_t>(b_ - a_) + 1));
      break;
    case Kind::kLognormal:
      x = rng.lognormal(a_, b_);
      break;
    case Kind::kZipf:
    case Kind::kEmpirical: {
      const double u = rng.uniform();
      auto it = std::upper_bound(cdf_->begin(), cdf_->end(), u);
      if (it == cdf_->end()) --it;
      x = static_cast<double>((*values_)[static_cast<std::size_t>(it - cdf_->begin())]);
      break;
    }
  }
  const auto v = static_cast<std::int64_t>(std::llround(x));
  return std::clamp(v, floor, cap);
}

double Distribution::mean() const {
  switch (kind_) {
    case Kind::kFixed:
      return a_;
    case Kind::kUniform:
      return (a_ + b_) / 2;
    case Kind::kLognormal:
      return std::exp(a_ + b_ * b_ / 2);
    case Kind::kZipf:
    case Kind::kEmpirical: {
      double m = 0, prev = 0;
      for (std::size_t i = 0; i < cdf_->size(); ++i) {
        m += static_cast<double>((*values_)[i]) * ((*cdf_)[i] - prev);
        prev = (*cdf_)[i];
      }
      return m;
    }
  }
  return 0;
}

double Distribution::variance() const {
  switch (kind_) {
    case Kind::kFixed:
      return 0;
    case Kind::kUniform: {
      const double n = b_ - a_ + 1;
      return (n * n - 1) / 12;
    }
    case Kind::kLognormal:
      return (std::exp(b_ * b_) - 1) * std::exp(2 * a_ + b_ * b_);
    case Kind::kZipf:
    case Kind::kEmpirical: {
      const double mu = mean();
      double v = 0, prev = 0;
      for (std::size_t i = 0; i < cdf_->size(); ++i) {
        const double d = static_cast<double>((*values_)[i]) - mu;
        v += d * d * ((*cdf_)[i] - prev);
        prev = (*cdf_)[i];
      }
      return v;
    }
  }
  return 0;
}

std::string Distribution::describe() const {
  switch (kind_) {
    case Kind::kFixed:
      return fmt::format("fixed {}", a_);
    case Kind::kUniform:
      return fmt::format("uniform [{}, {}]", a_, b_);
    case Kind::kLognormal:
      return fmt::format("lognormal mean {:.1f} sigma {}", mean(), b_);
    case Kind::kZipf:
      return fmt::format("zipf s={} on [{}, {}]", exponent_, a_, b_);
    case Kind::kEmpirical:
      return fmt::format("empirical ({} values)", values_->size());
  }
  return "?";
}

}  // namespace strait::sim::workload
