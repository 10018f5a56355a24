// Layout operators: reshape, transpose, flatten, squeeze, unsqueeze and expand (broadcast to a shape). Each is
// one TE whose body is a single read of the input at an index expression (a "reorganize" TE): reshapes
// linearize the output index and split it into the input's (div/mod), transposes permute the indices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

// Row-major reshape to `shape`. As ONNX Reshape (allowzero = 0): one entry may be -1 (inferred from the element
// count) and an entry 0 copies the input's dimension at that position. Throws when element counts differ.
Tensor reshape(const std::string& name, const Tensor& x, const std::vector<int64_t>& shape);

// out.shape[d] = x.shape[perm[d]], out[i...] = x[j...] with j[perm[d]] = i[d]. An empty perm reverses the axes
// (ONNX default). Throws unless perm is a permutation of [0, rank).
Tensor transpose(const std::string& name, const Tensor& x, const std::vector<int64_t>& perm = {});

// ONNX Flatten: [d0 .. d(axis-1)] and [d(axis) ..] collapse into a 2-D [outer, inner] tensor; axis in
// [-rank, rank] (0 gives [1, total]).
Tensor flatten(const std::string& name, const Tensor& x, int64_t axis = 1);

// Removes the listed size-1 axes (negative allowed); an empty list removes every size-1 axis (ONNX Squeeze).
Tensor squeeze(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes = {});
// Inserts size-1 axes at the listed positions of the output (ONNX Unsqueeze; negative relative to output rank).
Tensor unsqueeze(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes);

// ONNX Expand: broadcasts x to broadcast_shapes(x.shape, shape) (size-1 dimensions of x repeat).
Tensor expand(const std::string& name, const Tensor& x, const std::vector<int64_t>& shape);

}  // namespace ingot
