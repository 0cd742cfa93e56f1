#include "sim/core/config_node.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait {
namespace {

ConfigNode doc(const char* text) { return ConfigNode(Json::parse(text), "cluster.json"); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ConfigNode, MissingKeyNamesFilePointerAndExpectation) {
  auto root = doc(R"({"nvlink": {}})");
  EXPECT_EQ(message_of([&] { root.at("nvlink").bandwidth("bandwidth"); }),
            "cluster.json: /nvlink/bandwidth: missing required key");
}

TEST(ConfigNode, UnknownKeySuggestsTheClosestKnownOne) {
  auto root = doc(R"({"bandwith": "1 GB/s"})");
  EXPECT_EQ(message_of([&] {
              root.allow_only({"bandwidth", "latency"});
            }),
            "cluster.json: /bandwith: unknown key; did you mean \"bandwidth\"?");
}

TEST(ConfigNode, UnknownKeyWithNothingCloseListsKnownKeys) {
  auto root = doc(R"({"zzz": 1})");
  EXPECT_EQ(message_of([&] {
              root.allow_only({"bandwidth", "latency"});
            }),
            "cluster.json: /zzz: unknown key (known keys: bandwidth, latency)");
}

TEST(ConfigNode, BandwidthNeedsAUnitAndMustBePositive) {
  auto root = doc(R"({"a": 400, "b": "0 Gb/s", "c": "400 Gb/s"})");
  EXPECT_EQ(message_of([&] { root.bandwidth("a"); }),
            "cluster.json: /a: expected a bandwidth with its unit such as \"400 Gb/s\" or "
            "\"450 GB/s\", got the number 400");
  EXPECT_EQ(message_of([&] { root.bandwidth("b"); }),
            "cluster.json: /b: expected a positive bandwidth, got \"0 Gb/s\"");
  EXPECT_DOUBLE_EQ(root.bandwidth("c"), 50e9);
}

TEST(ConfigNode, ArrayElementsCarryTheirIndexInThePointer) {
  auto root = doc(R"({"hosts": [{"gpus": 8}, {"gpus": -2}]})");
  EXPECT_EQ(message_of([&] { root.at("hosts").at(std::size_t{1}).positive_integer("gpus"); }),
            "cluster.json: /hosts/1/gpus: expected a positive integer, got -2");
}

TEST(ConfigNode, ChoiceListsTheAllowedValues) {
  auto root = doc(R"({"op": "allreduc"})");
  EXPECT_EQ(message_of([&] {
              root.choice("op", {"all_reduce", "all_gather"});
            }),
            "cluster.json: /op: expected one of \"all_reduce\", \"all_gather\", got \"allreduc\"");
}

TEST(ConfigNode, WrongTypeSaysWhatWasFound) {
  auto root = doc(R"({"gpus": "eight"})");
  EXPECT_EQ(message_of([&] { root.integer("gpus"); }),
            "cluster.json: /gpus: expected an integer, got the string \"eight\"");
}

TEST(LoadConfig, MalformedJsonReportsLineAndColumn) {
  const std::string path = testing::TempDir() + "/bad.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("{\n  \"a\": 1,\n  \"b\": ]\n}\n", f);
    std::fclose(f);
  }
  EXPECT_EQ(message_of([&] { load_config(path); }),
            path + ": /: malformed JSON at line 3, column 8");
}

// Integers are never wrapped or truncated: a value past int64 (or a reader's range) is
// refused with the range, a fraction where an integer is meant too.
TEST(ConfigNode, IntegersOutsideTheirRangeAreRefusedNotWrapped) {
  auto root = doc(R"({"ranks": 4294967298, "huge": 18446744073709551615, "half": 1.5, "d": 2})");
  EXPECT_EQ(message_of([&] { root.int_in("ranks", 1, 1 << 24); }),
            "cluster.json: /ranks: expected an integer in [1, 16777216], got 4294967298");
  EXPECT_EQ(message_of([&] { root.integer("huge"); }),
            "cluster.json: /huge: expected an integer below 2^63, got 18446744073709551615");
  EXPECT_EQ(message_of([&] { root.int_or("half", 1, 1, 8); }),
            "cluster.json: /half: expected an integer, got the number 1.5");
  EXPECT_EQ(root.int_or("d", 1, 1, 3), 2);
  EXPECT_EQ(root.int_or("absent", 7, 1, 3), 7);
}

