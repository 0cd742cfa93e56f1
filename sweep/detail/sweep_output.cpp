#include "sweep/detail/sweep_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sweep/detail/report_columns.hpp"
#include "sweep/sweep.hpp"

namespace strait::sweep::detail {
namespace {

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot read ({})", path, std::strerror(errno)));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The complete lines of `text` (each ended by a line break) and where each ends.
struct Lines {
  std::vector<std::string_view> lines;
  std::vector<std::size_t> ends;  // offset just past each line's break
};

Lines complete_lines(const std::string& text) {
  Lines out;
  std::size_t begin = 0;
  for (auto nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', begin)) {
    out.lines.emplace_back(text.data() + begin, nl - begin);
    out.ends.push_back(nl + 1);
    begin = nl + 1;
  }
  return out;
}

std::string describe(const std::vector<std::string>& names,
                     const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t k = 0; k < names.size() && k < values.size(); ++k)
    out += fmt::format("{}{}={}", k ? ", " : "", names[k], values[k]);
  return out;
}

int open_append(const std::string& path) {
  refuse_read_only(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    throw IoError(fmt::format("{}: cannot open for writing ({})", path, std::strerror(errno)));
  return fd;
}

void write_all(int fd, const std::string& path, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw IoError(fmt::format("{}: cannot write ({})", path, std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

SweepOutput::SweepOutput(const SweepSpec& spec, std::string csv_path, std::string jsonl_path,
                         bool resume)
    : csv_path_(std::move(csv_path)), jsonl_path_(std::move(jsonl_path)) {
  for (const auto& path : {csv_path_, jsonl_path_}) {
    const auto dir = std::filesystem::path(path).parent_path();
    std::error_code error;
    if (!dir.empty() && !std::filesystem::create_directories(dir, error) && error)
      throw IoError(
          fmt::format("{}: cannot create the folder ({})", dir.string(), error.message()));
  }
  const auto header = csv_header(spec.axis_names(), spec.plan_search().has_value());
  const bool csv = std::filesystem::exists(csv_path_), jsonl = std::filesystem::exists(jsonl_path_);
  if (resume && (csv || jsonl)) {
    // One of the pair missing: the other is still checked to be this sweep's before
    // anything is cut (a CSV of another sweep whose .jsonl was deleted was overwritten).
    if (!csv) write_file_atomically(csv_path_, csv_line(header) + "\n");
    if (!jsonl) write_file_atomically(jsonl_path_, "");
    this->resume(spec, header);
  } else {
    start_fresh(header);
  }
  csv_fd_ = open_append(csv_path_);
  jsonl_fd_ = open_append(jsonl_path_);
}

SweepOutput::~SweepOutput() {
  if (csv_fd_ >= 0) ::close(csv_fd_);
  if (jsonl_fd_ >= 0) ::close(jsonl_fd_);
}

void SweepOutput::start_fresh(const std::vector<std::string>& header) {
  write_file_atomically(csv_path_, csv_line(header) + "\n");
  write_file_atomically(jsonl_path_, "");
}

void SweepOutput::resume(const SweepSpec& spec, const std::vector<std::string>& header) {
  const std::string csv = read_whole(csv_path_);
  const std::string jsonl = read_whole(jsonl_path_);
  const Lines rows = complete_lines(csv);
  const Lines json_lines = complete_lines(jsonl);
  if (rows.lines.empty() || rows.lines[0] != csv_line(header)) {
    throw ResumeMismatch(fmt::format(
        "{}: its header is not this sweep's columns, so it holds another sweep's results "
        "(expected: {})",
        csv_path_, csv_line(header)));
  }
  const auto& names = spec.axis_names();
  auto expected = [&](std::size_t i) {
    std::vector<std::string> v;
    for (const auto& value : spec.points()[i].values) v.push_back(format_axis_value(value));
    return v;
  };
  std::size_t csv_rows = rows.lines.size() - 1;
  for (std::size_t i = 0; i < csv_rows; ++i) {
    const auto fields = split_csv_line(rows.lines[i + 1]);
    std::vector<std::string> found;
    for (std::size_t k = 1; k <= names.size() && k < fields.size(); ++k) found.push_back(fields[k]);
    if (i >= spec.points().size() || fields.size() != header.size() ||
        fields[0] != std::to_string(i) || found != expected(i)) {
      throw ResumeMismatch(fmt::format(
          "{}: line {} ({}) is not point {} of this sweep{}; the file holds another sweep's "
          "results (write elsewhere with --csv, or remove it)",
          csv_path_, i + 2, describe(names, found), i,
          i < spec.points().size() ? fmt::format(" ({})", describe(names, expected(i))) : ""));
    }
  }
  // Every JSON line is checked, also past the CSV's rows: the lines cut below must be
  // this sweep's too.
  std::size_t json_rows = 0;
  for (; json_rows < json_lines.lines.size(); ++json_rows) {
    if (json_rows >= spec.points().size()) {
      throw ResumeMismatch(fmt::format(
          "{}: line {} is past this sweep's {} points; the file holds another sweep's results",
          jsonl_path_, json_rows + 1, spec.points().size()));
    }
    const auto line = Json::parse(json_lines.lines[json_rows], nullptr, false);
    bool ok = line.is_object() && line.contains("point") && line["point"] == json_rows &&
              line.contains("axes") && line["axes"].is_object();
    for (std::size_t k = 0; ok && k < names.size(); ++k) {
      ok = line["axes"].contains(names[k]) &&
           format_axis_value(line["axes"][names[k]]) == expected(json_rows)[k];
    }
    if (!ok) {
      throw ResumeMismatch(fmt::format(
          "{}: line {} is not point {} of this sweep ({}); the file holds another sweep's results",
          jsonl_path_, json_rows + 1, json_rows, describe(names, expected(json_rows))));
    }
  }
  resumed_ = std::min(csv_rows, json_rows);
  for (std::size_t i = 0; i < resumed_; ++i) {
    if (!split_csv_line(rows.lines[i + 1]).back().empty()) ++resumed_failures_;
  }
  // Drop what follows the kept rows: a half-written line, or a row whose JSON line is missing.
  std::filesystem::resize_file(csv_path_, rows.ends[resumed_]);
  std::filesystem::resize_file(jsonl_path_, resumed_ == 0 ? 0 : json_lines.ends[resumed_ - 1]);
}

void SweepOutput::append(const PointOutcome& outcome) {
  write_all(jsonl_fd_, jsonl_path_, outcome.json_line);
  write_all(csv_fd_, csv_path_, outcome.csv_row);
}

}  // namespace strait::sweep::detail
