#include "traces/kineto_reader.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "traces/chrome_trace_writer.hpp"

namespace strait::traces {
namespace {

std::string write_text(const std::string& file, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + file;
  std::ofstream(path) << text;
  return path;
}

// A Kineto-style trace: epoch-like microsecond timestamps, a named GPU stream, a CPU op on
// an unnamed thread with a string tid, and a flow event that the reader skips.
// Expected: times rebased to the earliest span (1000.0 us): kernel at 0.5 us for 2.25 us.
TEST(KinetoReader, ReadsCompleteEventsOnNamedTracksRebasedToTheFirstSpan) {
  const std::string path = write_text("kineto.json", R"({
    "schemaVersion": 1,
    "traceEvents": [
      {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242, "tid": "main",
       "ts": 1000.0, "dur": 3.0, "args": {"External id": 12}},
      {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7,
       "ts": 1000.5, "dur": 2.25, "args": {"grid": [1, 2, 3], "stream": 7, "device": "cuda:0"}},
      {"ph": "s", "id": 1, "pid": 4242, "tid": "main", "ts": 1000.1, "name": "ac2g"}
    ]})");
  const Timeline t = read_kineto_trace(path, {.rank = 3});
  ASSERT_EQ(t.spans().size(), 2u);
  const Span& op = t.spans()[0];
  const Span& kernel = t.spans()[1];
  EXPECT_EQ(op.rank, 3);
  EXPECT_EQ(t.track_name(op.track), "pid 4242 tid main");
  EXPECT_EQ(op.start, Time::zero());
  EXPECT_EQ(t.track_name(kernel.track), "stream 7");
  EXPECT_EQ(t.name_of(kernel.name), "sm90_gemm");
  EXPECT_EQ(t.name_of(kernel.category), "kernel");
  EXPECT_EQ(kernel.start, Time::from_ps(500'000));
  EXPECT_EQ(kernel.end - kernel.start, Time::from_ps(2'250'000));
  const auto args = t.args(kernel);
  ASSERT_EQ(args.size(), 2u);  // the array "grid" is skipped
  EXPECT_EQ(t.name_of(args[0].key), "device");
  EXPECT_EQ(t.name_of(std::get<InternedString>(args[0].value).id), "cuda:0");
  EXPECT_EQ(std::get<std::int64_t>(args[1].value), 7);
}

// With keep_structured_args the array args come back as their compact JSON text, after
// the scalars in key order ("Input Dims" < "Input type" < "correlation" < "grid").
TEST(KinetoReader, KeepsArrayArgsAsJsonTextWhenAsked) {
  const std::string path = write_text("structured.json", R"({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 2,
       "args": {"Input Dims": [[512, 256], [256, 128]], "Input type": ["float", "float"],
                "correlation": 3, "grid": {"x": 1}, "flag": true}}]})");
  const Timeline t = read_kineto_trace(path, {.keep_structured_args = true});
  ASSERT_EQ(t.spans().size(), 1u);
  const auto args = t.args(t.spans()[0]);
  ASSERT_EQ(args.size(), 4u);  // the boolean is still skipped
  EXPECT_EQ(t.name_of(args[0].key), "Input Dims");
  EXPECT_EQ(t.name_of(std::get<InternedString>(args[0].value).id), "[[512,256],[256,128]]");
  EXPECT_EQ(t.name_of(std::get<InternedString>(args[1].value).id), R"(["float","float"])");
  EXPECT_EQ(std::get<std::int64_t>(args[2].value), 3);
  EXPECT_EQ(t.name_of(std::get<InternedString>(args[3].value).id), R"({"x":1})");
}

// A parsed document reads like its file, and its errors name the document's file.
TEST(KinetoReader, ReadsAnAlreadyParsedDocument) {
  const ConfigNode document(Json::parse(R"({"schemaVersion": 1, "traceEvents": [
      {"ph": "X", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 1.5}]})"),
                            "inline.json");
  Timeline t;
  read_kineto_trace(document, t);
  ASSERT_EQ(t.spans().size(), 1u);
  EXPECT_EQ(t.spans()[0].end - t.spans()[0].start, Time::from_ps(1'500'000));
  try {
    read_kineto_trace(ConfigNode(Json::parse(R"({"traceEvents": 1})"), "inline.json"), t);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "inline.json");
    EXPECT_EQ(e.pointer(), "/traceEvents");
  }
}

TEST(KinetoReader, RoundTripsATraceStraitWrote) {
  Timeline original;
  original.set_rank_name(1, "rank 1 (dc0/host0/gpu1)");
  original.add_span(0, "compute", "fwd", "kernel", Time::from_ps(1'500'000),
                    Time::from_ps(2'000'001), {{"bytes", 4096}, {"algo", "ring"}});
  original.add_span(1, "comm", "ring step 0", "collective", Time::from_ps(7),
                    Time::from_ps(9'000'000));
  const std::string path = testing::TempDir() + "/roundtrip.json";
  write_chrome_trace(original, path);

  const Timeline back = read_kineto_trace(path, {.pid_as_rank = true, .origin_us = 0.0});
  ASSERT_EQ(back.spans().size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const Span& a = original.spans()[i];
    const Span& b = back.spans()[i];
    EXPECT_EQ(b.rank, a.rank);
    EXPECT_EQ(back.track_name(b.track), original.track_name(a.track));
    EXPECT_EQ(back.name_of(b.name), original.name_of(a.name));
    EXPECT_EQ(b.start, a.start);
    EXPECT_EQ(b.end, a.end);
    EXPECT_EQ(b.args_count, a.args_count);
  }
  EXPECT_EQ(back.rank_name(1), "rank 1 (dc0/host0/gpu1)");
}

TEST(KinetoReader, MissingDurationNamesTheEvent) {
  const std::string path = write_text("nodur.json", R"({"traceEvents": [
      {"ph": "X", "name": "a", "pid": 0, "tid": 0, "ts": 1, "dur": 1},
      {"ph": "X", "name": "b", "pid": 0, "tid": 0, "ts": 2}]})");
  try {
    read_kineto_trace(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.pointer(), "/traceEvents/1/dur");
    EXPECT_EQ(e.expectation(), "missing required key");
  }
}

TEST(KinetoReader, NegativeDurationIsAConfigError) {
  const std::string path = write_text("negdur.json", R"([
      {"ph": "X", "name": "a", "pid": 0, "tid": 0, "ts": 1, "dur": -1}])");
  try {
    read_kineto_trace(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.pointer(), "/0/dur");
    EXPECT_EQ(e.expectation(), "expected a duration >= 0");
  }
}

TEST(KinetoReader, WrongShapesAreConfigErrors) {
  EXPECT_THROW(read_kineto_trace(write_text("trunc.json", R"({"traceEvents": [)")), ConfigError);
  EXPECT_THROW(read_kineto_trace(write_text("noevents.json", R"({"events": []})")), ConfigError);
  EXPECT_THROW(read_kineto_trace(write_text("number.json", "42")), ConfigError);
  try {
    read_kineto_trace(write_text("badtid.json", R"({"traceEvents": [
        {"ph": "X", "name": "a", "pid": 0, "tid": [1], "ts": 1, "dur": 1}]})"));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.pointer(), "/traceEvents/0/tid");
  }
}

TEST(KinetoReader, MissingFileIsAnIoError) {
  EXPECT_THROW(read_kineto_trace("/nonexistent/trace.json"), IoError);
}

}  // namespace
}  // namespace strait::traces
