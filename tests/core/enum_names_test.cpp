#include "sim/core/enum_names.hpp"

#include <functional>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait {
namespace test_enums {

// A table as an enum's header declares it: "pod" is an alias of kRack (parsed and listed,
// never printed).
enum class Level { kHost, kRack, kCluster };
constexpr auto enum_names(Level) {
  return std::to_array<EnumName<Level>>({{Level::kHost, "host"},
                                         {Level::kRack, "rack"},
                                         {Level::kRack, "pod"},
                                         {Level::kCluster, "cluster"}});
}

enum class Unnamed { kA };

}  // namespace test_enums

namespace {

using test_enums::Level;

static_assert(NamedEnum<Level>);
static_assert(!NamedEnum<test_enums::Unnamed>);
static_assert(std::string_view(name_of(Level::kCluster)) == "cluster");
static_assert(parse_enum<Level>("pod") == Level::kRack);

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(EnumNames, AValueIsNamedByItsFirstEntry) {
  EXPECT_STREQ(name_of(Level::kHost), "host");
  EXPECT_STREQ(name_of(Level::kRack), "rack");
  EXPECT_STREQ(name_of(static_cast<Level>(7)), "?");
}

TEST(EnumNames, ParsingAcceptsEveryEntryAndNothingElse) {
  EXPECT_EQ(parse_enum<Level>("rack"), Level::kRack);
  EXPECT_EQ(parse_enum<Level>("pod"), Level::kRack);
  EXPECT_EQ(parse_enum<Level>("cluster"), Level::kCluster);
  EXPECT_FALSE(parse_enum<Level>("Cluster"));
  EXPECT_FALSE(parse_enum<Level>(""));
}

TEST(EnumNames, TheListQuotesAndJoinsTheNamesInTableOrder) {
  EXPECT_EQ(enum_name_list<Level>(), "host, rack, pod, cluster");
  EXPECT_EQ(enum_name_list<Level>("\""), "\"host\", \"rack\", \"pod\", \"cluster\"");
  EXPECT_EQ(enum_name_list<Level>("'", " or "), "'host', 'rack', 'pod' or 'cluster'");
  EXPECT_EQ(enum_name_vector<Level>(),
            (std::vector<std::string>{"host", "rack", "pod", "cluster"}));
}

// A second vocabulary of one enum: its own table, the same functions.
TEST(EnumNames, AnExplicitTableServesAnotherVocabulary) {
  constexpr auto kShort =
      std::to_array<EnumName<Level>>({{Level::kHost, "h"}, {Level::kCluster, "c"}});
  EXPECT_STREQ(name_of(Level::kCluster, kShort), "c");
  EXPECT_STREQ(name_of(Level::kRack, kShort), "?");
  EXPECT_EQ(parse_enum("h", kShort), Level::kHost);
  EXPECT_EQ(enum_name_list(kShort, "", " or "), "h or c");
}

TEST(EnumNames, ConfigMembersAreReadAsTheEnum) {
  const ConfigNode root(Json::parse(R"({"placement": "pod", "scope": "host"})"), "plan.json");
  EXPECT_EQ(read_enum<Level>(root, "placement"), Level::kRack);
  EXPECT_EQ(as_enum<Level>(root.at("scope")), Level::kHost);
  EXPECT_EQ(read_enum_or(root, "absent", Level::kCluster), Level::kCluster);
  EXPECT_EQ(read_enum_or(root, "scope", Level::kCluster), Level::kHost);
}

// The same message as ConfigNode::choice, naming file, pointer, every name and the value.
TEST(EnumNames, AnUnknownNameFailsListingTheNames) {
  const ConfigNode root(Json::parse(R"({"placement": "rak", "level": 3})"), "plan.json");
  EXPECT_EQ(message_of([&] { read_enum<Level>(root, "placement"); }),
            "plan.json: /placement: expected one of \"host\", \"rack\", \"pod\", \"cluster\", got "
            "\"rak\"");
  EXPECT_EQ(message_of([&] { read_enum_or(root, "placement", Level::kHost); }), message_of([&] {
              root.choice("placement", {"host", "rack", "pod", "cluster"});
            }));
  EXPECT_EQ(message_of([&] { read_enum<Level>(root, "missing"); }),
            "plan.json: /missing: missing required key");
  EXPECT_NE(message_of([&] { read_enum<Level>(root, "level"); }).find("expected a string"),
            std::string::npos);
}

}  // namespace
}  // namespace strait
