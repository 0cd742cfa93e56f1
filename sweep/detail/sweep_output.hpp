#pragma once
// SweepOutput: the two files of a sweep, a CSV (one row per point) and JSON Lines (one
// report per point), growing in point order.
//
// Invariants
//   - The header is written atomically (temporary file + rename); rows are then appended
//     with one write() each, the JSON line first, so after a kill each file holds whole
//     rows plus at most one partial last line, and the CSV never has a row whose JSON
//     line is missing.
//   - Both files always hold a prefix of the sweep's points, in order.
//   - Resuming reads both files, keeps the leading rows whose axis values match the
//     sweep's points in order (and whose JSON line matches), truncates whatever follows
//     (a half-written line), and appends from there. A row that names another point is
//     an error, so rows of a different sweep are never mixed in or thrown away.

#include <string>
#include <vector>

#include "sweep/detail/point_runner.hpp"

namespace strait::sweep::detail {

class SweepOutput {
 public:
  /// Opens the outputs for `spec` (creating their folders): fresh (replacing any files) or,
  /// with `resume`, continuing the existing ones. Throws IoError, or ResumeMismatch when the
  /// existing files belong to another sweep.
  SweepOutput(const SweepSpec& spec, std::string csv_path, std::string jsonl_path, bool resume);
  ~SweepOutput();
  SweepOutput(const SweepOutput&) = delete;
  SweepOutput& operator=(const SweepOutput&) = delete;

  /// Points already in the files (the first `resumed()` points of the sweep).
  std::size_t resumed() const { return resumed_; }
  /// Of those, how many are error rows.
  std::size_t resumed_failures() const { return resumed_failures_; }

  /// Appends one point's row and JSON line (it must be point number resumed() + written).
  void append(const PointOutcome& outcome);

 private:
  void start_fresh(const std::vector<std::string>& header);
  void resume(const SweepSpec& spec, const std::vector<std::string>& header);

  std::string csv_path_, jsonl_path_;
  int csv_fd_ = -1, jsonl_fd_ = -1;
  std::size_t resumed_ = 0, resumed_failures_ = 0;
};

}  // namespace strait::sweep::detail
