#include "sim/core/bundled_configs.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait {

namespace {

constexpr int kLevelsUp = 4;

}  // namespace

std::filesystem::path this_binary() {
  const auto here = reinterpret_cast<std::uintptr_t>(&this_binary);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode path
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode;
    std::getline(fields >> std::ws, path);
    const auto dash = range.find('-');
    if (dash == std::string::npos || path.empty() || path[0] != '/') continue;
    const auto start = std::stoull(range.substr(0, dash), nullptr, 16);
    const auto end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (here >= start && here < end) return path;
  }
  return {};
}

std::filesystem::path bundled_configs_near(const std::filesystem::path& binary) {
  auto folder = binary.parent_path();
  for (int level = 0; level <= kLevelsUp && !folder.empty(); ++level) {
    const auto candidate = folder / "share" / "strait" / "configs";
    std::error_code ec;
    if (std::filesystem::is_directory(candidate, ec)) return candidate;
    if (folder == folder.parent_path()) break;
    folder = folder.parent_path();
  }
  return {};
}

std::filesystem::path bundled_configs_dir() {
  const auto binary = this_binary();
  auto dir = bundled_configs_near(binary);
  if (dir.empty())
    throw Error(fmt::format(
        "the bundled configs were not found: no share/strait/configs in the folder of '{}' or "
        "up to {} folders above it (a moved or partial installation?); name a profiles folder "
        "(--profiles; profiles= in Python)",
        binary.string(), kLevelsUp));
  return dir;
}

std::filesystem::path bundled_profiles_dir() { return bundled_configs_dir() / "profiles"; }

}  // namespace strait
