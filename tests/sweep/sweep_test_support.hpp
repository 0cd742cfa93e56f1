#pragma once
// Helpers shared by the sweep tests: split a file into lines, and drop what legitimately
// differs between two runs of the same sweep (wall-time columns and report wall times).

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strait_process.hpp"
#include "sweep/detail/report_columns.hpp"

namespace strait::sweep::testing {

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The CSV at `path` without its wall-time columns (the only ones that differ between runs).
inline std::string csv_without_wall_times(const std::string& path) {
  const auto rows = lines(cli::testing::read_text(path));
  if (rows.empty()) return "";
  const auto header = detail::split_csv_line(rows[0]);
  std::string out;
  for (const auto& row : rows) {
    const auto fields = detail::split_csv_line(row);
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i >= header.size() || !detail::is_wall_time_column(header[i])) kept.push_back(fields[i]);
    }
    out += detail::csv_line(kept) + "\n";
  }
  return out;
}

/// The JSON Lines at `path` without the reports' wall times.
inline std::string jsonl_without_wall_times(const std::string& path) {
  std::string out;
  for (const auto& line : lines(cli::testing::read_text(path))) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("result")) {
      j["result"].erase("build_wall_s");
      j["result"].erase("sim_wall_s");
    }
    out += j.dump() + "\n";
  }
  return out;
}

}  // namespace strait::sweep::testing
