#pragma once
// Reads a PyTorch profiler (Kineto) Chrome trace JSON back into a Timeline, so measured
// runs can be compared with simulated ones and shown with the same tools.
//
// Read: complete events (ph "X": name, cat, pid, tid, ts, dur in microseconds, scalar
// args) and "M" thread_name / process_name metadata; other phases are skipped. Accepts
// the object form {"traceEvents": [...]} and the bare array form. Array and object args
// ("Input Dims", "grid") are skipped unless `keep_structured_args` keeps them as their
// compact JSON text; booleans and nulls are always skipped.
// Mapping: every event goes to `rank`, or to rank = pid when `pid_as_rank` (traces that
// strait wrote, or one pid per GPU); the track is the thread's name ("stream 7"), else
// "pid P tid T". Times are rebased to `origin_us` (default: the earliest span's ts) and
// rounded to picoseconds; Kineto's epoch timestamps (~1e15 us) carry ~0.25 us of
// double-precision error before rebasing. Bad input throws ConfigError naming the file,
// the event's JSON pointer and what was expected; an unreadable file throws IoError.

#include <optional>
#include <string>

#include "sim/core/config_node.hpp"
#include "traces/timeline.hpp"

namespace strait::traces {

struct KinetoReadOptions {
  /// The rank that receives all events (ignored when pid_as_rank).
  int rank = 0;
  /// Use each event's integer pid as its rank.
  bool pid_as_rank = false;
  /// Microsecond timestamp that becomes time zero; unset = the earliest span's ts.
  std::optional<double> origin_us = std::nullopt;
  /// Keep array and object args as string args holding their compact JSON text
  /// ("Input Dims" -> "[[512,256],[256,128]]").
  bool keep_structured_args = false;
};

/// Appends the spans of the Kineto/Chrome trace at `path` to `into`.
void read_kineto_trace(const std::string& path, Timeline& into,
                       const KinetoReadOptions& options = {});
/// The same from an already parsed document (callers that also read its top-level fields,
/// e.g. "deviceProperties", parse the file once); errors name `document`'s file.
void read_kineto_trace(const ConfigNode& document, Timeline& into,
                       const KinetoReadOptions& options = {});
/// Reads the trace at `path` into a new Timeline.
Timeline read_kineto_trace(const std::string& path, const KinetoReadOptions& options = {});

}  // namespace strait::traces
