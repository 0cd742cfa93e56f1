#include "sim/core/error.hpp"

namespace strait {

ConfigError::ConfigError(std::string file, std::string pointer, std::string expectation)
    : Error(file + ": " + (pointer.empty() ? std::string("/") : pointer) + ": " + expectation),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      expectation_(std::move(expectation)) {}

}  // namespace strait
