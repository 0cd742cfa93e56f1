#include "sim/core/atomic_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteFileAtomically, ReplacesTheWholeFile) {
  const std::string path = testing::TempDir() + "/atomic.txt";
  write_file_atomically(path, "first version, long");
  write_file_atomically(path, "second");
  EXPECT_EQ(read(path), "second");
}

TEST(WriteFileAtomically, AFailingWriterLeavesTheOldFileAndNoTemporary) {
  const std::string path = testing::TempDir() + "/atomic_keep.txt";
  write_file_atomically(path, "kept");
  EXPECT_THROW(write_file_atomically(path,
                                     [](std::ostream& out) {
                                       out << "half";
                                       throw Error("boom");
                                     }),
               Error);
  EXPECT_EQ(read(path), "kept");
  for (const auto& entry : std::filesystem::directory_iterator(testing::TempDir())) {
    EXPECT_EQ(entry.path().string().find("atomic_keep.txt."), std::string::npos);
  }
}

TEST(WriteFileAtomically, UnwritableDirectoryIsAnIoError) {
  EXPECT_THROW(write_file_atomically("/nonexistent/dir/out.json", "x"), IoError);
}

}  // namespace
}  // namespace strait
