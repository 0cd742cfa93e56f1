// check_values: the sweep file's values loaded, before any point runs, by the loaders a
// point uses, so a value its key refuses (a negative bandwidth, an unknown unit, a fraction
// where a count is due, text where a number is) stops the sweep with the config's own
// message instead of filling the files with error rows. The rules stay in the loaders:
// nothing here knows what a key accepts, only which value put what where.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/topology/cluster.hpp"
#include "sim/workload/data.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/plan.hpp"
#include "sim/workload/scenario.hpp"
#include "sweep/detail/point_runner.hpp"
#include "sweep/sweep.hpp"

namespace strait::sweep {
namespace {

using sim::workload::ModelConfig;

constexpr std::size_t kSet = static_cast<std::size_t>(-1);  // ProbeEdit::factor of "set"

// An edit of one probe, and the value of the sweep file it comes from.
struct ProbeEdit {
  Edit edit;
  std::size_t factor = kSet;  // in spec.factors(), or kSet
  std::size_t axis = 0;       // in the factor, or the edit's index in "set"
  std::size_t row = 0;
  bool judged = false;  // this probe answers for it (false: judged by an earlier probe)
};

bool picks_part_file(const Edit& e, std::string_view part) {
  return e.part == "scenario" && e.pointer.size() == part.size() + 1 &&
         std::string_view(e.pointer).substr(1) == part;
}

// `pointer` is `key` or lies inside it.
bool within(std::string_view pointer, std::string_view key) {
  return pointer.substr(0, key.size()) == key &&
         (pointer.size() == key.size() || pointer[key.size()] == '/');
}

std::string escape_token(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string show(const Json& value) {
  return value.is_number() ? format_axis_value(value) : value.dump();
}

[[noreturn]] void refuse(const SweepSpec& spec, const ProbeEdit& culprit, const ConfigError& e) {
  if (culprit.factor == kSet) {
    const std::string key = "/" + culprit.edit.part + culprit.edit.pointer;
    throw ConfigError(spec.file(), "/set/" + escape_token(key),
                      fmt::format("cannot set {} to {}: {}", key,
                                  show(spec.set_edits()[culprit.axis].value), e.what()));
  }
  const Factor& factor = spec.factors()[culprit.factor];
  const Factor::Axis& axis = factor.axes[culprit.axis];
  const Json& value = factor.values[culprit.row][culprit.axis];
  if (axis.listed) {
    throw ConfigError(
        spec.file(), fmt::format("{}/{}", axis.source, culprit.row),
        fmt::format("axis '{}' cannot take the value {}: {}", axis.name, show(value), e.what()));
  }
  // A range's or a sample group's value has no place of its own in the file.
  const bool range = axis.source.ends_with("/linear") || axis.source.ends_with("/log");
  throw ConfigError(spec.file(), axis.source,
                    fmt::format("axis '{}' cannot take the value {} ({} {}): {}", axis.name,
                                show(value), range ? "index" : "sample", culprit.row, e.what()));
}

// The edit an error of `part`'s document (`file`) lies under: the one that set the key it
// names or a key above it, or the one that picked the part's file. The most specific wins,
// then the last applied (it overwrote the others).
const ProbeEdit* culprit_of(const std::vector<ProbeEdit>& edits, const ConfigError& e,
                            std::string_view part, const std::string& file) {
  if (e.file() != file) return nullptr;
  const ProbeEdit* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& pe : edits) {
    std::size_t length = 0;
    if (pe.edit.part == part && within(e.pointer(), pe.edit.pointer)) {
      length = pe.edit.pointer.size();
    } else if (part != "scenario" && picks_part_file(pe.edit, part)) {
      length = 0;
    } else {
      continue;
    }
    if (!best || length >= best_length) {
      best = &pe;
      best_length = length;
    }
  }
  return best;
}

// Loads what a point made of `edits` would load, as far as the values it judges reach:
// their parts' loaders (the model too where data and plan need it) and, for the scenario's
// own keys, the scenario's. Throws for an error under a judged value; any other error is
// the points' to report, as before.
void probe(const SweepSpec& spec, const std::vector<ProbeEdit>& edits) {
  auto judges = [&edits](std::string_view part) {
    for (const auto& pe : edits) {
      if (pe.judged && (pe.edit.part == part || picks_part_file(pe.edit, part))) return true;
    }
    return false;
  };
  bool scenario_keys = false;
  for (const auto& pe : edits)
    scenario_keys |= pe.judged && pe.edit.part == "scenario" && !picks_part(pe.edit);
  // Runs one loader on the document of `part` read from `file`; false when it failed. An
  // error that is not a config's (an edit that turned a key's parent into a number) is the
  // points' to report, as before.
  auto attempt = [&](std::string_view part, const std::string& file, auto&& load) {
    try {
      load();
      return true;
    } catch (const ConfigError& e) {
      const ProbeEdit* culprit = culprit_of(edits, e, part, file);
      if (culprit && culprit->judged) refuse(spec, *culprit, e);
    } catch (const std::exception&) {
    }
    return false;
  };

  std::vector<Edit> plain;
  plain.reserve(edits.size());
  for (const auto& pe : edits) plain.push_back(pe.edit);
  std::optional<EditedScenario> configs;
  if (!attempt("scenario", spec.scenario().file,
               [&] { configs.emplace(detail::point_configs(spec, plain)); }))
    return;
  const auto& parts = configs->parts;
  bool loaded = true;
  if (scenario_keys || judges("cluster")) {
    loaded &= attempt("cluster", parts.cluster.file(),
                      [&] { (void)sim::topology::Cluster::from_config(parts.cluster); });
  }
  std::optional<ModelConfig> model;
  if (scenario_keys || judges("model") || judges("data") || judges("plan")) {
    loaded &= attempt("model", parts.model.file(),
                      [&] { model = ModelConfig::from_config(parts.model); });
  }
  if (model && (scenario_keys || judges("data"))) {
    loaded &= attempt("data", parts.data.file(),
                      [&] { (void)sim::workload::DataConfig::from_config(parts.data, *model); });
  }
  if (model && (scenario_keys || judges("plan"))) {
    loaded &= attempt("plan", parts.plan.file(),
                      [&] { (void)sim::workload::ParallelPlan::from_config(parts.plan, *model); });
  }
  // The scenario's own keys are read after its parts are put together, so an error of the
  // parts (or of their combination) would hide them: checked only once the parts load.
  if (scenario_keys && loaded && model) {
    attempt("scenario", configs->scenario.file(),
            [&] { (void)sim::workload::TrainingScenario::from_config(configs->scenario, parts); });
  }
}

// The probe edits of row `row` of factor `f`, all judged.
std::vector<ProbeEdit> row_edits(const SweepSpec& spec, std::size_t f, std::size_t row) {
  const Factor& factor = spec.factors()[f];
  const auto edits = factor.edits(row);
  std::vector<ProbeEdit> out;
  for (std::size_t k = 0, e = 0; k < factor.axes.size(); ++k) {
    for (std::size_t t = 0; t < factor.axes[k].targets.size(); ++t, ++e)
      out.push_back({edits[e], f, k, row, true});
  }
  return out;
}

}  // namespace

void check_values(const SweepSpec& spec) {
  const auto& factors = spec.factors();
  // Every factor at its first row, after the "set" block: the set's values and each
  // factor's first are judged there.
  std::vector<ProbeEdit> base;
  for (std::size_t i = 0; i < spec.set_edits().size(); ++i)
    base.push_back({spec.set_edits()[i], kSet, i, 0, true});
  std::vector<std::size_t> offsets;  // where each factor's edits start in `base`
  for (std::size_t f = 0; f < factors.size(); ++f) {
    offsets.push_back(base.size());
    const auto first = row_edits(spec, f, 0);
    base.insert(base.end(), first.begin(), first.end());
  }
  probe(spec, base);
  for (auto& pe : base) pe.judged = false;

  // Then each further row of a factor, the others at their first rows: one load per value
  // whatever the number of points (filters are not consulted). Values wrong only together
  // still reach the points, as error rows: the parts are loaded one by one here, so the
  // rules that join two of them (a plan for more GPUs than the cluster has, a global batch
  // the replicas do not divide) are not met, and a loader's error is a value's only when it
  // names the key that value set.
  for (std::size_t f = 0; f < factors.size(); ++f) {
    std::set<std::string> seen = {Json(factors[f].values[0]).dump()};
    for (std::size_t row = 1; row < factors[f].values.size(); ++row) {
      if (!seen.insert(Json(factors[f].values[row]).dump()).second) continue;
      std::vector<ProbeEdit> edits = base;
      const auto changed = row_edits(spec, f, row);
      std::copy(changed.begin(), changed.end(),
                edits.begin() + static_cast<std::ptrdiff_t>(offsets[f]));
      probe(spec, edits);
    }
  }
}

}  // namespace strait::sweep
