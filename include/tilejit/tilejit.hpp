// tilejit: run-time specialised GEMM and elementwise kernels for NVIDIA GPUs, compiled with NVRTC.
#pragma once

#include <tilejit/dtype.hpp>
#include <tilejit/elementwise.hpp>
#include <tilejit/error.hpp>
#include <tilejit/gemm.hpp>
#include <tilejit/gemm_config.hpp>
#include <tilejit/kernel.hpp>
#include <tilejit/runtime.hpp>
#include <tilejit/version.hpp>
