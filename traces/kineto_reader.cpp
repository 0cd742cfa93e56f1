#include "traces/kineto_reader.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "sim/core/config_node.hpp"

namespace strait::traces {
namespace {

// pid and tid are integers in Kineto's GPU events and sometimes strings ("Spans").
std::string id_text(const ConfigNode& event, std::string_view key) {
  const ConfigNode node = event.at(key);
  if (node.json().is_number_integer()) return std::to_string(node.as_integer());
  if (node.is_string()) return node.as_string();
  node.fail("expected an integer or a string");
}

std::string thread_key(const std::string& pid, const std::string& tid) { return pid + "\n" + tid; }

int rank_of(const ConfigNode& event, const KinetoReadOptions& options) {
  if (!options.pid_as_rank) return options.rank;
  const ConfigNode pid = event.at("pid");
  const std::int64_t value = pid.as_integer();
  if (value < 0 || value > INT32_MAX) pid.fail("expected a pid usable as a rank (0..2^31-1)");
  return static_cast<int>(value);
}

Time from_microseconds(double us) { return Time::from_ps(std::llround(us * 1e6)); }

}  // namespace

void read_kineto_trace(const std::string& path, Timeline& into, const KinetoReadOptions& options) {
  read_kineto_trace(load_config(path), into, options);
}

void read_kineto_trace(const ConfigNode& root, Timeline& into, const KinetoReadOptions& options) {
  ConfigNode events = root;
  if (root.is_object()) {
    events = root.at("traceEvents");
  } else if (!root.is_array()) {
    root.fail("expected a Chrome trace: an object with \"traceEvents\" or an array of events");
  }
  if (!events.is_array()) events.fail("expected an array of trace events");

  // First pass: validate phases, collect thread/process names and the time origin.
  std::map<std::string, std::string> thread_names;
  std::vector<ConfigNode> spans;
  double origin = options.origin_us.value_or(HUGE_VAL);
  for (const ConfigNode& event : events.elements()) {
    if (!event.is_object()) event.fail("expected a trace event object");
    const std::string ph = event.string("ph");
    if (ph == "X") {
      const double ts = event.number("ts");
      if (!options.origin_us) origin = std::min(origin, ts);
      spans.push_back(event);
    } else if (ph == "M") {
      const std::string kind = event.string_or("name", "");
      if (kind == "thread_name") {
        thread_names[thread_key(id_text(event, "pid"), id_text(event, "tid"))] =
            event.at("args").string("name");
      } else if (kind == "process_name" && options.pid_as_rank) {
        into.set_rank_name(rank_of(event, options), event.at("args").string("name"));
      }
    }
  }

  for (const ConfigNode& event : spans) {
    const std::string pid = id_text(event, "pid");
    const std::string tid = id_text(event, "tid");
    auto named = thread_names.find(thread_key(pid, tid));
    const TrackId track = into.track(
        named != thread_names.end() ? named->second : fmt::format("pid {} tid {}", pid, tid));
    const double dur = event.number("dur");
    if (dur < 0) event.at("dur").fail("expected a duration >= 0");
    const Time start = from_microseconds(event.number("ts") - origin);
    std::vector<std::string> texts;  // owns string values while Arg views them
    std::vector<Arg> args;
    if (auto given = event.find("args"); given && given->is_object()) {
      const Json& object = given->json();
      texts.reserve(object.size());
      for (const auto& [key, value] : object.items()) {
        if (value.is_number_integer()) {
          args.emplace_back(key, value.get<std::int64_t>());
        } else if (value.is_number()) {
          args.emplace_back(key, value.get<double>());
        } else if (value.is_string()) {
          args.emplace_back(key, std::string_view(texts.emplace_back(value.get<std::string>())));
        } else if (options.keep_structured_args && (value.is_array() || value.is_object())) {
          args.emplace_back(key, std::string_view(texts.emplace_back(value.dump())));
        }
      }
    }
    into.add_span(rank_of(event, options), track, into.name(event.string("name")),
                  into.name(event.string_or("cat", "")), start, start + from_microseconds(dur),
                  args);
  }
}

Timeline read_kineto_trace(const std::string& path, const KinetoReadOptions& options) {
  Timeline timeline;
  read_kineto_trace(path, timeline, options);
  return timeline;
}

}  // namespace strait::traces
