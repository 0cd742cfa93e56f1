#include "sim/core/config_node.hpp"

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

TEST(LoadConfig, MissingFileIsAnIoError) {
  EXPECT_THROW(load_config("/nonexistent/strait.json"), IoError);
}

}  // namespace
}  // namespace strait
