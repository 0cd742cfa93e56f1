#pragma once
// KinetoTraceIndex: a Kineto trace read into a Timeline (structured args kept as JSON
// text), indexed to link each GPU event to the CPU ops that launched it.
//
// Link: the CPU op (cat "cpu_op") whose "External id" the event carries, else the innermost
// op around the event's launch (the "cuda_runtime"/"cuda_driver" event with its
// "correlation") on the launching thread; then the ops enclosing that op, found by time on
// the same thread. Nesting is derived once per thread from start/end (outer first on equal
// starts), so a lookup walks only the chain of enclosing ops.
// Limits: one process per trace (External ids and correlations are not keyed by pid).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/timeline.hpp"

namespace strait::calibration::detail {

/// "No op": the value of a span index that names none.
inline constexpr std::size_t kNoOp = static_cast<std::size_t>(-1);

class KinetoTraceIndex {
 public:
  /// Indexes `trace` (which it interns category names into; it must outlive the index).
  explicit KinetoTraceIndex(traces::Timeline& trace);

  std::size_t span_count() const { return trace_.spans().size(); }
  const traces::Span& span(std::size_t i) const { return trace_.spans()[i]; }
  const std::string& name(std::size_t i) const { return trace_.name_of(span(i).name); }
  /// Kernels, memcpys and memsets.
  bool is_gpu_event(std::size_t i) const {
    const traces::NameId c = span(i).category;
    return c == kernel_ || c == memcpy_ || c == memset_;
  }
  bool is_memcpy(std::size_t i) const { return span(i).category == memcpy_; }
  bool is_memset(std::size_t i) const { return span(i).category == memset_; }

  /// The CPU ops GPU event `i` belongs to (span indices), innermost first.
  std::vector<std::size_t> linked_ops(std::size_t i) const;

  /// Span `i`'s integer arg `key`, if it has one.
  std::optional<std::int64_t> integer(std::size_t i, std::string_view key) const;
  /// Span `i`'s string arg `key` (or a structured one's JSON text).
  std::optional<std::string> text(std::size_t i, std::string_view key) const;
  /// A structured arg ("Input Dims") parsed back; nullopt if absent or not JSON.
  std::optional<nlohmann::json> structured(std::size_t i, std::string_view key) const;

 private:
  const traces::SpanArg* find_arg(std::size_t i, std::string_view key) const;
  std::size_t innermost_enclosing(traces::TrackId track, Time t) const;

  traces::Timeline& trace_;
  traces::NameId kernel_, memcpy_, memset_;
  std::map<std::int64_t, std::size_t> op_by_external_id_;
  std::map<std::int64_t, std::size_t> launch_by_correlation_;
  std::map<traces::TrackId, std::vector<std::size_t>> ops_by_track_;  // by start
  std::vector<std::size_t> parent_;  // enclosing op on the same thread, or kNoOp
};

}  // namespace strait::calibration::detail
