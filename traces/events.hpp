#pragma once
// The records a Timeline stores: spans, instants, counter samples, flows and span
// arguments. Plain structs of ints and Times; names are ids into the Timeline's tables.

#include <cstdint>
#include <string_view>
#include <variant>

#include "sim/core/trace_sink.hpp"
#include "sim/core/units.hpp"
#include "traces/string_table.hpp"

namespace strait::traces {

/// Interned track name ("compute", "comm", ...); dense from 0 in order of first use.
using TrackId = sim::TraceTrackId;
/// Interned name, category, counter name or argument text.
using NameId = StringId;

/// The rank of job-wide counters and instants (written as one "global" process).
inline constexpr int kGlobalRank = -1;

/// A string argument value, interned in the timeline's name table.
struct InternedString {
  NameId id;
  bool operator==(const InternedString&) const = default;
};

/// One stored key/value argument of a span ("bytes": 1048576, "algo": "ring").
struct SpanArg {
  NameId key;
  std::variant<std::int64_t, double, InternedString> value;
};

/// An argument as given to add_span; integers stay exact, strings are copied (interned).
using Arg = sim::TraceArg;

/// A complete event: [start, end) on one rank's track.
struct Span {
  std::int32_t rank;
  TrackId track;
  NameId name;
  NameId category;
  Time start;
  Time end;
  std::uint32_t args_begin;  // slice of Timeline::span_args()
  std::uint32_t args_count;
};

/// A point event on a track, or job-wide when rank == kGlobalRank.
struct Instant {
  std::int32_t rank;
  TrackId track;
  NameId name;
  NameId category;
  Time time;
};

/// A sample of a named counter (e.g. utilization of a link) on a rank or kGlobalRank.
struct CounterSample {
  std::int32_t rank;
  NameId name;
  Time time;
  double value;
};

/// One end of a flow arrow: a point on a rank's track, inside the span it should bind to.
using FlowEnd = sim::TraceFlowEnd;

/// An arrow from one span to another (e.g. a ring step's send to its receive).
struct Flow {
  std::uint64_t id;
  NameId name;
  NameId category;
  FlowEnd from;
  FlowEnd to;
};

}  // namespace strait::traces
