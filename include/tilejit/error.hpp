// tilejit error types. Every failure a user can see is one of these; the library never calls exit().
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tilejit {

// Base of every tilejit exception. what() is the full, human-readable message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input from the caller (argument, expression, configuration, environment variable),
// reported before anything is compiled or launched.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// NVRTC rejected a kernel. The log, options and instantiation are kept as separate fields.
class CompileError : public Error {
 public:
  CompileError(std::string message, std::string program_name, std::string log,
               std::vector<std::string> options, std::string instantiation);
  const std::string& program_name() const noexcept { return program_name_; }
  const std::string& log() const noexcept { return log_; }
  const std::vector<std::string>& options() const noexcept { return options_; }
  const std::string& instantiation() const noexcept { return instantiation_; }

 private:
  std::string program_name_;
  std::string log_;
  std::vector<std::string> options_;
  std::string instantiation_;
};

// A CUDA driver call failed, or there is no driver. Carries the call, the CUresult name and
// string, and the device ordinal (-1 when no device was involved).
class DriverError : public Error {
 public:
  DriverError(std::string message, std::string call, int code, std::string code_name, int device);
  const std::string& call() const noexcept { return call_; }
  int code() const noexcept { return code_; }
  const std::string& code_name() const noexcept { return code_name_; }
  int device() const noexcept { return device_; }

 private:
  std::string call_;
  int code_;
  std::string code_name_;
  int device_;
};

// A disk-cache failure. Used inside the library; it never escapes a user call (the cache degrades
// to memory only instead).
class CacheError : public Error {
 public:
  using Error::Error;
};

}  // namespace tilejit
