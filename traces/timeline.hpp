#pragma once
// Timeline: what happened on which rank and stream, as the simulator (run, network) or a
// profiler trace reports it; the input of the Chrome/Perfetto writer and of reports.
//
// Model (Chrome trace terms in brackets): a *rank* [process] has *tracks* [threads] such as
// "compute", "comm", "nvlink", "scale_out", "cross_dc". On a track lie *spans* [complete
// events "X"] and *instants* ["i"]; a rank, or the whole job (kGlobalRank), has *counters*
// ["C"], e.g. a link's utilization over time; *flows* ["s"/"f"] link a point on one track
// to a point on another, e.g. the ranks of one collective step.
//
// Cost: built for millions of spans. Track names, span names, categories, counter names
// and argument keys/strings are interned (StringTable), so a span is a 40-byte struct of
// ints and Times plus an optional slice of a shared argument pool.
// Limits: no nesting checks (spans on one track may overlap; Perfetto nests or staggers
// them); times are the caller's (usually >= 0); `end >= start` is a precondition.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "traces/events.hpp"
#include "traces/string_table.hpp"

namespace strait::traces {

/// The simulator's trace sink (sim/core/trace_sink.hpp), and what readers fill.
class Timeline final : public sim::TraceSink {
 public:
  // Names. Interning once and passing ids is the fast path for hot loops.
  /// The id of track `name`, adding it if new; tracks sort in order of first use.
  TrackId track(std::string_view name) override { return tracks_.intern(name); }
  /// The id of a span/counter/category/argument text, adding it if new.
  NameId name(std::string_view text) override { return names_.intern(text); }
  const std::string& track_name(TrackId id) const { return tracks_.str(id); }
  const std::string& name_of(NameId id) const { return names_.str(id); }
  std::size_t track_count() const { return tracks_.size(); }
  std::size_t name_count() const { return names_.size(); }

  /// Names rank `rank` in viewers (e.g. "rank 3 (dc0/host0/gpu3)"); default "rank N".
  void set_rank_name(int rank, std::string display_name) override;
  /// The display name of `rank`, or "" if none was set.
  std::string_view rank_name(int rank) const;
  const std::map<int, std::string>& rank_names() const { return rank_names_; }

  // Recording.
  /// Records span [start, end) on `rank`'s `track`; returns its index in spans().
  std::size_t add_span(int rank, TrackId track, NameId name, NameId category, Time start, Time end);
  std::size_t add_span(int rank, TrackId track, NameId name, NameId category, Time start, Time end,
                       std::span<const Arg> args) override;
  std::size_t add_span(int rank, TrackId track, NameId name, NameId category, Time start, Time end,
                       std::initializer_list<Arg> args) {
    return add_span(rank, track, name, category, start, end, std::span(args.begin(), args.size()));
  }
  /// Convenience form that interns the strings.
  std::size_t add_span(int rank, std::string_view track, std::string_view name,
                       std::string_view category, Time start, Time end,
                       std::initializer_list<Arg> args = {});

  /// Records a point event; kGlobalRank makes it job-wide.
  void add_instant(int rank, TrackId track, NameId name, NameId category, Time t);
  void add_instant(int rank, std::string_view track, std::string_view name,
                   std::string_view category, Time t);
  /// Records `value` of counter `name` on `rank_or_global` from time `t` on.
  void add_counter(int rank_or_global, NameId name, Time t, double value);
  void add_counter(int rank_or_global, std::string_view name, Time t, double value);
  /// Records an arrow `id` from one track point to another; each end should lie inside a span.
  void add_flow(std::uint64_t id, FlowEnd from, FlowEnd to, NameId name, NameId category) override;
  void add_flow(std::uint64_t id, FlowEnd from, FlowEnd to, std::string_view name = "flow",
                std::string_view category = "flow");

  /// Reserves room for `n` more spans.
  void reserve_spans(std::size_t n) { spans_.reserve(spans_.size() + n); }

  // Reading.
  const std::vector<Span>& spans() const { return spans_; }
  std::span<const SpanArg> args(const Span& span) const {
    return std::span(span_args_).subspan(span.args_begin, span.args_count);
  }
  const std::vector<SpanArg>& span_args() const { return span_args_; }
  const std::vector<Instant>& instants() const { return instants_; }
  const std::vector<CounterSample>& counters() const { return counters_; }
  const std::vector<Flow>& flows() const { return flows_; }
  /// Every rank (not kGlobalRank) that has an event or a name, ascending.
  std::vector<int> ranks() const;
  /// The latest end or time of any event; zero when empty.
  Time end_time() const;

 private:
  StringTable tracks_;
  StringTable names_;
  std::map<int, std::string> rank_names_;
  std::vector<Span> spans_;
  std::vector<SpanArg> span_args_;
  std::vector<Instant> instants_;
  std::vector<CounterSample> counters_;
  std::vector<Flow> flows_;
};

}  // namespace strait::traces