// Quantities past what any configuration means are refused before they are converted:
// 1e300 s overflowed simulated time, 1e-300 GB/s made a link free or deadlocked flow mode.
TEST(ConfigNode, QuantitiesHaveARange) {
  auto root = doc(R"({"latency": "1e300 s", "slow": "1e-300 GB/s", "huge": "2000000 TiB",
                      "ok": "1000000 s", "count": 9223372036854775807})");
  EXPECT_EQ(message_of([&] { root.duration("latency"); }),
            "cluster.json: /latency: expected a duration with its unit such as \"2 us\" or \"5 "
            "ms\" (at most 1e6 s), got the string \"1e300 s\"");
  EXPECT_EQ(message_of([&] { root.bandwidth("slow"); }),
            "cluster.json: /slow: expected a bandwidth between 8 Kb/s and 8 Pb/s, got \"1e-300 "
            "GB/s\"");
  EXPECT_EQ(message_of([&] { root.bytes("huge"); }),
            "cluster.json: /huge: expected a size such as \"64 MiB\" or a byte count (at most "
            "2^60), got the string \"2000000 TiB\"");
  EXPECT_EQ(message_of([&] { root.bytes("count"); }),
            "cluster.json: /count: expected a size such as \"64 MiB\" or a byte count (at most "
            "2^60), got the number 9223372036854775807");
  EXPECT_EQ(root.duration("ok"), Time::from_s(1e6));
}

namespace {
std::string written(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}
}  // namespace

// A number past a double's range and nesting deeper than any configuration are config
// errors naming the file (and where the number is), not internal errors.
TEST(LoadConfig, NumberOverflowAndDeepNestingAreConfigErrors) {
  const std::string big = written("big.json", "{\n  \"latency\": 1e400\n}\n");
  EXPECT_EQ(message_of([&] { load_config(big); }),
            big + ": /: number 1e400 out of range at line 2, column 14 (expected a finite number)");
  const std::string deep = written("deep.json", std::string(100000, '['));
  EXPECT_EQ(message_of([&] { load_config(deep); }),
            deep + ": /: malformed JSON: nested deeper than 64 levels at line 1, column 65");
  // Brackets inside strings do not nest.
  const std::string quoted =
      written("quoted.json", "{\"name\": \"" + std::string(100, '[') + "\\\"{\"}");
  EXPECT_EQ(load_config(quoted).at("name").as_string(), std::string(100, '[') + "\"{");
}

// Input files must be regular files: a FIFO nobody writes to waited forever, /dev/zero
// never ended, a symlink loop was an internal error.
TEST(LoadConfig, OnlyRegularFilesAreRead) {
  auto io_error_of = [](const std::string& path) {
    try {
      load_config(path);
    } catch (const IoError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(io_error_of("/dev/zero"),
            "/dev/zero: not a regular file (a FIFO, device or socket), not a JSON file");
  const std::string fifo = testing::TempDir() + "/strait_fifo.json";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(io_error_of(fifo),
            fifo + ": not a regular file (a FIFO, device or socket), not a JSON file");
  std::remove(fifo.c_str());
  const std::string loop = testing::TempDir() + "/strait_loop.json";
  std::remove(loop.c_str());
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  EXPECT_EQ(io_error_of(loop), loop + ": a loop of symbolic links, not a JSON file");
  std::remove(loop.c_str());
}

TEST(LoadConfig, MissingFileIsAnIoError) {
  EXPECT_THROW(load_config("/nonexistent/strait.json"), IoError);
}

}  // namespace
}  // namespace strait
