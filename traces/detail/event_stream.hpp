#pragma once
// EventStream: buffers formatted JSON text for a trace file and hands it to the stream in
// ~1 MiB pieces; event() separates the elements of "traceEvents" with commas. Shared by
// the Chrome and the Kineto trace writers.

#include <cstddef>
#include <iterator>
#include <ostream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace strait::traces::detail {

class EventStream {
 public:
  explicit EventStream(std::ostream& out) : out_(out) {}
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;
  ~EventStream() = default;

  /// Appends formatted text.
  template <typename... Args>
  void append(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(buffer_), format, std::forward<Args>(args)...);
    if (buffer_.size() > (std::size_t{1} << 20)) flush();
  }
  /// One element of traceEvents (comma-separated from the previous one).
  template <typename... Args>
  void event(fmt::format_string<Args...> format, Args&&... args) {
    buffer_.append(std::string_view(first_ ? "\n" : ",\n"));
    first_ = false;
    append(format, std::forward<Args>(args)...);
  }
  /// Appends `text` as it is.
  void raw(std::string_view text) { buffer_.append(text); }
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  std::ostream& out_;
  fmt::memory_buffer buffer_;
  bool first_ = true;
};

}  // namespace strait::traces::detail
