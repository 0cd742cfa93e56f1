#include "sim/cost/profile_set.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::cost {

void ProfileSet::add(CalibrationProfile profile) {
  const std::string type = profile.device.gpu_type;
  if (auto it = profiles_.find(type); it != profiles_.end()) {
    throw ConfigError(
        profile.file, "/gpu_type",
        fmt::format("GPU type \"{}\" already has a profile (from {})", type, it->second.file));
  }
  profiles_.emplace(type, std::move(profile));
}

const CalibrationProfile* ProfileSet::find(std::string_view gpu_type) const {
  auto it = profiles_.find(gpu_type);
  return it == profiles_.end() ? nullptr : &it->second;
}

std::vector<std::string> ProfileSet::gpu_types() const {
  std::vector<std::string> out;
  for (const auto& [type, profile] : profiles_) out.push_back(type);
  return out;
}

ProfileSet load_profiles(const std::vector<std::string>& paths) {
  ProfileSet set;
  for (const auto& path : paths) set.add(load_profile(path));
  return set;
}

ProfileSet load_profile_dir(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> paths;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json" && it->is_regular_file()) {
      paths.push_back(it->path().string());
    }
  }
  if (ec)
    throw IoError(fmt::format("{}: cannot list profile directory ({})", directory, ec.message()));
  if (paths.empty())
    throw IoError(fmt::format("{}: no calibration profile (*.json) found", directory));
  std::sort(paths.begin(), paths.end());
  return load_profiles(paths);
}

}  // namespace strait::sim::cost
