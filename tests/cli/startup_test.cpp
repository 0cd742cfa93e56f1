// strait and strait-mpi (cli/mpi_program.hpp): strait needs none of the MPI, CUDA and NCCL
// libraries, so its commands start in milliseconds; the commands of strait-mpi reach it
// through strait; a strait without strait-mpi beside it says so.

#include <elf.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

namespace fs = std::filesystem;

// The DT_NEEDED entries of a 64-bit ELF file: the shared libraries it loads at start.
std::vector<std::string> needed_libraries(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string image{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_GT(image.size(), sizeof(Elf64_Ehdr)) << path;
  if (image.size() <= sizeof(Elf64_Ehdr)) return {};
  const auto* bytes = image.data();
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(bytes);
  EXPECT_EQ(header->e_ident[EI_CLASS], ELFCLASS64);
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(bytes + header->e_shoff);
  std::vector<std::string> needed;
  for (int s = 0; s < header->e_shnum; ++s) {
    if (sections[s].sh_type != SHT_DYNAMIC) continue;
    const char* strings = bytes + sections[sections[s].sh_link].sh_offset;
    const auto* entry = reinterpret_cast<const Elf64_Dyn*>(bytes + sections[s].sh_offset);
    for (; entry->d_tag != DT_NULL; ++entry) {
      if (entry->d_tag == DT_NEEDED) needed.emplace_back(strings + entry->d_un.d_val);
    }
  }
  return needed;
}

bool is_mpi_or_gpu_library(const std::string& name) {
  for (const char* prefix : {"libmpi", "libopen-rte", "libopen-pal", "libcuda", "libcublas",
                             "libnccl", "libnvrtc", "libcupti"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(Startup, StraitLoadsNeitherMpiNorCudaNorNccl) {
  const auto needed = needed_libraries(STRAIT_BINARY);
  EXPECT_FALSE(needed.empty());
  for (const auto& name : needed) EXPECT_FALSE(is_mpi_or_gpu_library(name)) << name;
}

TEST(Startup, StraitMpiLoadsWhatThisBuildHas) {
  const auto needed = needed_libraries(STRAIT_MPI_BINARY);
  bool mpi = false;
  for (const auto& name : needed) mpi = mpi || name.rfind("libmpi", 0) == 0;
  EXPECT_EQ(mpi, STRAIT_TEST_HAVE_MPI != 0);
}

TEST(Startup, TheCommandsOfStraitMpiAreReachedThroughStrait) {
  const auto exec = run_strait({"exec", "--help"});
  EXPECT_EQ(exec.exit_code, 0) << exec.err;
  EXPECT_TRUE(starts_with(exec.out, "usage: strait exec"));
  const auto calibrate = run_strait({"calibrate", "run", "--bogus"});
  EXPECT_EQ(calibrate.exit_code, 2);
  EXPECT_TRUE(starts_with(calibrate.err, "strait: calibrate run: unknown option '--bogus'"));
}

TEST(Startup, AStraitWithoutStraitMpiBesideItSaysSo) {
  const fs::path made = temp_path("lone-strait");
  fs::create_directories(made);
  const fs::path folder = fs::canonical(made);
  const auto lone = folder / "strait";
  fs::copy_file(STRAIT_BINARY, lone);
  const auto exec = run_program(lone.string(), {"exec", "configs/scenarios/dlrm-tiny-cpu.json"});
  EXPECT_EQ(exec.exit_code, 1);
  EXPECT_TRUE(contains(exec.err,
                       "this command runs in strait-mpi, which is not installed beside "
                       "this strait (looked for " +
                           (folder / "strait-mpi").string()))
      << exec.err;
  // Nor are the bundled configs: a scenario that names no profiles says where they were sought.
  const auto simulate =
      run_program(lone.string(), {"simulate", "configs/scenarios/dlrm-1gpu.json"});
  EXPECT_EQ(simulate.exit_code, 1);
  EXPECT_TRUE(contains(simulate.err,
                       "the bundled configs were not found: no share/strait/configs "
                       "in the folder of '" +
                           lone.string()))
      << simulate.err;
  fs::remove_all(folder);
}

}  // namespace
}  // namespace strait::cli::testing
