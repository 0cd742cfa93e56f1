// Over 400 lines: a sweep file's reader: axes, zips, samples, targets and the plan search,
// checked against one another as one document.

#include "sweep/sweep_spec.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/quantity.hpp"
#include "sweep/detail/axis_values.hpp"
#include "sweep/detail/point_filter.hpp"
#include "sweep/detail/report_columns.hpp"

namespace strait::sweep {
namespace {

using detail::SampleRange;

// Largest sweep before filters; beyond it the point list alone would not fit in memory.
constexpr double kMaxPoints = 10'000'000;

using AxisDef = Factor::Axis;

// `text` is a pointer written at `node` (errors name that place).
Edit parse_target(const ConfigNode& node, const std::string& text) {
  return parse_edit(text, {node.file(), node.pointer()});
}

std::vector<Edit> parse_targets(const ConfigNode& node) {
  std::vector<Edit> out;
  if (node.is_array()) {
    if (node.size() == 0) node.fail("expected a pointer or a non-empty list of pointers");
    for (const auto& p : node.elements()) out.push_back(parse_target(p, p.as_string()));
  } else {
    out.push_back(parse_target(node, node.as_string()));
  }
  return out;
}

// The value an axis writes into the config: "400 Gb/s" for 400 with unit "Gb/s".
Json config_value(const AxisDef& axis, const Json& value) {
  if (axis.unit.empty()) return value;
  return Json(format_axis_value(value) + " " + axis.unit);
}

// What a sweep file holds once read: documents, the fixed edits and the factors.
struct Reading {
  Document scenario;
  std::map<std::string, Document> part_files;
  std::vector<Edit> set;
  std::vector<Factor> factors;
  std::vector<std::string> axis_names;
};

class SpecReader {
 public:
  explicit SpecReader(const ConfigNode& root) : root_(root) {}

  Reading read();

 private:
  AxisDef read_axis_def(const ConfigNode& axis, bool pointer_required);
  Factor read_axis(const ConfigNode& axis);
  Factor read_zip(const ConfigNode& group);
  Factor read_samples(const ConfigNode& group);
  void add_name(const ConfigNode& where, const std::string& name);
  void load_scenario();
  void add_part_file(const ConfigNode& where, const std::string& key, const Json& value);
  void check_target(const ConfigNode& where, const Edit& target, bool with_set) const;
  void check_factor(const ConfigNode& where, const Factor& factor);

