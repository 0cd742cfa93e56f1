#include "calibration/detail/kineto_trace_index.hpp"

#include <algorithm>
#include <variant>

namespace strait::calibration::detail {

KinetoTraceIndex::KinetoTraceIndex(traces::Timeline& trace)
    : trace_(trace),
      kernel_(trace.name("kernel")),
      memcpy_(trace.name("gpu_memcpy")),
      memset_(trace.name("gpu_memset")),
      parent_(trace.spans().size(), kNoOp) {
  const traces::NameId cpu_op = trace.name("cpu_op");
  const traces::NameId runtime = trace.name("cuda_runtime");
  const traces::NameId driver = trace.name("cuda_driver");
  for (std::size_t i = 0; i < trace.spans().size(); ++i) {
    const traces::NameId c = span(i).category;
    if (c == cpu_op) {
      ops_by_track_[span(i).track].push_back(i);
      if (auto id = integer(i, "External id")) op_by_external_id_.emplace(*id, i);
    } else if (c == runtime || c == driver) {
      if (auto id = integer(i, "correlation")) launch_by_correlation_.emplace(*id, i);
    }
  }
  // Parents by a stack over each thread's ops in start order (outer first on ties).
  for (auto& [track, ops] : ops_by_track_) {
    std::sort(ops.begin(), ops.end(), [&](std::size_t a, std::size_t b) {
      if (span(a).start != span(b).start) return span(a).start < span(b).start;
      return span(a).end > span(b).end;
    });
    std::vector<std::size_t> open;
    for (std::size_t op : ops) {
      while (!open.empty() && span(open.back()).end <= span(op).start) open.pop_back();
      parent_[op] = open.empty() ? kNoOp : open.back();
      open.push_back(op);
    }
  }
}

std::size_t KinetoTraceIndex::innermost_enclosing(traces::TrackId track, Time t) const {
  const auto found = ops_by_track_.find(track);
  if (found == ops_by_track_.end()) return kNoOp;
  const auto& ops = found->second;
  const auto after = std::upper_bound(
      ops.begin(), ops.end(), t, [&](Time time, std::size_t op) { return time < span(op).start; });
  if (after == ops.begin()) return kNoOp;
  // The last op started by t, or one of its ancestors, is the innermost op around t.
  std::size_t op = *(after - 1);
  while (op != kNoOp && span(op).end < t) op = parent_[op];
  return op;
}

std::vector<std::size_t> KinetoTraceIndex::linked_ops(std::size_t i) const {
  std::size_t op = kNoOp;
  if (auto id = integer(i, "External id")) {
    if (auto it = op_by_external_id_.find(*id); it != op_by_external_id_.end()) op = it->second;
  }
  if (op == kNoOp) {
    if (auto id = integer(i, "correlation")) {
      if (auto it = launch_by_correlation_.find(*id); it != launch_by_correlation_.end()) {
        op = innermost_enclosing(span(it->second).track, span(it->second).start);
      }
    }
  }
  std::vector<std::size_t> chain;
  for (; op != kNoOp; op = parent_[op]) chain.push_back(op);
  return chain;
}

const traces::SpanArg* KinetoTraceIndex::find_arg(std::size_t i, std::string_view key) const {
  for (const traces::SpanArg& arg : trace_.args(span(i))) {
    if (trace_.name_of(arg.key) == key) return &arg;
  }
  return nullptr;
}

std::optional<std::int64_t> KinetoTraceIndex::integer(std::size_t i, std::string_view key) const {
  const traces::SpanArg* arg = find_arg(i, key);
  if (!arg) return std::nullopt;
  if (const auto* v = std::get_if<std::int64_t>(&arg->value)) return *v;
  return std::nullopt;
}

std::optional<std::string> KinetoTraceIndex::text(std::size_t i, std::string_view key) const {
  const traces::SpanArg* arg = find_arg(i, key);
  if (!arg) return std::nullopt;
  if (const auto* v = std::get_if<traces::InternedString>(&arg->value)) {
    return trace_.name_of(v->id);
  }
  return std::nullopt;
}

std::optional<nlohmann::json> KinetoTraceIndex::structured(std::size_t i,
                                                           std::string_view key) const {
  const auto raw = text(i, key);
  if (!raw) return std::nullopt;
  nlohmann::json value = nlohmann::json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

}  // namespace strait::calibration::detail
