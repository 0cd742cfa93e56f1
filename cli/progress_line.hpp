#pragma once
// The progress line of long commands (sweep, calibrate run, plan) on a terminal: one line
// redrawn in place that never reaches the terminal's last column (a full line would wrap,
// and every update would start a new one). Off a terminal the commands print whole lines
// instead, at their own pace.

#include <string>

namespace strait::cli {

/// True when standard error is a terminal (the line is redrawn there).
bool stderr_is_terminal();

/// Columns of the terminal on standard error (80 when it does not say).
int terminal_columns();

/// "42s", "3m07s", "1h05m".
std::string format_eta(double seconds);

/// Redraws the line: `counts` after a bar of `fraction` (0..1) in the room the counts leave
/// (at most 28 marks, none when there is no room), all cut at the terminal's width.
void draw_progress_line(const std::string& counts, double fraction);

/// Ends a drawn line (a newline), so that what follows starts on its own line.
void end_progress_line();

}  // namespace strait::cli
