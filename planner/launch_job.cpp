#include "planner/launch_job.hpp"

#include <filesystem>

#include "sim/core/error.hpp"

namespace strait::planner {
namespace {

std::string relative_to(const std::string& file, const std::string& folder) {
  namespace fs = std::filesystem;
  return fs::absolute(fs::path(file))
      .lexically_normal()
      .lexically_relative(fs::absolute(folder))
      .string();
}

}  // namespace

Json launch_job(const sim::workload::TrainingScenario& base, const Json& plan,
                const std::map<std::string, std::string>& files, const Json& hardware,
                const std::string& folder) {
  Json job = {{"name", base.name},
              {"steps", base.steps},
              {"seed", base.seed},
              {"mode", sim::network::to_string(base.mode)},
              {"plan", plan}};
  for (const char* key : {"cluster", "model", "data"}) {
    const auto file = files.find(key);
    if (file != files.end()) {
      job[key] = relative_to(file->second, folder);
    } else if (base.parts) {
      const auto& parts = *base.parts;
      const std::string k = key;
      job[key] = (k == "cluster" ? parts.cluster : k == "model" ? parts.model : parts.data).json();
    } else {
      throw Error(std::string("launch plan: the job's ") + key +
                  " has neither a file nor a config");
    }
  }
  if (!hardware.is_null()) job["hardware"] = hardware;
  if (!base.profiles_dir.empty()) job["profiles"] = relative_to(base.profiles_dir, folder);
  return job;
}

}  // namespace strait::planner
