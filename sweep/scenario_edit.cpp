#include "sweep/scenario_edit.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sweep {
namespace {

constexpr std::string_view kParts[] = {"cluster", "model", "data", "plan"};

}  // namespace

void EditSource::fail(std::string_view expectation) const {
  throw ConfigError(file, pointer, std::string(expectation));
}

bool is_scenario_part(std::string_view name) {
  return std::find(std::begin(kParts), std::end(kParts), name) != std::end(kParts);
}

Edit parse_edit(const std::string& text, const EditSource& source) {
  const auto slash = text.find('/', 1);
  const std::string part =
      text.empty() ? ""
                   : text.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
  if (text.empty() || text[0] != '/' || (part != "scenario" && !is_scenario_part(part))) {
    source.fail(fmt::format(
        "expected a JSON pointer starting with /scenario, /cluster, /model, /data or /plan, got "
        "'{}'",
        text));
  }
  Edit e{part, slash == std::string::npos ? "" : text.substr(slash), Json()};
  if (e.pointer.empty() || e.pointer == "/")
    source.fail(fmt::format("expected a pointer to a key inside /{}, got '{}'", part, text));
  try {
    (void)Json::json_pointer(e.pointer);
  } catch (const Json::exception& ex) {
    source.fail(fmt::format("'{}' is not a JSON pointer ({})", text, ex.what()));
  }
  if (part == "scenario") {
    const auto key = e.pointer.substr(1, e.pointer.find('/', 1) - 1);
    if (is_scenario_part(key) && e.pointer != "/" + key) {
      source.fail(fmt::format("edit the {} through /{}{} rather than /scenario/{}...", key, key,
                              e.pointer.substr(key.size() + 1), key));
    }
  }
  return e;
}

bool picks_part(const Edit& edit) {
  return edit.part == "scenario" && !edit.pointer.empty() &&
         is_scenario_part(std::string_view(edit.pointer).substr(1));
}

std::string part_file_path(std::string_view part, const Json& value,
                           const std::string& scenario_file, const EditSource& source) {
  if (value.is_object()) return "";
  if (!value.is_string())
    source.fail(fmt::format("expected the path of a {} file or an inline object", part));
  const auto dir = std::filesystem::path(scenario_file).parent_path();
  const std::string path = (dir / value.get<std::string>()).lexically_normal().string();
  if (!std::filesystem::is_regular_file(path))
    source.fail(fmt::format("{} file '{}' does not exist", part, path));
  return path;
}

void check_edit_target(const Edit& target, const Json& doc, const std::string& file,
                       const EditSource& source) {
  const Json::json_pointer pointer(target.pointer);
  const Json::json_pointer parent = pointer.parent_pointer();
  const std::string& last = pointer.back();
  const Json* container = doc.contains(parent) ? &doc.at(parent) : nullptr;
  bool ok = container && (container->is_object() || container->is_array());
  if (ok && container->is_array()) {
    ok = !last.empty() && last.find_first_not_of("0123456789") == std::string::npos &&
         std::stoull(last) < container->size();
  }
  if (!ok) {
    source.fail(
        fmt::format("/{}{} does not lead into {} (its parent '{}' must exist{})", target.part,
                    target.pointer, file, parent.to_string(),
                    container && container->is_array() ? " and the index be in range" : ""));
  }
}

void apply_edit(Json& doc, const Edit& edit) { doc[Json::json_pointer(edit.pointer)] = edit.value; }

ConfigNode edited_scenario_node(const Document& scenario, const std::vector<Edit>& edits) {
  Json json = scenario.json;
  for (const auto& e : edits) {
    if (e.part == "scenario") apply_edit(json, e);
  }
  return ConfigNode(std::move(json), scenario.file);
}

ConfigNode edited_part(const ConfigNode& scenario,
                       const std::map<std::string, Document>& part_files,
                       const std::vector<Edit>& edits, std::string_view part) {
  const ConfigNode at = scenario.at(part);
  Document doc;
  if (at.is_object()) {
    doc = {at.json(), scenario.file()};
  } else {
    const auto dir = std::filesystem::path(scenario.file()).parent_path();
    const auto path = (dir / at.as_string()).lexically_normal().string();
    const auto it = part_files.find(path);
    if (it != part_files.end()) {
      doc = it->second;
    } else {
      if (!std::filesystem::exists(path))
        at.fail(fmt::format("{} file '{}' does not exist", part, path));
      doc = {load_config(path).json(), path};
    }
  }
  for (const auto& e : edits) {
    if (e.part == part) apply_edit(doc.json, e);
  }
  return ConfigNode(std::move(doc.json), doc.file);
}

EditedScenario edit_scenario(const Document& scenario,
                             const std::map<std::string, Document>& part_files,
                             const std::vector<Edit>& edits) {
  const ConfigNode node = edited_scenario_node(scenario, edits);
  return {
      node,
      {edited_part(node, part_files, edits, "cluster"),
       edited_part(node, part_files, edits, "model"), edited_part(node, part_files, edits, "data"),
       edited_part(node, part_files, edits, "plan")}};
}

}  // namespace strait::sweep
