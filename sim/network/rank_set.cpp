#include "sim/network/rank_set.hpp"

#include <charconv>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::network {
namespace {

bool parse_int(std::string_view text, int& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw Error(fmt::format(
      "rank set '{}': {} (expected 'all', indices and ranges like '0-7,16', a datacenter name, "
      "'host:N', 'first:N' or 'local:N')",
      text, why));
}

}  // namespace

std::vector<int> parse_rank_set(std::string_view text, const topology::Cluster& cluster) {
  const int n = cluster.gpu_count();
  std::vector<int> out;
  if (text == "all") {
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (std::size_t d = 0; d < cluster.datacenters().size(); ++d) {
    if (cluster.datacenters()[d].name == text) {
      for (int h : cluster.datacenters()[d].hosts) {
        for (int g : cluster.hosts()[static_cast<std::size_t>(h)].gpus) out.push_back(g);
      }
      return out;
    }
  }
  const auto colon = text.find(':');
  if (colon != std::string_view::npos) {
    const auto kind = text.substr(0, colon);
    int value = 0;
    if (!parse_int(text.substr(colon + 1), value) || value < 0)
      bad(text, "expected a number after ':'");
    if (kind == "first") {
      if (value < 1 || value > n) bad(text, fmt::format("the cluster has {} GPUs", n));
      for (int i = 0; i < value; ++i) out.push_back(i);
    } else if (kind == "host") {
      if (value >= static_cast<int>(cluster.hosts().size())) {
        bad(text, fmt::format("the cluster has hosts 0..{}", cluster.hosts().size() - 1));
      }
      out = cluster.hosts()[static_cast<std::size_t>(value)].gpus;
    } else if (kind == "local") {
      for (const auto& host : cluster.hosts()) {
        if (value < static_cast<int>(host.gpus.size()))
          out.push_back(host.gpus[static_cast<std::size_t>(value)]);
      }
      if (out.empty()) bad(text, "no host has that many GPUs");
    } else {
      bad(text, fmt::format("unknown selector '{}'", kind));
    }
    return out;
  }
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto comma = std::min(text.find(',', pos), text.size());
    const auto item = text.substr(pos, comma - pos);
    const auto dash = item.find('-');
    int lo = 0, hi = 0;
    const bool ok = dash == std::string_view::npos ? parse_int(item, lo) && (hi = lo, true)
                                                   : parse_int(item.substr(0, dash), lo) &&
                                                         parse_int(item.substr(dash + 1), hi);
    if (!ok || lo < 0 || hi < lo) bad(text, fmt::format("cannot read '{}'", item));
    if (hi >= n)
      bad(text, fmt::format("GPU {} does not exist (the cluster has GPUs 0..{})", hi, n - 1));
    for (int i = lo; i <= hi; ++i) out.push_back(i);
    pos = comma + 1;
  }
  return out;
}

}  // namespace strait::sim::network
