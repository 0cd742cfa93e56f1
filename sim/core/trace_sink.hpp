#pragma once
// TraceSink: where the simulator records what happened on which rank and track, when the
// caller asks for a trace. The simulator (sim/run) writes to this interface only; the
// timeline of traces/ (traces/timeline.hpp) implements it, and cli/ hands one to a run, so
// nothing in sim/ depends on the trace formats.
//
// Model (Chrome trace terms in brackets): a rank [process] has tracks [threads]; on a
// track lie spans [complete events] with arguments; flows link a point on one track to a
// point on another. Names are interned: ids from track() and name() are cheap to pass in
// hot loops.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "sim/core/units.hpp"

namespace strait::sim {

/// Interned track name ("compute", "comm", ...).
using TraceTrackId = std::int32_t;
/// Interned span name, category or argument text.
using TraceNameId = std::int32_t;

/// An argument of a span; integers stay exact, strings are copied by the sink.
struct TraceArg {
  template <typename T>
  requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)TraceArg(std::string_view k, T v)
      : key(k), value(static_cast<std::int64_t>(v)) {}
  TraceArg(std::string_view k, double v) : key(k), value(v) {}
  TraceArg(std::string_view k, std::string_view v) : key(k), value(v) {}
  TraceArg(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}

  std::string_view key;
  std::variant<std::int64_t, double, std::string_view> value;
};

/// One end of a flow arrow: a point on a rank's track, inside the span it should bind to.
struct TraceFlowEnd {
  std::int32_t rank;
  TraceTrackId track;
  Time time;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;

  /// The id of track `name`, adding it if new.
  virtual TraceTrackId track(std::string_view name) = 0;
  /// The id of a span name, category or argument text, adding it if new.
  virtual TraceNameId name(std::string_view text) = 0;
  /// Names `rank` in viewers (e.g. "rank 3 (dc0/host0/gpu3)").
  virtual void set_rank_name(int rank, std::string display_name) = 0;
  /// Records span [start, end) on `rank`'s `track`; returns its index among the spans.
  virtual std::size_t add_span(int rank, TraceTrackId track, TraceNameId name, TraceNameId category,
                               Time start, Time end, std::span<const TraceArg> args) = 0;
  /// Records an arrow `id` from one track point to another.
  virtual void add_flow(std::uint64_t id, TraceFlowEnd from, TraceFlowEnd to, TraceNameId name,
                        TraceNameId category) = 0;

  std::size_t add_span(int rank, TraceTrackId track, TraceNameId name, TraceNameId category,
                       Time start, Time end) {
    return add_span(rank, track, name, category, start, end, std::span<const TraceArg>());
  }
  std::size_t add_span(int rank, TraceTrackId track, TraceNameId name, TraceNameId category,
                       Time start, Time end, std::initializer_list<TraceArg> args) {
    return add_span(rank, track, name, category, start, end,
                    std::span<const TraceArg>(args.begin(), args.size()));
  }
  /// The same, interning the strings.
  std::size_t add_span(int rank, std::string_view track, std::string_view name,
                       std::string_view category, Time start, Time end,
                       std::initializer_list<TraceArg> args = {}) {
    return add_span(rank, this->track(track), this->name(name), this->name(category), start, end,
                    std::span<const TraceArg>(args.begin(), args.size()));
  }
  void add_flow(std::uint64_t id, TraceFlowEnd from, TraceFlowEnd to,
                std::string_view name = "flow", std::string_view category = "flow") {
    add_flow(id, from, to, this->name(name), this->name(category));
  }

 protected:
  TraceSink() = default;
  TraceSink(const TraceSink&) = default;
  TraceSink& operator=(const TraceSink&) = default;
  TraceSink(TraceSink&&) = default;
  TraceSink& operator=(TraceSink&&) = default;
};

}  // namespace strait::sim
