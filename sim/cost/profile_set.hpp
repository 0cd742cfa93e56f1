#pragma once
// ProfileSet: the calibration profiles of a run, one per GPU type, looked up by the
// "gpu_type" name cluster files use. Mixed clusters (H100 and A100 datacenters) load one
// profile per type; the bundled ones are configs/profiles/*.json.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cost/calibration_profile.hpp"

namespace strait::sim::cost {

class ProfileSet {
 public:
  /// Adds a profile; ConfigError at its /gpu_type if that type already has one.
  void add(CalibrationProfile profile);
  /// The profile of `gpu_type`, or nullptr.
  const CalibrationProfile* find(std::string_view gpu_type) const;
  /// GPU types with a profile, sorted.
  std::vector<std::string> gpu_types() const;
  std::size_t size() const { return profiles_.size(); }

 private:
  std::map<std::string, CalibrationProfile, std::less<>> profiles_;
};

/// Loads the given profile files (IoError / ConfigError on the first bad one).
ProfileSet load_profiles(const std::vector<std::string>& paths);
/// Loads every *.json file of `directory` in name order (e.g. "configs/profiles"); IoError
/// if it is not a readable directory or holds no profile.
ProfileSet load_profile_dir(const std::string& directory);

}  // namespace strait::sim::cost
