#pragma once
// Writes a Timeline as a Chrome trace event JSON file, which Perfetto UI
// (ui.perfetto.dev -> Open trace file) and chrome://tracing open.
//
// Format (object form): {"traceEvents": [...], "displayTimeUnit": "ns", "metadata": {...}}.
//   rank r      -> pid r, named by "M" process_name ("rank r" unless set), sorted by rank;
//   kGlobalRank -> pid kGlobalPid, named "global", sorted first;
//   track t     -> tid r * stride + t + 1 (unique across ranks; stride 1000 while there are
//                  fewer than 1000 tracks), named by "M" thread_name, sorted by TrackId;
//   spans "X", instants "i", counters "C" (args {"value": v}), flows "s" + "f" with bp "e".
// ts/dur are microseconds written exactly from integer picoseconds (1,500,000 ps -> 1.5).
// Events are streamed (never one big JSON value) and the file is replaced atomically.
// Limits: a flow is written only when both of its ends' ranks are included; non-finite
// counter values are written as null.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/timeline.hpp"

namespace strait::traces {

/// The pid that job-wide (kGlobalRank) counters and instants are written under.
inline constexpr int kGlobalPid = 1'000'000'000;

struct ChromeTraceOptions {
  /// Ranks whose events are written; empty means all. Job-wide events are always kept.
  std::vector<int> ranks;
  bool include_counters = true;
  bool include_flows = true;
  bool include_instants = true;
  /// Written as the top-level "metadata" object when not null (e.g. config, seed, version).
  nlohmann::json metadata;
};

/// Writes `timeline` to `path` in Chrome trace JSON; throws strait::IoError on failure.
void write_chrome_trace(const Timeline& timeline, const std::string& path,
                        const ChromeTraceOptions& options = {});

}  // namespace strait::traces
