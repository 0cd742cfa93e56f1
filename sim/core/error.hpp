#pragma once
// strait's error types. Bad input throws a type derived from `strait::Error` whose
// message names the file, the key (a JSON pointer) and what was expected. Libraries
// never print or exit; only main() catches and prints.

#include <stdexcept>
#include <string>

namespace strait {

/// The base of every error strait reports to a user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A configuration file (cluster, model, data, plan, scenario, profile) is invalid.
/// what() reads "FILE: KEY: EXPECTATION" (KEY is a JSON pointer such as /hosts/0/nics).
class ConfigError : public Error {
 public:
  ConfigError(std::string file, std::string pointer, std::string expectation);
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& expectation() const { return expectation_; }

 private:
  std::string file_, pointer_, expectation_;
};

/// A file cannot be read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

/// Command-line usage is wrong (unknown option, missing argument).
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace strait
