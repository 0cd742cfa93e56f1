// bundled_configs_near: the share/strait/configs of an installation or a build tree, found
// from the program (PREFIX/bin/strait, PREFIX/libexec/strait/strait-mpi) or the Python
// module (PREFIX/lib/python3/dist-packages/strait/_strait.so).

#include "sim/core/bundled_configs.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace strait {
namespace {

namespace fs = std::filesystem;

class BundledConfigs : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ =
        fs::path(::testing::TempDir()) /
        ("bundled-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(prefix_);
    fs::create_directories(prefix_ / "share" / "strait" / "configs");
  }
  void TearDown() override { fs::remove_all(prefix_); }
  fs::path prefix_;
};

TEST_F(BundledConfigs, FoundFromTheProgramsAndTheModule) {
  const auto configs = prefix_ / "share" / "strait" / "configs";
  EXPECT_EQ(bundled_configs_near(prefix_ / "bin" / "strait"), configs);
  EXPECT_EQ(bundled_configs_near(prefix_ / "libexec" / "strait" / "strait-mpi"), configs);
  EXPECT_EQ(bundled_configs_near(prefix_ / "python" / "strait" / "_strait.so"), configs);
  EXPECT_EQ(
      bundled_configs_near(prefix_ / "lib" / "python3" / "dist-packages" / "strait" / "_strait.so"),
      configs);
}

TEST_F(BundledConfigs, NotSearchedBeyondFourFoldersUp) {
  EXPECT_EQ(bundled_configs_near(prefix_ / "a" / "b" / "c" / "d" / "e" / "strait"), fs::path());
}

TEST_F(BundledConfigs, AFileNamedLikeTheFolderIsNotIt) {
  fs::remove_all(prefix_ / "share");
  fs::create_directories(prefix_ / "share" / "strait");
  std::ofstream(prefix_ / "share" / "strait" / "configs") << "not a folder";
  EXPECT_EQ(bundled_configs_near(prefix_ / "bin" / "strait"), fs::path());
}

TEST(BundledConfigsOfThisBinary, IsTheBuildTreesLinkToTheCheckoutsConfigs) {
  // build/tests/core_test: build/share/strait/configs is one folder up, so found.
  const auto dir = bundled_configs_dir();
  EXPECT_TRUE(fs::is_directory(dir / "profiles")) << dir;
  EXPECT_EQ(bundled_profiles_dir(), dir / "profiles");
}

}  // namespace
}  // namespace strait
