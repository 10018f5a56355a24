// Conventions shared by every operator builder in ops/, and the small helpers they (and ONNX import) use to
// check operands: shape text, axis normalization, broadcasting, and the error format.
// Include this when writing or calling an op builder; it has no state.
//
// Conventions of the operator library:
// - Every op is a tensor-expression (TE) builder: it returns compute Tensors whose bodies read their operands,
//   so whole-program analysis sees inside each op. Ops never create placeholders; weights, biases and index
//   tensors are Tensors the caller made (placeholders or computes).
// - The first argument is the output tensor's name. An op that needs more than one TE names the final TE
//   `name` and the intermediate ones `name + suffix`, with these suffixes (all names must be unique within a
//   Program, which throws on a clash):
//     "_matmul"  dense / gemm product before the bias or C epilogue
//     "_conv"    conv2d before the bias epilogue
//     "_sum"     avg_pool2d window sums (only when window counts vary); softmax / log_softmax denominators
//     "_max"     softmax / log_softmax maxima
//     "_exp"     softmax exponentials
//     "_mean", "_var"  layer_norm statistics
//     "_wx", "_uh", "_c", "_h"  lstm_cell (see ops/lstm_cell.h)
//   Ops with several outputs (split) take one name per output.
// - Spatial axes use compute()'s default names (i, j, l, m, ...); reduce axes are named "k", "k0", "k1", ...
//   ("rc", "ry", "rx" for convolution and pooling windows) so they never clash with spatial names.
// - The output dtype is the input's (bool for comparisons); constants take the operand's dtype.
// - Bad shapes or attributes throw std::invalid_argument whose message names the op, the output name, the
//   operand and the shapes involved: "conv2d 'conv1': weight [64,3,7,7] has 3 input channels per group, input
//   [1,4,224,224] has 4 (groups=1)".
// - Pure data-movement ops (reshape, transpose, slice, concat, pad, roll, window partition, gather) are single
//   TEs whose body is just a read of their input at an index expression ("reorganize"/"shuffle" TEs that the
//   global analysis may fold). Epilogues (bias, activation) are separate TEs; no op uses more TEs than its
//   math needs (a reduction must be the whole body of a TE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

// "[64,3,7,7]"; "[]" for a scalar.
std::string shape_to_string(const std::vector<int64_t>& shape);

// Throws std::invalid_argument with the message "<op> '<name>': <message>".
[[noreturn]] void throw_op_error(const std::string& op, const std::string& name, const std::string& message);

// An axis in [-rank, rank) mapped to [0, rank); otherwise throws naming op, output name and the rank.
int64_t normalize_axis(const std::string& op, const std::string& name, int64_t axis, int64_t rank);

// Multidirectional (numpy / ONNX) broadcasting of two shapes: aligned from the right, each pair of
// dimensions equal or one of them 1. Throws naming both operands' shapes when they do not broadcast.
std::vector<int64_t> broadcast_shapes(const std::string& op, const std::string& name, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b);

// The indices at which to read a tensor of shape `input_shape` that is broadcast to an output indexed by
// `output_indices` (input_shape right-aligned with the output; size-1 dimensions read index 0).
std::vector<Expr> broadcast_indices(const std::vector<int64_t>& input_shape, const std::vector<Expr>& output_indices);

// Product of the dimensions (1 for a scalar).
int64_t shape_elements(const std::vector<int64_t>& shape);

}  // namespace ingot
