#include "cli/progress_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace strait::cli {

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

int terminal_columns() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::string format_eta(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, seconds) + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

void draw_progress_line(const std::string& counts, double fraction) {
  const int room = terminal_columns() - 1;
  const int bar = std::clamp(room - static_cast<int>(counts.size()) - 5, 0, 28);
  const int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * bar);
  std::string line = bar > 0 ? fmt::format("  [{}{}] {}", std::string(filled, '#'),
                                           std::string(bar - filled, '.'), counts)
                             : "  " + counts;
  line.resize(static_cast<std::size_t>(std::max(room, 0)), ' ');
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
}

void end_progress_line() {
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace strait::cli
