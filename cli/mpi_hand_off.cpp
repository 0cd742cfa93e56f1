// In `strait`: the commands of strait-mpi (cli/mpi_program.hpp) hand the process over to
// it, with the command line they were given.

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/mpi_program.hpp"
#include "sim/core/bundled_configs.hpp"
#include "sim/core/error.hpp"

namespace strait::cli {
namespace {

constexpr const char* kProgram = "strait-mpi";

// strait-mpi next to this program (the build tree), or in ../libexec/strait (an
// installation).
std::filesystem::path mpi_program() {
  const auto folder = this_binary().parent_path();
  const std::filesystem::path candidates[] = {
      folder / kProgram, folder.parent_path() / "libexec" / "strait" / kProgram};
  for (const auto& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  throw Error(fmt::format(
      "this command runs in {}, which is not installed beside this strait (looked for {} and "
      "{}): rebuild or reinstall strait",
      kProgram, candidates[0].string(), candidates[1].string()));
}

[[noreturn]] void hand_over(std::string_view command, const std::vector<std::string>& first,
                            const std::vector<std::string>& args) {
  const auto program = mpi_program();
  std::vector<std::string> words{"strait", std::string(command)};
  words.insert(words.end(), first.begin(), first.end());
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  ::execv(program.c_str(), argv.data());
  throw Error(fmt::format("cannot start {}: {}", program.string(), std::strerror(errno)));
}

}  // namespace

int run_exec(const std::vector<std::string>& args) { hand_over("exec", {}, args); }
int calibrate_run(const std::vector<std::string>& args) { hand_over("calibrate", {"run"}, args); }
int sweep_on_mpi_ranks(const std::vector<std::string>& args) { hand_over("sweep", {}, args); }

}  // namespace strait::cli
