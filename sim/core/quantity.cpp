#include "sim/core/quantity.hpp"

#include <fmt/format.h>
#include <cctype>
#include <charconv>
#include <cmath>

namespace strait {
namespace {

// Splits "  12.5 GB/s " into 12.5 and "GB/s". The number must be finite and >= 0.
bool split_number_unit(std::string_view text, double& number, std::string_view& unit) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, number);
  if (ec != std::errc() || !std::isfinite(number) || number < 0) return false;
  unit = std::string_view(ptr, static_cast<std::size_t>(end - ptr));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
    unit.remove_prefix(1);
  return true;
}

}  // namespace

std::optional<BytesPerSec> parse_bandwidth(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number_unit(text, v, unit)) return std::nullopt;
  struct Unit {
    std::string_view name;
    double factor;
  };
  static constexpr Unit kUnits[] = {{"b/s", 1.0 / 8},   {"bps", 1.0 / 8},  {"Kb/s", 1e3 / 8},
                                    {"Kbps", 1e3 / 8},  {"Mb/s", 1e6 / 8}, {"Mbps", 1e6 / 8},
                                    {"Gb/s", 1e9 / 8},  {"Gbps", 1e9 / 8}, {"Tb/s", 1e12 / 8},
                                    {"Tbps", 1e12 / 8}, {"B/s", 1},        {"KB/s", 1e3},
                                    {"MB/s", 1e6},      {"GB/s", 1e9},     {"TB/s", 1e12},
                                    {"GBps", 1e9},      {"MBps", 1e6}};
  for (const auto& u : kUnits) {
    if (unit == u.name) return v * u.factor;
  }
  return std::nullopt;
}

std::optional<Time> parse_duration(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number_unit(text, v, unit)) return std::nullopt;
  double scale = 0;  // seconds per unit
  if (unit == "ps") scale = 1e-12;
  if (unit == "ns") scale = 1e-9;
  if (unit == "us" || unit == "\xC2\xB5s") scale = 1e-6;
  if (unit == "ms") scale = 1e-3;
  if (unit == "s") scale = 1;
  if (scale == 0 || !(std::abs(v * scale) <= kMaxDurationSeconds)) return std::nullopt;
  if (unit == "ps") return Time::from_ps(static_cast<std::int64_t>(std::llround(v)));
  if (unit == "ns") return Time::from_ns(v);
  if (unit == "us" || unit == "\xC2\xB5s") return Time::from_us(v);
  if (unit == "ms") return Time::from_ms(v);
  if (unit == "s") return Time::from_s(v);
  return std::nullopt;
}

std::optional<Bytes> parse_bytes(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number_unit(text, v, unit)) return std::nullopt;
  struct Unit {
    std::string_view name;
    double factor;
  };
  static constexpr Unit kUnits[] = {{"", 1},
                                    {"B", 1},
                                    {"KiB", 1024.0},
                                    {"MiB", 1024.0 * 1024},
                                    {"GiB", 1024.0 * 1024 * 1024},
                                    {"TiB", 1024.0 * 1024 * 1024 * 1024},
                                    {"KB", 1e3},
                                    {"MB", 1e6},
                                    {"GB", 1e9},
                                    {"TB", 1e12}};
  for (const auto& u : kUnits) {
    if (unit != u.name) continue;
    if (!(v * u.factor >= 0 && v * u.factor <= kMaxBytes)) return std::nullopt;
    return static_cast<Bytes>(std::llround(v * u.factor));
  }
  return std::nullopt;
}

std::optional<Bytes> parse_size_suffix(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number_unit(text, v, unit)) return std::nullopt;
  double factor = 1;
  if (unit.empty() || unit == "B")
    factor = 1;
  else if (unit == "K" || unit == "k")
    factor = 1024.0;
  else if (unit == "M" || unit == "m")
    factor = 1024.0 * 1024;
  else if (unit == "G" || unit == "g")
    factor = 1024.0 * 1024 * 1024;
  else
    return parse_bytes(text);
  if (!(v * factor >= 0 && v * factor <= kMaxBytes)) return std::nullopt;
  return static_cast<Bytes>(std::llround(v * factor));
}

std::string format_bytes(double bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024.0 && i < 5) {
    bytes /= 1024.0;
    ++i;
  }
  return i == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, kNames[i]);
}

std::string format_duration(Time t) {
  const double us = t.to_us();
  if (us < 1e3) return fmt::format("{:.2f} us", us);
  if (us < 1e6) return fmt::format("{:.3f} ms", us / 1e3);
  return fmt::format("{:.3f} s", us / 1e6);
}

}  // namespace strait
