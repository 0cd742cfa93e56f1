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

// A result the user made read-only was replaced (a rename ignores the file's mode, and so
// does root): it is refused and kept.
TEST(WriteFileAtomically, AReadOnlyFileIsRefusedAndKept) {
  const std::string path = testing::TempDir() + "/atomic_read_only.txt";
  std::filesystem::remove(path);
  write_file_atomically(path, "kept");
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::group_read |
                                         std::filesystem::perms::others_read);
  try {
    write_file_atomically(path, "new");
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": the file is read-only; not replaced");
  }
  EXPECT_EQ(read(path), "kept");
  std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
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
