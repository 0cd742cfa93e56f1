#include "traces/detail/json_text.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace strait::traces::detail {

std::string json_quote(std::string_view text) {
  // Non-ASCII text goes through nlohmann, which validates UTF-8 and replaces bad bytes;
  // the ASCII fast path covers the names the simulator writes.
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return nlohmann::json(std::string(text))
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string json_microseconds(Time t) {
  // Integer arithmetic, so 1,500,000 ps is exactly "1.5": no binary rounding of 1e-6.
  const std::int64_t ps = t.ps();
  const std::uint64_t magnitude =
      ps < 0 ? static_cast<std::uint64_t>(-(ps + 1)) + 1 : static_cast<std::uint64_t>(ps);
  std::string out;
  if (ps < 0) out += '-';
  out += fmt::format_int(magnitude / 1'000'000).str();
  std::uint64_t frac = magnitude % 1'000'000;
  if (frac != 0) {
    char digits[7] = {'.', '0', '0', '0', '0', '0', '0'};
    for (int i = 6; i >= 1; --i, frac /= 10) digits[i] = static_cast<char>('0' + frac % 10);
    int length = 7;
    while (digits[length - 1] == '0') --length;
    out.append(digits, static_cast<std::size_t>(length));
  }
  return out;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);
}

}  // namespace strait::traces::detail
