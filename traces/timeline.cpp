#include "traces/timeline.hpp"

#include <algorithm>
#include <cassert>
#include <set>

namespace strait::traces {

static_assert(sizeof(Span) <= 40, "Span must stay compact: millions are recorded");

void Timeline::set_rank_name(int rank, std::string display_name) {
  rank_names_[rank] = std::move(display_name);
}

std::string_view Timeline::rank_name(int rank) const {
  auto it = rank_names_.find(rank);
  return it == rank_names_.end() ? std::string_view() : std::string_view(it->second);
}

std::size_t Timeline::add_span(int rank, TrackId track, NameId name, NameId category, Time start,
                               Time end) {
  assert(end >= start);
  spans_.push_back(Span{rank, track, name, category, start, end,
                        static_cast<std::uint32_t>(span_args_.size()), 0});
  return spans_.size() - 1;
}

std::size_t Timeline::add_span(int rank, TrackId track, NameId name, NameId category, Time start,
                               Time end, std::span<const Arg> args) {
  const std::size_t index = add_span(rank, track, name, category, start, end);
  for (const Arg& arg : args) {
    SpanArg stored{names_.intern(arg.key), std::int64_t{0}};
    if (const auto* i = std::get_if<std::int64_t>(&arg.value)) {
      stored.value = *i;
    } else if (const auto* d = std::get_if<double>(&arg.value)) {
      stored.value = *d;
    } else {
      stored.value = InternedString{names_.intern(std::get<std::string_view>(arg.value))};
    }
    span_args_.push_back(stored);
  }
  spans_[index].args_count = static_cast<std::uint32_t>(args.size());
  return index;
}

std::size_t Timeline::add_span(int rank, std::string_view track, std::string_view name,
                               std::string_view category, Time start, Time end,
                               std::initializer_list<Arg> args) {
  return add_span(rank, this->track(track), this->name(name), this->name(category), start, end,
                  args);
}

void Timeline::add_instant(int rank, TrackId track, NameId name, NameId category, Time t) {
  instants_.push_back(Instant{rank, track, name, category, t});
}

void Timeline::add_instant(int rank, std::string_view track, std::string_view name,
                           std::string_view category, Time t) {
  add_instant(rank, this->track(track), this->name(name), this->name(category), t);
}

void Timeline::add_counter(int rank_or_global, NameId name, Time t, double value) {
  counters_.push_back(CounterSample{rank_or_global, name, t, value});
}

void Timeline::add_counter(int rank_or_global, std::string_view name, Time t, double value) {
  add_counter(rank_or_global, this->name(name), t, value);
}

void Timeline::add_flow(std::uint64_t id, FlowEnd from, FlowEnd to, NameId name, NameId category) {
  flows_.push_back(Flow{id, name, category, from, to});
}

void Timeline::add_flow(std::uint64_t id, FlowEnd from, FlowEnd to, std::string_view name,
                        std::string_view category) {
  add_flow(id, from, to, this->name(name), this->name(category));
}

std::vector<int> Timeline::ranks() const {
  std::set<int> seen;
  for (const auto& [rank, display] : rank_names_) seen.insert(rank);
  for (const Span& s : spans_) seen.insert(s.rank);
  for (const Instant& i : instants_) seen.insert(i.rank);
  for (const CounterSample& c : counters_) seen.insert(c.rank);
  for (const Flow& f : flows_) {
    seen.insert(f.from.rank);
    seen.insert(f.to.rank);
  }
  seen.erase(kGlobalRank);
  return {seen.begin(), seen.end()};
}

Time Timeline::end_time() const {
  Time last = Time::zero();
  for (const Span& s : spans_) last = std::max(last, s.end);
  for (const Instant& i : instants_) last = std::max(last, i.time);
  for (const CounterSample& c : counters_) last = std::max(last, c.time);
  for (const Flow& f : flows_) last = std::max({last, f.from.time, f.to.time});
  return last;
}

}  // namespace strait::traces