  const ConfigNode& root_;
  Reading r_;
  std::map<std::string, std::vector<std::string>> part_paths_;  // "" = inline in the scenario
  std::set<std::string> names_;
};

void SpecReader::load_scenario() {
  const ConfigNode at = root_.at("scenario");
  const auto base = std::filesystem::path(root_.file()).parent_path();
  const std::string path = (base / at.as_string()).lexically_normal().string();
  if (!std::filesystem::is_regular_file(path))
    at.fail(fmt::format("scenario file '{}' does not exist", path));
  const ConfigNode scenario = load_config(path);
  if (!scenario.is_object()) scenario.fail("expected a scenario object");
  if (scenario.has("collectives"))
    at.fail("expected a training scenario (a collectives scenario cannot be swept)");
  r_.scenario = {scenario.json(), path};
  for (const std::string k : {"cluster", "model", "data", "plan"}) {
    if (!scenario.has(k)) continue;  // the scenario itself reports it, per point
    add_part_file(scenario.at(k), k, scenario.at(k).json());
  }
}

// Records a document a part may come from: an inline object or a file, loaded now.
void SpecReader::add_part_file(const ConfigNode& where, const std::string& key, const Json& value) {
  const auto path = part_file_path(key, value, r_.scenario.file, {where.file(), where.pointer()});
  if (!path.empty() && !r_.part_files.count(path))
    r_.part_files[path] = {load_config(path).json(), path};
  part_paths_[key].push_back(path);
}

// A pointer must lead into an existing object or array of every document its part may be.
void SpecReader::check_target(const ConfigNode& where, const Edit& target, bool with_set) const {
  auto check = [&](Json doc, const std::string& file) {
    // Axes see the documents as the "set" edits leave them; "set" edits see the base.
    if (with_set) {
      for (const auto& e : r_.set) {
        if (e.part == target.part) apply_edit(doc, e);
      }
    }
    check_edit_target(target, doc, file, {where.file(), where.pointer()});
  };
  if (target.part == "scenario") {
    check(r_.scenario.json, r_.scenario.file);
    return;
  }
  const auto it = part_paths_.find(target.part);
  if (it == part_paths_.end())
    where.fail(fmt::format("the scenario {} has no {}", r_.scenario.file, target.part));
  for (const auto& path : it->second) {
    if (path.empty()) {
      check(r_.scenario.json.at(target.part), r_.scenario.file + " (inline " + target.part + ")");
    } else {
      check(r_.part_files.at(path).json, path);
    }
  }
}

void SpecReader::add_name(const ConfigNode& where, const std::string& name) {
  if (name.empty()) where.fail("expected a non-empty name");
  const auto reserved = detail::csv_header({}, true);
  if (std::find(reserved.begin(), reserved.end(), name) != reserved.end())
    where.fail(fmt::format("'{}' is a result column; give the axis another name", name));
  if (!names_.insert(name).second) where.fail(fmt::format("axis name '{}' is used twice", name));
}

AxisDef SpecReader::read_axis_def(const ConfigNode& axis, bool pointer_required) {
  AxisDef def;
  if (pointer_required || axis.has("pointer")) def.targets = parse_targets(axis.at("pointer"));
  def.source = axis.pointer();
  for (const std::string key : {"values", "linear", "log"}) {
    if (!axis.has(key)) continue;
    def.source += "/" + key;
    def.listed = key == "values";
  }
  def.name = axis.has("name")
                 ? axis.string("name")
                 : (def.targets.empty() ? std::string()
                                        : "/" + def.targets[0].part + def.targets[0].pointer);
  add_name(axis.has("name") ? axis.at("name") : axis, def.name);
  def.unit = axis.string_or("unit", "");
  for (auto& t : def.targets) {
    if (picks_part(t) && !def.unit.empty()) axis.at("unit").fail("a part file axis takes no unit");
  }
  r_.axis_names.push_back(def.name);
  return def;
}

Factor SpecReader::read_axis(const ConfigNode& axis) {
  axis.allow_only({"name", "pointer", "unit", "integer", "values", "linear", "log"});
  Factor f;
  f.axes.push_back(read_axis_def(axis, false));
  for (auto& v : detail::axis_values(axis)) f.values.push_back({std::move(v)});
  return f;
}

Factor SpecReader::read_zip(const ConfigNode& group) {
  group.allow_only({"group", "zip"});
  const ConfigNode zip = group.at("zip");
  if (zip.size() == 0) zip.fail("expected a non-empty list of axes");
  Factor f;
  std::vector<std::vector<Json>> columns;
  for (const auto& axis : zip.elements()) {
    axis.allow_only({"name", "pointer", "unit", "integer", "values", "linear", "log"});
    if (!axis.has("name") && !axis.has("pointer")) axis.fail("expected a \"name\" or \"pointer\"");
    f.axes.push_back(read_axis_def(axis, false));
    columns.push_back(detail::axis_values(axis));
    if (columns.back().size() != columns.front().size()) {
      axis.fail(fmt::format("expected {} values like the group's first axis, got {}",
                            columns.front().size(), columns.back().size()));
    }
  }
  for (std::size_t i = 0; i < columns.front().size(); ++i) {
    std::vector<Json> row;
    row.reserve(columns.size());
    for (const auto& c : columns) row.push_back(c[i]);
    f.values.push_back(std::move(row));
  }
  return f;
}

Factor SpecReader::read_samples(const ConfigNode& group) {
  group.allow_only({"group", "random", "latin_hypercube", "axes"});
  const bool latin = group.has("latin_hypercube");
  const ConfigNode how = group.at(latin ? "latin_hypercube" : "random");
  how.allow_only({"count", "seed"});
  const auto count = how.integer("count");
  if (count < 1 || count > 1'000'000) how.at("count").fail("expected a count in 1..1000000");
  const auto seed = how.integer("seed");
  if (seed < 0) how.at("seed").fail("expected a seed >= 0");
  const ConfigNode axes = group.at("axes");
  if (axes.size() == 0) axes.fail("expected a non-empty list of axes");
  Factor f;
  std::vector<SampleRange> ranges;
  for (const auto& axis : axes.elements()) {
    axis.allow_only({"name", "pointer", "unit", "integer", "from", "to", "scale"});
    f.axes.push_back(read_axis_def(axis, true));
    ranges.push_back(detail::sample_range(axis));
  }
  f.values = detail::sample_values(ranges, static_cast<std::size_t>(count),
                                   static_cast<std::uint64_t>(seed), latin);
  return f;
}

// Values that go to a part file key must name a loadable file; values with a unit must be
// numbers. Then every pointer is checked against the documents its part may be.
void SpecReader::check_factor(const ConfigNode& where, const Factor& factor) {
  for (std::size_t k = 0; k < factor.axes.size(); ++k) {
    const auto& axis = factor.axes[k];
    for (const auto& row : factor.values) {
      if (!axis.unit.empty() && !row[k].is_number())
        where.fail(fmt::format("axis '{}' has a unit, so its values must be numbers, got {}",
                               axis.name, row[k].dump()));
      for (const auto& t : axis.targets) {
        if (picks_part(t)) add_part_file(where, t.pointer.substr(1), row[k]);
      }
    }
  }
}

Reading SpecReader::read() {
  root_.allow_only({"name", "description", "scenario", "set", "axes", "filters", "plan_search"});
  load_scenario();
  if (auto set = root_.find("set")) {
    if (!set->is_object()) set->fail("expected an object of pointer: value");
    for (const auto& key : set->keys()) {
      const ConfigNode value = set->at(key);
      Edit e = parse_target(value, key);
      e.value = value.json();
      if (picks_part(e)) add_part_file(value, e.pointer.substr(1), e.value);
      r_.set.push_back(std::move(e));
    }
  }
  const ConfigNode axes = root_.at("axes");
  if (axes.size() == 0) axes.fail("expected a non-empty list of axes");
  for (const auto& entry : axes.elements()) {
    if (!entry.is_object()) entry.fail("expected an axis or a group object");
    Factor f;
    if (entry.has("zip")) {
      f = read_zip(entry);
    } else if (entry.has("random") || entry.has("latin_hypercube")) {
      f = read_samples(entry);
    } else {
      if (entry.has("group"))
        entry.fail("expected a group with \"zip\", \"random\" or \"latin_hypercube\"");
      f = read_axis(entry);
    }
    if (entry.has("group")) entry.string("group");
    check_factor(entry, f);
    r_.factors.push_back(std::move(f));
  }
  // Pointers are checked once every document a part may be is known.
  if (auto set = root_.find("set")) {
    for (std::size_t i = 0; i < r_.set.size(); ++i)
      check_target(set->at(set->keys()[i]), r_.set[i], false);
  }
  for (std::size_t i = 0; i < r_.factors.size(); ++i) {
    const ConfigNode entry = axes.at(i);
    for (const auto& axis : r_.factors[i].axes) {
      for (const auto& t : axis.targets) check_target(entry, t, true);
    }
  }
  return std::move(r_);
}

// The "plan_search" block; its "when" filter is returned apart (it needs the axis names).
PlanSearch read_plan_search(const ConfigNode& node) {
  if (!node.is_object())
    node.fail("expected an object {evaluations, budget, mode, top, constraints, when}");
  node.allow_only({"evaluations", "budget", "mode", "top", "constraints", "when"});
  PlanSearch search;
  const std::int64_t evaluations = node.integer_or("evaluations", search.evaluations);
  if (evaluations < 1 || evaluations > 100000)
    node.at("evaluations").fail("expected a count of final-mode simulations in 1..100000");
  search.evaluations = static_cast<int>(evaluations);
  if (auto budget = node.find("budget")) {
    if (budget->json().is_number()) {
      search.budget_s = budget->as_number();
    } else {
      const auto t = parse_duration(budget->as_string());
      search.budget_s = t ? t->to_s() : 0;
    }
    if (!(search.budget_s > 0 && search.budget_s <= 1e6))
      budget->fail(
          "expected a positive duration up to 1e6 s such as \"10s\" or a number of seconds");
  }
  if (node.has("mode")) search.mode = read_enum<sim::network::NetworkMode>(node, "mode");
  search.top = node.int_or("top", 1, 1, 1 << 20);
  if (auto constraints = node.find("constraints")) {
    const auto base = std::filesystem::path(node.file()).parent_path();
    search.constraints_file = (base / constraints->as_string()).lexically_normal().string();
    if (!std::filesystem::is_regular_file(search.constraints_file))
      constraints->fail(
          fmt::format("constraints file '{}' does not exist", search.constraints_file));
    if (!load_config(search.constraints_file).is_object())
      constraints->fail(fmt::format("expected {} to hold a constraints object (planner/README.md)",
                                    search.constraints_file));
  }
  return search;
}

}  // namespace

SweepSpec SweepSpec::load(const std::string& path) { return from_config(load_config(path)); }

SweepSpec SweepSpec::from_config(const ConfigNode& node) {
  if (!node.is_object()) node.fail("expected a sweep object");
  Reading r = SpecReader(node).read();
  SweepSpec spec;
  spec.file_ = node.file();
  spec.name_ = node.string_or("name", std::filesystem::path(node.file()).stem().string());
  // The name names the default output files: a plain file name, never a path ("../x/out"
  // wrote outside the working folder).
  const bool plain =
      !spec.name_.empty() && spec.name_ != "." && spec.name_ != ".." &&
      std::all_of(spec.name_.begin(), spec.name_.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (!plain)
    (node.has("name") ? node.at("name") : node)
        .fail(fmt::format("expected a name of letters, digits, '-', '_' and '.' (it names the "
                          "output files), got \"{}\"",
                          spec.name_));
  spec.scenario_file_ = r.scenario.file;
  spec.scenario_ = std::move(r.scenario);
  spec.part_files_ = std::move(r.part_files);
  spec.axis_names_ = std::move(r.axis_names);

  double total = 1;
  for (const auto& f : r.factors) total *= static_cast<double>(f.values.size());
  if (total > kMaxPoints)
    node.at("axes").fail(
        fmt::format("expected at most {:.0f} points, the axes make {:.0f}", kMaxPoints, total));
  std::vector<detail::PointFilter> filters;
  if (auto list = node.find("filters")) {
    for (const auto& f : list->elements())
      filters.push_back(detail::PointFilter::from_config(f, spec.axis_names_));
  }
  std::optional<detail::PointFilter> plan_when;
  if (auto search = node.find("plan_search")) {
    spec.plan_search_ = read_plan_search(*search);
    if (auto when = search->find("when"))
      plan_when = detail::PointFilter::from_config(*when, spec.axis_names_);
  }
  // Each row's edits once; a point copies those of its rows.
  std::vector<std::vector<std::vector<Edit>>> row_edits(r.factors.size());
  for (std::size_t i = 0; i < r.factors.size(); ++i) {
    for (std::size_t row = 0; row < r.factors[i].values.size(); ++row)
      row_edits[i].push_back(r.factors[i].edits(row));
  }
  // Odometer over the factors, the last one moving fastest.
  std::vector<std::size_t> digit(r.factors.size(), 0);
  for (std::size_t n = 0; n < static_cast<std::size_t>(total); ++n) {
    Point p;
    p.edits = r.set;
    for (std::size_t i = 0; i < r.factors.size(); ++i) {
      const auto& row = r.factors[i].values[digit[i]];
      p.values.insert(p.values.end(), row.begin(), row.end());
      const auto& edits = row_edits[i][digit[i]];
      p.edits.insert(p.edits.end(), edits.begin(), edits.end());
    }
    if (std::all_of(filters.begin(), filters.end(),
                    [&p](const detail::PointFilter& f) { return f.keeps(p.values); })) {
      p.index = spec.points_.size();
      p.plan_search = spec.plan_search_ && (!plan_when || plan_when->keeps(p.values));
      spec.points_.push_back(std::move(p));
    }
    for (std::size_t i = r.factors.size(); i-- > 0;) {
      if (++digit[i] < r.factors[i].values.size()) break;
      digit[i] = 0;
    }
  }
  if (spec.points_.empty()) node.at("filters").fail("the filters leave no point to run");
  spec.set_ = std::move(r.set);
  spec.factors_ = std::move(r.factors);
  return spec;
}

std::vector<Edit> Factor::edits(std::size_t row) const {
  std::vector<Edit> out;
  for (std::size_t k = 0; k < axes.size(); ++k) {
    for (auto e : axes[k].targets) {
      e.value = config_value(axes[k], values.at(row)[k]);
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::string format_axis_value(const Json& value) { return detail::format_number(value); }

}  // namespace strait::sweep
