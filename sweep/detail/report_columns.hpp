#pragma once
// The CSV columns of a sweep: "point", the axes, then the result columns below (from a
// point's report JSON, see sim/run/training_report_json.hpp), the plan columns when the
// sweep has a "plan_search" block, then "wall_s" and "error".
// Also the CSV quoting and line splitting the writer and the resume reader share.

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/config_node.hpp"

namespace strait::sweep::detail {

/// Result columns in order (between the axes and "wall_s").
const std::vector<std::string>& result_columns();
/// Plan columns in order (after the result columns, with a plan search only).
const std::vector<std::string>& plan_columns();
/// Columns whose values are wall-clock times (they differ between runs).
bool is_wall_time_column(std::string_view name);
/// The header of a sweep with these axes, with or without the plan columns.
std::vector<std::string> csv_header(const std::vector<std::string>& axis_names,
                                    bool plan_search = false);

/// The result columns' values of one report (numbers in shortest round-trip form).
std::vector<std::string> result_fields(const Json& report);
/// The text of a JSON number or boolean as a CSV field.
std::string format_number(const Json& value);

/// A CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
std::string csv_field(std::string_view text);
/// A CSV line (without its line break) from fields, quoting those that need it.
std::string csv_line(const std::vector<std::string>& fields);
/// The fields of one CSV line (RFC 4180 quoting; the line holds no unquoted line break).
std::vector<std::string> split_csv_line(std::string_view line);

}  // namespace strait::sweep::detail
