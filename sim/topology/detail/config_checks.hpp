#pragma once
// Checks shared by the cluster loaders on top of ConfigNode's.

#include <string_view>

#include <fmt/format.h>

#include "sim/core/config_node.hpp"

namespace strait::sim::topology::detail {

/// The bandwidth `owner[key]`, which must be > 0. A negative one ("-400 Gb/s") fails as
/// "expected a positive bandwidth" rather than as malformed text.
inline BytesPerSec positive_bandwidth(const ConfigNode& owner, std::string_view key) {
  const ConfigNode value = owner.at(key);
  if (value.is_string()) {
    const std::string text = value.as_string();
    const auto first = text.find_first_not_of(' ');
    if (first != std::string::npos && text[first] == '-') {
      value.fail(fmt::format("expected a positive bandwidth, got \"{}\"", text));
    }
  }
  return owner.bandwidth(key);
}

}  // namespace strait::sim::topology::detail
