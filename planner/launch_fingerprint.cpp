#include "planner/launch_fingerprint.hpp"

#include <cstdint>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

namespace strait::planner {
namespace {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

/// Folds `text` and then a 0xff byte (never in UTF-8 text) into `h`, so consecutive parts
/// cannot trade characters.
void fnv(std::uint64_t& h, std::string_view text) {
  for (unsigned char c : text) {
    h ^= c;
    h *= kFnvPrime;
  }
  h ^= 0xff;
  h *= kFnvPrime;
}

/// Folds in every empirical histogram under `value`, resolved as Distribution::from_config
/// does: relative to the folder of the file the config came from.
void fold_histograms(std::uint64_t& h, const Json& value, const std::filesystem::path& folder) {
  if (value.is_object()) {
    const auto kind = value.find("distribution");
    const auto file = value.find("file");
    if (kind != value.end() && *kind == "empirical" && file != value.end() && file->is_string()) {
      const auto path = (folder / file->get<std::string>()).lexically_normal().string();
      fnv(h, load_config(path).json().dump());
    }
  }
  if (value.is_structured()) {
    for (const auto& item : value) fold_histograms(h, item, folder);
  }
}

}  // namespace

std::string fingerprint(const sim::workload::TrainingScenario& sc, const Json& document) {
  std::uint64_t h = kFnvOffset;
  if (sc.parts) {
    for (const ConfigNode* part : {&sc.parts->cluster, &sc.parts->model, &sc.parts->data})
      fnv(h, part->json().dump());
    fold_histograms(h, sc.parts->data.json(),
                    std::filesystem::path(sc.parts->data.file()).parent_path());
  } else {
    for (int part = 0; part < 3; ++part) fnv(h, "null");
  }
  fnv(h, document.dump());
  return fmt::format("fnv1a64:{:016x}", h);
}

}  // namespace strait::planner
