// Elementwise code generation: the Op struct and the instantiation handed to NVRTC.
#pragma once

#include <tilejit/elementwise.hpp>

#include <string>

namespace tilejit::ops {

// C++ spelling of a dtype's storage type and compute type in device code.
std::string_view device_type(DType t);
std::string_view compute_type(DType t);

// The member of tilejit::elementwise_scalar a scalar of dtype t is written to ("f32", "i64", ...).
std::string_view scalar_member(DType t);
// A body as it goes into generated code: without trailing blanks and semicolons.
std::string trimmed_body(std::string body);

// Fills the zeros of `config` for `op`, then checks it; throws InvalidArgument naming the rule.
ElementwiseConfig resolve_config(const ElementwiseOp& op, const ElementwiseConfig& config);

// The generated source: an #include of elementwise.cuh and the Op struct holding the body.
std::string elementwise_source(const ElementwiseOp& op);
// The kernel's name expression for a configuration and vector width.
std::string elementwise_name_expression(const ElementwiseOp& op, const ElementwiseConfig& config, int vector_width);
// A readable program name, e.g. "elementwise_z_eq_x_plus_y_t4096v4".
std::string elementwise_program_name(const ElementwiseOp& op, const ElementwiseConfig& config, int vector_width);

}  // namespace tilejit::ops
