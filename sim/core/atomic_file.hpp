#pragma once
// Writes output files atomically: the content goes to a temporary file beside the target,
// which is renamed over it only when complete, so a failure never leaves half a file.

#include <functional>
#include <ostream>
#include <string>

namespace strait {

/// Throws IoError when `path` exists and its mode grants no one write permission: a user
/// who made a result read-only meant to keep it (checked on the mode bits, which root's
/// writes and a rename would ignore).
void refuse_read_only(const std::string& path);

/// Writes `content` to `path` atomically (refuse_read_only first). Throws IoError naming the path
/// on failure.
void write_file_atomically(const std::string& path, const std::string& content);
/// Streams into `path` atomically through `writer`; if `writer` throws, the target is untouched.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& writer);

}  // namespace strait
