#include <tilejit/error.hpp>

namespace tilejit {

CompileError::CompileError(std::string message, std::string program_name, std::string log,
                           std::vector<std::string> options, std::string instantiation)
    : Error(std::move(message)),
      program_name_(std::move(program_name)),
      log_(std::move(log)),
      options_(std::move(options)),
      instantiation_(std::move(instantiation)) {}

DriverError::DriverError(std::string message, std::string call, int code, std::string code_name, int device)
    : Error(std::move(message)), call_(std::move(call)), code_(code), code_name_(std::move(code_name)), device_(device) {}

}  // namespace tilejit
