#include "sim/core/atomic_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <unistd.h>

#include "sim/core/error.hpp"

namespace strait {

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&](std::ostream& out) { out << content; });
}

void refuse_read_only(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return;
  const auto write = fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
  if ((st.permissions() & write) == fs::perms::none)
    throw IoError(fmt::format("{}: the file is read-only; not replaced", path));
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& writer) {
  refuse_read_only(path);
  const std::string tmp = fmt::format("{}.{}.tmp", path, ::getpid());
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw IoError(fmt::format("{}: cannot open file for writing", path));
      writer(out);
      out.flush();
      if (!out) throw IoError(fmt::format("{}: write failed", path));
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw IoError(fmt::format("{}: cannot rename temporary file: {}", path, ec.message()));
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
}

}  // namespace strait
