#include "traces/chrome_trace_writer.hpp"

#include <algorithm>
#include <iterator>
#include <ostream>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "traces/detail/event_stream.hpp"
#include "traces/detail/json_text.hpp"

namespace strait::traces {
namespace {

using detail::json_microseconds;
using detail::json_number;
using detail::json_quote;

using detail::EventStream;

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const Timeline& timeline, const ChromeTraceOptions& options)
      : timeline_(timeline), options_(options) {
    std::sort(options_.ranks.begin(), options_.ranks.end());
    quoted_names_.reserve(timeline.name_count());
    for (std::size_t i = 0; i < timeline.name_count(); ++i) {
      quoted_names_.push_back(json_quote(timeline.name_of(static_cast<NameId>(i))));
    }
    // Tids must be unique across ranks: Perfetto keys threads by tid.
    while (tid_stride_ <= static_cast<std::int64_t>(timeline.track_count())) tid_stride_ *= 10;
  }

  void write(std::ostream& out) {
    EventStream events(out);
    events.raw("{\"traceEvents\":[");
    write_metadata(events);
    write_spans(events);
    if (options_.include_instants) write_instants(events);
    if (options_.include_counters) write_counters(events);
    if (options_.include_flows) write_flows(events);
    events.raw("\n],\n\"displayTimeUnit\":\"ns\"");
    if (!options_.metadata.is_null()) {
      events.raw(",\n\"metadata\":");
      events.raw(options_.metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    events.raw("}\n");
    events.flush();
  }

 private:
  bool included(int rank) const {
    return rank == kGlobalRank || options_.ranks.empty() ||
           std::binary_search(options_.ranks.begin(), options_.ranks.end(), rank);
  }
  static std::int64_t pid(int rank) { return rank == kGlobalRank ? kGlobalPid : rank; }
  std::int64_t tid(int rank, TrackId track) const {
    return rank == kGlobalRank ? track + 1 : std::int64_t{rank} * tid_stride_ + track + 1;
  }
  const std::string& q(NameId id) const { return quoted_names_[static_cast<std::size_t>(id)]; }

  void write_metadata(EventStream& events) const {
    // Only tracks that carry a written event get a name, so filtered ranks leave no rows.
    std::set<std::pair<int, TrackId>> tracks;
    std::set<int> processes;
    std::pair<int, TrackId> last{kGlobalRank, -1};  // spans come in runs on one track
    auto use = [&](int rank, TrackId track) {
      if (last == std::pair{rank, track}) return;
      last = {rank, track};
      tracks.insert(last);
      processes.insert(rank);
    };
    for (const Span& s : timeline_.spans()) {
      if (included(s.rank)) use(s.rank, s.track);
    }
    if (options_.include_instants) {
      for (const Instant& i : timeline_.instants()) {
        if (included(i.rank) && i.rank != kGlobalRank) use(i.rank, i.track);
        if (i.rank == kGlobalRank) processes.insert(kGlobalRank);
      }
    }
    if (options_.include_counters) {
      for (const CounterSample& c : timeline_.counters()) {
        if (included(c.rank)) processes.insert(c.rank);
      }
    }
    if (options_.include_flows) {
      for (const Flow& f : timeline_.flows()) {
        if (included(f.from.rank) && included(f.to.rank)) {
          use(f.from.rank, f.from.track);
          use(f.to.rank, f.to.track);
        }
      }
    }
    for (const auto& [rank, display] : timeline_.rank_names()) {
      if (included(rank)) processes.insert(rank);
    }
    for (int rank : processes) {
      const std::string_view given = timeline_.rank_name(rank);
      const std::string display = !given.empty()        ? std::string(given)
                                  : rank == kGlobalRank ? std::string("global")
                                                        : fmt::format("rank {}", rank);
      events.event(R"({{"ph":"M","pid":{},"name":"process_name","args":{{"name":{}}}}})", pid(rank),
                   json_quote(display));
      events.event(
          R"({{"ph":"M","pid":{},"name":"process_sort_index","args":{{"sort_index":{}}}}})",
          pid(rank), rank);
    }
    for (const auto& [rank, track] : tracks) {
      events.event(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})",
                   pid(rank), tid(rank, track), json_quote(timeline_.track_name(track)));
      events.event(
          R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})",
          pid(rank), tid(rank, track), track);
    }
  }

  void write_spans(EventStream& events) const {
    std::string args;
    for (const Span& s : timeline_.spans()) {
      if (!included(s.rank)) continue;
      args.clear();
      for (const SpanArg& a : timeline_.args(s)) {
        args += args.empty() ? ",\"args\":{" : ",";
        args += q(a.key);
        args += ':';
        if (const auto* i = std::get_if<std::int64_t>(&a.value)) {
          args += fmt::format("{}", *i);
        } else if (const auto* d = std::get_if<double>(&a.value)) {
          args += json_number(*d);
        } else {
          args += q(std::get<InternedString>(a.value).id);
        }
      }
      if (!args.empty()) args += '}';
      events.event(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":{}{}}})",
                   pid(s.rank), tid(s.rank, s.track), json_microseconds(s.start),
                   json_microseconds(s.end - s.start), q(s.name), q(s.category), args);
    }
  }

  void write_instants(EventStream& events) const {
    for (const Instant& i : timeline_.instants()) {
      if (!included(i.rank)) continue;
      events.event(R"({{"ph":"i","s":"{}","pid":{},"tid":{},"ts":{},"name":{},"cat":{}}})",
                   i.rank == kGlobalRank ? 'g' : 't', pid(i.rank), tid(i.rank, i.track),
                   json_microseconds(i.time), q(i.name), q(i.category));
    }
  }

  void write_counters(EventStream& events) const {
    for (const CounterSample& c : timeline_.counters()) {
      if (!included(c.rank)) continue;
      events.event(R"({{"ph":"C","pid":{},"ts":{},"name":{},"args":{{"value":{}}}}})", pid(c.rank),
                   json_microseconds(c.time), q(c.name), json_number(c.value));
    }
  }

  void write_flows(EventStream& events) const {
    for (const Flow& f : timeline_.flows()) {
      if (!included(f.from.rank) || !included(f.to.rank)) continue;
      events.event(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":{},"cat":{}}})", f.id,
                   pid(f.from.rank), tid(f.from.rank, f.from.track), json_microseconds(f.from.time),
                   q(f.name), q(f.category));
      events.event(R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":{},"cat":{}}})",
                   f.id, pid(f.to.rank), tid(f.to.rank, f.to.track), json_microseconds(f.to.time),
                   q(f.name), q(f.category));
    }
  }

  const Timeline& timeline_;
  ChromeTraceOptions options_;
  std::vector<std::string> quoted_names_;
  std::int64_t tid_stride_ = 1000;
};

}  // namespace

void write_chrome_trace(const Timeline& timeline, const std::string& path,
                        const ChromeTraceOptions& options) {
  ChromeTraceWriter writer(timeline, options);
  write_file_atomically(path, [&](std::ostream& out) { writer.write(out); });
}

}  // namespace strait::traces
