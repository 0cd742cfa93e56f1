#include "traces/chrome_trace_writer.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "traces/detail/json_text.hpp"

namespace strait::traces {
namespace {

using nlohmann::json;

json write_and_parse(const Timeline& timeline, const std::string& file,
                     const ChromeTraceOptions& options = {}) {
  const std::string path = testing::TempDir() + "/" + file;
  write_chrome_trace(timeline, path, options);
  std::ifstream in(path);
  return json::parse(in);  // throws if the output is not valid JSON
}

std::vector<json> events_with_ph(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph) out.push_back(e);
  }
  return out;
}

// Two ranks, each with a compute span and a comm span; one flow from rank 0's comm span to
// rank 1's; a global counter and a per-rank counter; one instant on rank 1.
Timeline two_rank_timeline() {
  Timeline t;
  t.set_rank_name(0, "rank 0 (dc0/host0/gpu0)");
  const TrackId compute = t.track("compute");
  const TrackId comm = t.track("comm");
  for (int rank = 0; rank < 2; ++rank) {
    t.add_span(rank, compute, t.name("gemm"), t.name("kernel"), Time::from_ps(1'500'000),
               Time::from_ps(4'000'000));
    t.add_span(rank, comm, t.name("ring step 0"), t.name("collective"), Time::from_ps(4'000'000),
               Time::from_ps(4'000'250), {{"bytes", 4096}, {"algo", "ring"}});
  }
  t.add_flow(42, {0, comm, Time::from_ps(4'000'100)}, {1, comm, Time::from_ps(4'000'200)}, "send",
             "collective");
  t.add_counter(kGlobalRank, "cross_dc util", Time::from_us(2), 0.75);
  t.add_counter(1, "hbm GB", Time::from_us(1), 12.5);
  t.add_instant(1, "compute", "straggler", "marker", Time::from_us(3));
  return t;
}

// Setup: spans at [1,500,000 ps, 4,000,000 ps) and [4,000,000 ps, 4,000,250 ps).
// Expected: ts 1.5 us, dur 2.5 us; ts 4 us, dur 0.00025 us, exactly (written from integers).
TEST(ChromeTraceWriter, WritesCompleteEventsWithExactMicroseconds) {
  const json trace = write_and_parse(two_rank_timeline(), "exact.json");
  EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
  const auto spans = events_with_ph(trace, "X");
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].at("name"), "gemm");
  EXPECT_EQ(spans[0].at("cat"), "kernel");
  EXPECT_EQ(spans[0].at("pid"), 0);
  EXPECT_EQ(spans[0].at("ts").get<double>(), 1.5);
  EXPECT_EQ(spans[0].at("dur").get<double>(), 2.5);
  EXPECT_EQ(spans[1].at("ts").get<double>(), 4.0);
  EXPECT_EQ(spans[1].at("dur").get<double>(), 0.00025);
  EXPECT_EQ(spans[1].at("args").at("bytes"), 4096);
  EXPECT_EQ(spans[1].at("args").at("algo"), "ring");
  EXPECT_FALSE(spans[0].contains("args"));
}

TEST(ChromeTraceWriter, FormatsPicosecondsAsExactDecimalMicroseconds) {
  EXPECT_EQ(detail::json_microseconds(Time::from_ps(1'500'000)), "1.5");
  EXPECT_EQ(detail::json_microseconds(Time::from_ps(3'000'000)), "3");
  EXPECT_EQ(detail::json_microseconds(Time::from_ps(1)), "0.000001");
  EXPECT_EQ(detail::json_microseconds(Time::from_ps(-2'250'000)), "-2.25");
  EXPECT_EQ(detail::json_microseconds(Time::from_ps(123'456'789'012'345)), "123456789.012345");
}

TEST(ChromeTraceWriter, NamesProcessesAndThreadsWithSortIndices) {
  const json trace = write_and_parse(two_rank_timeline(), "metadata.json");
  std::map<std::pair<std::string, std::int64_t>, json> processes;
  std::set<std::string> thread_names;
  std::set<std::int64_t> tids;
  for (const json& m : events_with_ph(trace, "M")) {
    const std::string name = m.at("name");
    if (name == "process_name" || name == "process_sort_index") {
      processes[{name, m.at("pid").get<std::int64_t>()}] = m.at("args");
    } else if (name == "thread_name") {
      thread_names.insert(m.at("args").at("name").get<std::string>());
      tids.insert(m.at("tid").get<std::int64_t>());
    }
  }
  EXPECT_EQ(processes.at({"process_name", 0}).at("name"), "rank 0 (dc0/host0/gpu0)");
  EXPECT_EQ(processes.at({"process_name", 1}).at("name"), "rank 1");
  EXPECT_EQ(processes.at({"process_name", kGlobalPid}).at("name"), "global");
  EXPECT_EQ(processes.at({"process_sort_index", 1}).at("sort_index"), 1);
  EXPECT_EQ(thread_names, (std::set<std::string>{"compute", "comm"}));
  EXPECT_EQ(tids.size(), 4u);  // (rank, track) pairs get distinct tids
}

