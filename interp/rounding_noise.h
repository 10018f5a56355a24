// How far f32 rounding alone moves a program's outputs: the interpreter's outputs against its wide-sum ones
// (InterpretOptions::wide_sums). Verification allows a multiple of it (kRoundingNoiseFactor, ir/host_tensor.h), so
// that a deep model's correct programs pass whatever order they sum in. Runs the interpreter once more.
#pragma once

#include "interp/interpreter.h"

namespace ingot {

// The most noise an output is allowed, as a share of magnitude(expected): an output that moves more under rounding
// (a comparison or a rounding down of values near a tie, flipped) would let any answer pass.
inline constexpr double kMaxRoundingNoise = 1e-3;

// Per floating-point output of the program: the largest |expected - wide| over the elements where both are finite,
// at most kMaxRoundingNoise * magnitude(expected), with `expected` the interpreter's outputs for `inputs`
// (interpret's result, or one holding at least the outputs). Integer and bool outputs have none. Throws as interpret
// does, and std::invalid_argument when `expected` lacks an output.
RoundingNoise rounding_noise(const Program& program, const TensorMap& inputs, const TensorMap& expected);

}  // namespace ingot
