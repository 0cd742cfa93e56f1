// planner/launch_fingerprint.hpp: FNV-1a (64 bit) over the cluster, model and data configs,
// the histogram files the data names and the plan document, each part followed by a 0xff
// byte: recomputed here from its definition, equal for the same inputs whatever their
// spelling or file names, different when any input changes.

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "planner/launch_fingerprint.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

constexpr std::uint64_t kOffset = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
constexpr std::uint64_t kPrime = 1099511628211ULL;          // FNV 64-bit prime

/// Plain FNV-1a of `text` from `h`.
std::uint64_t fnv1a(std::uint64_t h, std::string_view text) {
  for (unsigned char c : text) {
    h ^= c;
    h *= kPrime;
  }
  return h;
}

/// The fingerprint's fold of one part: its bytes, then 0xff.
std::uint64_t part(std::uint64_t h, std::string_view text) {
  h = fnv1a(h, text);
  h ^= 0xff;
  return h * kPrime;
}

std::string hex(std::uint64_t h) { return fmt::format("fnv1a64:{:016x}", h); }

// The reference implementation gives FNV-1a's published test vectors (the FNV authors'
// list: "" -> cbf29ce484222325, "a" -> af63dc4c8601ec8c, "foobar" -> 85944171f73967e8).
TEST(LaunchFingerprint, TheReferenceFoldIsFnv1a) {
  EXPECT_EQ(fnv1a(kOffset, ""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a(kOffset, "a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a(kOffset, "foobar"), 0x85944171f73967e8ULL);
}

// A scenario built from parsed parts keeps no configs: three "null" parts, then the plan.
TEST(LaunchFingerprint, WithoutConfigsItCoversThePlanDocumentOnly) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const Json doc = Json::parse(R"({"schedule": {"pipeline_depth": 2}})");
  std::uint64_t nulls = kOffset;
  for (int i = 0; i < 3; ++i) nulls = part(nulls, "null");
  EXPECT_EQ(fingerprint(req.base, doc), hex(part(nulls, R"({"schedule":{"pipeline_depth":2}})")));
  EXPECT_EQ(fingerprint(req.base, Json::object()), hex(part(nulls, "{}")));
}

// The fingerprint is a function of the whole cluster, model and data configs (and the
// histogram files the data names) and the plan document.
class LaunchFingerprintOfFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = (std::filesystem::temp_directory_path() /
               fmt::format("strait-{}-{}", test->name(), ::getpid()))
                  .string();
    std::filesystem::create_directories(folder_);
    write_histogram(R"({"values": [1, 4], "weights": [0.5, 0.5]})");
    data_["pooling_factors"]["tiny"] = {{"distribution", "empirical"}, {"file", "hist.json"}};
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  void write_histogram(const std::string& text, const std::string& folder = "") const {
    std::ofstream((folder.empty() ? folder_ : folder) + "/hist.json") << text;
  }
  std::string fingerprint_now(const std::string& folder = "") const {
    const auto sc = scenario_of(cluster_, model_, data_, plan_, folder.empty() ? folder_ : folder);
    return fingerprint(sc, plan_);
  }

  std::string folder_;
  Json cluster_ = Json::parse(kTwoDcCluster);
  Json model_ = Json::parse(kSmallDlrm);
  Json data_ = Json::parse(kSmallDlrmData);
  Json plan_ = Json::object();
};

// cluster, model, data (canonical JSON: keys sorted, no spaces), the histogram file as
// read, the plan: five parts.
TEST_F(LaunchFingerprintOfFiles, IsFnv1aOverThePartsTheHistogramAndThePlan) {
  std::uint64_t h = kOffset;
  for (const Json* j : {&cluster_, &model_, &data_}) h = part(h, j->dump());
  h = part(h, R"({"values":[1,4],"weights":[0.5,0.5]})");
  h = part(h, "{}");
  EXPECT_EQ(fingerprint_now(), hex(h));
}

TEST_F(LaunchFingerprintOfFiles, IsEqualForTheSameInputs) {
  const auto first = fingerprint_now();
  EXPECT_EQ(first.rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(first.size(), 8u + 16u);
  EXPECT_EQ(fingerprint_now(), first);
}

// Key order, whitespace and the folder's name change nothing: the model re-spelt (keys in
// another order, other spaces), and the same histogram in another folder, give the same
// fingerprint.
TEST_F(LaunchFingerprintOfFiles, IsEqualWhateverTheSpellingOrFolder) {
  const auto first = fingerprint_now();
  model_ = Json::parse(R"({"dense": {"top_mlp": {"layers": [256, 1]},
      "interaction": {"type": "dot"}, "bottom_mlp": {"layers": [256, 64]},
      "dense_features": 13},
    "embedding": {"tables": [
      {"dim": 64, "rows": 4000000, "name": "big"}, {"name": "wide", "dim": 64, "rows": 2000000},
      {"rows": 200000, "name": "mid", "dim": 64}, {"name": "tiny", "rows": 1000, "dim": 64}]},
    "name": "small-dlrm"})");
  EXPECT_EQ(fingerprint_now(), first);
  const std::string other = folder_ + "/elsewhere";
  std::filesystem::create_directories(other);
  write_histogram(R"({"weights": [0.5, 0.5],
                      "values": [1, 4]})",
                  other);
  EXPECT_EQ(fingerprint_now(other), first);
}

// One byte of one input: tiny's 1000 rows become 1001.
TEST_F(LaunchFingerprintOfFiles, ChangesWithOneByteOfAnInput) {
  const auto before = fingerprint_now();
  model_["embedding"]["tables"][3]["rows"] = 1001;
  EXPECT_NE(fingerprint_now(), before);
  model_["embedding"]["tables"][3]["rows"] = 1000;
  EXPECT_EQ(fingerprint_now(), before);
}

TEST_F(LaunchFingerprintOfFiles, ChangesWithAPoolingFactor) {
  const auto before = fingerprint_now();
  data_["pooling_factors"]["big"]["value"] = 21;
  EXPECT_NE(fingerprint_now(), before);
}

TEST_F(LaunchFingerprintOfFiles, ChangesWithAHistogramFileTheDataNames) {
  const auto before = fingerprint_now();
  write_histogram(R"({"values": [1, 4], "weights": [0.25, 0.75]})");
  EXPECT_NE(fingerprint_now(), before);
}

TEST_F(LaunchFingerprintOfFiles, ChangesWithACrossDatacenterLinkLatency) {
  const auto before = fingerprint_now();
  cluster_["cross_dc"][0]["latency"] = "6 ms";
  EXPECT_NE(fingerprint_now(), before);
}

TEST_F(LaunchFingerprintOfFiles, ChangesWithAnMlpWidth) {
  const auto before = fingerprint_now();
  model_["dense"]["bottom_mlp"]["layers"][0] = 512;
  EXPECT_NE(fingerprint_now(), before);
}

TEST_F(LaunchFingerprintOfFiles, ChangesWithThePlanDocument) {
  const auto before = fingerprint_now();
  plan_ = Json::parse(R"({"schedule": {"pipeline_depth": 2}})");
  EXPECT_NE(fingerprint_now(), before);
}

}  // namespace
}  // namespace strait::planner