TEST(ChromeTraceWriter, RankFilterDropsOtherRanksEventsAndCrossingFlows) {
  ChromeTraceOptions options;
  options.ranks = {1};
  const json trace = write_and_parse(two_rank_timeline(), "filtered.json", options);
  for (const json& e : trace.at("traceEvents")) {
    const auto pid = e.at("pid").get<std::int64_t>();
    EXPECT_TRUE(pid == 1 || pid == kGlobalPid) << e.dump();
  }
  EXPECT_EQ(events_with_ph(trace, "X").size(), 2u);
  EXPECT_TRUE(events_with_ph(trace, "s").empty());  // its source, rank 0, is filtered out
  EXPECT_TRUE(events_with_ph(trace, "f").empty());
  EXPECT_EQ(events_with_ph(trace, "C").size(), 2u);  // job-wide counters stay
}

TEST(ChromeTraceWriter, FlowsComeInMatchingStartFinishPairsBoundToEnclosingSlices) {
  const json trace = write_and_parse(two_rank_timeline(), "flows.json");
  const auto starts = events_with_ph(trace, "s");
  const auto finishes = events_with_ph(trace, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(starts[0].at("id"), finishes[0].at("id"));
  EXPECT_EQ(starts[0].at("name"), finishes[0].at("name"));
  EXPECT_EQ(starts[0].at("cat"), finishes[0].at("cat"));
  EXPECT_EQ(finishes[0].at("bp"), "e");
  EXPECT_EQ(starts[0].at("pid"), 0);
  EXPECT_EQ(finishes[0].at("pid"), 1);
  EXPECT_EQ(starts[0].at("ts").get<double>(), 4.0001);
  EXPECT_EQ(finishes[0].at("ts").get<double>(), 4.0002);
}

TEST(ChromeTraceWriter, WritesCountersAndInstantsUnlessTurnedOff) {
  const json all = write_and_parse(two_rank_timeline(), "counters.json");
  const auto counters = events_with_ph(all, "C");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0].at("name"), "cross_dc util");
  EXPECT_EQ(counters[0].at("args").at("value"), 0.75);
  EXPECT_EQ(counters[0].at("ts").get<double>(), 2.0);
  const auto instants = events_with_ph(all, "i");
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ(instants[0].at("s"), "t");
  EXPECT_EQ(instants[0].at("name"), "straggler");

  ChromeTraceOptions options;
  options.include_counters = false;
  options.include_flows = false;
  options.include_instants = false;
  const json bare = write_and_parse(two_rank_timeline(), "bare.json", options);
  EXPECT_TRUE(events_with_ph(bare, "C").empty());
  EXPECT_TRUE(events_with_ph(bare, "s").empty());
  EXPECT_TRUE(events_with_ph(bare, "i").empty());
  EXPECT_EQ(events_with_ph(bare, "X").size(), 4u);
}

TEST(ChromeTraceWriter, EscapesQuotesBackslashesAndControlCharacters) {
  const std::string nasty = "say \"hi\"\\path\nnext\tcol\x01 end";
  Timeline t;
  t.set_rank_name(0, "rank \"0\"");
  t.add_span(0, "track\\with\\slashes", nasty, "cat\n", Time::zero(), Time::from_us(1),
             {{"note", nasty}});
  t.add_span(0, "compute", "caf\xc3\xa9 ok, bad \xff byte", "kernel", Time::zero(),
             Time::from_us(1));
  const json trace = write_and_parse(t, "escape.json");
  const auto spans = events_with_ph(trace, "X");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].at("name"), nasty);
  EXPECT_EQ(spans[0].at("cat"), "cat\n");
  EXPECT_EQ(spans[0].at("args").at("note"), nasty);
  EXPECT_EQ(spans[1].at("name"), "caf\xc3\xa9 ok, bad \xef\xbf\xbd byte");  // U+FFFD
  bool found_track = false;
  for (const json& m : events_with_ph(trace, "M")) {
    if (m.at("name") == "thread_name" && m.at("args").at("name") == "track\\with\\slashes") {
      found_track = true;
    }
  }
  EXPECT_TRUE(found_track);
}

TEST(ChromeTraceWriter, WritesTopLevelMetadataWhenGiven) {
  ChromeTraceOptions options;
  options.metadata = {{"strait_version", "0.1.0"}, {"seed", 7}};
  const json trace = write_and_parse(two_rank_timeline(), "meta.json", options);
  EXPECT_EQ(trace.at("metadata").at("seed"), 7);
  EXPECT_FALSE(write_and_parse(two_rank_timeline(), "nometa.json").contains("metadata"));
}

TEST(ChromeTraceWriter, AtomicWriteLeavesNoTemporaryFile) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "traces_atomic";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_chrome_trace(two_rank_timeline(), (dir / "trace.json").string());
  write_chrome_trace(two_rank_timeline(), (dir / "trace.json").string());  // replaces
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"trace.json"}));
}

TEST(ChromeTraceWriter, UnwritablePathIsAnIoError) {
  EXPECT_THROW(write_chrome_trace(two_rank_timeline(), "/nonexistent/dir/trace.json"), IoError);
}

TEST(ChromeTraceWriter, EmptyTimelineIsAValidTrace) {
  const json trace = write_and_parse(Timeline(), "empty.json");
  EXPECT_TRUE(trace.at("traceEvents").empty());
}

}  // namespace
}  // namespace strait::traces
