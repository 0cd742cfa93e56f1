#include "sweep/detail/report_columns.hpp"

#include <fmt/format.h>

#include "sim/topology/cluster.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::sweep::detail {
namespace {

// A result column and where its value sits in the report JSON. A missing value (a
// purpose with no traffic) reads 0.
struct ResultColumn {
  std::string name;
  Json::json_pointer pointer;
};

std::vector<ResultColumn> make_columns() {
  std::vector<ResultColumn> columns;
  auto add = [&columns](std::string name, const std::string& pointer) {
    columns.push_back({std::move(name), Json::json_pointer(pointer)});
  };
  for (const char* key :
       {"gpus", "mode", "step_time_ms", "step_time_p50_ms", "step_time_p99_ms", "samples_per_sec",
        "mfu", "peak_memory_gib", "memory_capacity_gib", "memory_fits"})
    add(key, fmt::format("/{}", key));
  add("compute_ms", "/breakdown_ms/compute");
  for (const auto& [value, c] : enum_names(sim::workload::CommClass{}))
    add(fmt::format("exposed_{}_ms", c), fmt::format("/breakdown_ms/exposed_{}", c));
  add("straggler_wait_ms", "/breakdown_ms/straggler_wait");
  add("bubble_ms", "/breakdown_ms/bubble");
  for (const auto& [value, link] : enum_names(sim::topology::LinkClass{}))
    add(fmt::format("{}_bytes", link), fmt::format("/traffic_bytes/{}", link));
  for (const auto& [value, c] : enum_names(sim::workload::CommClass{}))
    add(fmt::format("cross_dc_{}_bytes", c),
        fmt::format("/traffic_bytes_by_comm_class/{}/cross_dc", c));
  for (const char* key : {"ops", "events", "build_wall_s", "sim_wall_s"})
    add(key, fmt::format("/{}", key));
  return columns;
}

const std::vector<ResultColumn>& columns() {
  static const std::vector<ResultColumn> kColumns = make_columns();
  return kColumns;
}

}  // namespace

const std::vector<std::string>& result_columns() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& c : columns()) names.push_back(c.name);
    return names;
  }();
  return kNames;
}

const std::vector<std::string>& plan_columns() {
  static const std::vector<std::string> kNames = {"plan_searched",
                                                  "plan_found",
                                                  "plan_vs_baseline",
                                                  "plan_baseline_step_ms",
                                                  "plan_sparse_group_size",
                                                  "plan_dense",
                                                  "plan_cp_degree",
                                                  "plan_pipeline_depth",
                                                  "plan_tables",
                                                  "plan_budget_reached",
                                                  "plan_wall_s"};
  return kNames;
}

bool is_wall_time_column(std::string_view name) {
  return name == "build_wall_s" || name == "sim_wall_s" || name == "wall_s" ||
         name == "plan_wall_s";
}

std::vector<std::string> csv_header(const std::vector<std::string>& axis_names, bool plan_search) {
  std::vector<std::string> header = {"point"};
  header.insert(header.end(), axis_names.begin(), axis_names.end());
  header.insert(header.end(), result_columns().begin(), result_columns().end());
  if (plan_search) header.insert(header.end(), plan_columns().begin(), plan_columns().end());
  header.emplace_back("wall_s");
  header.emplace_back("error");
  return header;
}

std::string format_number(const Json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::vector<std::string> result_fields(const Json& report) {
  std::vector<std::string> fields;
  fields.reserve(columns().size());
  for (const auto& c : columns()) {
    fields.push_back(report.contains(c.pointer) ? format_number(report.at(c.pointer)) : "0");
  }
  return fields;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += csv_field(fields[i]);
  }
  return line;
}

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace strait::sweep::detail
